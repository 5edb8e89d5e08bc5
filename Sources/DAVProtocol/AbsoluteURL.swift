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

    /// Delimiters are looked for among the bytes (RFC 3986 section 2.2), not the
    /// characters: a delimiter after a prepended or before a combining mark is
    /// part of one Character, and the fragment `a\u{603}#x` would stay in the path.
    init?(_ text: Substring) {
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")), text.utf8[colon...].starts(with: "://".utf8) else { return nil }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = text[text.utf8.index(colon, offsetBy: 3)...]
        let authorityEnd = rest.utf8.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[authority.utf8.index(after: at)...]
        }
        guard let (host, port) = AbsoluteURL.splitHostPort(authority), !host.isEmpty else { return nil }
        var path = rest[authorityEnd...]
        if let cut = path.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { path = path[..<cut] }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path.isEmpty ? "/" : path
    }

    /// Splits `host[:port]` (also `[v6]:port`); `nil` when the port is not a number.
    static func splitHostPort(_ authority: Substring) -> (host: String, port: Int?)? {
        var hostPart = authority
        var portPart: Substring?
        if authority.utf8.first == UInt8(ascii: "[") {
            guard let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostPart = authority[..<authority.utf8.index(after: close)]
            let after = authority[authority.utf8.index(after: close)...]
            if after.utf8.first == UInt8(ascii: ":") {
                portPart = after[after.utf8.index(after: after.startIndex)...]
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = authority.utf8.lastIndex(of: UInt8(ascii: ":")) {
            hostPart = authority[..<colon]
            portPart = authority[authority.utf8.index(after: colon)...]
        }
        var port: Int?
        if let portPart, !portPart.isEmpty {
            guard portPart.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let p = Int(portPart), p <= 65535 else { return nil }
            port = p
        }
        return (hostPart.lowercased(), port)
    }
}
