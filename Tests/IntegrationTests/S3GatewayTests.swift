import DavgateTestSupport
import Foundation
import Testing

/// A domain on a real S3 server, from a WebDAV client's side: litmus, the
/// bytes in the bucket, lazy listings, and what a client sees when S3
/// refuses or throttles.
@Suite("an S3 upstream through davgate")
struct S3GatewayTests {
    @Test("litmus, all five suites, against a domain on S3; every write reaches the bucket", arguments: S3ServerKind.allCases)
    func litmus(kind: S3ServerKind) async throws {
        let litmus = try #require(findExecutable("litmus"), "litmus is not installed; .ci/run installs it (apt-get install litmus)")
        try await withS3Gateway(kind, prefix: "litmus root/") { g in
            let summary = try await runLitmus(litmus, url: "\(g.gateway.baseURL)/s3/", password: g.gateway.adminPassword, in: g.gateway.root)
            if summary.failed > 0 || summary.warnings > 0 || summary.passed < 103 { print(summary.output) }
            #expect(summary.suites == 5)
            #expect(summary.passed == 103, "litmus passed \(summary.passed) of 103")
            #expect(summary.failed == 0, "litmus failures: \(summary.failures)")
            #expect(summary.warnings == 0, "litmus warnings: \(summary.warningLines)")
            #expect(try await g.client.uploadsDrained())
            #expect(try await g.client.uploads(domain: "s3").failed == 0)
            // litmus leaves its collection behind, empty but for what its last suites made.
            let keys = try await g.server.keys(prefix: "litmus root/")
            let marker = g.markers == "slash" ? "litmus root/litmus/" : "litmus root/litmus/.davgate-folder"
            #expect(keys[marker] != nil, "\(keys.keys.sorted())")
        }
    }

    @Test("a write lands in the bucket under the prefix with its bytes and time; a file put there by another tool is listed and read lazily", arguments: S3ServerKind.allCases)
    func writeAndRead(kind: S3ServerKind) async throws {
        try await withS3Gateway(kind, prefix: "team/") { g in
            #expect(try await g.client.send("MKCOL", "/s3/docs").status == 201)
            #expect(try await g.client.send("PUT", "/s3/docs/a b ü.txt", body: "through davgate").status == 201)
            #expect(try await g.client.uploadsDrained())
            #expect(try await g.server.object("team/docs/a b ü.txt") == Data("through davgate".utf8))

            try await g.server.put("team/docs/outside.txt", Data("put by another tool".utf8))
            try await Task.sleep(for: .seconds(5.2))  // the listing's TTL
            let listing = try await g.client.send("PROPFIND", "/s3/docs/", headers: [("Depth", "1")])
            #expect(listing.text.contains("/s3/docs/outside.txt"))
            #expect(try await g.client.send("GET", "/s3/docs/outside.txt").text == "put by another tool")
            let range = try await g.client.send("GET", "/s3/docs/outside.txt", headers: [("Range", "bytes=4-6")])
            #expect(range.status == 206 && range.text == "by ")
        }
    }

    @Test("a DELETE moves the objects into the trash below the prefix; a restore brings them back byte for byte", arguments: S3ServerKind.allCases)
    func trash(kind: S3ServerKind) async throws {
        try await withS3Gateway(kind, prefix: "team/") { g in
            #expect(try await g.client.send("MKCOL", "/s3/docs").status == 201)
            #expect(try await g.client.send("PUT", "/s3/docs/a.txt", body: "alpha").status == 201)
            #expect(try await g.client.send("PUT", "/s3/docs/b ü.txt", body: "beta").status == 201)
            #expect(try await g.client.uploadsDrained())
            #expect(try await g.client.send("DELETE", "/s3/docs/").status == 204)
            #expect(try await g.server.listing(prefix: "team/docs").isEmpty, "the folder left its place")
            let entry = try #require(try await g.client.trashEntries("s3").first)
            #expect(entry.location == "docs")
            let kept = try await g.server.listing(prefix: "team/.davgate/trash/").map(\.key)
            #expect(kept.contains("team/.davgate/trash/\(entry.name)/a.txt") && kept.contains("team/.davgate/trash/\(entry.name).info"), "\(kept)")
            let listing = try await g.client.send("PROPFIND", "/s3/", headers: [("Depth", "1")])
            #expect(!listing.text.contains(".davgate"), "\(listing.text)")

            let restored = try await g.client.send("MOVE", "/.davgate/trash/s3/\(entry.name)",
                                                   headers: [("Destination", "\(g.client.base)/.davgate/trash/s3/restore/\(entry.name)")])
            #expect(restored.status == 201, "\(restored.text)")
            #expect(try await g.server.object("team/docs/a.txt") == Data("alpha".utf8))
            #expect(try await g.server.object("team/docs/b ü.txt") == Data("beta".utf8))
            #expect(try await g.client.send("GET", "/s3/docs/b%20%C3%BC.txt").text == "beta")
            let left = try await g.server.listing(prefix: "team/.davgate/trash/").map(\.key).filter { !$0.hasSuffix("/") && !$0.hasSuffix(".davgate-folder") }
            #expect(left.isEmpty, "the trash still holds \(left)")
        }
    }

