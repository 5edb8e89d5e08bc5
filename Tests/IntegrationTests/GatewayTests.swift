import AsyncHTTPClient
import DavgateTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@Suite("WebDAV over real TLS, end to end")
struct GatewayTests {
    @Test("OPTIONS advertises class 1 and 2 and every method")
    func options() async throws {
        try await withGateway { _, client in
            let reply = try await client.send("OPTIONS", "/files", auth: false)
            #expect(reply.status == 200)
            #expect(reply.header("DAV") == "1, 2, <https://davgate.dev/ns>")
            #expect(reply.header("MS-Author-Via") == "DAV")
            let allow = try #require(reply.header("Allow"))
            for method in ["PROPFIND", "PROPPATCH", "MKCOL", "PUT", "LOCK", "UNLOCK", "COPY", "MOVE", "DELETE"] {
                #expect(allow.contains(method))
            }
        }
    }

    @Test("PUT then GET round trip with strong ETags, Range, conditional GET and HEAD")
    func putGet() async throws {
        try await withGateway { server, client in
            let created = try await client.send("PUT", "/files/hello.txt", body: "hello world")
            #expect(created.status == 201)
            let etag1 = try #require(created.header("ETag"))
            #expect(etag1.hasPrefix("\"") && !etag1.hasPrefix("W/"))
            // The journal delivers the bytes to the upstream.
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("hello.txt"), encoding: .utf8) == "hello world")

            let get = try await client.send("GET", "/files/hello.txt")
            #expect(get.status == 200)
            #expect(get.text == "hello world")
            #expect(get.header("Content-Length") == "11")
            #expect(get.header("Accept-Ranges") == "bytes")
            #expect(get.header("ETag") == etag1)
            #expect(get.header("Content-Type")?.hasPrefix("text/plain") == true)
            #expect(get.header("Last-Modified")?.hasSuffix("GMT") == true)

            let replaced = try await client.send("PUT", "/files/hello.txt", body: "hello again")
            #expect(replaced.status == 204)
            let etag2 = try #require(replaced.header("ETag"))
            #expect(etag2 != etag1, "a change within the same second must change the ETag")

            let range = try await client.send("GET", "/files/hello.txt", headers: [("Range", "bytes=6-10")])
            #expect(range.status == 206)
            #expect(range.text == "again")
            #expect(range.header("Content-Range") == "bytes 6-10/11")

            let stale = try await client.send("GET", "/files/hello.txt", headers: [("Range", "bytes=0-4"), ("If-Range", etag1)])
            #expect(stale.status == 200)
            #expect(stale.text == "hello again")

            let notModified = try await client.send("GET", "/files/hello.txt", headers: [("If-None-Match", etag2)])
            #expect(notModified.status == 304)
            let ims = try await client.send("GET", "/files/hello.txt", headers: [("If-Modified-Since", "Sun, 01 Jan 2090 00:00:00 GMT")])
            #expect(ims.status == 304)

