import Foundation

/// Where a domain's files really live.
public enum UpstreamLocation: Sendable, Equatable {
    /// A local folder, from `upstream = "file:relative/or/absolute"`; the URL is absolute and standardized.
    case directory(URL)
    /// Another WebDAV server, from `upstream = "http://..."` or `"https://..."`.
    case webdav(URL)
}

extension UpstreamLocation: CustomStringConvertible {
    /// As the configuration spells it: `file:/absolute/path` or the URL.
    public var description: String {
        switch self {
        case .directory(let url): "file:\(url.path)"
        case .webdav(let url): url.absoluteString
        }
    }
}
