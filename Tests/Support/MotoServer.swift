import Foundation
import Testing

/// moto's S3 in server mode (`moto_server` from PyPI's moto[server]) on a
/// free loopback port, with `S3TestAccount.bucket` made through the S3 API.
/// Everything lives in the server's memory and ends with it. moto takes any
/// signature, or none.
public final class MotoServer: S3TestServer {
    public let kind = S3ServerKind.moto
    public let folder: URL
    public let port: Int
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }
    public let bucket = S3TestAccount.bucket
    public let accessKeyID = S3TestAccount.accessKeyID
    public let secretAccessKey = S3TestAccount.secretAccessKey
    public let region = S3TestAccount.region
    public var log: URL { folder.appendingPathComponent("moto.log") }
    private let process: PortAnnouncingProcess

    /// Starts the server (about half a second, most of it Python importing
    /// moto) and makes the bucket.
    public init() async throws {
        let program = try Python.program("moto_server", from: "moto[server]")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let process: PortAnnouncingProcess
        do {
            process = try await PortAnnouncingProcess(program, ["-H", "127.0.0.1", "-p", "0"],
                                                      log: folder.appendingPathComponent("moto.log"))
            // CreateBucket, unsigned: moto does not ask for a signature.
            let created = try await LoopbackHTTP.send(port: process.port, method: "PUT", target: "/\(S3TestAccount.bucket)")
            guard created.status == 200 else {
                process.stop()
                throw PortAnnouncingProcess.Failure(description: "CreateBucket: \(created.status) \(created.text)")
            }
        } catch {
            Issue.record("moto_server did not start: \(error)")
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
