import DavgateTestSupport
import Foundation
import Testing

/// RFC 6578 sync-collection through the real server over TLS: what a sync
/// client learns from a token, and when it must start over.
@Suite("sync-collection over real TLS")
struct SyncCollectionTests {
    /// One answer of a sync-collection REPORT, by href.
    struct SyncAnswer {
        var status: Int
        /// Members reported with properties, and their ETag.
        var present: [String: String] = [:]
        /// Members reported gone (404).
        var removed: Set<String> = []
        /// The 507 for the request-URI: more changes wait.
        var truncated = false
        var token = ""
        var text = ""
    }

    func sync(_ client: DAVClient, _ path: String, token: String, infinite: Bool = false, limit: Int? = nil) async throws -> SyncAnswer {
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:sync-collection xmlns:D="DAV:"><D:sync-token>\(token)</D:sync-token>\
            <D:sync-level>\(infinite ? "infinite" : "1")</D:sync-level>\
            \(limit.map { "<D:limit><D:nresults>\($0)</D:nresults></D:limit>" } ?? "")\
            <D:prop><D:getetag/></D:prop></D:sync-collection>
            """
        let reply = try await client.send("REPORT", path, headers: [("Content-Type", "application/xml")], body: body)
        var answer = SyncAnswer(status: reply.status, text: reply.text)
        guard reply.status == 207 else { return answer }
        for response in reply.text.components(separatedBy: "<D:response>").dropFirst() {
            let href = Self.between(response, "<D:href>", "</D:href>") ?? ""
            if response.contains("<D:propstat>") {
                answer.present[href] = Self.between(response, "<D:getetag>", "</D:getetag>") ?? ""
            } else if response.contains(" 404 ") {
                answer.removed.insert(href)
            } else if response.contains(" 507 ") && response.contains("number-of-matches-within-limits") {
                answer.truncated = true
            } else {
                Issue.record("unexpected response in the sync answer: \(response)")
            }
        }
        answer.token = Self.between(reply.text, "<D:sync-token>", "</D:sync-token>") ?? ""
        return answer
    }

    static func between(_ text: String, _ start: String, _ end: String) -> String? {
        guard let from = text.range(of: start), let to = text.range(of: end, range: from.upperBound..<text.endIndex) else { return nil }
        return String(text[from.upperBound..<to.lowerBound])
    }

    @Test("a first sync, then each change once (PUT, MKCOL, COPY, MOVE, PROPPATCH, DELETE, LOCK, the upstream's own), a token from before a restart, 403 for forged ones")
    func feedThroughTheServer() async throws {
        let server = try await DavgateProcess(extraDomain: "write_mode = \"through\"\nlisting_ttl = 1")
        defer { server.cleanUp() }
        var token = ""
        try await withClient(server) { client async throws in
            #expect(try await client.send("PUT", "/files/kept.txt", body: "kept").status == 201)
            let first = try await sync(client, "/files/", token: "", infinite: true)
            #expect(first.status == 207, "\(first.text)")
            #expect(Set(first.present.keys) == ["/files/kept.txt"])
            #expect(first.token.hasPrefix("https://davgate.dev/sync/"))

            #expect(try await client.send("PUT", "/files/a.txt", body: "a").status == 201)
            #expect(try await client.send("MKCOL", "/files/d").status == 201)
            #expect(try await client.send("PUT", "/files/d/x.txt", body: "x").status == 201)
            #expect(try await client.send("COPY", "/files/d/", headers: [("Destination", "\(client.base)/files/e/")]).status == 201)
            #expect(try await client.send("MOVE", "/files/a.txt", headers: [("Destination", "\(client.base)/files/d/a2.txt")]).status == 201)
            let patch = "<D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><t:tag xmlns:t=\"urn:t\">1</t:tag></D:prop></D:set></D:propertyupdate>"
            #expect(try await client.send("PROPPATCH", "/files/d/x.txt", body: patch).status == 207)
            #expect(try await client.send("DELETE", "/files/e/").status == 204)
            #expect(try await client.send("LOCK", "/files/l.txt", body: Fixtures.lockBody).status == 201)
            #expect(try await client.send("PUT", "/files/kept.txt", body: "kept, changed").status == 204)
            try "theirs".write(to: server.upstream.appendingPathComponent("ext.txt"), atomically: true, encoding: .utf8)
            try await Task.sleep(for: .milliseconds(1_500))  // past the listing TTL

            // Depth 1 refreshes the folder's listing, so the upstream's own
            // file is there; infinite then sees what the refresh recorded.
            let shallow = try await sync(client, "/files/", token: first.token)
            #expect(Set(shallow.present.keys) == ["/files/d/", "/files/l.txt", "/files/kept.txt", "/files/ext.txt"])
            #expect(shallow.removed == ["/files/a.txt", "/files/e"])
            let next = try await sync(client, "/files/", token: first.token, infinite: true)
            #expect(Set(next.present.keys) == ["/files/d/", "/files/d/x.txt", "/files/d/a2.txt", "/files/l.txt", "/files/kept.txt", "/files/ext.txt"])
            #expect(next.removed == ["/files/a.txt", "/files/e"])
            let etag = try await client.send("HEAD", "/files/kept.txt").header("ETag")
            #expect(next.present["/files/kept.txt"] == etag, "the reported ETag is the file's")

            let again = try await sync(client, "/files/", token: next.token, infinite: true)
            #expect(again.present.isEmpty && again.removed.isEmpty, "nothing twice: \(again.text)")
            token = again.token

            // DAV:sync-token of the collection is the present position.
            let ask = "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:sync-token/><D:supported-report-set/></D:prop></D:propfind>"
            let props = try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")], body: ask)
            #expect(props.text.contains("<D:sync-token>\(token)</D:sync-token>"), "\(props.text)")
            #expect(props.text.contains("<D:sync-collection/>"))

            for forged in [token.replacingOccurrences(of: "/sync/", with: "/sync/0"), "https://davgate.dev/sync/abc/999999999", "urn:x"] {
                let refused = try await sync(client, "/files/", token: forged)
                #expect(refused.status == 403, "\(forged)")
                #expect(refused.text.contains("valid-sync-token"))
            }
        }
        server.stop()
        let restarted = try await DavgateProcess(reuse: server.root)
        defer { restarted.stop() }
        try await withClient(restarted, password: server.adminPassword) { client async throws in
            let unchanged = try await sync(client, "/files/", token: token, infinite: true)
            #expect(unchanged.status == 207, "the token from before the restart is good: \(unchanged.text)")
            #expect(unchanged.present.isEmpty && unchanged.removed.isEmpty)
            #expect(try await client.send("PUT", "/files/after.txt", body: "after").status == 201)
            let later = try await sync(client, "/files/", token: token, infinite: true)
            #expect(Set(later.present.keys) == ["/files/after.txt"])
        }
    }

    @Test("a folder's getetag moves with any change below it and not with reads; If-Match with it holds for a MOVE, a stale one gets 412")
    func folderETags() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { _, client in
            for folder in ["/files/a/", "/files/a/b/", "/files/other/"] { #expect(try await client.send("MKCOL", folder).status == 201) }
            #expect(try await client.send("PUT", "/files/a/b/x.txt", body: "x").status == 201)
            func etags() async throws -> [String: String] {
                let reply = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")], body: propfind(["getetag"]))
                var tags: [String: String] = [:]
                for response in try #require(Multistatus(reply), "\(reply.text)").responses {
                    tags[response.href] = try #require(response.property("getetag")?.node.trimmedText, "\(response.href) has a getetag")
                }
                let deep = try await client.send("PROPFIND", "/files/a/b/", headers: [("Depth", "0")], body: propfind(["getetag"]))
                tags["/files/a/b/"] = try #require(Multistatus(deep)?.responses.first?.property("getetag")?.node.trimmedText)
                return tags
            }
            let before = try await etags()
            #expect(before.keys.sorted() == ["/files/", "/files/a/", "/files/a/b/", "/files/other/"], "\(before)")
            #expect(try await client.send("GET", "/files/a/b/x.txt").status == 200)
            #expect(try await etags() == before, "a read moves no folder's ETag")

            #expect(try await client.send("PUT", "/files/a/b/x.txt", body: "x, edited").status == 204)
            let after = try await etags()
            for folder in ["/files/", "/files/a/", "/files/a/b/"] { #expect(after[folder] != before[folder], "\(folder) moved") }
            #expect(after["/files/other/"] == before["/files/other/"], "a folder beside the change keeps its ETag")

            let stale = try await client.send("MOVE", "/files/a/", headers: [("Destination", "\(client.base)/files/moved/"), ("If-Match", before["/files/a/"]!)])
            #expect(stale.status == 412, "\(stale.status) \(stale.text)")
            let current = try await client.send("MOVE", "/files/a/", headers: [("Destination", "\(client.base)/files/moved/"), ("If-Match", after["/files/a/"]!)])
            #expect(current.status == 201, "\(current.status) \(current.text)")
        }
    }

    @Test("DAV:limit pages the answer: 507 number-of-matches-within-limits and a token to continue, each member once")
    func paging() async throws {
        try await withGateway(extraDomain: "write_mode = \"through\"\nlisting_ttl = 600") { _, client in
            let start = try await sync(client, "/files/", token: "")
            for i in 0..<12 { #expect(try await client.send("PUT", "/files/f\(i).txt", body: "\(i)").status == 201) }
            var token = start.token
            var pages: [Int] = []
            var seen: [String] = []
            while pages.count < 10 {
                let page = try await sync(client, "/files/", token: token, limit: 5)
                #expect(page.status == 207, "\(page.text)")
                pages.append(page.present.count)
                seen += page.present.keys
                token = page.token
                if !page.truncated { break }
            }
            #expect(pages == [5, 5, 2])
            #expect(Set(seen) == Set((0..<12).map { "/files/f\($0).txt" }) && seen.count == 12)
        }
    }

    @Test("a REPORT on a file, an unknown report, or a bad body is refused with its condition; nothing changes")
    func refusals() async throws {
        try await withGateway { _, client in
            #expect(try await client.send("PUT", "/files/file.txt", body: "x").status == 201)
            let onFile = try await sync(client, "/files/file.txt", token: "")
            #expect(onFile.status == 403 && onFile.text.contains("supported-report"), "\(onFile.text)")
            let unknown = try await client.send("REPORT", "/files/", body: "<D:expand-property xmlns:D=\"DAV:\"/>")
            #expect(unknown.status == 403 && unknown.text.contains("supported-report"))
            let badLevel = "<D:sync-collection xmlns:D=\"DAV:\"><D:sync-token/><D:sync-level>2</D:sync-level><D:prop/></D:sync-collection>"
            #expect(try await client.send("REPORT", "/files/", body: badLevel).status == 400)
            #expect(try await client.send("REPORT", "/files/").status == 400)
            let listing = try await sync(client, "/files/", token: "")
            #expect(Set(listing.present.keys) == ["/files/file.txt"])
        }
    }
}
