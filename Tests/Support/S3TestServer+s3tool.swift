import Foundation

/// An object as a listing shows it.
public struct S3ListedObject: Sendable, Equatable, CustomStringConvertible {
    public let size: Int
    /// Without quotes, whichever way the server listed it.
    public let etag: String

    public init(size: Int, etag: String) {
        self.size = size
        self.etag = etag
    }

    public var description: String { "\(size) bytes, ETag \(etag)" }
}

/// One line of `s3tool.py --json list`.
private struct S3ListingRow: Decodable {
    let key: String
    let size: Int
    let etag: String
}

/// A multipart upload in progress.
public struct S3PendingUpload: Sendable, Equatable, Decodable {
    public let key: String
    public let uploadId: String
}

/// Looking at the bucket through the S3 server itself, with s3tool.py on
/// boto3, never through davgate: what a store really wrote. Each call is
/// one Python start (about 0.3 s, mostly importing boto3).
extension S3TestServer {
    /// Runs s3tool.py with this server's endpoint, key and bucket.
    public func s3tool(_ arguments: [String], input: Data? = nil) async throws -> ChildProcess.Output {
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ENDPOINT_URL"] = endpoint.absoluteString
        environment["AWS_ACCESS_KEY_ID"] = accessKeyID
        environment["AWS_SECRET_ACCESS_KEY"] = secretAccessKey
        environment["AWS_DEFAULT_REGION"] = region
        environment["S3TOOL_BUCKET"] = bucket
        // No profile, configuration or session token of the machine's may
        // change what boto3 sends.
        environment["AWS_CONFIG_FILE"] = "/dev/null"
        environment["AWS_SHARED_CREDENTIALS_FILE"] = "/dev/null"
        for name in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"] { environment[name] = nil }
        return try await Python.run("s3tool.py", arguments, input: input, environment: environment)
    }

    /// Every key in the bucket (below `prefix`), with its size and ETag.
    /// Swift compares strings by canonical equivalence, so an NFC and an
    /// NFD spelling of one name are one key here; ``listing(prefix:)``
    /// keeps both.
    public func keys(prefix: String = "") async throws -> [String: S3ListedObject] {
        Dictionary(try await listing(prefix: prefix).map { ($0.key, $0.object) }, uniquingKeysWith: { first, _ in first })
    }

    /// Every key in the bucket (below `prefix`) as the server lists it, in
    /// its order and spelled as it is stored: compare `key.utf8` to tell
    /// names apart that differ only in their Unicode normalization.
    public func listing(prefix: String = "") async throws -> [(key: String, object: S3ListedObject)] {
        let output = try await s3tool(["--json", "list", "--prefix", prefix])
        let rows = try JSONDecoder().decode([S3ListingRow].self, from: output.stdout)
        return rows.map { ($0.key, S3ListedObject(size: $0.size, etag: $0.etag.trimmingCharacters(in: ["\""]))) }
    }

    /// The object's bytes.
    public func object(_ key: String) async throws -> Data {
        try await s3tool(["get", key]).stdout
    }

    /// Stores `data` at `key`, behind davgate's back.
    /// - Returns: the ETag the server answered, without quotes.
    @discardableResult
    public func put(_ key: String, _ data: Data) async throws -> String {
        try await s3tool(["put", key, "-"], input: data).text
            .trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: ["\""])
    }

    /// Removes the object at `key` (no error when there is none).
    public func delete(_ key: String) async throws {
        _ = try await s3tool(["delete", key])
    }

    /// Makes another bucket, `name`, on this server (rclone: a folder
    /// beside the first).
    public func makeBucket(_ name: String) async throws {
        _ = try await s3tool(["--bucket", name, "mkbucket"])
    }

    /// The multipart uploads in progress (rclone forgets them when it restarts).
    public func multipartUploads() async throws -> [S3PendingUpload] {
        try JSONDecoder().decode([S3PendingUpload].self, from: try await s3tool(["--json", "uploads"]).stdout)
    }
}
