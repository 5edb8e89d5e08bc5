import DavgateTestSupport
import Foundation
import Testing

/// Issue 3: several domains, each with its own users; read-only users;
/// domains a user may not see are 404; failed logins are slowed.
@Suite("domains and users over real TLS")
struct DomainAccessTests {
    /// `files` is open to everyone; `team` to alice (rw) and bob (ro) only.
    static let teamDomain = """

        [[domain]]
        name = "team"
        upstream = "file:../var/team"
        users = { alice = "rw", bob = "ro" }
        """

    @Test("read-only users get 403 on every write method and a read-only Allow")
    func readOnly() async throws {
        try await withGateway(extraDomain: Self.teamDomain) { server, admin in
            try await server.addUser("alice", password: "alice-pw")
            try await server.addUser("bob", password: "bob-pw")
            try await withClient(server, user: "alice", password: "alice-pw") { alice async throws in
                #expect(try await alice.send("PUT", "/team/doc.txt", body: "by alice").status == 201)
                #expect(try await alice.send("MKCOL", "/team/dir").status == 201)
            }
            try await withClient(server, user: "bob", password: "bob-pw") { bob async throws in
                #expect(try await bob.send("GET", "/team/doc.txt").text == "by alice")
                #expect(try await bob.send("PROPFIND", "/team/", headers: [("Depth", "1")]).status == 207)
                let writes: [(String, String, [(String, String)], String?)] = [
                    ("PUT", "/team/doc.txt", [], "by bob"),
                    ("PUT", "/team/doc.txt", [("Content-Range", "bytes 0-5/10")], "by bob"),
                    ("PATCH", "/team/doc.txt", [("Content-Type", "application/x-sabredav-partialupdate"), ("X-Update-Range", "append")], "!"),
                    ("MKCOL", "/team/bobdir", [], nil),
                    ("MOVE", "/team/doc.txt", [("Destination", "\(bob.base)/team/moved.txt")], nil),
                    ("COPY", "/team/doc.txt", [("Destination", "\(bob.base)/team/copy.txt")], nil),
                    ("DELETE", "/team/doc.txt", [], nil),
                    ("PROPPATCH", "/team/doc.txt", [], "<D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><x xmlns=\"urn:x\">1</x></D:prop></D:set></D:propertyupdate>"),
                    ("LOCK", "/team/doc.txt", [], Fixtures.lockBody),
                    ("UNLOCK", "/team/doc.txt", [("Lock-Token", "<urn:uuid:0>")], nil),
                ]
                for (method, path, headers, body) in writes {
                    let reply = try await bob.send(method, path, headers: headers, body: body)
                    #expect(reply.status == 403, "\(method) by a read-only user")
                }
                let options = try await bob.send("OPTIONS", "/team/")
                #expect(options.header("Allow") == "OPTIONS, GET, HEAD, PROPFIND, REPORT")
            }
            // Nothing bob tried reached the upstream. alice's PUT goes there
            // by write-back, after the upload delay, and bob's refused
            // attempts must not have changed what it carries.
            let upstreamDoc = server.state.appendingPathComponent("team/doc.txt")
            try await eventually("alice's doc.txt reaches the upstream") { FileManager.default.fileExists(atPath: upstreamDoc.path) }
            let names = try FileManager.default.contentsOfDirectory(atPath: server.state.appendingPathComponent("team").path).sorted()
            #expect(names == ["dir", "doc.txt"])
            #expect(try String(contentsOf: server.state.appendingPathComponent("team/doc.txt"), encoding: .utf8) == "by alice")
            // admin is not listed for team: the domain does not exist for them.
            #expect(try await admin.send("PROPFIND", "/team/", headers: [("Depth", "0")]).status == 404)
            #expect(try await admin.send("GET", "/team/doc.txt").status == 404)
        }
    }

    @Test("PROPFIND / lists only the domains the user may see")
    func rootListing() async throws {
        try await withGateway(extraDomain: Self.teamDomain) { server, admin in
            try await server.addUser("alice", password: "alice-pw")
            let adminView = try await admin.send("PROPFIND", "/", headers: [("Depth", "1")])
            #expect(adminView.status == 207)
            #expect(adminView.text.contains("<D:href>/files/</D:href>"))
            #expect(!adminView.text.contains("/team/"))
            try await withClient(server, user: "alice", password: "alice-pw") { alice async throws in
                let aliceView = try await alice.send("PROPFIND", "/", headers: [("Depth", "1")])
                #expect(aliceView.text.contains("<D:href>/files/</D:href>"))
                #expect(aliceView.text.contains("<D:href>/team/</D:href>"))
            }
        }
    }

