import DavgateTestSupport
import Dispatch
import Foundation
import Testing

/// The File Provider's lazy fetch against a remote server: davgate in front
/// of a real Apache mod_dav, every claim checked in Apache's access log.
@Suite("lazy fetch from a WebDAV upstream (Apache mod_dav)")
struct LazyFetchTests {
    static func random(_ count: Int) throws -> Data {
        let handle = try #require(FileHandle(forReadingAtPath: "/dev/urandom"))
        defer { try? handle.close() }
        return try #require(try handle.read(upToCount: count))
    }

    @Test("PROPFIND of a folder of 1,000 placeholders asks the upstream for its listing and for no content")
    func placeholdersCostNoContent() async throws {
        try await withApacheGateway(extraDomain: "listing_ttl = 300") { g in
            for i in 0..<1000 { try g.writeUpstream("many/file \(i).txt", Data("content of file \(i)\n".utf8)) }
            let mark = g.apache.accessLines.count
            let listing = try await g.client.send("PROPFIND", "/lazy/many/", headers: [("Depth", "1")])
            #expect(listing.status == 207)
            #expect(listing.text.components(separatedBy: "/lazy/many/file%20").count - 1 == 1000, "every placeholder is listed")
            let warm = try await g.client.send("PROPFIND", "/lazy/many/", headers: [("Depth", "1")])
            #expect(warm.status == 207)
            let one = try await g.client.send("PROPFIND", "/lazy/many/file%20999.txt", headers: [("Depth", "0")])
            #expect(one.text.contains("<D:getcontentlength>20</D:getcontentlength>"), "the upstream's size, without its content: \(one.text)")

            let requests = g.upstreamRequests(since: mark)
            #expect(!requests.contains { $0.hasPrefix("GET ") }, "no content was fetched: \(requests.filter { $0.hasPrefix("GET ") })")
            #expect(requests.filter { $0.hasPrefix("PROPFIND /dav/many/ 207 depth=1") }.count == 1,
                    "one listing, the warm PROPFIND answered from the index: \(requests)")
        }
    }

    @Test("concurrent first reads of a placeholder: one upstream GET, and the first bytes reach the client while the upstream is still sending")
    func oneFetchForManyReaders() async throws {
        // 8 MiB at 2 MiB/s: the upstream sends for four seconds, and every
        // reader arrives while it does.
        try await withApacheGateway(rateLimitKiB: 2048) { g in
            let content = try Self.random(8 << 20)
            try g.writeUpstream("video.bin", content)
            let mark = g.apache.accessLines.count
            let partial = FileManager.default.temporaryDirectory.appendingPathComponent("video-\(UUID().uuidString)")
            // Streamed: when curl's first bytes are on disk, Apache has not yet
            // logged the GET it is still sending (it logs a request at its
            // end). A causal check, watched from a thread of its own (started
            // before curl), so that a busy machine cannot turn it into a race
            // of clocks.
            let apache = g.apache
            let upstreamDoneAtFirstBytes = Task {
                try await onOwnThread { () -> [String]? in
                    for _ in 0..<12_000 {
                        let received = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0
                        if received > 0 { return apache.accessLines.dropFirst(mark).filter { $0.hasPrefix("GET /dav/video.bin") } }
                        usleep(5_000)
                    }
                    return nil
                }
            }
            let first = Task { try await g.curl("/lazy/video.bin", output: partial) }
            try await Task.sleep(for: .milliseconds(700))
            try await withThrowingTaskGroup(of: DAVClient.Reply.self) { group in
                for _ in 0..<7 { group.addTask { try await g.client.send("GET", "/lazy/video.bin") } }
                for try await reply in group {
                    #expect(reply.status == 200)
                    #expect(reply.body == content, "a late reader joins the running fetch and gets every byte")
                }
            }
            let (status, body, report) = try await first.value
            #expect(status == 0, "\(report)")
            #expect(body == content)
            let finishedUpstream = try await upstreamDoneAtFirstBytes.value
            #expect(finishedUpstream == [], "curl's first bytes came while Apache was still sending; upstream GETs logged by then: \(String(describing: finishedUpstream))")

            let gets = g.upstreamRequests(since: mark).filter { $0.hasPrefix("GET /dav/video.bin") }
            #expect(gets.count == 1, "one upstream GET for eight readers: \(gets)")
        }
    }

    @Test("a Range GET of a placeholder fetches only that range; a later whole GET fetches only the rest")
    func rangeThenRest() async throws {
        try await withApacheGateway { g in
            let mib = 1 << 20
            let content = try Self.random(4 * mib)
            try g.writeUpstream("big.bin", content)
            let mark = g.apache.accessLines.count
            let part = try await g.client.send("GET", "/lazy/big.bin", headers: [("Range", "bytes=\(mib)-\(2 * mib - 1)")])
            #expect(part.status == 206)
            #expect(part.header("Content-Range") == "bytes \(mib)-\(2 * mib - 1)/\(4 * mib)")
            #expect(part.body == content[mib..<(2 * mib)])
            let inside = try await g.client.send("GET", "/lazy/big.bin", headers: [("Range", "bytes=\(mib + 10)-\(mib + 19)")])
            #expect(inside.status == 206)
            #expect(inside.body == content[(mib + 10)..<(mib + 20)], "a range inside the fetched one comes from the cache")

            let rangeGets = g.upstreamRequests(since: mark).filter { $0.hasPrefix("GET ") }
            #expect(rangeGets.count == 1, "\(rangeGets)")
            #expect(rangeGets.first?.contains("206") == true && rangeGets.first?.contains("range=bytes=\(mib)-\(2 * mib - 1) bytes=\(mib)") == true,
                    "only the range crossed the network: \(rangeGets)")

            let rest = g.apache.accessLines.count
            let whole = try await g.client.send("GET", "/lazy/big.bin")
            #expect(whole.status == 200)
            #expect(whole.body == content)
            let gapGets = g.upstreamRequests(since: rest).filter { $0.hasPrefix("GET ") }
            #expect(gapGets.count == 2, "the two gaps, not the whole file: \(gapGets)")
            #expect(gapGets.contains { $0.contains("range=bytes=0-\(mib - 1) bytes=\(mib)") }, "\(gapGets)")
            #expect(gapGets.contains { $0.contains("range=bytes=\(2 * mib)-\(4 * mib - 1) bytes=\(2 * mib)") }, "\(gapGets)")

            let cached = g.apache.accessLines.count
            #expect(try await g.client.send("GET", "/lazy/big.bin").body == content)
            #expect(!g.upstreamRequests(since: cached).contains { $0.hasPrefix("GET ") }, "materialized now")
        }
    }

    @Test("a placeholder changed upstream after it was listed: readers get the new version, whole or in part, with a new ETag")
    func changedAfterListing() async throws {
        try await withApacheGateway(extraDomain: "listing_ttl = 300") { g in
            try g.writeUpstream("a.txt", Data("version one".utf8))
            try g.writeUpstream("b.txt", Data("version one".utf8))
            let oldA = try #require(try await g.client.send("HEAD", "/lazy/a.txt").header("ETag"))
            let oldB = try #require(try await g.client.send("HEAD", "/lazy/b.txt").header("ETag"))
            let second = Data("the second version, longer than the first".utf8)
            try g.writeUpstream("a.txt", second)
            try g.writeUpstream("b.txt", second)

            let whole = try await g.client.send("GET", "/lazy/a.txt")
            #expect(whole.status == 200)
            #expect(whole.body == second, "all of the new version, not the listed length of it")
            #expect(whole.header("Content-Length") == String(second.count))
            #expect(whole.header("ETag") != oldA)
            #expect(try await g.client.send("HEAD", "/lazy/a.txt").header("ETag") == whole.header("ETag"))

            let part = try await g.client.send("GET", "/lazy/b.txt", headers: [("Range", "bytes=0-9")])
            #expect(part.status == 206)
            #expect(part.body == second.prefix(10), "never bytes of two versions")
            #expect(part.header("Content-Range") == "bytes 0-9/\(second.count)")
            #expect(part.header("ETag") != oldB)
        }
    }

    @Test("revalidate = \"always\": a file changed upstream is never served from the cache")
    func revalidateAlways() async throws {
        try await withApacheGateway(extraDomain: "listing_ttl = 300\nrevalidate = \"always\"") { g in
            try g.writeUpstream("doc.txt", Data("first".utf8))
            try await g.readUntilCached("/lazy/doc.txt")
            try g.writeUpstream("doc.txt", Data("second, changed upstream".utf8))
            let mark = g.apache.accessLines.count
            #expect(try await g.client.send("GET", "/lazy/doc.txt").text == "second, changed upstream")
            let requests = g.upstreamRequests(since: mark)
            #expect(requests.first?.hasPrefix("PROPFIND /dav/doc.txt 207 depth=0") == true, "checked before serving: \(requests)")
            // Unchanged: the check finds the same version and the cache serves.
            let unchanged = g.apache.accessLines.count
            #expect(try await g.client.send("GET", "/lazy/doc.txt").text == "second, changed upstream")
            #expect(!g.upstreamRequests(since: unchanged).contains { $0.hasPrefix("GET ") })
        }
    }

    @Test("revalidate = \"listing\": a listing refresh that shows a new version drops the cached copy")
    func revalidateOnListing() async throws {
        try await withApacheGateway(extraDomain: "listing_ttl = 1") { g in
            try g.writeUpstream("doc.txt", Data("first".utf8))
            #expect(try await g.client.send("GET", "/lazy/doc.txt").text == "first")
            try g.writeUpstream("doc.txt", Data("second, changed upstream".utf8))
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await g.client.send("GET", "/lazy/doc.txt").text == "second, changed upstream")
        }
    }

    @Test("a fetch cut short: the client sees an error, not a short 200; nothing partial is served; the next read fetches it whole")
    func cutFetch() async throws {
        // 4 MiB at 512 KiB/s: eight seconds to cut it in.
        try await withApacheGateway(rateLimitKiB: 512) { g in
            let content = try Self.random(4 << 20)
            try g.writeUpstream("cut.bin", content)
            let partial = FileManager.default.temporaryDirectory.appendingPathComponent("cut-\(UUID().uuidString)")
            let reader = Task { try await g.curl("/lazy/cut.bin", output: partial) }
            // Cut once the client has some of the bytes, not before it asked;
            // watched from a thread of its own, which a busy test runner cannot starve.
            let apache = g.apache
            let sawBytes = try await onOwnThread {
                var received = 0
                for _ in 0..<12_000 where received < 256 << 10 {
                    received = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int) ?? 0
                    usleep(5_000)
                }
                apache.crash()
                return received >= 256 << 10
            }
            #expect(sawBytes, "the client was receiving when the upstream crashed")
            let (status, body, report) = try await reader.value
            #expect(status != 0, "curl reports the transfer cut short (\(report))")
            #expect(body.count < content.count)

            let down = try await g.client.send("GET", "/lazy/cut.bin")
            #expect(down.status >= 500, "no partial copy is served while the upstream is down: \(down.status) \(down.text)")

            try await g.apache.restart()
            let whole = try await g.client.send("GET", "/lazy/cut.bin")
            #expect(whole.status == 200)
            #expect(whole.body == content)
        }
    }

    @Test("an upstream down before a folder was ever listed: 503 with Retry-After, not a 404 for what may well be there")
    func downBeforeFirstListing() async throws {
        try await withApacheGateway { g in
            try g.writeUpstream("there.txt", Data("there".utf8))
            g.apache.crash()
            let reply = try await g.client.send("GET", "/lazy/there.txt")
            #expect(reply.status == 503, "\(reply.status) \(reply.text)")
            #expect(reply.header("Retry-After") != nil)
            let status = try await g.client.send("GET", "/.davgate/status.json").text
            #expect(status.contains("\"failing\" : true") && status.contains("upstream unreachable"), "the status page tells: \(status)")
            try await g.apache.restart()
            #expect(try await g.client.send("GET", "/lazy/there.txt").text == "there")
        }
    }

    @Test("folder_etags = true: a stale listing costs one PROPFIND Depth 0, and is read again only when the folder's ETag moved")
    func folderETags() async throws {
        try await withApacheGateway(extraDomain: "listing_ttl = 1\nfolder_etags = true") { g in
            try g.writeUpstream("docs/a.txt", Data("a".utf8))
            #expect(try await g.client.send("PROPFIND", "/lazy/docs/", headers: [("Depth", "1")]).text.contains("/lazy/docs/a.txt"))
            try await Task.sleep(for: .milliseconds(1200))
            let unchanged = g.apache.accessLines.count
            #expect(try await g.client.send("PROPFIND", "/lazy/docs/", headers: [("Depth", "1")]).text.contains("/lazy/docs/a.txt"))
            let cheap = g.upstreamRequests(since: unchanged).filter { $0.contains("/dav/docs") }
            #expect(cheap.count == 1 && cheap.first?.hasPrefix("PROPFIND /dav/docs 207 depth=0") == true, "one stat, no listing: \(cheap)")

            // A new member moves the folder's ETag: the listing is read again.
            try g.writeUpstream("docs/b.txt", Data("b".utf8))
            try await Task.sleep(for: .milliseconds(1200))
            let changed = g.apache.accessLines.count
            #expect(try await g.client.send("PROPFIND", "/lazy/docs/", headers: [("Depth", "1")]).text.contains("/lazy/docs/b.txt"))
            let relisted = g.upstreamRequests(since: changed).filter { $0.contains("/dav/docs") }
            #expect(relisted.contains { $0.hasPrefix("PROPFIND /dav/docs/ 207 depth=1") }, "\(relisted)")
        }
    }

    @Test("the upstream refuses davgate's credentials: 502 naming the vault entry to fix, and the password in no answer or log")
    func refusedCredentials() async throws {
        try await withApacheGateway(password: "not the password") { g in
            let reply = try await g.client.send("GET", "/lazy/anything.txt")
            #expect(reply.status == 502)
            #expect(reply.text.contains("401"), "\(reply.text)")
            #expect(reply.text.contains("service &quot;apache&quot; account &quot;\(ApacheServer.user)&quot;") || reply.text.contains("service \"apache\" account \"\(ApacheServer.user)\""), "\(reply.text)")
            #expect(!reply.text.contains("not the password") && !g.gateway.stderr.contains("not the password"))
        }
    }
}
