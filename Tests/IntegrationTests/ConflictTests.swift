import DavgateTestSupport
import Foundation
import Testing

/// Issue 4's conflicts, on the embedded directory upstream: an upload is
/// conditional on the upstream version the edit was based on. Write-through
/// answers the PUT with the conflict (`X-Davgate-Conflict`); write-back, the
/// default, finds it when the journal uploads (see `WriteBackTests`).
@Suite("conflicts: keep both")
struct ConflictTests {
    @Test("an upstream change made meanwhile is never overwritten: ours becomes a conflicted copy")
    func keepBoth() async throws {
        // A long TTL: davgate still believes the version it listed.
        try await withGateway(extraDomain: "listing_ttl = 600\nwrite_mode = \"through\"") { server, client in
            #expect(try await client.send("PUT", "/files/report.txt", body: "ours v1").status == 201)
            try "theirs".write(to: server.upstream.appendingPathComponent("report.txt"), atomically: true, encoding: .utf8)
            let put = try await client.send("PUT", "/files/report.txt", body: "ours v2")
            #expect(put.status == 201)
            let copyHref = try #require(put.header("X-Davgate-Conflict"))
            #expect(copyHref.hasPrefix("/files/report%20(conflicted%20copy%20"))
            #expect(copyHref.hasSuffix(").txt"))
            // The upstream file keeps its name and its content; ours is beside it.
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("report.txt"), encoding: .utf8) == "theirs")
            let names = try server.upstreamNames()
            let copyName = try #require(names.first { $0.hasPrefix("report (conflicted copy ") })
            #expect(try String(contentsOf: server.upstream.appendingPathComponent(copyName), encoding: .utf8) == "ours v2")
            // Visible to clients: the copy names what it conflicts with, and the
            // original now reads as the upstream's version.
            let ask = "<D:propfind xmlns:D=\"DAV:\"><D:prop><g:conflict-of xmlns:g=\"https://davgate.dev/ns\"/></D:prop></D:propfind>"
            let props = try await client.send("PROPFIND", copyHref, headers: [("Depth", "0")], body: ask)
            #expect(props.text.contains(">report.txt</"))
            #expect(try await client.send("GET", "/files/report.txt").text == "theirs")
            #expect(server.stderr.contains("conflict"))
        }
    }

    @Test("a file deleted upstream while edited here is created again with our content", arguments: ["through", "back"])
    func deletedUpstream(mode: String) async throws {
        try await withGateway(extraDomain: "listing_ttl = 600\nwrite_mode = \"\(mode)\"\nupload_delay = 0.2") { server, client in
            #expect(try await client.send("PUT", "/files/notes.txt", body: "first").status == 201)
            #expect(try await client.uploadsDrained())
            try FileManager.default.removeItem(at: server.upstream.appendingPathComponent("notes.txt"))
            let put = try await client.send("PUT", "/files/notes.txt", body: "second")
            #expect(put.status == 204)
            #expect(put.header("X-Davgate-Conflict") == nil)
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("notes.txt"), encoding: .utf8) == "second")
            #expect(try server.upstreamNames() == ["notes.txt"], "no conflict copy")
            #expect(server.stderr.contains("deleted upstream while edited here"))
        }
    }
}
