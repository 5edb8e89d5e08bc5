import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Write-back (issue 5): a PUT is answered once its bytes and its journal
/// row are durable; the journal uploads later, in order, after a quiet
/// delay, holding back what a lock covers, and survives `kill -9`.
@Suite("write-back through a durable journal")
struct WriteBackTests {
    /// The `files` domain with write-back and a short quiet delay.
    static let domain = "write_mode = \"back\"\nupload_delay = 0.3\nlisting_ttl = 600"

    static func metric(_ client: DAVClient, _ series: String) async throws -> Double {
        ServicePagesTests.value(try await client.send("GET", "/.davgate/metrics").text, series) ?? 0
    }

    @Test("acknowledged before the upload, served from here meanwhile, uploaded after the quiet delay; a locked multi-save is one upload")
    func writeBack() async throws {
        try await withGateway(extraDomain: Self.domain) { server, client in
            let upstream = server.upstream.appendingPathComponent("a.txt")
            #expect(try await client.send("PUT", "/files/a.txt", body: "first").status == 201)
            #expect(try await client.send("GET", "/files/a.txt").text == "first", "served from here before the upload")
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: upstream, encoding: .utf8) == "first")

            // LOCK, three saves, UNLOCK: the upload waits for the UNLOCK and carries the last save.
            let lock = try await client.send("LOCK", "/files/a.txt", headers: [("Timeout", "Second-600")], body: """
                <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>
                """)
            let token = try #require(lock.header("Lock-Token"))
            let before = try await Self.metric(client, "davgate_uploads_total{domain=\"files\"}")
            for save in ["save 1", "save 2", "save 3"] {
                #expect(try await client.send("PUT", "/files/a.txt", headers: [("If", "(\(token))")], body: save).status == 204)
            }
            try await Task.sleep(for: .milliseconds(1200))
            #expect(try String(contentsOf: upstream, encoding: .utf8) == "first", "nothing uploaded while the lock is held")
            #expect(try await client.uploads().pending == 1)
            #expect(try await ItemStateTests().state(client, "/files/a.txt").state == "modified", "g:state says the upload is pending")
            #expect(try await Self.metric(client, "davgate_uploads_pending{domain=\"files\"}") == 1, "and so does the metric")
            #expect(try await client.send("UNLOCK", "/files/a.txt", headers: [("Lock-Token", token)]).status == 204)
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: upstream, encoding: .utf8) == "save 3")
            #expect(try await Self.metric(client, "davgate_uploads_total{domain=\"files\"}") - before == 1, "one upload of the final bytes")

            // A MOVE waits for the pending upload and moves what it delivered.
            #expect(try await client.send("PUT", "/files/b.txt", body: "moving").status == 201)
            let moved = try await client.send("MOVE", "/files/b.txt", headers: [("Destination", "\(client.base)/files/c.txt")])
            #expect(moved.status == 201)
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("c.txt"), encoding: .utf8) == "moving")
            #expect(!FileManager.default.fileExists(atPath: server.upstream.appendingPathComponent("b.txt").path))
        }
    }

    @Test("davfs2's cycle against Apache, with the defaults: LOCK, PUT, PUT, PUT, UNLOCK is one PUT in Apache's access log, after the UNLOCK")
    func lockedMultiSaveOnApache() async throws {
        try await withApacheGateway { g in
            try g.writeUpstream("doc.odt", Data("v0".utf8))
            #expect(try await g.client.send("PROPFIND", "/lazy/", headers: [("Depth", "1")]).status == 207)
            let mark = g.apache.accessLines.count
            let token = try lockToken(try await g.client.send("LOCK", "/lazy/doc.odt", headers: [("Timeout", "Second-600"), xmlType],
                                                              body: lockinfo(exclusive: true, owner: "<D:href>davfs2</D:href>")))
            for save in ["save 1", "save 2", "save 3"] {
                #expect(try await g.client.send("PUT", "/lazy/doc.odt", headers: [("If", "(<\(token)>)")], body: save).status == 204)
                try await Task.sleep(for: .milliseconds(800))
            }
            // Longer than the 2 s quiet delay since the first save: only the lock holds it back.
            #expect(!g.upstreamRequests(since: mark).contains { $0.hasPrefix("PUT ") }, "\(g.upstreamRequests(since: mark))")
            #expect(try await g.client.send("UNLOCK", "/lazy/doc.odt", headers: [("Lock-Token", "<\(token)>")]).status == 204)
            #expect(try await g.client.uploadsDrained())
            let puts = g.upstreamRequests(since: mark).filter { $0.hasPrefix("PUT /dav/doc.odt") }
            #expect(puts.count == 1, "one upload for the locked multi-save: \(puts)")
            #expect(try String(contentsOf: g.upstreamFolder.appendingPathComponent("doc.odt"), encoding: .utf8) == "save 3")
        }
    }

    @Test("a write-back upload that finds the upstream changed keeps both: theirs keeps the name, ours becomes the conflicted copy")
    func conflictAfterAcknowledging() async throws {
        try await withGateway(extraDomain: Self.domain) { server, client in
            #expect(try await client.send("PUT", "/files/report.txt", body: "ours v1").status == 201)
            #expect(try await client.uploadsDrained())
            try "theirs".write(to: server.upstream.appendingPathComponent("report.txt"), atomically: true, encoding: .utf8)
            #expect(try await client.send("PUT", "/files/report.txt", body: "ours v2").status == 204, "acknowledged before anyone knows")
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("report.txt"), encoding: .utf8) == "theirs")
            let names = try server.upstreamNames()
            let copy = try #require(names.first { $0.hasPrefix("report (conflicted copy ") }, "\(names)")
            #expect(try String(contentsOf: server.upstream.appendingPathComponent(copy), encoding: .utf8) == "ours v2")
            #expect(try await client.send("GET", "/files/report.txt").text == "theirs", "the name reads as the upstream's now")
            let status = try await client.send("GET", "/.davgate/status.json").text
            #expect(status.contains("/report (conflicted copy "), "and the conflict is on the status page")
        }
    }

    @Test("the upstream down: writes and PROPPATCH are accepted and served here, what needs the upstream is 503, and the writes arrive once it is back")
    func upstreamDown() async throws {
        // A second of quiet: the file written and deleted at once is never tried upstream.
        try await withApacheGateway(extraDomain: "write_mode = \"back\"\nupload_delay = 1\nlisting_ttl = 600") { g in
            // Made through davgate, so Apache's own user may write in it.
            #expect(try await g.client.send("MKCOL", "/lazy/docs").status == 201)
            #expect(try await g.client.send("PUT", "/lazy/docs/old.txt", body: "uploaded before").status == 201)
            #expect(try await g.client.uploadsDrained())
            #expect(try await g.client.send("PROPFIND", "/lazy/docs/", headers: [("Depth", "1")]).status == 207)
            g.apache.crash()
            #expect(try await g.client.send("PUT", "/lazy/docs/new.txt", body: "written while the upstream was down").status == 201)
            #expect(try await g.client.send("GET", "/lazy/docs/new.txt").text == "written while the upstream was down")
            #expect(try await g.client.send("GET", "/lazy/docs/old.txt").text == "uploaded before", "materialized content is served")
            let patch = "<D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><x:tag xmlns:x=\"urn:x\">offline</x:tag></D:prop></D:set></D:propertyupdate>"
            #expect(try await g.client.send("PROPPATCH", "/lazy/docs/old.txt", headers: [xmlType], body: patch).status == 207)
            // A file never uploaded goes without the upstream; the rest waits for it.
            #expect(try await g.client.send("PUT", "/lazy/docs/scratch.txt", body: "short-lived").status == 201)
            #expect(try await g.client.send("DELETE", "/lazy/docs/scratch.txt").status == 204)
            for (method, path, headers) in [("DELETE", "/lazy/docs/old.txt", [(String, String)]()), ("MKCOL", "/lazy/more", []),
                                            ("MOVE", "/lazy/docs/old.txt", [("Destination", "\(g.client.base)/lazy/docs/moved.txt")])] {
                let refused = try await g.client.send(method, path, headers: headers)
                #expect(refused.status == 503 && refused.header("Retry-After") != nil, "\(method) \(path): \(refused.status) \(refused.text)")
            }
            try await Task.sleep(for: .milliseconds(1800))
            let status = try await g.client.send("GET", "/.davgate/status.json").text
            #expect(status.contains("\"pending\" : 1") && status.contains("\"failing\" : true"), "\(status)")
            try await g.apache.restart()
            var arrived = false
            for _ in 0..<300 where !arrived {
                arrived = (try? String(contentsOf: g.upstreamFolder.appendingPathComponent("docs/new.txt"), encoding: .utf8))
                    == "written while the upstream was down"
                if !arrived { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(arrived, "the journal drained by itself once the upstream was back")
            #expect(!FileManager.default.fileExists(atPath: g.upstreamFolder.appendingPathComponent("docs/scratch.txt").path))
            #expect(try await g.client.send("PROPFIND", "/lazy/docs/old.txt", headers: [("Depth", "0")]).text.contains("offline"))
        }
    }

    @Test("uploads of different files run side by side, never more than upload_parallelism at once (read off Apache's log)",
          arguments: [1, 3])
    func parallelUploads(parallelism: Int) async throws {
        try await withApacheGateway(extraDomain: "upload_delay = 0.2\nupload_parallelism = \(parallelism)") { g in
            // A folder lock holds the uploads back, so all six are due together at UNLOCK.
            #expect(try await g.client.send("MKCOL", "/lazy/batch").status == 201)
            let lock = try await g.client.send("LOCK", "/lazy/batch/", headers: [("Depth", "infinity"), xmlType],
                                               body: lockinfo(exclusive: true, owner: nil))
            let token = try lockToken(lock)
            var files: [String: Data] = [:]
            for i in 0..<6 {
                let data = try randomData(8 << 20)
                files["f\(i).bin"] = data
                let put = try await g.client.send("PUT", "/lazy/batch/f\(i).bin", headers: [("If", "<\(g.client.base)/lazy/batch/> (<\(token)>)")], bodyData: data)
                #expect(put.status == 201)
            }
            let mark = g.apache.accessLines.count
            #expect(try await g.client.send("UNLOCK", "/lazy/batch/", headers: [("Lock-Token", "<\(token)>")]).status == 204)
            #expect(try await g.client.uploadsDrained(seconds: 120))
            for (name, data) in files {
                #expect(try Data(contentsOf: g.upstreamFolder.appendingPathComponent("batch/\(name)")) == data, "\(name) arrived whole")
            }
            // Each upload as [begin, end] in Apache's milliseconds; the most at once.
            let spans = g.upstreamRequests(since: mark).filter { $0.hasPrefix("PUT /dav/batch/") }.compactMap { line -> (Double, Double)? in
                let fields = Dictionary(line.split(separator: " ").compactMap { field -> (String, Double)? in
                    let parts = field.split(separator: "=", maxSplits: 1)
                    return parts.count == 2 ? (String(parts[0]), Double(parts[1])).1.map { (String(parts[0]), $0) } : nil
                }, uniquingKeysWith: { first, _ in first })
                guard let begin = fields["begin"], let end = fields["end"] else { return nil }
                return (begin, end)
            }
            #expect(spans.count == 6, "one PUT per file: \(g.upstreamRequests(since: mark))")
            let most = spans.map { span in spans.filter { $0.0 <= span.0 && span.0 < $0.1 }.count }.max() ?? 0
            if parallelism == 1 {
                #expect(most == 1, "one at a time: \(spans)")
            } else {
                #expect(most > 1 && most <= parallelism, "side by side, at most \(parallelism): \(spans)")
            }
        }
    }

    @Test("over dirty_budget a PUT gets 507 and nothing is stored; a newer write of a pending file replaces its bytes in the count")
    func dirtyBudget() async throws {
        try await withGateway(extraDomain: "write_mode = \"back\"\nupload_delay = 600\ndirty_budget = \"100 KB\"") { server, client in
            let sixty = String(repeating: "x", count: 60_000)
            #expect(try await client.send("PUT", "/files/a.txt", body: sixty).status == 201)
            let refused = try await client.send("PUT", "/files/b.txt", body: sixty)
            #expect(refused.status == 507)
            #expect(refused.text.contains("dirty_budget"), "\(refused.text)")
            #expect(try await client.send("GET", "/files/b.txt").status == 404, "nothing stored")
            #expect(try await client.send("PUT", "/files/a.txt", body: sixty + "y").status == 204, "replaces a's pending bytes")
            #expect(try await client.uploads().pending == 1)
        }
    }

    @Test("the cache's disk full (a small tmpfs): 507, the previous content untouched, nothing partial left")
    func diskFull() async throws {
        try #require(getuid() == 0, "mounting a tmpfs needs root, as CI runs the tests")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("diskfull-\(UUID().uuidString)")
        let state = root.appendingPathComponent("var")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", state.path])
        defer {
            try? ChildProcess.run("/bin/umount", ["-l", state.path])
            try? FileManager.default.removeItem(at: root)
        }
        let server = try await DavgateProcess(extraDomain: "write_mode = \"back\"\nupload_delay = 600", reuse: root)
        defer { server.stop() }
        try await withClient(server) { client in
            #expect(try await client.send("PUT", "/files/keep.txt", body: "version 1").status == 201)
            let big = String(repeating: "z", count: 6 << 20)
            let full = try await client.send("PUT", "/files/keep.txt", body: big)
            #expect(full.status == 507, "\(full.status) \(full.text)")
            #expect(try await client.send("GET", "/files/keep.txt").text == "version 1", "the previous content is untouched")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("cache/files/tmp").path)
            #expect(leftovers.isEmpty, "no partial file: \(leftovers)")
            #expect(try await client.send("PUT", "/files/small.txt", body: "still room for this").status == 201)
        }
    }

    @Test("an upload given up after upload_max_age is kept here and reported: g:state failed, the status page lists it")
    func failedUpload() async throws {
        try await withApacheGateway(extraDomain: "write_mode = \"back\"\nupload_delay = 0\nupload_max_age = 0\nlisting_ttl = 600") { g in
            #expect(try await g.client.send("MKCOL", "/lazy/docs").status == 201)
            g.apache.crash()
            #expect(try await g.client.send("PUT", "/lazy/docs/lost.txt", body: "never dropped").status == 201)
            var state: String?
            for _ in 0..<100 where state != "failed" {
                state = try await ItemStateTests().state(g.client, "/lazy/docs/lost.txt").state
                if state != "failed" { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(state == "failed")
            #expect(try await g.client.send("GET", "/lazy/docs/lost.txt").text == "never dropped", "kept here")
            let status = try await g.client.send("GET", "/.davgate/status.json").text
            #expect(status.contains("\"path\" : \"\\/docs\\/lost.txt\"") || status.contains("\"path\" : \"/docs/lost.txt\""), "\(status)")
        }
    }

    @Test("kill -9 at random moments of a stream of writes: after 200 kills every acknowledged write is upstream, nothing half")
    func crashLoop() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("crashloop-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let paths = (0..<6).map { "f\($0).txt" }
        var sent: [String: [String]] = [:]        // every content sent, in order
        var acknowledged: [String: Int] = [:]     // index in `sent` of the last acknowledged one
        var kills = 0, writes = 0
        for round in 0..<200 {
            let server = try await DavgateProcess(extraDomain: "write_mode = \"back\"\nupload_delay = 0", reuse: root)
            let client = try DAVClient(server)
            // Writes until the kill, which comes at a random moment after the
            // round's first acknowledged write (so every round writes).
            var killer: Task<Void, any Error>?
            var i = 0
            // Until a PUT fails: the server is gone.
            while true {
                let path = paths[(round + i) % paths.count]
                let content = "round \(round) write \(i) \(UUID().uuidString)\n" + String(repeating: "x", count: Int.random(in: 0...200_000))
                sent[path, default: []].append(content)
                i += 1
                guard let reply = try? await client.send("PUT", "/files/\(path)", body: content) else { break }
                if reply.status == 201 || reply.status == 204 {
                    acknowledged[path] = sent[path]!.count - 1
                    writes += 1
                    if killer == nil {
                        killer = Task.detached {
                            try await Task.sleep(for: .milliseconds(Int.random(in: 0...300)))
                            server.crash()
                        }
                    }
                }
            }
            _ = try? await killer?.value
            try? await client.shutdown()
            server.crash()
            kills += 1
        }
        #expect(kills == 200)
        #expect(writes >= 200, "every round acknowledged writes before its kill: \(writes)")

        // One last start: the journal drains, and every path upstream holds its
        // last acknowledged content or one sent after it, whole.
        let server = try await DavgateProcess(extraDomain: "write_mode = \"back\"\nupload_delay = 0", reuse: root)
        defer { server.stop() }
        try await withClient(server) { client in
            #expect(try await client.uploadsDrained(seconds: 60), "the journal drained after the restart")
            #expect(try await client.uploads().failed == 0)
            // On a failure, what the upstream folder holds (a conflict copy
            // of the newer write?) and which rounds wrote what.
            let listing = (try? FileManager.default.contentsOfDirectory(atPath: server.upstream.path))?.sorted() ?? []
            for (path, index) in acknowledged {
                let upstream = try String(contentsOf: server.upstream.appendingPathComponent(path), encoding: .utf8)
                let found = sent[path]!.firstIndex(of: upstream)
                #expect(found != nil, "\(path) upstream is one whole write")
                #expect((found ?? -1) >= index, """
                    \(path): the acknowledged write \(index) is not lost (upstream has \(found ?? -1): \
                    \(upstream.prefix { $0 != "\n" })); acknowledged: \(sent[path]![index].prefix { $0 != "\n" }); \
                    upstream folder: \(listing)
                    """)
                #expect(try await client.send("GET", "/files/\(path)").text == upstream, "davgate serves what the upstream has")
            }
        }
    }
}
