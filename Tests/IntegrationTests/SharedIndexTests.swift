import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
import Testing

/// davgate on a shared index (`[index] url`), a real PostgreSQL 15 started
/// by the test: what clients wrote outlives the process, and the
/// database's outage is a 503 a client can retry, never a 500 or a lost
/// write. Several instances on one index: `ClusterTests`.
@Suite("a shared index on a real PostgreSQL", .serialized)
struct SharedIndexTests {
    static let property = """
        <?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:example"><D:set><D:prop>\
        <Z:colour>teal</Z:colour></D:prop></D:set></D:propertyupdate>
        """

    @Test("items, dead properties and locks outlive the server")
    func outlivesTheServer() async throws {
        try await Self.withIndex("shared", fsync: true) { postgres, start in
            let first = try await start(nil)
            #expect(first.stdout.contains("Index: postgres://davgate@127.0.0.1:\(postgres.port)/shared (PostgreSQL)"))
            let token = try await withClient(first) { client in
                #expect(try await client.send("PUT", "/files/a.txt", body: "hello").status == 201)
                #expect(try await client.send("PROPPATCH", "/files/a.txt", body: Self.property).status == 207)
                let lock = try await client.send("LOCK", "/files/a.txt", body: AdversarialTests.lockinfo)
                #expect(lock.status == 200)
                return try #require(lock.header("Lock-Token"))
            }
            #expect(try await postgres.psql("SELECT count(*) FROM lock", database: "shared") == "1", "the lock is a row in PostgreSQL")

            first.stop()
            let again = try await start(first.root)
            try await withClient(again) { client in
                #expect(try await client.send("GET", "/files/a.txt").text == "hello")
                let props = try await client.send("PROPFIND", "/files/a.txt", headers: [("Depth", "0")], body: """
                    <?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:example"><D:prop><Z:colour/><D:lockdiscovery/></D:prop></D:propfind>
                    """)
                #expect(props.text.contains("teal"), "the dead property outlived the server")
                #expect(props.text.contains(token.trimmingCharacters(in: CharacterSet(charactersIn: "<>"))), "so did the lock")
                #expect(try await client.send("PUT", "/files/a.txt", body: "other").status == 423, "and it is still enforced")
                #expect(try await client.send("PUT", "/files/a.txt", headers: [("If", "(\(token))")], body: "mine").status == 204)
            }
        }
    }

    @Test("PostgreSQL down: what needs the index answers 503 with Retry-After and a DAV error body, nothing is acknowledged; once it is back, requests succeed")
    func databaseDown() async throws {
        try await Self.withIndex("outage", fsync: true) { postgres, start in
            let server = try await start(nil)
            try await withClient(server) { client in
                #expect(try await client.send("PUT", "/files/before.txt", body: "kept").status == 201)
                try await postgres.stop()
                let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
                #expect(listing.status == 503)
                #expect(listing.header("Retry-After") != nil)
                #expect(listing.text.contains("the index database is unavailable"), "\(listing.text)")
                let put = try await client.send("PUT", "/files/during.txt", body: "refused")
                #expect(put.status == 503)
                #expect(!FileManager.default.fileExists(atPath: server.upstream.appendingPathComponent("during.txt").path),
                        "nothing reached the upstream for a write that was not acknowledged")

                try await postgres.start()
                var status = 0
                for _ in 0..<60 where status != 207 {
                    status = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")]).status
                    if status != 207 { try await Task.sleep(for: .milliseconds(500)) }
                }
                #expect(status == 207, "the index answers again once PostgreSQL is back")
                #expect(try await client.send("GET", "/files/before.txt").text == "kept")
                #expect(try await client.send("PUT", "/files/after.txt", body: "new").status == 201)
            }
        }
    }

    @Test("uploads in several requests answer 501 on a shared index (the next piece may reach another instance); one Content-Range covering the whole file is a PUT; no chunk folders")
    func piecesRefused() async throws {
        try await Self.withIndex("pieces") { _, start in
            let server = try await start(nil)
            try await withClient(server) { client in
                let piece = try await client.send("PUT", "/files/p.bin", headers: [("Content-Range", "bytes 0-3/8")], body: "abcd")
                #expect(piece.status == 501)
                #expect(piece.text.contains("send the file with one PUT"), "\(piece.text)")
                #expect(!FileManager.default.fileExists(atPath: server.upstream.appendingPathComponent("p.bin").path))
                let whole = try await client.send("PUT", "/files/p.bin", headers: [("Content-Range", "bytes 0-7/8")], body: "abcdefgh")
                #expect([200, 201, 204].contains(whole.status))
                #expect(try await client.send("GET", "/files/p.bin").text == "abcdefgh")
                #expect(try await client.send("MKCOL", "/remote.php/dav/uploads/admin/chunks").status == 404)
            }
        }
    }

    @Test("status.json and the status page of an instance list every instance on the index, alive, and which one answered; a stopped one leaves the list")
    func instancesInStatus() async throws {
        try await Self.withIndex("instances") { _, start in
            let a = try await start(nil)
            let b = try await start(nil)
            func instances() async throws -> [[String: Any]] {
                var listed: [[String: Any]] = []
                try await withClient(a) { client in
                    let body = try await client.send("GET", "/.davgate/status.json").text
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
                    listed = try #require(json["instances"] as? [[String: Any]], "\(body)")
                }
                return listed
            }
            // Each beats at start and every 2 s; its address once it listens.
            var listed: [[String: Any]] = []
            for _ in 0..<50 {
                listed = try await instances()
                if listed.count == 2, !listed.contains(where: { ($0["address"] as? String)?.hasSuffix(":?") != false }) { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(listed.count == 2)
            #expect(listed.allSatisfy { $0["alive"] as? Bool == true })
            #expect(listed.filter { $0["answering"] as? Bool == true }.count == 1)
            #expect(Set(listed.compactMap { $0["address"] as? String }) == ["https://127.0.0.1:\(a.port)", "https://127.0.0.1:\(b.port)"])
            try await withClient(a) { client in
                let page = try await client.send("GET", "/.davgate/status").text
                #expect(page.contains("Instances on the shared index: 2 alive"))
            }
            #expect(try await b.terminate(timeout: .seconds(20)) == 0)
            #expect(try await instances().count == 1, "a stopped instance removes its row")
        }
    }

    /// Runs `body` with a PostgreSQL server holding `database` and a way
    /// to start davgate servers on it (`reuse`: a stopped
    /// one's folder); every server started is cleaned up after, and its
    /// log printed when the test threw.
    static func withIndex(_ database: String, fsync: Bool = false,
                          _ body: (_ postgres: PostgresServer, _ start: (_ reuse: URL?) async throws -> DavgateProcess) async throws -> Void) async throws {
        let postgres = try await PostgresServer(fsync: fsync)
        let servers = NIOLockedValueBox<[DavgateProcess]>([])
        func cleanUp() async {
            servers.withLockedValue { $0 }.forEach { $0.cleanUp() }
            await postgres.cleanUp()
        }
        do {
            try await postgres.createDatabase(database)
            let url = postgres.url(database: database)
            try await body(postgres) { reuse in
                let server = try await DavgateProcess(reuse: reuse, index: url)
                servers.withLockedValue { $0.append(server) }
                return server
            }
        } catch {
            for server in servers.withLockedValue({ $0 }) { print(server.stderr) }
            await cleanUp()
            throw error
        }
        await cleanUp()
    }
}
