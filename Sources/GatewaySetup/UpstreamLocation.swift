import Foundation

/// Where a domain's files really live.
public enum UpstreamLocation: Sendable, Equatable {
    /// A local folder, from `upstream = "file:relative/or/absolute"`; the URL is absolute and standardized.
    case directory(URL)
    /// Another WebDAV server, from `upstream = "http://..."` or `"https://..."`.
    case webdav(URL)
    /// An S3 bucket or a prefix of one, from `upstream = "s3://BUCKET/PREFIX/"`
    /// and the domain's `endpoint`, `region`, `path_style`, `folder_markers`
    /// and `multipart_threshold`.
    case s3(S3Location)
}

/// An S3 upstream as configured.
public struct S3Location: Sendable, Equatable {
    public var bucket: String
    /// Empty, or the key prefix ending in `/`.
    public var prefix: String
    /// `endpoint`; AWS's regional endpoint when not given.
    public var endpoint: URL
    /// `region`, default `us-east-1`.
    public var region: String
    /// `path_style = true` for MinIO, Ceph and local servers; virtual-host
    /// style (the bucket in the host name), AWS's, by default.
    public var pathStyle: Bool
    /// `folder_markers = "slash"` (default, `name/`) or `"hidden"`
    /// (`name/.davgate-folder`, for servers that cannot hold `name/`).
    public var folderMarkers: String
    /// `multipart_threshold`, default 32 MiB: files this large or larger
    /// are uploaded in parts.
    public var multipartThreshold: Int64

    public init(bucket: String, prefix: String, endpoint: URL, region: String = "us-east-1", pathStyle: Bool = false,
                folderMarkers: String = "slash", multipartThreshold: Int64 = 32 << 20) {
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint = endpoint
        self.region = region
        self.pathStyle = pathStyle
        self.folderMarkers = folderMarkers
        self.multipartThreshold = multipartThreshold
    }

    /// The keys only an S3 upstream takes.
    static let keys = ["endpoint", "region", "path_style", "folder_markers", "multipart_threshold"]
}

extension UpstreamLocation: CustomStringConvertible {
    /// As the configuration spells it: `file:/absolute/path`, the URL, or `s3://bucket/prefix/`.
    public var description: String {
        switch self {
        case .directory(let url): "file:\(url.path)"
        case .webdav(let url): url.absoluteString
        case .s3(let location): "s3://\(location.bucket)/\(location.prefix)"
        }
    }
}
