/// Why a configuration file was refused: the file, the key when one is to blame, its line when known.
///
/// Reads like a compiler message: `conf/davgate.toml:3: [server] listen: expected host:port, got "x"`.
public struct ConfigError: Error, CustomStringConvertible, Equatable {
    /// The configuration file, as it was named to ``GatewayConfig/load(from:)``.
    public var file: String
    /// The key in the form a reader finds it in the file: `[server] listen`, `[[domain]] upstream`.
    public var key: String?
    /// 1-based line, when known.
    public var line: Int?
    public var reason: String

    public init(file: String, key: String? = nil, line: Int? = nil, reason: String) {
        self.file = file
        self.key = key
        self.line = line
        self.reason = reason
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += key + ": " }
        return text + reason
    }
}
