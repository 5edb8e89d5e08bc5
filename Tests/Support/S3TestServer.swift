import Foundation

/// A real S3 server started for a test, with one empty bucket and one access
/// key. Tests take it as `any S3TestServer` and run against every
/// `S3ServerKind`; what differs between the kinds is in the kind's
/// properties, so a contract test can say which answer each one gives.
public protocol S3TestServer: AnyObject, Sendable {
    var kind: S3ServerKind { get }
    /// `http://127.0.0.1:PORT`, path-style: the bucket is the first segment.
    var endpoint: URL { get }
    var port: Int { get }
    var bucket: String { get }
    var accessKeyID: String { get }
    var secretAccessKey: String { get }
    var region: String { get }
    /// Where the server writes its log, to quote when a test fails.
    var log: URL { get }
    /// Stops the server; its files stay until `cleanUp()`.
    func stop()
    /// Stops the server and removes its files.
    func cleanUp()
}

/// The access key every test server accepts. The secret holds `/` and `+`,
/// as real AWS secrets do, so signing code that would encode it (or trip
/// over base64 characters) fails here first.
public enum S3TestAccount {
    public static let accessKeyID = "DAVGATETESTKEY000001"
    public static let secretAccessKey = "wJalr/XUtnFEMI+K7MDENG/bPxRfiCY+EXAMPLEKEY"
    public static let region = "us-east-1"
    public static let bucket = "davgate-bucket"
}

/// The S3 servers the tests run against, and how they differ from S3
/// where a store must care (measured with moto 5.2 and rclone 1.75.2).
public enum S3ServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// moto's server mode: S3's semantics in memory, requests unsigned or
    /// signed with anything.
    case moto
    /// rclone serve s3 on a local folder: checks every signature, keeps
    /// objects as files.
    case rclone

    public var description: String { rawValue }

    /// Starts a server of this kind with its bucket made.
    public func start() async throws -> any S3TestServer {
        switch self {
        case .moto: try await MotoServer()
        case .rclone: try await RcloneS3Server()
        }
    }

    /// Whether a request with a wrong signature is refused (moto takes it).
    public var verifiesSignatures: Bool { self == .rclone }

    /// Whether `If-None-Match: *` and `If-Match` on PUT and GET are
    /// honoured (rclone ignores them and writes or reads anyway).
    public var honoursConditions: Bool { self == .moto }

    /// Whether a key ending in `/` (a folder marker) is kept as such.
    /// rclone makes a PUT of `d/` a 0-byte file `d` (listed as key `d`),
    /// after which `d/x` fails; an empty folder on its disk is a common
    /// prefix in a delimited listing and absent from a flat one.
    public var keepsFolderMarkers: Bool { self == .moto }

    /// Whether ETags in a ListObjects answer are quoted, as S3's are
    /// (rclone lists them bare; its HEAD, GET and PUT quote them).
    public var quotesListedETags: Bool { self == .moto }

    /// Whether a multipart upload may leave gaps in its part numbers, as S3
    /// allows (rclone streams parts in order and refuses gaps at completion).
    public var allowsPartNumberGaps: Bool { self == .moto }

    /// Whether any key S3 takes is taken. rclone answers 400
    /// InvalidArgument for a key with an empty, `.` or `..` segment or a
    /// leading `/`, and KeyTooLongError past 1024 bytes (as S3 does; moto
    /// has no limit); it stores a control character as a visible stand-in
    /// (U+0001 is listed as U+2401) after failing the PUT with 500.
    public var takesAnyKey: Bool { self == .moto }

    /// Whether `f` and `f/g` can both be objects. On rclone a file and a
    /// folder cannot share a name: whichever comes second fails with 500
    /// InternalError.
    public var allowsKeyAndPrefixOfOneName: Bool { self == .moto }

    /// Whether ListMultipartUploads lists none when none are in progress.
    /// rclone answers 404 NoSuchUpload then (s3tool.py reads that as
    /// none), and forgets every upload when it restarts.
    public var listsNoUploadsAsEmpty: Bool { self == .moto }
}
