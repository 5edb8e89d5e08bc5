import Foundation

/// Where a shared index lives: `[index] url = "postgres://USER@HOST:PORT/DB"`,
/// with `?tls=disable|prefer|require` (require by default off loopback) and
/// `&ca=/path/to/ca.pem` to trust a private certificate authority.
///
/// The password is never part of the URL: it comes from the vault, so the
/// configuration file can be world-readable.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var user: String
    public var host: String
    public var port: Int
    public var database: String
    public var tls: TLSMode
    public var caFile: String?
    public var password: String?

    /// - Throws: `Invalid` saying what is wrong with the URL.
    public init(url text: String, password: String? = nil) throws(Invalid) {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme, ["postgres", "postgresql"].contains(scheme) else {
            throw Invalid(url: text, reason: "it must start with postgres://")
        }
        guard parts.password == nil else {
            throw Invalid(url: text, reason: "a password does not belong in the URL; put it in the vault and name its entry as [index] credentials")
        }
        guard let user = parts.user, !user.isEmpty else { throw Invalid(url: text, reason: "it names no user (postgres://USER@HOST/DB)") }
        // An IPv6 literal comes in brackets ([::1]), which are URL syntax, not part of the address.
        guard let bracketed = parts.host, !bracketed.isEmpty else { throw Invalid(url: text, reason: "it names no host") }
        let host = bracketed.hasPrefix("[") && bracketed.hasSuffix("]") ? String(bracketed.dropFirst().dropLast()) : bracketed
        if let port = parts.port, !(1...65535).contains(port) { throw Invalid(url: text, reason: "the port must be 1 to 65535") }
        let database = String(parts.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else { throw Invalid(url: text, reason: "it must name one database (postgres://USER@HOST/DB)") }
        self.user = user
        self.host = host
        port = parts.port ?? 5432
        self.database = database
        self.password = password
        let loopback = host == "127.0.0.1" || host == "::1" || host == "localhost"
        tls = loopback ? .disable : .require
        for item in parts.queryItems ?? [] {
            switch item.name {
            case "tls":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw Invalid(url: text, reason: "tls must be disable, prefer or require")
                }
                tls = mode
            case "ca":
                guard let value = item.value, value.hasPrefix("/") else { throw Invalid(url: text, reason: "ca must be an absolute path") }
                caFile = value
            default:
                throw Invalid(url: text, reason: "unknown parameter \(item.name) (known: tls, ca)")
            }
        }
    }

    /// The URL without secrets, for logs and status.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    public struct Invalid: Error, CustomStringConvertible {
        public let url: String
        public let reason: String
        public var description: String { "[index] url \"\(url)\" is not usable: \(reason)" }
    }
}
