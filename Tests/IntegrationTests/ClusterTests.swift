import DavgateTestSupport
import Foundation
import Testing

/// Issue 19's cluster (docs/scale-out.md, section 5, step 8): three davgate
/// instances on one PostgreSQL index, one upstream folder and one users
/// file, behind HAProxy, which sends every request to the next instance
/// (``DavgateCluster``). What one instance did, the others know at once: a
/// lock taken on A binds a write on B, the bytes written through A are
/// what B serves, and properties and the namespace likewise. An instance
/// killed mid-write, or the database crashed mid-run, loses nothing a
/// client was told was written (ClusterTests+chaos.swift). litmus and the
/// real clients work through the balancer, any request on any instance.
///
/// The cross-instance tests talk to each instance on its own port, so each
/// step is known to run where it says; the others go through HAProxy.
@Suite("three davgate instances on one PostgreSQL index behind HAProxy", .serialized)
struct ClusterTests {
    static let lockinfo = """
        <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner>cluster test</D:owner></D:lockinfo>
        """
    static let lockdiscovery = """
        <?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/></D:prop></D:propfind>
        """

    @Test("litmus, all five suites, through HAProxy with every request on the next instance: 103 of 103, no warnings")
    func litmus() async throws {
        let litmus = try #require(findExecutable("litmus"), "litmus is not installed (apt-get install litmus)")
        try await withCluster { cluster, _ in
            let summary = try await runLitmus(litmus, url: "\(cluster.baseURL)/files/", password: cluster.adminPassword, in: cluster.root)
            if summary.failed > 0 || summary.warnings > 0 || summary.passed < 103 {
                print(summary.output)
                print(cluster.diagnostics)
            }
            #expect(summary.suites == 5, "litmus ran \(summary.suites) suites")
            #expect(summary.passed == 103, "litmus passed \(summary.passed) of 103")
            #expect(summary.failed == 0, "litmus failures: \(summary.failures)")
            #expect(summary.warnings == 0, "litmus warnings: \(summary.warningLines)")
            // Round robin: each instance answered about a third of them.
            let served = DavgateCluster.names.indices.map { cluster.requests(servedBy: $0).count }
            let total = served.reduce(0, +)
            #expect(total > 200 && served.allSatisfy { $0 * 4 > total }, "litmus's requests answered by a, b and c: \(served)")
        }
    }

    @Test("a lock taken on A: B refuses a PUT without its token (423) and takes one with it, B refreshes it, C sees it and releases it, and a lock's timeout ends it on every instance")
    func locksAcrossInstances() async throws {
        try await withCluster { cluster, clients in
            let (a, b, c) = (clients.a, clients.b, clients.c)
            #expect(try await a.send("PUT", "/files/locked.txt", body: "first").status == 201)
            let lock = try await a.send("LOCK", "/files/locked.txt", headers: [("Timeout", "Second-600"), xmlType], body: Self.lockinfo)
            #expect(lock.status == 200, "\(lock.text)")
            let token = try #require(lock.header("Lock-Token"), "LOCK on A: \(lock.status) \(lock.text)")
            let bareToken = token.trimmingCharacters(in: CharacterSet(charactersIn: "<>"))

            let refused = try await b.send("PUT", "/files/locked.txt", body: "B without the token")
            #expect(refused.status == 423, "PUT on B without the token of A's lock: \(refused.status) \(refused.text.prefix(300))")
            let deleteRefused = try await c.send("DELETE", "/files/locked.txt")
            #expect(deleteRefused.status == 423, "DELETE on C without the token: \(deleteRefused.status)")
            let withToken = try await b.send("PUT", "/files/locked.txt", headers: [("If", "(\(token))")], body: "B with the token")
            #expect([200, 201, 204].contains(withToken.status), "PUT on B with the token: \(withToken.status) \(withToken.text.prefix(300))")

            let seen = try await c.send("PROPFIND", "/files/locked.txt", headers: [("Depth", "0"), xmlType], body: Self.lockdiscovery)
            #expect(ActiveLock.all(in: seen).map(\.token) == [bareToken], "C's lockdiscovery: \(seen.text)")

            let refresh = try await b.send("LOCK", "/files/locked.txt", headers: [("If", "(\(token))"), ("Timeout", "Second-3600")])
            #expect(refresh.status == 200, "refresh on B: \(refresh.status) \(refresh.text.prefix(300))")
            let refreshed = try await a.send("PROPFIND", "/files/locked.txt", headers: [("Depth", "0"), xmlType], body: Self.lockdiscovery)
            let remaining = ActiveLock.all(in: refreshed).first.flatMap { Int($0.timeout.dropFirst("Second-".count)) } ?? 0
            #expect(remaining > 600, "A sees the refresh B made: \(refreshed.text)")
            let stillLocked = try await a.send("PUT", "/files/locked.txt", body: "A without the token")
            #expect(stillLocked.status == 423, "still locked on A after the refresh: \(stillLocked.status)")

            let unlock = try await c.send("UNLOCK", "/files/locked.txt", headers: [("Lock-Token", token)])
            #expect(unlock.status == 204, "UNLOCK on C: \(unlock.status) \(unlock.text.prefix(300))")
            let served = try await a.send("GET", "/files/locked.txt")
            #expect(served.text == "B with the token", "A serves what B wrote under the lock: \(served.status) \(served.text.prefix(100))")
            let after = try await a.send("PUT", "/files/locked.txt", body: "A after the unlock")
            #expect(after.status == 204, "PUT on A once C released the lock: \(after.status) \(after.text.prefix(300))")
            let stale = try await b.send("PUT", "/files/locked.txt", headers: [("If", "(\(token))")], body: "B with a released token")
            #expect(stale.status == 412, "the released token on B: \(stale.status)")
            let upstream = try String(contentsOf: cluster.upstream.appendingPathComponent("locked.txt"), encoding: .utf8)
            #expect(upstream == "A after the unlock")

            // A short lock taken on C ends on A and B when its timeout does.
            let short = try await c.send("LOCK", "/files/short.txt", headers: [("Timeout", "Second-2"), xmlType], body: Self.lockinfo)
            #expect(short.status == 201, "LOCK of a new name on C: \(short.status)")
            let early = try await a.send("PUT", "/files/short.txt", body: "too early")
            #expect(early.status == 423, "PUT on A under C's short lock: \(early.status)")
            try await Task.sleep(for: .seconds(3))
            let late = try await a.send("PUT", "/files/short.txt", body: "after the timeout")
            #expect([201, 204].contains(late.status), "PUT on A after the lock's timeout: \(late.status) \(late.text.prefix(300))")
            let gone = try await b.send("PROPFIND", "/files/short.txt", headers: [("Depth", "0"), xmlType], body: Self.lockdiscovery)
            #expect(gone.status == 207 && ActiveLock.all(in: gone).isEmpty, "B lists no lock after the timeout: \(gone.text)")
        }
    }

