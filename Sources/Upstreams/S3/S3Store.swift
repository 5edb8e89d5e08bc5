import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import ProviderCore

/// An upstream that is an S3 bucket (AWS, MinIO, Ceph RGW, Garage, R2,
/// Backblaze, Wasabi, moto, `rclone serve s3`), or a prefix of one.
///
/// S3 has keys, not folders. The store maps the one onto the other the way
/// the AWS console and most tools do: `a/b/c` is the file `c` in the folder
/// `b` of the folder `a`; a folder exists while any key lies below it, and
/// an empty folder is a zero-byte marker object `name/` (or, with
/// `folderMarkers = .hidden`, `name/.davgate-folder`, for servers such as
/// `rclone serve s3` that cannot hold a key ending in a slash). A deletion
/// that would leave a folder without keys writes its marker, so folders
/// behave as they do on a file system: they go away only when deleted.
///
/// Every request is signed with Signature Version 4 (`S3Signer`); bodies
/// stream both ways (a GET into the destination file as it arrives, a PUT
/// and each multipart part from the local file one MiB at a time), so no
/// object is ever held in memory. `SlowDown`, 500 and 503 are retried with
/// back-off before they become `.unavailable` (503 with Retry-After to the
/// client). The store never writes its secret into a message or its name.
public struct S3Store: UpstreamStore, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// How an empty folder is kept.
    public enum FolderMarkers: String, Sendable, CaseIterable {
        /// A zero-byte object `name/`: what the AWS console, rclone and s3fs write.
        case slash
        /// A zero-byte object `name/.davgate-folder`, hidden from listings:
        /// for servers that store keys as files and cannot hold `name/`.
        case hidden
    }

    /// When an upload goes in parts, and how.
    public struct Multipart: Sendable, Equatable {
        /// Files of this size or more are uploaded in parts.
        public var threshold: Int64
        /// The size of each part (S3's minimum is 5 MiB but for the last);
        /// grown for files that would need more than 10,000 parts.
        public var partSize: Int64
        /// Parts in flight at once.
        public var parallel: Int

        public init(threshold: Int64 = 32 << 20, partSize: Int64 = 16 << 20, parallel: Int = 4) {
            self.threshold = threshold
            self.partSize = partSize
            self.parallel = max(1, parallel)
        }
    }

    /// How often and how patiently a throttled or failing request is retried.
    public struct Retry: Sendable, Equatable {
        public var attempts: Int
        public var firstDelay: Duration
        public var maxDelay: Duration

        public init(attempts: Int = 5, firstDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(4)) {
            self.attempts = max(1, attempts)
            self.firstDelay = firstDelay
            self.maxDelay = maxDelay
        }
    }

    public let bucket: String
    /// The key prefix the domain's root is, empty or ending in `/`.
    public let prefix: String
    /// `scheme://host[:port]` of the endpoint.
    let origin: String
    /// The `host` header: the endpoint's, or `bucket.endpoint` in virtual-host style.
    let host: String
    let pathStyle: Bool
    let signer: S3Signer
    /// Where the credentials came from, for the message of a refusal.
    let credentialsSource: String?
    let folderMarkers: FolderMarkers
    let multipart: Multipart
    let retry: Retry
    /// Keys a listing page asks for: S3's own maximum, 1,000, but in tests.
    let listPageSize: Int
    let client: HTTPClient
    let ownClient: ClientOwner?
    let tlsConfiguration: TLSConfiguration?
    let timeouts: (connect: Duration, read: Duration)
    /// Folder prefixes this store saw holding keys lately (`folderTakesUploads`).
    let foldersSeen = Sightings<String>()

    public var displayName: String { "s3://\(bucket)/\(prefix) at \(origin)" }
    public var description: String { displayName }
    public var debugDescription: String { "S3Store(\(displayName))" }
    public var customMirror: Mirror { Mirror(self, children: ["displayName": displayName]) }

    /// S3 keys are at most 1,024 bytes of UTF-8; the prefix and the marker
    /// take their share. A name keeps the 255 bytes of the file systems the
    /// clients write from.
    public var nameRules: NameRules {
        let marker = folderMarkers == .slash ? 1 : 1 + Self.hiddenMarker.utf8.count
        return NameRules(maxNameBytes: 255, maxPathBytes: 1024 - prefix.utf8.count - marker)
    }

    /// The name of a hidden folder marker, never listed.
    static let hiddenMarker = ".davgate-folder"

    /// Creates a store for `s3://bucket/prefix/` at `endpoint`.
    ///
    /// - Parameters:
    ///   - endpoint: `https://host[:port]` (or `http` for a local server),
    ///     without a path.
    ///   - pathStyle: `https://host/bucket/key` (MinIO, Ceph, local servers)
    ///     rather than `https://bucket.host/key` (AWS).
    ///   - credentials: the access key; `credentialsSource` names the vault
    ///     entry it came from, for the message when S3 refuses it.
    ///   - extraTrustRoot: a PEM with an extra CA or the server's own certificate.
    /// - Throws: ``S3StoreConfigurationError`` for an unusable endpoint,
    ///   bucket or prefix.
    public init(endpoint: URL, bucket: String, prefix: String = "", region: String = "us-east-1", pathStyle: Bool,
                credentials: S3Credentials, credentialsSource: String? = nil, extraTrustRoot: URL? = nil,
                folderMarkers: FolderMarkers = .slash, multipart: Multipart = Multipart(), retry: Retry = Retry(),
                listPageSize: Int = 1000, httpClient: HTTPClient? = nil,
                timeouts: (connect: Duration, read: Duration) = (.seconds(10), .seconds(60))) throws {
        guard let components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let endpointHost = components.host, !endpointHost.isEmpty,
              components.path.isEmpty || components.path == "/", components.query == nil
        else { throw S3StoreConfigurationError.unsupportedEndpoint(endpoint.absoluteString) }
        guard components.user == nil, components.password == nil else {
            throw S3StoreConfigurationError.credentialsInURL
        }
        guard Self.validBucket(bucket) else { throw S3StoreConfigurationError.invalidBucket(bucket) }
        let segments = prefix.split(separator: "/", omittingEmptySubsequences: false)
        let trimmed = prefix.hasSuffix("/") ? segments.dropLast() : segments[...]
        guard prefix.isEmpty || trimmed.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw S3StoreConfigurationError.invalidPrefix(prefix)
        }
        let port = components.port.map { ":\($0)" } ?? ""
        let bracketed = endpointHost.contains(":") ? "[\(endpointHost)]" : endpointHost
        if !pathStyle && endpointHost.contains(":") { throw S3StoreConfigurationError.virtualHostOnAddress(endpointHost) }
        self.bucket = bucket
        self.prefix = prefix.isEmpty ? "" : trimmed.joined(separator: "/") + "/"
        self.pathStyle = pathStyle
        self.host = (pathStyle ? bracketed : "\(bucket).\(bracketed)") + port
        self.origin = "\(scheme)://\(host)"
        self.signer = S3Signer(credentials: credentials, region: region)
        self.credentialsSource = credentialsSource
        self.folderMarkers = folderMarkers
        self.multipart = multipart
        self.retry = retry
        self.listPageSize = max(1, min(listPageSize, 1000))
        self.timeouts = timeouts
        (client, ownClient, tlsConfiguration) = try HTTPUpstream.client(httpClient, trusting: extraTrustRoot, timeouts: timeouts)
    }

    /// Shuts the store's own HTTP client down; does nothing for a shared one.
    public func shutdown() async throws {
        if ownClient != nil { try await client.shutdown() }
    }

    public func quota() async throws -> UpstreamQuota? { nil }

    /// S3's bucket naming rules, loosely: what fits in a host name label
    /// and a path segment (3-63 characters, lower case, digits, `.`, `-`).
    static func validBucket(_ name: String) -> Bool {
        (3...63).contains(name.utf8.count)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F }
    }
}

/// Why an S3 upstream cannot be set up from its configuration.
public enum S3StoreConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unsupportedEndpoint(String)
    case credentialsInURL
    case invalidBucket(String)
    case invalidPrefix(String)
    case virtualHostOnAddress(String)
    /// The bucket is not there (S3's `NoSuchBucket`).
    case noSuchBucket(bucket: String, endpoint: String)

    public var description: String {
        switch self {
        case .unsupportedEndpoint(let url): "endpoint \(url) is not an http(s) URL with a host and no path"
        case .credentialsInURL: "the endpoint URL carries credentials; keep them in the vault instead"
        case .invalidBucket(let name): "\"\(name)\" is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)"
        case .invalidPrefix(let prefix): "the prefix \"\(prefix)\" has an empty, \".\" or \"..\" segment"
        case .virtualHostOnAddress(let host): "virtual-host style needs a host name, not the address \(host); set path_style = true"
        case .noSuchBucket(let bucket, let endpoint): "the bucket \"\(bucket)\" does not exist at \(endpoint) (NoSuchBucket); create it or correct the name"
        }
    }
}
