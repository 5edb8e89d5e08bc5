import DavgateTestSupport
import Foundation
import ProviderCore
import Testing
import Upstreams

/// What only the S3 store does, against real S3 servers, with failures
/// injected by `S3FaultProxy`, a proxy in front of the real server.
@Suite("S3Store specifics")
final class S3StoreTests: Sendable {
    /// This test's local files (Swift Testing makes an instance per test),
    /// removed after it: the uploads leave their sources where they were.
    let sources = FileManager.default.temporaryDirectory.appendingPathComponent("s3-sources-\(UUID().uuidString)")

    deinit { try? FileManager.default.removeItem(at: sources) }

    /// A store on `server` (through `proxy` when given), with parts of
    /// 5 MiB from 6 MiB on, short back-off, and small listing pages.
    func store(_ server: any S3TestServer, through proxy: S3FaultProxy? = nil, secret: String? = nil,
               markers: S3Store.FolderMarkers? = nil, attempts: Int = 4, pageSize: Int = 1000) throws -> S3Store {
        try S3Store(endpoint: proxy?.endpoint ?? server.endpoint, bucket: server.bucket, region: server.region, pathStyle: true,
                    credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: secret ?? server.secretAccessKey),
                    credentialsSource: "the vault entry service \"s3\" account \"\(server.accessKeyID)\"",
                    folderMarkers: markers ?? (server.kind.keepsFolderMarkers ? .slash : .hidden),
                    multipart: S3Store.Multipart(threshold: 6 << 20, partSize: 5 << 20, parallel: 2),
                    retry: S3Store.Retry(attempts: attempts, firstDelay: .milliseconds(20), maxDelay: .milliseconds(100)),
                    listPageSize: pageSize)
    }

    /// Runs `body` with a server of `kind`, a fault proxy in front of it
    /// and a store through the proxy; cleans up whatever happens.
    func withStore(_ kind: S3ServerKind, attempts: Int = 4, pageSize: Int = 1000,
                   _ body: (any S3TestServer, S3FaultProxy, S3Store) async throws -> Void) async throws {
        let server = try await kind.start()
        defer { server.cleanUp() }
        let proxy = try await S3FaultProxy(in: server)
        defer { proxy.cleanUp() }
        try await body(server, proxy, try store(server, through: proxy, attempts: attempts, pageSize: pageSize))
    }

    func localFile(bytes count: Int) throws -> URL {
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let url = sources.appendingPathComponent("s3-local-\(UUID().uuidString)")
        try writeRandomFile(at: url, size: count)
        return url
    }

    @Test("a large file goes up in parts, streamed from the file; the bucket holds exactly its bytes", arguments: S3ServerKind.allCases)
    func multipartUpload(kind: S3ServerKind) async throws {
        try await withStore(kind) { server, proxy, store in
            let file = try localFile(bytes: 13 << 20)
            defer { try? FileManager.default.removeItem(at: file) }
            let progress = UploadProgress()
            let entry = try await store.upload(file, to: ["big.bin"], expecting: .absent, progress: progress)
            #expect(entry.size == 13 << 20)
            #expect(progress.bytesSent == 13 << 20)
            #expect(try await proxy.received()[.uploadPart] == 3, "5 + 5 + 3 MiB")
            #expect(try await server.object("big.bin") == (try Data(contentsOf: file)))
            #expect(try await store.stat(["big.bin"])?.version == entry.version)
        }
    }

    @Test("a part that keeps failing aborts the whole upload: nothing at the key, no multipart upload left stored", arguments: S3ServerKind.allCases)
    func failedPartAborts(kind: S3ServerKind) async throws {
        try await withStore(kind) { server, proxy, store in
            let file = try localFile(bytes: 13 << 20)
            defer { try? FileManager.default.removeItem(at: file) }
            // The second part fails at every attempt; the others go through.
            try await proxy.add(.init([.uploadPart], skip: 1, times: -1, action: .error(status: 500, code: "InternalError")))
            await #expect(throws: UpstreamError.self) {
                _ = try await store.upload(file, to: ["big.bin"], expecting: .absent, progress: nil)
            }
            #expect(try await proxy.received()[.abortMultipartUpload] == 1)
            #expect(try await server.keys().isEmpty)
            #expect(try await server.multipartUploads().isEmpty)
        }
    }

    @Test("a part failing once is sent again, and the upload completes", arguments: S3ServerKind.allCases)
    func partRetried(kind: S3ServerKind) async throws {
        try await withStore(kind) { server, proxy, store in
            let file = try localFile(bytes: 13 << 20)
            defer { try? FileManager.default.removeItem(at: file) }
            try await proxy.failUploadPart(2)
            _ = try await store.upload(file, to: ["big.bin"], expecting: .any, progress: nil)
            #expect(try await proxy.received()[.uploadPart] == 4)
            #expect(try await server.object("big.bin") == (try Data(contentsOf: file)))
        }
    }

    @Test("SlowDown is retried with back-off; a storm longer than the retries is 'unavailable' (503 to the client), and changes nothing", arguments: S3ServerKind.allCases)
    func slowDown(kind: S3ServerKind) async throws {
        try await withStore(kind, attempts: 4) { server, proxy, store in
            let file = try localFile(bytes: 1000)
            defer { try? FileManager.default.removeItem(at: file) }

            try await proxy.slowDown(next: 3, of: [.putObject])
            _ = try await store.upload(file, to: ["calm"], expecting: .any, progress: nil)
            #expect(try await proxy.received()[.putObject] == 4)

            try await proxy.slowDown(next: 4, of: [.putObject])
            await #expect {
                _ = try await store.upload(file, to: ["storm"], expecting: .any, progress: nil)
            } throws: { error in
                guard case .unavailable(let message) = error as? UpstreamError else { return false }
                return message.contains("SlowDown")
            }
            #expect(try await server.keys().keys.sorted() == ["calm"])
        }
    }

    @Test("a GET cut in the middle leaves no file: nothing partial becomes content", arguments: S3ServerKind.allCases)
    func cutGet(kind: S3ServerKind) async throws {
        try await withStore(kind) { server, proxy, store in
            try await server.put("f", Data(repeating: 0x61, count: 200_000))
            try await proxy.cutGetBodies(after: 50_000)
            let destination = FileManager.default.temporaryDirectory.appendingPathComponent("s3-cut-\(UUID().uuidString)")
            await #expect(throws: UpstreamError.self) { _ = try await store.fetch(["f"], into: destination) }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            _ = try await store.fetch(["f"], into: destination)
            defer { try? FileManager.default.removeItem(at: destination) }
            #expect(try Data(contentsOf: destination).count == 200_000)
        }
    }

    @Test("a refused signature names the vault entry to check")
    func wrongSecret() async throws {
        let server = try await S3ServerKind.rclone.start()
        defer { server.cleanUp() }
        let store = try store(server, secret: "not the secret")
        await #expect {
            _ = try await store.list([])
        } throws: { error in
            guard case .forbidden(let message) = error as? UpstreamError else { return false }
            return message.contains("403") && message.contains("vault entry service \"s3\"")
        }
    }

    @Test("a missing bucket is told apart at start", arguments: S3ServerKind.allCases)
    func noSuchBucket(kind: S3ServerKind) async throws {
        let server = try await kind.start()
        defer { server.cleanUp() }
        let store = try S3Store(endpoint: server.endpoint, bucket: "no-such-bucket", pathStyle: true,
                                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey))
        await #expect(throws: S3StoreConfigurationError.noSuchBucket(bucket: "no-such-bucket", endpoint: server.endpoint.absoluteString)) {
            try await store.checkBucket()
        }
        try await self.store(server).checkBucket()
    }

    @Test("listings follow every page: a folder of 25 keys in pages of 4, with folders, other tools' `name/` markers and keys no path can hold")
    func pagedListing() async throws {
        try await withStore(.moto, pageSize: 4) { server, proxy, store in
            for n in 0..<20 { try await server.put("d/f\(n)", Data("\(n)".utf8)) }
            try await server.put("d/sub/x", Data("x".utf8))
            try await server.put("d/empty/", Data())          // the AWS console's empty folder
            try await server.put("d/a//b", Data("odd".utf8))  // an empty segment: not a path
            try await server.put("d/..", Data("dots".utf8))
            var pages: [Int] = []
            _ = try await store.listPages(["d"]) { pages.append($0.count) }
            #expect(pages.count >= 6, "\(pages)")
            let entries = try await store.list(["d"])
            #expect(Set(entries.map(\.name)) == Set((0..<20).map { "f\($0)" } + ["sub", "empty", "a"]))
            #expect(entries.filter(\.isFolder).map(\.name).sorted() == ["a", "empty", "sub"])
            #expect(try await store.list(["d", "empty"]).isEmpty)
            #expect(try await proxy.received()[.getObject] == nil, "a listing fetches no content")
        }
    }

    @Test("a folder's move copies every key before it deletes any: a copy failing halfway loses nothing", arguments: S3ServerKind.allCases)
    func folderMoveKeepsEverything(kind: S3ServerKind) async throws {
        try await withStore(kind, pageSize: 3) { server, proxy, store in
            _ = try await store.makeFolder(["src"])
            for n in 0..<7 { _ = try await store.upload(try localFile(bytes: 10 + n), to: ["src", "f\(n)"], expecting: .absent, progress: nil) }
            try await proxy.add(.init([.copyObject], skip: 4, times: -1, action: .error(status: 500, code: "InternalError")))
            await #expect(throws: UpstreamError.self) { _ = try await store.move(["src"], to: ["dst"]) }
            let held = try await server.keys()
            #expect((0..<7).allSatisfy { held["src/f\($0)"] != nil }, "every original is still there")
            #expect(try await proxy.received()[.deleteObjects] == nil, "nothing was deleted")

            try await proxy.reset()
            _ = try await store.delete(["dst"])
            _ = try await store.move(["src"], to: ["dst"])
            #expect(Set(try await store.list(["dst"]).map(\.name)) == Set((0..<7).map { "f\($0)" }))
            #expect(try await store.stat(["src"]) == nil)
        }
    }

    @Test("uploads into one folder list it once, not once a file; a DELETE through the store makes the next upload list it again",
          arguments: S3ServerKind.allCases)
    func uploadsListTheirFolderOnce(kind: S3ServerKind) async throws {
        try await withStore(kind) { server, proxy, store in
            let file = try localFile(bytes: 4096)
            defer { try? FileManager.default.removeItem(at: file) }
            _ = try await store.makeFolder(["docs"])
            try await proxy.reset()
            for n in 0..<5 { _ = try await store.upload(file, to: ["docs", "f\(n).bin"], expecting: .absent, progress: nil) }
            #expect(try await proxy.received()[.listObjectsV2] == 1, "one listing of docs for five uploads")
            #expect(try await proxy.received()[.putObject] == 5)
            // A folder deleted through the store is asked about again, and refused.
            try await store.delete(["docs"])
            try await proxy.reset()
            await #expect(throws: UpstreamError.conflict) {
                _ = try await store.upload(file, to: ["docs", "late.bin"], expecting: .absent, progress: nil)
            }
            #expect(try await proxy.received()[.putObject] == nil, "nothing written into the deleted folder")
            #expect(try await store.stat(["docs", "late.bin"]) == nil)
        }
    }

    @Test("deleting a folder's last file keeps the folder, as a file system does", arguments: S3ServerKind.allCases)
    func lastFileKeepsFolder(kind: S3ServerKind) async throws {
        let server = try await kind.start()
        defer { server.cleanUp() }
        let store = try store(server)
        // A folder that exists only through its one file (put by another tool).
        try await server.put("only/file", Data("x".utf8))
        #expect(try await store.stat(["only"])?.isFolder == true)
        try await store.delete(["only", "file"])
        #expect(try await store.stat(["only"])?.isFolder == true)
        #expect(try await store.list(["only"]).isEmpty)
    }
}