    @Test("repeated failed logins are answered ever more slowly, and logged without the password")
    func throttle() async throws {
        try await withGateway { server, _ in
            try await withClient(server, password: "wrong-password-123") { guesser async throws in
                let clock = ContinuousClock()
                var delays: [Double] = []
                for attempt in 0..<7 {
                    let start = clock.now
                    let reply = try await guesser.send("PROPFIND", "/files/", headers: [("Depth", "0")])
                    let took = clock.now - start
                    #expect(reply.status == 401)
                    // The error body says how long the answer was held back ...
                    let match = try #require(reply.text.firstMatch(of: /answer delayed ([0-9.]+) seconds/))
                    let delay = try #require(Double(match.1))
                    delays.append(delay)
                    // ... and it really was: a lower bound holds however busy the machine is.
                    #expect(took >= .milliseconds(Int(delay * 1000)), "attempt \(attempt) took \(took), delay \(delay)")
                }
                // 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, then capped at 5 s.
                #expect(delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0], "\(delays)")
            }
            // The right password still works at once: the throttle never slows a correct login.
            try await withClient(server) { client async throws in
                #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")]).status == 207)
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.stderr.contains("login failed for \"admin\""))
            #expect(server.stderr.contains("127.0.0.1"))
            #expect(!server.stderr.contains("wrong-password-123"))
        }
    }
}

@Suite("domain reset")
struct DomainResetTests {
    @Test("reset drops cache, placeholders, locks and dead properties and leaves the upstream untouched; it refuses while writes wait for upload")
    func reset() async throws {
        let first = try await DavgateProcess()
        defer { first.cleanUp() }
        try await withClient(first) { client async throws in
            #expect(try await client.send("PUT", "/files/keep.txt", body: "upstream keeps me").status == 201)
            #expect(try await client.uploadsDrained())
            // A write the journal holds back under its lock until the stop.
            let lock = try await client.send("LOCK", "/files/late.txt", body: Fixtures.lockBody)
            #expect(try await client.send("PUT", "/files/late.txt", headers: [("If", "(<\(try lockToken(lock))>)")], body: "not uploaded").status == 204)
            let patch = "<D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><x:tag xmlns:x=\"urn:x\">dead</x:tag></D:prop></D:set></D:propertyupdate>"
            #expect(try await client.send("PROPPATCH", "/files/keep.txt", body: patch).status == 207)
            #expect(try await client.send("LOCK", "/files/keep.txt", body: Fixtures.lockBody).status == 200)
            #expect(try await client.send("PUT", "/files/keep.txt", body: "blocked").status == 423)
        }
        first.stop()
        let cache = first.state.appendingPathComponent("cache/files")
        #expect(FileManager.default.fileExists(atPath: cache.path))

        let refused = try await runDavgate(["domain", "reset", "files", "--config", first.configFile.path])
        #expect(refused.status != 0, "without --yes and without a terminal it refuses")
        let pending = try await runDavgate(["domain", "reset", "files", "--yes", "--config", first.configFile.path])
        #expect(pending.status != 0 && pending.output.contains("not uploaded yet: /late.txt"), "\(pending.output)")
        #expect(pending.output.contains("--discard-uploads"))
        let reset = try await runDavgate(["domain", "reset", "files", "--yes", "--discard-uploads", "--config", first.configFile.path])
        #expect(reset.status == 0, "\(reset.output)")
        #expect(reset.output.contains("Reset domain files"))
        #expect(!FileManager.default.fileExists(atPath: cache.path))
        #expect(try String(contentsOf: first.upstream.appendingPathComponent("keep.txt"), encoding: .utf8) == "upstream keeps me")
        #expect(!FileManager.default.fileExists(atPath: first.upstream.appendingPathComponent("late.txt").path), "the discarded write never went up")

        let second = try await DavgateProcess(reuse: first.root)
        defer { second.stop() }
        try await withClient(second, password: first.adminPassword) { client async throws in
            let ask = "<D:propfind xmlns:D=\"DAV:\"><D:prop><x:tag xmlns:x=\"urn:x\"/><D:lockdiscovery/></D:prop></D:propfind>"
            let props = try await client.send("PROPFIND", "/files/keep.txt", headers: [("Depth", "0")], body: ask)
            #expect(props.status == 207)
            #expect(!props.text.contains("dead"), "dead properties are gone")
            #expect(!props.text.contains("activelock"), "locks are gone")
            #expect(try await client.send("GET", "/files/keep.txt").text == "upstream keeps me")
            #expect(try await client.send("PUT", "/files/keep.txt", body: "free again").status == 204)
        }
    }
}