    @Test("a folder of 3,000 objects lists through every page of ListObjectsV2 and fetches no content")
    func largeFolderListsLazily() async throws {
        try await withS3Gateway(.rclone, faults: true) { g in
            // Straight into the folder rclone serves: 3,000 objects in a moment.
            let rclone = try #require(g.server as? RcloneS3Server)
            let folder = rclone.bucketFolder.appendingPathComponent("many")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for n in 0..<3000 { try Data("object \(n)".utf8).write(to: folder.appendingPathComponent("o\(n)")) }
            try await Task.sleep(for: RcloneS3Server.settleAfterDiskChanges)
            let proxy = try #require(g.proxy)
            try await proxy.reset()
            let listing = try await g.client.send("PROPFIND", "/s3/many/", headers: [("Depth", "1")])
            #expect(listing.status == 207)
            #expect(listing.text.components(separatedBy: "<D:response>").count - 1 == 3001)
            let received = try await proxy.received()
            #expect(received[.listObjectsV2, default: 0] >= 3, "1,000 keys a page: \(received)")
            #expect(received[.getObject] == nil, "a listing fetches no content")
        }
    }

    @Test("S3 refusing the signature is a 502 naming the vault entry to fix")
    func refusedSignature() async throws {
        try await withS3Gateway(.rclone, secret: "not the secret key") { g in
            let listing = try await g.client.send("PROPFIND", "/s3/", headers: [("Depth", "1")])
            #expect(listing.status == 502)
            #expect(listing.text.contains("SignatureDoesNotMatch") || listing.text.contains("403"))
            #expect(listing.text.contains("vault entry service &quot;s3&quot;") || listing.text.contains("vault entry service \"s3\""), "\(listing.text)")
            #expect(!g.gateway.stderr.contains("not the secret key"))
        }
    }

    @Test("a SlowDown storm that outlasts the retries is a 503 with Retry-After; the same read succeeds once it passes")
    func slowDownStorm() async throws {
        try await withS3Gateway(.moto, faults: true) { g in
            try await g.server.put("f.txt", Data("content".utf8))
            #expect(try await g.client.send("PROPFIND", "/s3/", headers: [("Depth", "1")]).text.contains("/s3/f.txt"))
            let proxy = try #require(g.proxy)
            try await proxy.slowDown(next: 100, of: [.getObject])
            let throttled = try await g.client.send("GET", "/s3/f.txt")
            #expect(throttled.status == 503)
            #expect(throttled.header("Retry-After") != nil)
            #expect(try await proxy.received()[.getObject, default: 0] >= 2, "retried before giving up")
            try await proxy.reset()
            #expect(try await g.client.send("GET", "/s3/f.txt").text == "content")
        }
    }

    @Test("a bucket that does not exist is refused at start, naming the config line")
    func missingBucket() async throws {
        let server = try await S3ServerKind.moto.start()
        defer { server.cleanUp() }
        let (vault, key) = try await makeVault()
        let folder = vault.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await runDavgate(["vault", "set", "s3", server.accessKeyID, "--group", "s3", "--vault", vault.path, "--key-file", key.path],
                       stdin: server.secretAccessKey + "\n")
        let config = folder.appendingPathComponent("davgate.toml")
        try """
            [server]
            listen = "127.0.0.1:0"
            state = "var"
            vault = "\(vault.path)"

            [[domain]]
            name = "s3"
            upstream = "s3://no-such-bucket/"
            endpoint = "\(server.endpoint.absoluteString)"
            path_style = true
            credentials = { service = "s3", account = "\(server.accessKeyID)" }
            """.write(to: config, atomically: true, encoding: .utf8)
        let started = try await runDavgate(["serve", "--config", config.path, "--key-file", key.path])
        #expect(started.status != 0)
        #expect(started.output.contains("\(config.path) line 8"), "\(started.output)")
        #expect(started.output.contains("no-such-bucket") && started.output.contains("NoSuchBucket"))
    }
}