            let head = try await client.send("HEAD", "/files/hello.txt")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "11")
            #expect(head.body.isEmpty)

            let unsatisfiable = try await client.send("GET", "/files/hello.txt", headers: [("Range", "bytes=50-60")])
            #expect(unsatisfiable.status == 416)
        }
    }

    @Test("conditional PUT: If-Match, If-None-Match *, and 409 without a parent")
    func conditionalPut() async throws {
        try await withGateway { _, client in
            let first = try await client.send("PUT", "/files/doc.txt", headers: [("If-None-Match", "*")], body: "one")
            #expect(first.status == 201)
            let again = try await client.send("PUT", "/files/doc.txt", headers: [("If-None-Match", "*")], body: "two")
            #expect(again.status == 412)
            let etag = try #require(first.header("ETag"))
            let matching = try await client.send("PUT", "/files/doc.txt", headers: [("If-Match", etag)], body: "three")
            #expect(matching.status == 204)
            let stale = try await client.send("PUT", "/files/doc.txt", headers: [("If-Match", etag)], body: "four")
            #expect(stale.status == 412)
            #expect(try await client.send("GET", "/files/doc.txt").text == "three")
            let orphan = try await client.send("PUT", "/files/no/such/folder.txt", body: "x")
            #expect(orphan.status == 409)
        }
    }

    @Test("the upstream changing behind davgate's back is seen after the listing TTL")
    func upstreamChangesAfterTTL() async throws {
        try await withGateway(extraDomain: "listing_ttl = 0.3") { server, client in
            let upstream = server.upstream
            _ = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            try "from upstream".write(to: upstream.appendingPathComponent("outside.txt"), atomically: true, encoding: .utf8)
            try await Task.sleep(for: .milliseconds(500))
            let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            #expect(listing.text.contains("/files/outside.txt"))
            // PROPFIND never copies content: nothing is in the cache yet.
            let cache = server.state.appendingPathComponent("cache/files")
            func cached() throws -> [String] {
                try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { !["tmp", "outbox", "uploads"].contains($0) }
            }
            #expect(try cached().isEmpty)

            let first = try await client.send("GET", "/files/outside.txt")
            #expect(first.text == "from upstream")
            // The reader has every byte before the fetch installs its file
            // (after the store's fsync and the index's check): moments later.
            var cachedAfter = try cached()
            for _ in 0..<50 where cachedAfter.isEmpty {
                try await Task.sleep(for: .milliseconds(20))
                cachedAfter = try cached()
            }
            #expect(cachedAfter.count == 1, "the first GET materializes the file into the cache, named by item id")

            try "changed upstream!".write(to: upstream.appendingPathComponent("outside.txt"), atomically: true, encoding: .utf8)
            try await Task.sleep(for: .milliseconds(500))
            let second = try await client.send("GET", "/files/outside.txt")
            #expect(second.text == "changed upstream!")
            #expect(second.header("ETag") != first.header("ETag"))

            try FileManager.default.removeItem(at: upstream.appendingPathComponent("outside.txt"))
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await client.send("GET", "/files/outside.txt").status == 404)
        }
    }

    @Test("dead properties keep their namespaces and travel with COPY and MOVE")
    func deadProperties() async throws {
        try await withGateway { _, client in
            _ = try await client.send("PUT", "/files/p.txt", body: "x")
            let patch = """
                <?xml version="1.0" encoding="utf-8"?>
                <D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://example.com/ns/"><D:set><D:prop>
                <Z:color>blue <Z:shade xmlns:Y="urn:y">deep</Z:shade></Z:color><nonamespace xmlns="">plain</nonamespace>
                </D:prop></D:set></D:propertyupdate>
                """
            let patched = try await client.send("PROPPATCH", "/files/p.txt", body: patch)
            #expect(patched.status == 207)
            #expect(patched.text.contains("200 OK"))
            _ = try await client.send("COPY", "/files/p.txt", headers: [("Destination", "\(client.base)/files/copy.txt")])
            _ = try await client.send("MOVE", "/files/p.txt", headers: [("Destination", "\(client.base)/files/moved.txt")])
            let ask = """
                <?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><Q:color xmlns:Q="http://example.com/ns/"/><nonamespace xmlns=""/></D:prop></D:propfind>
                """
            for path in ["/files/copy.txt", "/files/moved.txt"] {
                let reply = try await client.send("PROPFIND", path, headers: [("Depth", "0")], body: ask)
                #expect(reply.status == 207)
                #expect(reply.text.contains("http://example.com/ns/"), "namespace kept on \(path)")
                #expect(reply.text.contains("deep"))
                #expect(reply.text.contains("plain"))
                #expect(!reply.text.contains("404"), "both properties found on \(path): \(reply.text)")
            }
        }
    }

    @Test("bad input gets a precise status and changes nothing")
    func badInput() async throws {
        try await withGateway(extraServer: "max_xml_body = 4096") { server, client in
            _ = try await client.send("MKCOL", "/files/dir")
            let doctype = "<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><D:propfind xmlns:D=\"DAV:\"><D:allprop/></D:propfind>"
            #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")], body: doctype).status == 400)
            #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")], body: "<D:propfind xmlns:D=\"DAV:\"><D:prop>").status == 400)
            let huge = "<D:propfind xmlns:D=\"DAV:\"><D:prop>" + String(repeating: "<D:getetag/>", count: 1000) + "</D:prop></D:propfind>"
            #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")], body: huge).status == 413)
            #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "2")]).status == 400)
            let infinite = try await client.send("PROPFIND", "/files/", headers: [("Depth", "infinity")])
            #expect(infinite.status == 403)
            #expect(infinite.text.contains("propfind-finite-depth"))
            for bad in ["/files/../etc/passwd", "/files/%2e%2e/x", "/files/a%00b", "/files/dir%2Fx"] {
                #expect(try await client.send("GET", bad).status == 400, "\(bad)")
            }
            let elsewhere = try await client.send("COPY", "/files/dir", headers: [("Destination", "https://elsewhere.example/files/x")])
            #expect(elsewhere.status == 502)
            let onto = try await client.send("MOVE", "/files/dir", headers: [("Destination", "\(client.base)/files/dir")])
            #expect(onto.status == 403)
            #expect(try await client.send("MKCOL", "/files/withbody", body: "<x/>").status == 415)
            // A body in an encoding only iconv decodes: 415 with the reason, and no property set.
            let shiftJIS = "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><Z:note xmlns:Z=\"urn:z\">x</Z:note></D:prop></D:set></D:propertyupdate>"
            let refused = try await client.send("PROPPATCH", "/files/dir", body: shiftJIS)
            #expect(refused.status == 415)
            #expect(refused.text.contains("Shift_JIS"))
            let note = "<D:propfind xmlns:D=\"DAV:\"><D:prop><Z:note xmlns:Z=\"urn:z\"/></D:prop></D:propfind>"
            #expect(try await client.send("PROPFIND", "/files/dir", headers: [("Depth", "0")], body: note).text.contains("404 Not Found"))
            #expect(try await client.send("MKCOL", "/files/dir").status == 405)
            #expect(try await client.send("MKCOL", "/files/a/b").status == 409)
            // Nothing of the refused requests reached the upstream.
            let names = try server.upstreamNames()
            #expect(names == ["dir"])
        }
    }

    @Test("a client that disconnects mid-PUT leaves the old content and no temporary file")
    func disconnectMidPut() async throws {
        try await withGateway { server, client in
            _ = try await client.send("PUT", "/files/big.bin", body: "old content")
            var request = HTTPClientRequest(url: client.base + "/files/big.bin")
            request.method = .PUT
            request.headers.add(name: "Authorization", value: "Basic " + Data("admin:\(server.adminPassword)".utf8).base64EncodedString())
            let chunk = ByteBuffer(repeating: 0x61, count: 64 * 1024)
            let stream = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                Task {
                    for _ in 0..<32 { continuation.yield(chunk) }
                    try await Task.sleep(for: .milliseconds(300))
                    continuation.finish(throwing: CancellationError())
                }
            }
            request.body = .stream(stream, length: .known(Int64(100 * 64 * 1024)))
            _ = try? await client.http.execute(request, timeout: .seconds(10))
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await client.send("GET", "/files/big.bin").text == "old content")
            let temporary = try FileManager.default.contentsOfDirectory(atPath: server.state.appendingPathComponent("cache/files/tmp").path)
            #expect(temporary.isEmpty)
            #expect(try await client.uploadsDrained())
            let upstreamNames = try server.upstreamNames()
            #expect(upstreamNames == ["big.bin"])
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("big.bin"), encoding: .utf8) == "old content")
        }
    }

    @Test("clients that leave in the middle of large GETs (their chunks waiting on the connection) leave no open file behind, and the file is served whole after")
    func abandonedLargeGets() async throws {
        try await withGateway { server, client in
            let content = Data((0..<(32 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            #expect(try await client.send("PUT", "/files/large.bin", bodyData: content).status == 201)
            let descriptors = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.pid)/fd").count) ?? -1 }
            let before = descriptors()
            // Eight readers at 1 MB/s each give up after a second: their bodies
            // are waiting for the connection when it goes.
            try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        try await onOwnThread {
                            let curl = Process()
                            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
                            curl.arguments = ["-sS", "--cacert", server.certificate.path, "-u", "admin:\(server.adminPassword)",
                                              "--limit-rate", "1M", "--max-time", "1", "-o", "/dev/null", server.baseURL + "/files/large.bin"]
                            curl.standardError = FileHandle.nullDevice
                            try curl.run()
                            curl.waitUntilExit()
                            return curl.terminationStatus
                        }
                    }
                }
                for try await status in group { #expect(status == 28, "curl stopped by its --max-time (28), not done: \(status)") }
            }
            try await eventually("every abandoned body's file closed (\(before) descriptors before)") { descriptors() <= before }
            let whole = try await client.send("GET", "/files/large.bin")
            #expect(whole.status == 200)
            #expect(whole.body == content)
        }
    }

    @Test("names with spaces, accents, NFD and percent signs round-trip")
    func names() async throws {
        try await withGateway { _, client in
            #expect(try await client.send("MKCOL", "/files/Ordner%20%C3%BC").status == 201)
            // NFD from macOS finds the NFC folder.
            #expect(try await client.send("PUT", "/files/Ordner%20u%CC%88/R%c3%a9sum%c3%a9%202026%25%23.txt", body: "cv").status == 201)
            let listing = try await client.send("PROPFIND", "/files/Ordner%20%C3%BC/", headers: [("Depth", "1")])
            #expect(listing.text.contains("/files/Ordner%20%C3%BC/R%C3%A9sum%C3%A9%202026%25%23.txt"))
            #expect(try await client.send("GET", "/files/Ordner%20%C3%BC/R%C3%A9sum%C3%A9%202026%25%23.txt").text == "cv")
        }
    }
}
