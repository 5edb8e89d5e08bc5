import DavgateTestSupport
import Foundation
import Testing

extension AdversarialTests {
    /// Heads too large for the decoder, request targets too long to
    /// interpret, and names that are not names: percent-escapes that decode
    /// to nothing, to invalid UTF-8, to a slash or NUL, to dot segments; the
    /// same in Destination. Each gets its precise status and changes nothing.
    @Test("oversized heads and URLs, bad percent-encoding and UTF-8 in paths and Destination")
    func targets() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("MKCOL", "/files/dir").status == 201)
            #expect(try await client.send("PUT", "/files/dir/keep.txt", body: "keep").status == 201)
            let host = "Host: 127.0.0.1:\(server.port)"
            let auth = Self.authorization(server)
            func request(_ method: String, _ target: Data, headers: [Data] = []) -> Data {
                var out = Data("\(method) ".utf8) + target + Data(" HTTP/1.1\r\n\(host)\r\n\(auth)\r\nConnection: close\r\n".utf8)
                for header in headers { out += header + Data("\r\n".utf8) }
                return out + Data("Content-Length: 1\r\n\r\nx".utf8)
            }
            func put(_ target: String) -> Data { request("PUT", Data(target.utf8)) }
            func move(to destination: Data) -> Data {
                request("MOVE", Data("/files/dir/keep.txt".utf8), headers: [Data("Destination: ".utf8) + destination])
            }
            let base = "https://127.0.0.1:\(server.port)"
            // 8-byte segments: long paths, none of their names long.
            let deep = String(repeating: "/abcdefg", count: 20 * 1024 / 8)
            var probes: [Probe] = [
                Probe("a 100 KiB header field",
                      "GET /files/ HTTP/1.1\r\n\(host)\r\n\(auth)\r\nX-Big: \(String(repeating: "a", count: 100 * 1024))\r\n\r\n", expect: 431),
                Probe("1,100 header fields",
                      "GET /files/ HTTP/1.1\r\n\(host)\r\n\(auth)\r\n" + (0..<1100).map { "X-F\($0): v\r\n" }.joined() + "\r\n", expect: 431),
                Probe("a 20 KiB request target", bytes: put("/files" + deep), expect: 414),
                Probe("a 100 KiB request target", bytes: put("/files" + String(repeating: "/abcdefg", count: 100 * 1024 / 8)), expect: 431),
            ]
            // Each of these as a PUT target, and as a MOVE's Destination.
            let badNames: [(String, Data)] = [
                ("a non-hex escape", Data("%zz".utf8)),
                ("a short escape", Data("%4".utf8)),
                ("a lone percent sign", Data("x%".utf8)),
                ("a truncated UTF-8 sequence", Data("%C3".utf8)),
                ("bytes that are never UTF-8", Data("%FF%FE".utf8)),
                ("an overlong slash", Data("%C0%AF".utf8)),
                ("a UTF-16 surrogate", Data("%ED%A0%80".utf8)),
                ("a code point past U+10FFFF", Data("%F4%90%80%80".utf8)),
                ("an encoded NUL", Data("a%00b".utf8)),
                ("an encoded slash", Data("a%2Fb".utf8)),
                ("an encoded dot-dot", Data("%2e%2e".utf8)),
                ("a raw byte 0xFF", Data([0x61, 0xFF, 0x62])),
                ("a raw truncated UTF-8 sequence", Data([0x61, 0xC3])),
            ]
            for (name, segment) in badNames {
                probes.append(Probe("PUT to \(name)", bytes: request("PUT", Data("/files/dir/".utf8) + segment), expect: 400))
                probes.append(Probe("MOVE to \(name)", bytes: move(to: Data("\(base)/files/dir/".utf8) + segment), expect: 400))
            }
            probes.append(Probe("MOVE to a dot-dot path", bytes: move(to: Data("\(base)/files/dir/../../etc/x".utf8)), expect: 400))
            probes.append(Probe("MOVE to a relative Destination", bytes: move(to: Data("keep2.txt".utf8)), expect: 400))
            probes.append(Probe("two Host fields", bytes: request("PUT", Data("/files/dir/host.txt".utf8), headers: [Data("Host: elsewhere.example".utf8)]),
                                expect: 400))
            for probe in probes {
                try await Self.run(probe, on: server)
            }
            // Long paths within the limit are served: 404, not a refusal.
            let within = try await client.send("GET", "/files" + String(repeating: "/abcdefg", count: 15 * 1024 / 8))
            #expect(within.status == 404)
            // Nothing made, nothing moved.
            #expect(try await client.send("GET", "/files/dir/keep.txt").text == "keep")
            let listing = try await client.send("PROPFIND", "/files/dir/", headers: [("Depth", "1")])
            #expect(Multistatus(listing)?.hrefs.sorted() == ["/files/dir/", "/files/dir/keep.txt"], "\(listing.text)")
            #expect(try await client.uploadsDrained())
            #expect(try FileManager.default.contentsOfDirectory(atPath: server.upstream.appendingPathComponent("dir").path) == ["keep.txt"])
            for status in [400, 414, 431] {
                let expected = probes.filter { $0.expected == status }.count
                #expect(await server.logLines(containing: "-> \(status):", awaiting: expected) == expected,
                        "each \(status) logged once: \(server.stderr)")
            }
            try await expectAliveAndBounded(server, client, after: "oversized heads and bad names")
        }
    }
}
