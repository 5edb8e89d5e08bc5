import DavgateTestSupport
import Foundation
import Testing

extension AdversarialTests {
    /// MOVE or COPY of a folder into its own subtree would recurse without
    /// end or orphan the subtree; onto its own ancestor it would delete
    /// itself. Every spelling of it (trailing slashes, NFD, lower-case
    /// escapes, Overwrite T, Depth 0) is refused with 403 and nothing moves.
    @Test("namespace cycles: MOVE or COPY of a folder into its own child or onto its ancestor is 403")
    func namespaceCycles() async throws {
        try await withGateway { server, client in
            for folder in ["/files/a", "/files/a/b", "/files/%C3%BC"] {
                #expect(try await client.send("MKCOL", folder).status == 201)
            }
            #expect(try await client.send("PUT", "/files/a/b/f.txt", body: "f").status == 201)
            let base = client.base
            let probes: [(method: String, source: String, destination: String, headers: [(String, String)], expected: Int)] = [
                ("MOVE", "/files/a", "/files/a/b/c", [], 403),
                ("MOVE", "/files/a/", "/files/a/b/", [], 403),
                ("MOVE", "/files/a", "/files/a/b", [("Overwrite", "T")], 403),
                ("MOVE", "/files/a/b", "/files/a", [("Overwrite", "T")], 403),
                ("MOVE", "/files/a", "/files/a/", [], 403),
                ("COPY", "/files/a", "/files/a/b/copy", [], 403),
                ("COPY", "/files/a", "/files/a/b/copy", [("Depth", "0")], 403),
                ("COPY", "/files/a/b", "/files/a", [("Overwrite", "T")], 403),
                // The same folder in NFD and NFC, in lower- and upper-case hex.
                ("MOVE", "/files/u%CC%88", "/files/%c3%bc/sub", [], 403),
                ("COPY", "/files/%C3%BC/", "/files/u%cc%88/sub/", [], 403),
                // Dot segments could hide a cycle; they are refused outright.
                ("MOVE", "/files/a", "/files/a/b/../c", [], 400),
            ]
            for probe in probes {
                let reply = try await client.send(probe.method, probe.source,
                                                  headers: [("Destination", base + probe.destination)] + probe.headers)
                #expect(reply.status == probe.expected, "\(probe.method) \(probe.source) -> \(probe.destination): \(reply.status) \(reply.text)")
                #expect(reply.text.contains("<D:error"), "a DAV error body for \(probe.method) \(probe.source)")
            }
            // The tree is as it was, here and upstream.
            let a = try await client.send("PROPFIND", "/files/a/", headers: [("Depth", "1")])
            #expect(Multistatus(a)?.hrefs.sorted() == ["/files/a/", "/files/a/b/"])
            let b = try await client.send("PROPFIND", "/files/a/b/", headers: [("Depth", "1")])
            #expect(Multistatus(b)?.hrefs.sorted() == ["/files/a/b/", "/files/a/b/f.txt"])
            let u = try await client.send("PROPFIND", "/files/%C3%BC/", headers: [("Depth", "1")])
            #expect(Multistatus(u)?.hrefs == ["/files/%C3%BC/"])
            #expect(try await client.uploadsDrained())
            let upstream = try FileManager.default.subpathsOfDirectory(atPath: server.upstream.path).sorted()
            #expect(upstream == ["a", "a/b", "a/b/f.txt", "ü"])
            let forbidden = probes.filter { $0.expected == 403 }.count
            #expect(await server.logLines(containing: "-> 403:", awaiting: forbidden) == forbidden)
            try await expectAliveAndBounded(server, client, after: "namespace cycles")
        }
    }
}
