import DavgateTestSupport
import Foundation
import Testing

/// Content policies (issue 16), from a client: `g:content-policy` set by
/// PROPPATCH, inherited and shown; an eager folder kept current by the
/// background refresh; a changed file downloaded again (lazy) or dropped
/// (evict-on-change).
@Suite("content policies, from a client")
struct ContentPolicyTests {
    static func set(_ value: String) -> String {
        """
        <D:propertyupdate xmlns:D="DAV:" xmlns:g="https://davgate.dev/ns"><D:set><D:prop><g:content-policy>\(value)</g:content-policy></D:prop></D:set></D:propertyupdate>
        """
    }

    static let remove = """
        <D:propertyupdate xmlns:D="DAV:" xmlns:g="https://davgate.dev/ns"><D:remove><D:prop><g:content-policy/></D:prop></D:remove></D:propertyupdate>
        """

    static let davgate = "https://davgate.dev/ns"

    static let ask = """
        <D:propfind xmlns:D="DAV:" xmlns:g="https://davgate.dev/ns"><D:prop><g:content-policy/><g:state/><D:getcontentlength/></D:prop></D:propfind>
        """

    /// Each href under `path` (Depth 1) with its content policy, state and
    /// length as PROPFIND reports them.
    func listing(_ client: DAVClient, _ path: String) async throws -> [String: (policy: String?, state: String?, length: String?)] {
        let reply = try await client.send("PROPFIND", path, headers: [("Depth", "1")], body: Self.ask)
        let multistatus = try #require(Multistatus(reply), "\(reply.text)")
        var result: [String: (policy: String?, state: String?, length: String?)] = [:]
        for response in multistatus.responses {
            result[response.href] = (response.value("content-policy", Self.davgate), response.value("state", Self.davgate), response.value("getcontentlength"))
        }
        return result
    }

    @Test("g:content-policy is set on a folder, inherited below until a member sets its own, shown in PROPFIND and the browser listing; a bad value is 409 and changes nothing")
    func inheritance() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            try FileManager.default.createDirectory(at: server.upstream.appendingPathComponent("docs/sub"), withIntermediateDirectories: true)
            for name in ["top.txt", "docs/b.txt", "docs/sub/c.txt"] {
                try Data("x".utf8).write(to: server.upstream.appendingPathComponent(name))
            }
            #expect(try await listing(client, "/files/")["/files/top.txt"]?.policy == "lazy", "the default")
            let set = try await client.send("PROPPATCH", "/files/docs/", body: Self.set("evict-on-change"))
            #expect(set.status == 207 && set.text.contains("200 OK"), "\(set.text)")
            var docs = try await listing(client, "/files/docs/")
            #expect(docs["/files/docs/"]?.policy == "evict-on-change")
            #expect(docs["/files/docs/b.txt"]?.policy == "evict-on-change", "inherited")
            #expect(docs["/files/docs/sub/"]?.policy == "evict-on-change", "inherited")
            #expect(try await client.send("PROPPATCH", "/files/docs/sub/", body: Self.set("eager")).status == 207)
            #expect(try await listing(client, "/files/docs/sub/")["/files/docs/sub/c.txt"]?.policy == "eager", "the nearest folder's")

            // A value the property cannot take: 409 for it, 424 for the rest, nothing set.
            let bad = """
                <D:propertyupdate xmlns:D="DAV:" xmlns:g="https://davgate.dev/ns"><D:set><D:prop><g:content-policy>sometimes</g:content-policy><Z:note xmlns:Z="urn:z">n</Z:note></D:prop></D:set></D:propertyupdate>
                """
            let refused = try await client.send("PROPPATCH", "/files/docs/b.txt", body: bad)
            #expect(refused.status == 207)
            #expect(refused.text.contains("409 Conflict") && refused.text.contains("424 Failed Dependency"), "\(refused.text)")
            #expect(refused.text.contains("must be one of lazy, eager, evict-on-change"), "\(refused.text)")
            let note = "<D:propfind xmlns:D=\"DAV:\"><D:prop><Z:note xmlns:Z=\"urn:z\"/></D:prop></D:propfind>"
            #expect(try await client.send("PROPFIND", "/files/docs/b.txt", headers: [("Depth", "0")], body: note).text.contains("404 Not Found"))
            #expect(try await listing(client, "/files/docs/")["/files/docs/b.txt"]?.policy == "evict-on-change")

