import DavgateTestSupport
import Foundation
import Testing

/// `mirror_locks = true` (issue 5): a client's lock on a file is taken on
/// the WebDAV upstream too (a real Apache mod_dav), so that someone working
/// on Apache directly sees the file locked; davgate's own writes submit the
/// upstream token, and UNLOCK releases it there.
@Suite("locks mirrored to a WebDAV upstream")
struct LockMirrorTests {
    static let lock = lockinfo(exclusive: true, owner: "<D:href>editor</D:href>")

    /// davgate (with `extraDomain`) in front of Apache, a file put straight
    /// into Apache and listed through davgate, and a client of Apache
    /// itself: someone working on the upstream directly.
    static func withListedFile(_ name: String, _ content: String, extraDomain: String,
                               _ body: (ApacheGateway, DAVClient) async throws -> Void) async throws {
        try await withApacheGateway(extraDomain: extraDomain) { g in
            try g.writeUpstream(name, Data(content.utf8))
            #expect(try await g.client.send("PROPFIND", "/lazy/", headers: [("Depth", "1")]).status == 207)
            let direct = DAVClient(apache: g.apache)
            do {
                try await body(g, direct)
            } catch {
                try? await direct.shutdown()
                throw error
            }
            try await direct.shutdown()
        }
    }

