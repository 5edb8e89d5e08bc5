import Foundation

/// What a client needs to reach davgate, and what a test needs to check what
/// the client did: one process (``DavgateProcess``) or three behind HAProxy
/// (``DavgateCluster``). The client helpers (DAVClient, rclone, davfs2,
/// cadaver) take either.
public protocol GatewayEndpoint: Sendable {
    /// `https://127.0.0.1:PORT` (or `http://`), without a path.
    var baseURL: String { get }
    var tls: Bool { get }
    /// The certificate (PEM) a client trusts; none is read without ``tls``.
    var certificate: URL { get }
    /// The password of the user `admin`.
    var adminPassword: String { get }
    /// A folder of the test's own, where clients keep their homes.
    var root: URL { get }
    /// The upstream folder of the domain `files`.
    var upstream: URL { get }
}

extension GatewayEndpoint {
    /// The collection URL of the domain `name`, with its trailing slash.
    public func domainURL(_ name: String) -> URL { URL(string: baseURL + "/\(name)/")! }
    /// The collection URL of the domain `files`.
    public var filesURL: URL { domainURL("files") }

    /// The names in the upstream folder's root as a client sees them:
    /// davgate's own folder (trash, versions), which it hides, left out.
    public func upstreamNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: upstream.path).filter { $0 != ".davgate" }
    }
}
