import DavgateTestSupport
import Foundation
import Testing

extension AdversarialTests {
    /// XML bodies over `max_xml_body`, declared or chunked, get 413 and set
    /// nothing; a flood of ranges gets the whole body once (davgate does not
    /// do multipart/byteranges, RFC 9110 section 14.2 lets it ignore Range),
    /// never one part per range.
    @Test("huge PROPPATCH and LOCK bodies get 413; range floods get one whole body")
    func hugeBodiesAndRangeFloods() async throws {
        try await withGateway(extraServer: "max_xml_body = 65536") { server, client in
            let content = try randomData(1 << 20)
            #expect(try await client.send("PUT", "/files/big.bin", bodyData: content).status == 201)

            // PROPPATCH of one 1 MiB property, with Content-Length and chunked.
            let patch = "<?xml version=\"1.0\"?><D:propertyupdate xmlns:D=\"DAV:\"><D:set><D:prop><Z:x xmlns:Z=\"urn:z\">"
                + String(repeating: "a", count: 1 << 20) + "</Z:x></D:prop></D:set></D:propertyupdate>"
            let declared = try await client.send("PROPPATCH", "/files/big.bin", body: patch)
            #expect(declared.status == 413, "declared: \(declared.status)")
            let chunked = try await RawConnection.open(server)
            defer { chunked.close() }
            var stream = "PROPPATCH /files/big.bin HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))\r\nTransfer-Encoding: chunked\r\n\r\n"
            var rest = Substring(patch)
            while !rest.isEmpty {
                let piece = rest.prefix(16 * 1024)
                stream += String(piece.utf8.count, radix: 16) + "\r\n" + piece + "\r\n"
                rest = rest.dropFirst(piece.count)
            }
            try await chunked.send(stream + "0\r\n\r\n")
            let chunkedReply = try await chunked.response(within: .seconds(10))
            #expect(chunkedReply.status == 413, "chunked: \(chunkedReply)")
            // A lock whose owner alone is 1 MiB.
            let lockinfo = "<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\"><D:lockscope><D:exclusive/></D:lockscope>"
                + "<D:locktype><D:write/></D:locktype><D:owner>" + String(repeating: "o", count: 1 << 20) + "</D:owner></D:lockinfo>"
            #expect(try await client.send("LOCK", "/files/big.bin", body: lockinfo).status == 413)
            #expect(try await client.send("LOCK", "/files/new.txt", body: lockinfo).status == 413)
            // Nothing was set, locked or made.
            let ask = "<?xml version=\"1.0\"?><D:propfind xmlns:D=\"DAV:\"><D:prop><Z:x xmlns:Z=\"urn:z\"/><D:lockdiscovery/></D:prop></D:propfind>"
            let props = try await client.send("PROPFIND", "/files/big.bin", headers: [("Depth", "0")], body: ask)
            let response = try #require(Multistatus(props)?.response("/files/big.bin"))
            #expect(response.property("x", "urn:z")?.status == 404)
            #expect(response.property("lockdiscovery")?.node.children.isEmpty == true)
            #expect(try await client.send("PROPFIND", "/files/new.txt", headers: [("Depth", "0")]).status == 404)

            // Range floods: thousands of ranges, disjoint or all the same.
            let disjoint = "bytes=" + (0..<5000).map { "\(2 * $0)-\(2 * $0)" }.joined(separator: ",")
            let overlapping = "bytes=" + Array(repeating: "0-", count: 3000).joined(separator: ",")
            for (name, range) in [("5,000 disjoint ranges", disjoint), ("3,000 overlapping ranges", overlapping)] {
                let reply = try await client.send("GET", "/files/big.bin", headers: [("Range", range)])
                #expect(reply.status == 200, "\(name): \(reply.status)")
                #expect(reply.header("Content-Range") == nil, "\(name)")
                #expect(reply.header("Content-Length") == "\(1 << 20)", "\(name)")
                #expect(reply.body == content, "\(name): the whole body once")
            }
            let tooMany = "bytes=" + (0..<9000).map { "\(2 * $0)-\(2 * $0)" }.joined(separator: ",")
            try await Self.run(Probe("9,000 ranges (a head over 80 KiB)",
                                     "GET /files/big.bin HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))\r\nRange: \(tooMany)\r\n\r\n",
                                     expect: 431), on: server)
            for range in ["bytes=-0", "bytes=\(1 << 20)-"] {
                let reply = try await client.send("GET", "/files/big.bin", headers: [("Range", range)])
                #expect(reply.status == 416, "\(range)")
                #expect(reply.header("Content-Range") == "bytes */\(1 << 20)", "\(range)")
            }
            // A flood of single ranges at once: each gets exactly its bytes.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<200 {
                    group.addTask {
                        let start = (i * 5_237) % (1 << 20)
                        let end = min(start + 4_095 + i, (1 << 20) - 1)
                        let reply = try await client.send("GET", "/files/big.bin", headers: [("Range", "bytes=\(start)-\(end)")])
                        #expect(reply.status == 206)
                        #expect(reply.body == content[start...end], "range \(start)-\(end)")
                    }
                }
                try await group.waitForAll()
            }
            try await expectAliveAndBounded(server, client, after: "huge bodies and range floods")
        }
    }

    /// Many clients PUT the same file at once, each its own body: afterwards
    /// the file is exactly one of the bodies, whole, and its ETag (GET and
    /// PROPFIND alike) is the one that body's PUT was answered with; the
    /// upstream ends up with the same bytes.
    @Test("concurrent writers of one file: one body wins whole, its ETag everywhere")
    func concurrentWriters() async throws {
        try await withGateway { server, client in
            let writers = 24
            let bodies = (0..<writers).map { Data(repeating: UInt8(ascii: "A") + UInt8($0), count: 256 * 1024) }
            // Every connection is open and its TLS handshake done before any
            // request starts, so the PUTs really overlap.
            var connections: [RawConnection] = []
            for _ in 0..<writers { connections.append(try await RawConnection.open(server)) }
            defer { connections.forEach { $0.close() } }
            let requests = bodies.map { body in
                Data("PUT /files/race.bin HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
            }
            let replies = try await withThrowingTaskGroup(of: (Int, RawHTTP.Reply).self) { group in
                for (i, connection) in connections.enumerated() {
                    let request = requests[i]
                    group.addTask {
                        try await connection.send(request)
                        return (i, try await connection.response(within: .seconds(30)))
                    }
                }
                var replies = [RawHTTP.Reply?](repeating: nil, count: writers)
                for try await (i, reply) in group { replies[i] = reply }
                return replies.compactMap { $0 }
            }
            #expect(replies.count == writers)
            #expect(replies.filter { $0.status == 201 }.count == 1, "exactly one PUT created the file: \(replies.map(\.status))")
            #expect(replies.filter { $0.status == 204 }.count == writers - 1)
            let etags = replies.compactMap { $0.header("ETag") }
            #expect(Set(etags).count == writers, "every version its own ETag: \(etags)")

            let get = try await client.send("GET", "/files/race.bin")
            #expect(get.status == 200)
            let winner = try #require(bodies.firstIndex(of: get.body), "the content is one body whole, not a mix")
            #expect(get.header("ETag") == replies[winner].header("ETag"), "GET's ETag is the winning PUT's")
            let listing = try await client.send("PROPFIND", "/files/race.bin", headers: [("Depth", "0")])
            #expect(Multistatus(listing)?.response("/files/race.bin")?.value("getetag") == get.header("ETag"))
            #expect(try await client.uploadsDrained())
            #expect(try Data(contentsOf: server.upstream.appendingPathComponent("race.bin")) == bodies[winner])
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.state.appendingPathComponent("cache/files/tmp").path).isEmpty)
            try await expectAliveAndBounded(server, client, after: "concurrent writers")
        }
    }

    /// A body that ends before its announced length, or a chunked body
    /// without its last chunk, stores nothing: no item, no index row, no
    /// file in the cache or the upstream, the old content where there was
    /// one. A client that half-closes gets 400 (it can still read);
    /// one that disappears gets nothing, and the server logs the 400.
    @Test("bodies cut short: 400, no file, no index row, nothing upstream")
    func bodiesCutShort() async throws {
        // Plain HTTP: the client half-closes and still reads the answer.
        try await withGateway(tls: false) { server, client in
            #expect(try await client.send("PUT", "/files/old.txt", body: "old content").status == 201)
            let host = "Host: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))"
            let probes: [(name: String, bytes: String, target: String)] = [
                ("a PUT 99,000 bytes short", "PUT /files/cut1.bin HTTP/1.1\r\n\(host)\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "a", count: 1000), "/files/cut1.bin"),
                ("a chunked PUT without its last chunk", "PUT /files/cut2.bin HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n" + String(repeating: "a", count: 1000) + "\r\n", "/files/cut2.bin"),
                ("a chunked PUT cut inside a chunk", "PUT /files/cut3.bin HTTP/1.1\r\n\(host)\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n" + String(repeating: "a", count: 500), "/files/cut3.bin"),
                ("a PUT over an existing file cut short", "PUT /files/old.txt HTTP/1.1\r\n\(host)\r\nContent-Length: 100000\r\n\r\nnew", "/files/old.txt"),
                ("a PROPPATCH cut short", "PROPPATCH /files/old.txt HTTP/1.1\r\n\(host)\r\nContent-Length: 500\r\n\r\n<?xml version=\"1.0\"?><D:propertyupdate xmlns:D=\"DAV:\">", "/files/old.txt"),
                ("a LOCK of a new name cut short", "LOCK /files/cut4.txt HTTP/1.1\r\n\(host)\r\nContent-Length: 500\r\n\r\n<?xml version=\"1.0\"?><D:lockinfo xmlns:D=\"DAV:\">", "/files/cut4.txt"),
            ]
            for probe in probes {
                let connection = try await RawConnection.open(server)
                defer { connection.close() }
                try await connection.send(probe.bytes)
                try await connection.finishSending()
                let reply = try await connection.response(within: .seconds(10))
                #expect(reply.status == 400, "\(probe.name): \(reply)")
                #expect(reply.text.contains("<D:error"), "\(probe.name)")
            }
            for name in ["cut1.bin", "cut2.bin", "cut3.bin", "cut4.txt"] {
                #expect(try await client.send("PROPFIND", "/files/\(name)", headers: [("Depth", "0")]).status == 404, "\(name)")
            }
            #expect(try await client.send("GET", "/files/old.txt").text == "old content")
            let lock = try await client.send("PROPFIND", "/files/old.txt", headers: [("Depth", "0")])
            #expect(Multistatus(lock)?.response("/files/old.txt")?.property("lockdiscovery")?.node.children.isEmpty == true)
            #expect(try await client.uploadsDrained())
            #expect(try server.upstreamNames() == ["old.txt"])
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("old.txt"), encoding: .utf8) == "old content")
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.state.appendingPathComponent("cache/files/tmp").path).isEmpty)
            #expect(await server.logLines(containing: "-> 400:", awaiting: probes.count) == probes.count, "each logged once: \(server.stderr)")
            try await expectAliveAndBounded(server, client, after: "bodies cut short (half-closed)")
        }
        // TLS: the client vanishes mid-body; the server notices, logs, stores nothing.
        try await withGateway { server, client in
            let connection = try await RawConnection.open(server)
            try await connection.send("PUT /files/gone.bin HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))\r\n"
                + "Content-Length: \(1 << 20)\r\n\r\n" + String(repeating: "g", count: 64 * 1024))
            connection.close()
            #expect(await server.logLines(containing: "PUT /files/gone.bin -> 400:", awaiting: 1) == 1, "\(server.stderr)")
            #expect(try await client.send("PROPFIND", "/files/gone.bin", headers: [("Depth", "0")]).status == 404)
            #expect(try await client.uploadsDrained())
            #expect(try server.upstreamNames().isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.state.appendingPathComponent("cache/files/tmp").path).isEmpty)
            try await expectAliveAndBounded(server, client, after: "a body cut short over TLS")
        }
    }
}
