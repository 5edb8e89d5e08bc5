/// The pieces of an absolute `http`/`https` URL that WebDAV headers carry
/// (`Destination`, `If` resource tags, absolute-form request targets).
/// Only what davgate needs: scheme, host, port and the raw (still encoded) path.
struct AbsoluteURL {
    /// Lower-cased scheme, `http` or `https`.
    var scheme: String
    /// Lower-cased host; IPv6 literals keep their brackets.
    var host: String
    /// The explicit port, if any.
    var port: Int?
    /// The raw path, `/` when the URL has none; query and fragment removed.
    var path: Substring

    /// The port in effect: explicit, or the scheme's default.
    var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    init?(_ text: Substring) {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[text.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            authority = authority[authority.index(after: at)...]
        }
        guard let (host, port) = AbsoluteURL.splitHostPort(authority), !host.isEmpty else { return nil }
        var path = rest[authorityEnd...]
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path.isEmpty ? "/" : path
    }

    /// Splits `host[:port]` (also `[v6]:port`); `nil` when the port is not a number.
    static func splitHostPort(_ authority: Substring) -> (host: String, port: Int?)? {
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portPart = after.dropFirst() } else if !after.isEmpty { return nil }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        var port: Int?
        if let portPart, !portPart.isEmpty {
            guard portPart.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let p = Int(portPart), p <= 65535 else { return nil }
            port = p
        }
        return (hostPart.lowercased(), port)
    }
}
