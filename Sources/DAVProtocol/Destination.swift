/// Where a `Destination` header points (RFC 4918 section 10.3).
public enum DestinationTarget: Sendable, Equatable {
    /// A resource on this server.
    case local(DAVPath, trailingSlash: Bool)
    /// An absolute URL naming another host or port: davgate answers
    /// `502 Bad Gateway` (RFC 4918 section 9.8.4 / 9.9.4).
    case foreign
}

/// The `Destination` header of COPY and MOVE (RFC 4918 section 10.3):
/// `Destination = Simple-ref`, an absolute URI or an absolute path.
public enum Destination {
    /// Parses a `Destination` value.
    /// - Parameters:
    ///   - header: the header value; clients almost always send an absolute URL.
    ///   - requestHost: the request's `Host` (`host[:port]`). An absolute URL is
    ///     local when its host matches case-insensitively and its port (explicit,
    ///     or the scheme's default) matches the `Host` port (explicit, or the same
    ///     default). With no `Host` to compare, every URL counts as local.
    /// - Throws: ``PathError`` when the path part is unacceptable or the value is
    ///   neither an absolute path nor an `http(s)` URL.
    public static func parse(_ header: String, requestHost: String?) throws(PathError) -> DestinationTarget {
        let value = header.trimmingSpaces()
        if value.hasPrefix("/") {
            let (path, slash) = try DAVPath.parse(requestTarget: String(value))
            return .local(path, trailingSlash: slash)
        }
        guard let url = AbsoluteURL(value) else { throw .notAbsolute }
        if let requestHost, !requestHost.isEmpty {
            guard let (host, port) = AbsoluteURL.splitHostPort(requestHost.trimmingSpaces()) else { return .foreign }
            if host != url.host || (port ?? url.defaultPort) != url.effectivePort { return .foreign }
        }
        let (path, slash) = try DAVPath.parse(requestTarget: String(url.path))
        return .local(path, trailingSlash: slash)
    }
}

extension AbsoluteURL {
    var defaultPort: Int { scheme == "https" ? 443 : 80 }
}

extension StringProtocol {
    /// The value without surrounding spaces and tabs (HTTP optional whitespace).
    func trimmingSpaces() -> Substring {
        trimming { $0 == " " || $0 == "\t" }
    }

    /// The value without the characters `isSpace` accepts at either end.
    func trimming(_ isSpace: (Character) -> Bool) -> Substring {
        let s = Substring(self)
        guard let start = s.firstIndex(where: { !isSpace($0) }) else { return "" }
        let end = s.lastIndex(where: { !isSpace($0) })!
        return s[start...end]
    }
}