            // The browser listing shows the policy, muted where inherited.
            let page = try await client.send("GET", "/files/docs/", headers: [("Accept", "text/html")]).text
            #expect(page.contains("data-name=\"b.txt\" data-state=\"placeholder\" data-policy=\"evict-on-change\""), "\(page)")
            #expect(page.contains("<span class=\"policy inherited\" title=\"inherited\">evict-on-change</span>"))
            #expect(page.contains("<span class=\"policy\" title=\"set here\">eager</span>"), "sub/ sets its own")

            // Removing it inherits again.
            #expect(try await client.send("PROPPATCH", "/files/docs/", body: Self.remove).status == 207)
            docs = try await listing(client, "/files/docs/")
            #expect(docs["/files/docs/b.txt"]?.policy == "lazy")
            #expect(docs["/files/docs/sub/"]?.policy == "eager")
        }
    }

    @Test("an eager folder: a file added upstream and one changed there are local within refresh_interval, with no client reading or listing them")
    func eagerFolder() async throws {
        // listing_ttl an hour: no PROPFIND of the test refreshes the folder;
        // only the background refresh can show the new file.
        try await withGateway(extraDomain: "listing_ttl = 3600\nrefresh_interval = 1") { server, client in
            let folder = server.upstream.appendingPathComponent("live")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(repeating: 1, count: 10_000).write(to: folder.appendingPathComponent("x.bin"))
            #expect(try await client.send("PROPPATCH", "/files/live/", body: Self.set("eager")).status == 207)
            try await eventually("x.bin fetched when the policy was set") {
                try await listing(client, "/files/live/")["/files/live/x.bin"]?.state == "materialized"
            }

            try Data(repeating: 2, count: 30_000).write(to: folder.appendingPathComponent("y.bin"))
            try Data(repeating: 3, count: 20_000).write(to: folder.appendingPathComponent("x.bin"))
            try await eventually("the background refresh saw both and downloaded them", seconds: 20) {
                let live = try await listing(client, "/files/live/")
                return live["/files/live/y.bin"]?.state == "materialized"
                    && live["/files/live/x.bin"]?.state == "materialized" && live["/files/live/x.bin"]?.length == "20000"
            }
            // The summary line follows the last fetch, a moment after the files are local.
            try await eventually("the background refresh logs what it fetched") { server.stderr.contains("eager /live: fetched") }
            // Served from the cache now: the upstream copy can go and the bytes stay.
            try FileManager.default.removeItem(at: folder.appendingPathComponent("y.bin"))
            #expect(try await client.send("GET", "/files/live/y.bin").body == Data(repeating: 2, count: 30_000))
        }
    }

    @Test("a local file changed upstream: lazy downloads the new version in the background, evict-on-change drops it to a placeholder")
    func changedUpstream() async throws {
        try await withGateway(extraDomain: "listing_ttl = 1") { server, client in
            let keep = server.upstream.appendingPathComponent("keep.txt"), drop = server.upstream.appendingPathComponent("drop.txt")
            try Data("old keep".utf8).write(to: keep)
            try Data("old drop".utf8).write(to: drop)
            #expect(try await client.send("PROPPATCH", "/files/drop.txt", body: Self.set("evict-on-change")).status == 207)
            #expect(try await client.send("GET", "/files/keep.txt").text == "old keep")
            #expect(try await client.send("GET", "/files/drop.txt").text == "old drop")
            try await eventually("both local") {
                let files = try await listing(client, "/files/")
                return files["/files/keep.txt"]?.state == "materialized" && files["/files/drop.txt"]?.state == "materialized"
            }

            try Data("new keep, longer".utf8).write(to: keep)
            try Data("new drop, longer".utf8).write(to: drop)
            try await Task.sleep(for: .milliseconds(1_200))
            // The listing that sees the change is the only request.
            _ = try await listing(client, "/files/")
            try await eventually("keep.txt downloaded again without a read") {
                let files = try await listing(client, "/files/")
                return files["/files/keep.txt"]?.state == "materialized" && files["/files/keep.txt"]?.length == "16"
            }
            let files = try await listing(client, "/files/")
            #expect(files["/files/drop.txt"]?.state == "placeholder", "evict-on-change: neither stale nor fetched again")
            #expect(files["/files/drop.txt"]?.length == "16")
            // What each serves now is the new version.
            #expect(try await client.send("GET", "/files/keep.txt").text == "new keep, longer")
            #expect(try await client.send("GET", "/files/drop.txt").text == "new drop, longer")
        }
    }
}
