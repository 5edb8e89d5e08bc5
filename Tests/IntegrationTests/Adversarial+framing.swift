import DavgateTestSupport
import Foundation
import Testing

extension AdversarialTests {
    /// Request smuggling lives in the disagreement of two parsers about where
    /// a request ends. davgate must never pick one reading of an ambiguous
    /// frame: it answers 400 with a DAV error body, logs it once, closes the
    /// connection (so whatever hid behind the frame is never read as a
    /// request), and changes nothing.
    @Test("smuggling and broken framing: 400, the only answer, connection closed, nothing executed")
    func framing() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/victim.txt", body: "intact").status == 201)
            let host = "Host: 127.0.0.1:\(server.port)"
            let auth = Self.authorization(server)
            // Read as a request of its own, this would delete victim.txt.
            let smuggled = "DELETE /files/victim.txt HTTP/1.1\r\n\(host)\r\n\(auth)\r\n\r\n"
            func put(_ name: String, _ framing: String, _ body: String) -> String {
                "PUT /files/\(name) HTTP/1.1\r\n\(host)\r\n\(auth)\r\n\(framing)\r\n\r\n\(body)"
            }
            var probes: [Probe] = [
                Probe("Content-Length then Transfer-Encoding",
                      put("cl-te.txt", "Content-Length: 5\r\nTransfer-Encoding: chunked", "0\r\n\r\n" + smuggled), expect: 400),
                Probe("Transfer-Encoding then Content-Length",
                      put("te-cl.txt", "Transfer-Encoding: chunked\r\nContent-Length: 5", "0\r\n\r\n" + smuggled), expect: 400),
                Probe("two different Content-Lengths",
                      put("cl-cl.txt", "Content-Length: 5\r\nContent-Length: \(5 + smuggled.utf8.count)", "hello" + smuggled), expect: 400),
                Probe("a Content-Length list", put("cl-list.txt", "Content-Length: 5, 40", "hello" + smuggled), expect: 400),
                Probe("the same Content-Length twice", put("cl-twice.txt", "Content-Length: 5\r\nContent-Length: 5", "hello"), expect: 400),
                Probe("Transfer-Encoding not ending in chunked",
                      put("te-gzip.txt", "Transfer-Encoding: chunked, gzip", "0\r\n\r\n" + smuggled), expect: 400),
                Probe("an unknown Transfer-Encoding", put("te-x.txt", "Transfer-Encoding: xchunked", "0\r\n\r\n" + smuggled), expect: 400),
                // The decoder lets this head through and fails only in the
                // body, which a DELETE never reads: it must not run.
                Probe("a DELETE with Transfer-Encoding: gzip",
                      "DELETE /files/victim.txt HTTP/1.1\r\n\(host)\r\n\(auth)\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n", expect: 400),
                Probe("a DELETE with a second Host",
                      "DELETE /files/victim.txt HTTP/1.1\r\n\(host)\r\nHost: elsewhere.example\r\n\(auth)\r\n\r\n", expect: 400),
                Probe("a space before the colon",
                      put("te-space.txt", "Content-Length: 5\r\nTransfer-Encoding : chunked", "0\r\n\r\n" + smuggled), expect: 400),
                Probe("a NUL in a header value", put("nul.txt", "Content-Length: 5\r\nX-Note: a\u{0}b", "hello"), expect: 400),
                Probe("a header name with a space", put("name.txt", "Content-Length: 5\r\nX Note: b", "hello"), expect: 400),
            ]
            for (name, value) in [("negative", "-1"), ("non-numeric", "five"), ("hexadecimal", "0x5"), ("exponent", "5e0"),
                                  ("signed", "+5"), ("empty", ""), ("overflowing", "99999999999999999999999")] {
                probes.append(Probe("a \(name) Content-Length", put("cl-\(name).txt", "Content-Length: \(value)", "hello"), expect: 400))
            }
            // Framing that breaks inside the body, after the head was read:
            // the handler that reads the body answers.
            probes.append(Probe("a chunk size that is not hex", put("chunk.txt", "Transfer-Encoding: chunked", "zz\r\nhello\r\n0\r\n\r\n"), expect: 400))
            probes.append(Probe("a PROPPATCH body with an overflowing chunk size",
                                "PROPPATCH /files/victim.txt HTTP/1.1\r\n\(host)\r\n\(auth)\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    + "FFFFFFFFFFFFFFFFFFFF\r\n<x/>\r\n0\r\n\r\n", expect: 400))
            for probe in probes {
                try await Self.run(probe, on: server)
            }
            // Nothing was executed: no file made, victim.txt untouched.
            #expect(try await client.send("GET", "/files/victim.txt").text == "intact")
            let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            #expect(Multistatus(listing)?.hrefs.sorted() == ["/files/", "/files/victim.txt"], "\(listing.text)")
            #expect(try await client.uploadsDrained())
            #expect(try server.upstreamNames() == ["victim.txt"])
            // Logged once each.
            #expect(await server.logLines(containing: "-> 400:", awaiting: probes.count) == probes.count, "\(server.stderr)")
            try await expectAliveAndBounded(server, client, after: "framing probes")
        }
    }

    /// The guard against broken frames must not break good ones: pipelined
    /// requests on one kept-alive connection are all answered, in order.
    @Test("pipelined requests on one connection are answered in order")
    func pipelining() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/one.txt", body: "one").status == 201)
            let connection = try await RawConnection.open(server)
            defer { connection.close() }
            let head = "Host: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))\r\n"
            try await connection.send("GET /files/one.txt HTTP/1.1\r\n\(head)\r\n"
                + "PUT /files/two.txt HTTP/1.1\r\n\(head)Content-Length: 3\r\n\r\ntwo"
                + "GET /files/two.txt HTTP/1.1\r\n\(head)Connection: close\r\n\r\n")
            #expect(await connection.closedByServer(within: .seconds(10)))
            let replies = connection.responses
            #expect(replies.map(\.status) == [200, 201, 200])
            #expect(replies.first?.text == "one")
            #expect(replies.last?.text == "two")
            // A refused head behind a good one: the good one is answered
            // first, then the refusal, then the connection closes; what
            // came after is never read.
            let refused = try await RawConnection.open(server)
            defer { refused.close() }
            try await refused.send("GET /files/one.txt HTTP/1.1\r\n\(head)\r\n"
                + "DELETE /files/one.txt HTTP/1.1\r\n\(head)Transfer-Encoding: gzip\r\n\r\n"
                + "DELETE /files/two.txt HTTP/1.1\r\n\(head)\r\n")
            #expect(await refused.closedByServer(within: .seconds(10)))
            #expect(refused.responses.map(\.status) == [200, 400], "\(refused.responses)")
            #expect(try await client.send("GET", "/files/one.txt").text == "one")
            #expect(try await client.send("GET", "/files/two.txt").text == "two")
            try await expectAliveAndBounded(server, client, after: "pipelining")
        }
    }
}
