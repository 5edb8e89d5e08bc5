import DavgateTestSupport
import Foundation
import Testing

/// davgate's live properties `g:state` and `g:bytes-cached`: where each
/// file's content is, for clients and scripts.
@Suite("item state as live properties")
struct ItemStateTests {
    static let ask = """
        <D:propfind xmlns:D="DAV:" xmlns:g="https://davgate.dev/ns"><D:prop><g:state/><g:bytes-cached/></D:prop></D:propfind>
        """

    func state(_ client: DAVClient, _ path: String) async throws -> (state: String?, bytes: String?) {
        let text = try await client.send("PROPFIND", path, headers: [("Depth", "0")], body: Self.ask).text
        func value(_ name: String) -> String? {
            // Any prefix: davgate writes its own namespace as `x:`.
            text.range(of: "<[A-Za-z]+:\(name) [^>]*>([^<]*)</[A-Za-z]+:\(name)>", options: .regularExpression).map { match in
                let element = String(text[match])
                return String(element[element.index(after: element.firstIndex(of: ">")!)..<element.lastIndex(of: "<")!])
            }
        }
        return (value("state"), value("bytes-cached"))
    }

    @Test("placeholder, partial after a range read, materialized after a whole read, conflict for a kept-both copy; not in allprop")
    func states() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            try Data(count: 100_000).write(to: server.upstream.appendingPathComponent("big.bin"))
            #expect(try await state(client, "/files/big.bin") == ("placeholder", "0"))
            #expect(try await client.send("GET", "/files/big.bin", headers: [("Range", "bytes=0-999")]).status == 206)
            #expect(try await state(client, "/files/big.bin") == ("partial", "1000"))
            #expect(try await client.send("GET", "/files/big.bin").body.count == 100_000)
            // The read's last bytes reach the client before its fetch is
            // recorded as complete; a loaded machine shows the moment between.
            try await eventually("big.bin materialized after the whole read") {
                try await state(client, "/files/big.bin") == ("materialized", "100000")
            }

            let copy = try await client.makeConflict(server, name: "r.txt")
            #expect(try await state(client, copy) == ("conflict", "7"))

            let allprop = try await client.send("PROPFIND", "/files/big.bin", headers: [("Depth", "0")])
            #expect(!allprop.text.contains("bytes-cached"), "named only: allprop stays as clients know it")
        }
    }
}