    @Test("what is written through one instance the others serve at once: six overwrites of sizes from nothing to 1.5 MB, each read on all three, with one ETag, before the next")
    func writesSeenEverywhere() async throws {
        try await withCluster { cluster, clients in
            let sizes = [5, 70_000, 0, 1_500_000, 12, 300_000]
            for (round, size) in sizes.enumerated() {
                let writer = round % 3
                let data = try randomData(size)
                let put = try await clients.direct[writer].send("PUT", "/files/shared.bin", bodyData: data)
                #expect(put.status == (round == 0 ? 201 : 204), "round \(round): PUT on \(DavgateCluster.names[writer]): \(put.status)")
                #expect(try Data(contentsOf: cluster.upstream.appendingPathComponent("shared.bin")) == data, "round \(round): the upstream holds it")
                var etags: Set<String> = []
                // The writer last, so a reader that cached the previous round's bytes is asked first.
                for reader in [(writer + 1) % 3, (writer + 2) % 3, writer] {
                    let got = try await clients.direct[reader].send("GET", "/files/shared.bin")
                    #expect(got.status == 200 && got.body == data,
                            "round \(round): \(DavgateCluster.names[writer]) wrote \(size) bytes, \(DavgateCluster.names[reader]) served \(got.status) with \(got.body.count) bytes\(got.body == data ? "" : " of other content")")
                    if let etag = got.header("ETag") { etags.insert(etag) }
                    let props = try await clients.direct[reader].send("PROPFIND", "/files/shared.bin", headers: [("Depth", "0")])
                    let length = Multistatus(props)?.responses.first?.value("getcontentlength")
                    #expect(length == "\(size)", "round \(round): \(DavgateCluster.names[reader]) lists getcontentlength \(length ?? "none")")
                }
                #expect(etags.count == 1, "round \(round): one ETag on every instance: \(etags)")
            }
        }
    }

    @Test("a dead property set on A is what B and C list at once; changed on B, removed on C, the others follow")
    func propertiesSeenEverywhere() async throws {
        try await withCluster { _, clients in
            let (a, b, c) = (clients.a, clients.b, clients.c)
            let created = try await a.send("PUT", "/files/doc.txt", body: "text")
            #expect(created.status == 201)
            for client in [b, c] { #expect(try await Self.colour(client) == nil, "no colour yet") }
            #expect(try await a.send("PROPPATCH", "/files/doc.txt", headers: [xmlType], body: Self.setColour("teal")).status == 207)
            #expect(try await Self.colour(b) == "teal", "B lists A's PROPPATCH")
            #expect(try await Self.colour(c) == "teal", "C lists A's PROPPATCH")
            #expect(try await b.send("PROPPATCH", "/files/doc.txt", headers: [xmlType], body: Self.setColour("ochre")).status == 207)
            #expect(try await Self.colour(a) == "ochre", "A lists B's change")
            #expect(try await Self.colour(c) == "ochre", "C lists B's change")
            let remove = """
                <?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:example:cluster"><D:remove><D:prop>\
                <Z:colour/></D:prop></D:remove></D:propertyupdate>
                """
            #expect(try await c.send("PROPPATCH", "/files/doc.txt", headers: [xmlType], body: remove).status == 207)
            #expect(try await Self.colour(a) == nil, "A no longer lists the property C removed")
            #expect(try await Self.colour(b) == nil, "B no longer lists the property C removed")
        }
    }

    @Test("MKCOL, PUT, MOVE, COPY and DELETE on A are what B and C list at once, and what the upstream holds")
    func namespaceSeenEverywhere() async throws {
        try await withCluster { cluster, clients in
            let (a, b, c) = (clients.a, clients.b, clients.c)
            // B and C list the root first: a listing they hold must not hide what A does next.
            for client in [b, c] { #expect(try await Self.names(client, "/files/") == []) }
            #expect(try await a.send("MKCOL", "/files/made/").status == 201)
            #expect(try await a.send("PUT", "/files/made/inner.txt", body: "inside").status == 201)
            #expect(try await Self.names(b, "/files/") == ["made/"], "B lists A's MKCOL")
            #expect(try await Self.names(c, "/files/made/") == ["inner.txt"], "C lists A's PUT into it")

            let move = try await a.send("MOVE", "/files/made/", headers: [("Destination", "\(cluster.instance(0).baseURL)/files/moved/")])
            #expect(move.status == 201, "MOVE on A: \(move.status) \(move.text.prefix(300))")
            #expect(try await Self.names(b, "/files/") == ["moved/"], "B lists A's MOVE")
            #expect(try await Self.names(c, "/files/moved/") == ["inner.txt"])
            #expect(try await b.send("GET", "/files/moved/inner.txt").text == "inside")
            #expect(try await c.send("GET", "/files/made/inner.txt").status == 404, "C no longer serves the old name")

            let copy = try await a.send("COPY", "/files/moved/", headers: [("Destination", "\(cluster.instance(0).baseURL)/files/copied/")])
            #expect(copy.status == 201, "COPY on A: \(copy.status)")
            #expect(try await Self.names(c, "/files/") == ["copied/", "moved/"], "C lists A's COPY")
            #expect(try await c.send("GET", "/files/copied/inner.txt").text == "inside")

            #expect(try await a.send("DELETE", "/files/moved/").status == 204)
            #expect(try await Self.names(b, "/files/") == ["copied/"], "B lists A's DELETE")
            #expect(try await b.send("GET", "/files/moved/inner.txt").status == 404)
            #expect(try cluster.upstreamNames() == ["copied"], "the upstream holds what the instances list")
            #expect(try Data(contentsOf: cluster.upstream.appendingPathComponent("copied/inner.txt")) == Data("inside".utf8))
        }
    }

    /// The value of `Z:colour` on `/files/doc.txt` as `client`'s instance lists it; nil when it has none.
    static func colour(_ client: DAVClient) async throws -> String? {
        let reply = try await client.send("PROPFIND", "/files/doc.txt", headers: [("Depth", "0"), xmlType], body: """
            <?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:example:cluster"><D:prop><Z:colour/></D:prop></D:propfind>
            """)
        let response = try #require(Multistatus(reply)?.responses.first, "PROPFIND: \(reply.status) \(reply.text)")
        return response.value("colour", "urn:example:cluster")
    }

    static func setColour(_ value: String) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:example:cluster"><D:set><D:prop>\
        <Z:colour>\(value)</Z:colour></D:prop></D:set></D:propertyupdate>
        """
    }

    /// The members of a collection as `client`'s instance lists them (Depth 1), sorted, folders with a slash.
    static func names(_ client: DAVClient, _ collection: String) async throws -> [String] {
        let reply = try await client.send("PROPFIND", collection, headers: [("Depth", "1")])
        let listing = try #require(Multistatus(reply), "PROPFIND \(collection): \(reply.status) \(reply.text)")
        return listing.hrefs.filter { $0 != collection }.map { href in
            let name = href.dropFirst(collection.count)
            return (name.removingPercentEncoding ?? String(name))
        }.sorted()
    }
}
