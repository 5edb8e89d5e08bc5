/// What names an upstream store can hold. The provider refuses anything
/// outside them before it acknowledges a write, so a client is never told
/// "saved" for a file the upstream will refuse at every retry.
public struct NameRules: Sendable, Equatable, CustomStringConvertible {
    /// UTF-8 bytes of one name (a path component).
    public var maxNameBytes: Int
    /// UTF-8 bytes of the whole path below the domain's root, names joined
    /// by `/`; nil when the store has no such limit.
    public var maxPathBytes: Int?

    public init(maxNameBytes: Int, maxPathBytes: Int? = nil) {
        self.maxNameBytes = maxNameBytes
        self.maxPathBytes = maxPathBytes
    }

    /// Most file systems (and so most servers storing on one): 255 bytes a name.
    public static let common = NameRules(maxNameBytes: 255)

    public var description: String {
        "at most \(maxNameBytes) bytes a name" + (maxPathBytes.map { " and \($0) bytes a path" } ?? "")
    }

    /// Why `path` cannot be created upstream, or nil when it can. Control
    /// characters (below U+0020, and U+007F) are refused for every store:
    /// they break davfs2's cache, shells and Windows clients, whatever the
    /// store itself would take.
    public func violation(of path: ItemPath) -> NameViolation? {
        for name in path {
            if let character = name.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                return .controlCharacter(name: name, code: character.value)
            }
            let bytes = name.utf8.count
            if bytes > maxNameBytes { return .nameTooLong(name: name, bytes: bytes, limit: maxNameBytes) }
        }
        if let maxPathBytes {
            let bytes = path.reduce(0) { $0 + $1.utf8.count } + max(path.count - 1, 0)
            if bytes > maxPathBytes { return .pathTooLong(bytes: bytes, limit: maxPathBytes) }
        }
        return nil
    }
}

/// A name the upstream cannot hold, and which limit it breaks.
public enum NameViolation: Sendable, Equatable, CustomStringConvertible {
    case controlCharacter(name: String, code: UInt32)
    case nameTooLong(name: String, bytes: Int, limit: Int)
    case pathTooLong(bytes: Int, limit: Int)
    /// davgate keeps its own data under this name at a domain's root.
    case reserved(name: String)

    /// The DAV error condition's local name (davgate's namespace).
    public var condition: String {
        switch self {
        case .controlCharacter: "name-has-control-character"
        case .nameTooLong: "name-too-long"
        case .pathTooLong: "path-too-long"
        case .reserved: "name-reserved"
        }
    }

    public var description: String {
        switch self {
        case .controlCharacter(let name, let code):
            "the name \(Self.shown(name)) holds the control character U+\(Self.hex(code)); names may not hold characters below U+0020 or U+007F"
        case .nameTooLong(let name, let bytes, let limit):
            "the name \(Self.shown(name)) is \(bytes) bytes long; this upstream holds at most \(limit) bytes a name (UTF-8); choose a shorter name"
        case .pathTooLong(let bytes, let limit):
            "the path is \(bytes) bytes long; this upstream holds at most \(limit) bytes a path (UTF-8); choose shorter names or a shallower folder"
        case .reserved(let name):
            "\(name) at a domain's root is davgate's own folder (its trash and versions); choose another name"
        }
    }

    private static func hex(_ code: UInt32) -> String {
        let digits = String(code, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// A name as a message shows it: control characters escaped, long ones cut.
    private static func shown(_ name: String) -> String {
        let escaped = name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
        return escaped.count > 40 ? "\"\(escaped.prefix(32))...\"" : "\"\(escaped)\""
    }
}