    @Test("a client's lock holds on Apache too: direct writers get 423, davgate's own writes go through, UNLOCK frees it",
          arguments: ["back", "through"])
    func mirrored(mode: String) async throws {
        try await Self.withListedFile("report.txt", "v1", extraDomain: "mirror_locks = true\nwrite_mode = \"\(mode)\"\nupload_delay = 0.2") { g, direct in

            let locked = try await g.client.send("LOCK", "/lazy/report.txt", headers: [("Timeout", "Second-600"), xmlType], body: Self.lock)
            #expect(locked.status == 200, "\(locked.text)")
            let token = try lockToken(locked)
            #expect(g.apache.accessLines.contains { $0.hasPrefix("LOCK /dav/report.txt 200") }, "\(g.apache.accessLines)")

            // Someone on Apache directly: the file is locked for them.
            #expect(try await direct.send("PUT", "/dav/report.txt", body: "theirs").status == 423)
            #expect(try await direct.send("LOCK", "/dav/report.txt", headers: [xmlType], body: Self.lock).status == 423)
            let seen = try await direct.send("PROPFIND", "/dav/report.txt", headers: [("Depth", "0"), xmlType],
                                             body: "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:lockdiscovery/></D:prop></D:propfind>")
            #expect(seen.text.contains("davgate"), "the upstream's lock names davgate as its owner: \(seen.text)")

            // davgate's client saves under its lock.
            let save = try await g.client.send("PUT", "/lazy/report.txt", headers: [("If", "(<\(token)>)")], body: "v2")
            #expect(save.status == 204, "\(save.text)")
            if mode == "through" {
                #expect(try String(contentsOf: g.upstreamFolder.appendingPathComponent("report.txt"), encoding: .utf8) == "v2",
                        "the PUT upstream submitted the upstream's token")
            }
            let mark = g.apache.accessLines.count
            #expect(try await g.client.send("UNLOCK", "/lazy/report.txt", headers: [("Lock-Token", "<\(token)>")]).status == 204)
            #expect(try await g.client.uploadsDrained())
            // A listing refresh may come first; the UNLOCK comes before any upload.
            let after = g.upstreamRequests(since: mark).filter { !$0.hasPrefix("PROPFIND ") }
            #expect(after.first?.hasPrefix("UNLOCK /dav/report.txt 204") == true, "released upstream first: \(after)")
            if mode == "back" {
                #expect(after.contains { $0.hasPrefix("PUT /dav/report.txt 204") }, "the held-back upload went after UNLOCK: \(after)")
            }
            #expect(try String(contentsOf: g.upstreamFolder.appendingPathComponent("report.txt"), encoding: .utf8) == "v2")

            // Free upstream again.
            let theirs = try await direct.send("LOCK", "/dav/report.txt", headers: [xmlType], body: Self.lock)
            #expect(theirs.status == 200)
            #expect(try await direct.send("UNLOCK", "/dav/report.txt", headers: [("Lock-Token", "<\(try lockToken(theirs))>")]).status == 204)
        }
    }

    @Test("after a restart davgate still submits the upstream's token: a write under the lock goes through, UNLOCK frees it upstream")
    func keptAcrossRestart() async throws {
        try await Self.withListedFile("notes.txt", "v1", extraDomain: "mirror_locks = true\nwrite_mode = \"through\"") { g, direct in
            let token = try lockToken(try await g.client.send("LOCK", "/lazy/notes.txt", headers: [("Timeout", "Second-600"), xmlType], body: Self.lock))
            try await g.afterRestart { _, client in
                let save = try await client.send("PUT", "/lazy/notes.txt", headers: [("If", "(<\(token)>)")], body: "v2")
                #expect(save.status == 204, "the adopted upstream token went with the PUT: \(save.text)")
                #expect(try String(contentsOf: g.upstreamFolder.appendingPathComponent("notes.txt"), encoding: .utf8) == "v2")
                #expect(try await direct.send("PUT", "/dav/notes.txt", body: "theirs").status == 423, "still locked upstream")
                #expect(try await client.send("UNLOCK", "/lazy/notes.txt", headers: [("Lock-Token", "<\(token)>")]).status == 204)
                #expect(try await direct.send("PUT", "/dav/notes.txt", body: "theirs").status == 204, "released upstream")
            }
        }
    }

    @Test("a MOVE of a locked file carries the upstream token, after its save the lock held back; names with a space and an accent")
    func moveUnderLock() async throws {
        try await Self.withListedFile("Bericht é.txt", "v1", extraDomain: "mirror_locks = true") { g, direct in
            let token = try lockToken(try await g.client.send("LOCK", "/lazy/Bericht%20%C3%A9.txt", headers: [xmlType], body: Self.lock))
            #expect(try await direct.send("PUT", "/dav/Bericht%20%C3%A9.txt", body: "theirs").status == 423, "locked upstream")
            #expect(try await g.client.send("PUT", "/lazy/Bericht%20%C3%A9.txt", headers: [("If", "(<\(token)>)")], body: "v2").status == 204)
            let moved = try await g.client.send("MOVE", "/lazy/Bericht%20%C3%A9.txt",
                                                headers: [("Destination", "\(g.client.base)/lazy/Neu%20%C3%A9.txt"), ("If", "(<\(token)>)")])
            #expect(moved.status == 201, "the save and the MOVE went with the upstream token: \(moved.text)")
            #expect(try String(contentsOf: g.upstreamFolder.appendingPathComponent("Neu é.txt"), encoding: .utf8) == "v2")
            #expect(!FileManager.default.fileExists(atPath: g.upstreamFolder.appendingPathComponent("Bericht é.txt").path))
        }
    }

    @Test("a file locked on Apache by someone else: davgate's LOCK is 423 and leaves no lock here; new files are locked here only")
    func lockedUpstream() async throws {
        try await Self.withListedFile("plan.txt", "plan", extraDomain: "mirror_locks = true") { g, direct in
            let theirs = try await direct.send("LOCK", "/dav/plan.txt", headers: [xmlType], body: Self.lock)
            #expect(theirs.status == 200)

            let refused = try await g.client.send("LOCK", "/lazy/plan.txt", headers: [xmlType], body: Self.lock)
            #expect(refused.status == 423, "\(refused.text)")
            #expect(refused.text.contains("locked upstream"), "\(refused.text)")
            #expect(try await lockdiscovery(g.client, "/lazy/plan.txt").isEmpty, "no lock left here")

            #expect(try await direct.send("UNLOCK", "/dav/plan.txt", headers: [("Lock-Token", "<\(try lockToken(theirs))>")]).status == 204)
            let mine = try await g.client.send("LOCK", "/lazy/plan.txt", headers: [xmlType], body: Self.lock)
            #expect(mine.status == 200, "free again: \(mine.text)")
            #expect(try await g.client.send("UNLOCK", "/lazy/plan.txt", headers: [("Lock-Token", "<\(try lockToken(mine))>")]).status == 204)

            // A LOCK that creates a file is not mirrored: a LOCK upstream would make an empty file there.
            let mark = g.apache.accessLines.count
            let created = try await g.client.send("LOCK", "/lazy/new.txt", headers: [xmlType], body: Self.lock)
            #expect(created.status == 201)
            #expect(!g.upstreamRequests(since: mark).contains { $0.hasPrefix("LOCK ") }, "\(g.upstreamRequests(since: mark))")
            #expect(!FileManager.default.fileExists(atPath: g.upstreamFolder.appendingPathComponent("new.txt").path))
        }
    }
}
