import DavgateTestSupport
import Foundation
import Testing

extension AdversarialTests {
    static let lockinfo = """
        <?xml version="1.0" encoding="utf-8"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>\
        <D:locktype><D:write/></D:locktype><D:owner>flood</D:owner></D:lockinfo>
        """

    /// Thousands of LOCKs on new names (each creates a lock-null file),
    /// hundreds of refreshes of one lock, racing exclusive LOCKs on one name,
    /// and a flood under a folder locked by someone else: every answer is
    /// exact, and the server keeps answering within its memory bound.
    @Test("lock floods: thousands of new locks, refreshes, racing exclusive locks, locks under a locked folder")
    func lockFloods() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("MKCOL", "/files/locks").status == 201)
            let names = 2000
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                var statuses: [Int: Int] = [:]
                for i in 0..<names {
                    if i >= 16, let status = try await group.next() { statuses[status, default: 0] += 1 }
                    group.addTask {
                        try await client.send("LOCK", "/files/locks/f\(i).txt", headers: [("Timeout", "Second-600")], body: Self.lockinfo).status
                    }
                }
                for try await status in group { statuses[status, default: 0] += 1 }
                return statuses
            }
            #expect(statuses == [201: names], "LOCK of new names: \(statuses)")
            let listing = try await client.send("PROPFIND", "/files/locks/", headers: [("Depth", "1")])
            let responses = try #require(Multistatus(listing)).responses
            #expect(responses.count == names + 1)
            #expect(responses.filter { $0.property("lockdiscovery")?.node.descendants("activelock").count == 1 }.count == names)

            // Hundreds of refreshes of one lock.
            let first = try await client.send("LOCK", "/files/locks/refreshed.txt", body: Self.lockinfo)
            #expect(first.status == 201)
            let token = try #require(first.header("Lock-Token")).trimmingCharacters(in: CharacterSet(charactersIn: "<>"))
            for _ in 0..<300 {
                let refresh = try await client.send("LOCK", "/files/locks/refreshed.txt", headers: [("If", "(<\(token)>)"), ("Timeout", "Second-900")])
                #expect(refresh.status == 200)
            }
            let refreshed = try await client.send("PROPFIND", "/files/locks/refreshed.txt", headers: [("Depth", "0")])
            #expect(Multistatus(refreshed)?.response("/files/locks/refreshed.txt")?.property("lockdiscovery")?.node.descendants("activelock").count == 1)

            // Racing exclusive LOCKs on one new name and on one existing file,
            // each on its own connection: one wins, every other gets 423.
            #expect(try await client.send("PUT", "/files/locks/existing.txt", body: "x").status == 201)
            for (target, winner) in [("/files/locks/contested.txt", 201), ("/files/locks/existing.txt", 200)] {
                var connections: [RawConnection] = []
                for _ in 0..<40 { connections.append(try await RawConnection.open(server)) }
                defer { connections.forEach { $0.close() } }
                let request = "LOCK \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))\r\n"
                    + "Content-Length: \(Self.lockinfo.utf8.count)\r\n\r\n\(Self.lockinfo)"
                let raced = try await withThrowingTaskGroup(of: Int.self) { group in
                    for connection in connections {
                        group.addTask {
                            try await connection.send(request)
                            return try await connection.response(within: .seconds(30)).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(raced.filter { $0 == winner }.count == 1, "\(target): \(raced.sorted())")
                #expect(raced.filter { $0 == 423 }.count == 39, "\(target): \(raced.sorted())")
            }

            // A depth-infinity lock on a folder; a flood of LOCKs of new names
            // inside it without its token: 423 each, and no lock-null file made.
            #expect(try await client.send("MKCOL", "/files/held").status == 201)
            #expect(try await client.send("LOCK", "/files/held", headers: [("Depth", "infinity")], body: Self.lockinfo).status == 200)
            for i in 0..<200 {
                let reply = try await client.send("LOCK", "/files/held/m\(i).txt", body: Self.lockinfo)
                #expect(reply.status == 423, "LOCK under a locked folder: \(reply.status)")
            }
            let held = try await client.send("PROPFIND", "/files/held/", headers: [("Depth", "1")])
            #expect(Multistatus(held)?.hrefs == ["/files/held/"])
            try await expectAliveAndBounded(server, client, after: "lock floods")
        }
    }
}
