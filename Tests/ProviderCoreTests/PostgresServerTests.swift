import DavgateTestSupport
import Foundation
import Testing

/// The real PostgreSQL 15 the index's PostgreSQL backend will be tested
/// against (docs/scale-out.md, step 3): made, queried, crashed and started
/// again, and never left running.
@Suite("PostgresServer: a real PostgreSQL 15 per test")
struct PostgresServerTests {
    @Test("a new server makes a database, answers SELECT 1 and keeps what a table was given, UTF-8 included")
    func roundTrip() async throws {
        try await withServer(fsync: false) { server in
            #expect(server.url(database: "t1") == "postgres://davgate@127.0.0.1:\(server.port)/t1")
            try await server.createDatabase("t1")
            #expect(try await server.psql("SELECT 1", database: "t1") == "1")
            let answer = try await server.psql("""
                CREATE TABLE item (id bigint PRIMARY KEY, name text NOT NULL);
                INSERT INTO item VALUES (1, 'Grüße.txt'), (2, 'b');
                SELECT id, name FROM item ORDER BY id;
                """, database: "t1")
            #expect(answer == "1|Grüße.txt\n2|b")
            #expect(try await server.psql("SHOW max_connections") == "300")
            #expect(try await server.psql("SHOW fsync") == "off")
            #expect(try await server.psql("SHOW lc_collate; SHOW server_encoding") == "C\nUTF8")
            await #expect(throws: (any Error).self, "an error in the SQL throws") {
                try await server.psql("SELECT * FROM missing", database: "t1")
            }
        }
    }

    @Test("a committed row survives a crash (pg_ctl -m immediate); start() brings the server back on the same port")
    func crashAndStart() async throws {
        try await withServer(fsync: true) { server in
            try await server.createDatabase("crash")
            try await server.psql("CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (7)", database: "crash")
            try await server.crash()
            #expect(!ApacheServer.accepts(port: server.port), "nothing listens while it is down")
            await #expect(throws: (any Error).self) { try await server.psql("SELECT 1", database: "crash") }
            try await server.start()
            #expect(try await server.psql("SELECT id FROM kept", database: "crash") == "7")
            #expect(try await server.psql("SHOW port") == "\(server.port)")
            let log = try String(contentsOf: server.log, encoding: .utf8)
            #expect(log.contains("automatic recovery in progress"), "the second start recovered: \(log)")

            try await server.stop()
            try await server.start()
            #expect(try await server.psql("SELECT count(*) FROM kept", database: "crash") == "1")
        }
    }

    @Test("cleanUp() stops the server and removes its folder; so does releasing a server without it")
    func nothingLeftRunning() async throws {
        let server = try await PostgresServer(fsync: false)
        let port = server.port, folder = server.folder
        await server.cleanUp()
        #expect(!ApacheServer.accepts(port: port))
        #expect(!FileManager.default.fileExists(atPath: folder.path))

        var forgotten: PostgresServer? = try await PostgresServer(fsync: false)
        let forgottenPort = try #require(forgotten?.port), forgottenFolder = try #require(forgotten?.folder)
        #expect(ApacheServer.accepts(port: forgottenPort))
        forgotten = nil
        #expect(!ApacheServer.accepts(port: forgottenPort), "deinit stopped it")
        #expect(!FileManager.default.fileExists(atPath: forgottenFolder.path))
    }

    /// Runs `body` with a new server, which is cleaned up after it, thrown or not.
    private func withServer(fsync: Bool, _ body: (PostgresServer) async throws -> Void) async throws {
        let server = try await PostgresServer(fsync: fsync)
        do {
            try await body(server)
        } catch {
            await server.cleanUp()
            throw error
        }
        await server.cleanUp()
    }
}
