import AsyncHTTPClient
import DAVProtocol
import Foundation
import NIOCore
import NIOSSL

/// Why a WebDAV upstream cannot be set up from its configuration.
public enum WebDAVStoreConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not an absolute `http` or `https` URL with a host.
    case unsupportedURL(String)
    /// The URL carries a user or password; credentials belong in the vault.
    case credentialsInURL
    /// The extra trust root could not be read as PEM certificates.
    case unreadableTrustRoot(path: String, reason: String)

    public var description: String {
        switch self {
        case .unsupportedURL(let url): "upstream \(url) is not an http(s) URL with a host"
        case .credentialsInURL: "the upstream URL carries credentials; keep them in the vault instead"
        case .unreadableTrustRoot(let path, let reason): "cannot read the upstream CA \(path): \(reason)"
        }
    }
}

/// The value of a Basic `Authorization` header (RFC 7617). Its descriptions
/// never show the secret, so printing a store or a request leaks nothing.
struct Authorization: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let header: String

    init(user: String, password: String) {
        header = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    var description: String { "Basic <redacted>" }
    var debugDescription: String { description }
}

extension WebDAVStore {
    /// Splits the configured URL into the origin and the decoded base path,
    /// and rebuilds it in the one spelling the store uses (trailing slash).
    static func parse(_ url: URL) throws -> (url: URL, origin: String, path: [String]) {
        let text = url.absoluteString
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              let separator = text.range(of: "://")
        else { throw WebDAVStoreConfigurationError.unsupportedURL(text) }
        guard components.user == nil, components.password == nil else {
            throw WebDAVStoreConfigurationError.credentialsInURL
        }
        let afterScheme = text[separator.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let origin = scheme + "://" + authority
        let rawPath = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let path: DAVPath
        do {
            path = try DAVPath.parse(requestTarget: rawPath).path
        } catch {
            throw WebDAVStoreConfigurationError.unsupportedURL(text)
        }
        guard let normalized = URL(string: origin + path.href(collection: true)) else {
            throw WebDAVStoreConfigurationError.unsupportedURL(text)
        }
        return (normalized, origin, path.segments)
    }
}
