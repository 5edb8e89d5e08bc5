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

/// The store's own HTTP client, shut down when the last copy of the store
/// lets go of it: the client insists on an explicit shutdown, and a store is
/// a value that callers copy freely.
final class ClientOwner: Sendable {
    let client: HTTPClient

    init(_ client: HTTPClient) { self.client = client }

    deinit {
        // Harmless after an explicit shutdown (it then reports "already shut down").
        client.shutdown(queue: .global()) { _ in }
    }
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

    /// The system's roots plus the configured PEM (an extra CA, or a
    /// self-signed server certificate, which then is its own anchor).
    static func tlsConfiguration(trusting pem: URL) throws -> TLSConfiguration {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(pem.path)
        } catch {
            throw WebDAVStoreConfigurationError.unreadableTrustRoot(path: pem.path, reason: "\(error)")
        }
        guard !certificates.isEmpty else {
            throw WebDAVStoreConfigurationError.unreadableTrustRoot(path: pem.path, reason: "no certificate in the file")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(certificates)]
        return tls
    }

    /// The store's own client: pooled, never redirected, with connect and
    /// idle-read (and idle-write) timeouts. A refused connection fails the request at once
    /// rather than retrying until the connect timeout: the core answers 503
    /// and serves what it has, which beats a client waiting ten seconds.
    static func clientConfiguration(tls: TLSConfiguration?,
                                    timeouts: (connect: Duration, read: Duration)) -> HTTPClient.Configuration {
        var pool = HTTPClient.Configuration.ConnectionPool()
        pool.retryConnectionEstablishment = false
        // Below Apache's default KeepAliveTimeout (5 s): davgate closes an
        // idle connection before the upstream does, so no request is ever
        // sent on a connection the server is closing that instant (seen as
        // "the upstream closed the connection" in the contract suite).
        pool.idleTimeout = .seconds(4)
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(timeouts.connect), read: TimeAmount(timeouts.read),
                           write: TimeAmount(timeouts.read)),
            connectionPool: pool,
            decompression: .disabled)
        // HTTP/1.1 even where h2 is offered: one transfer per pooled
        // connection, no stream flow-control window throttling a large file.
        configuration.httpVersion = .http1Only
        return configuration
    }
}
