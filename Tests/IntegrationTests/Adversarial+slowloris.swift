import DavgateTestSupport
import Foundation
import Testing

extension AdversarialTests {
    static let headerTimeout = 4.0
    static let idleTimeout = 6.0

    /// Slow clients holding connections (slowloris): hundreds of connections
    /// that never start TLS, that send half a head, that drip a head a byte
    /// at a time, that send a head and part of a body, or that stay open
    /// after a request. While they are held, a normal request is answered
    /// within a second; then each is closed by the timeout that governs it,
    /// not before and not much after: `header_timeout` from the connection's
    /// start (or a later request's first byte) to a complete head, with 408
    /// when part of a head came; `idle_timeout` for a stalled body and a
    /// silent kept-alive connection.
    /// Opens `count` connections at once, sends each its bytes (none for
    /// nil), and tells when each was sent.
    static func burst(_ count: Int, on server: DavgateProcess, tls: Bool = true,
                      _ bytes: @escaping @Sendable (Int) -> String?) async throws -> [(RawConnection, ContinuousClock.Instant)] {
        try await withThrowingTaskGroup(of: (RawConnection, ContinuousClock.Instant).self) { group in
            for i in 0..<count {
                group.addTask {
                    let connection = try await RawConnection.open(server, tls: tls)
                    if let text = bytes(i) { try await connection.send(text) }
                    return (connection, .now)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("slowloris: 310 held connections, a normal request answered within a second, each closed by its timeout")
    func slowloris() async throws {
        let extra = "header_timeout = \(Self.headerTimeout)\nidle_timeout = \(Self.idleTimeout)"
        try await withGateway(extraServer: extra) { server, client in
            // Warm the password cache: bcrypt must not be what is measured.
            #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")]).status == 207)
            let host = "Host: 127.0.0.1:\(server.port)\r\n\(Self.authorization(server))"
            let started = ContinuousClock.now

            // 100 that never start their TLS handshake.
            let silent = try await Self.burst(100, on: server, tls: false) { _ in nil }.map(\.0)
            // 100 with half a request head.
            let halfHead = try await Self.burst(100, on: server) { _ in "GET /files/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow" }.map(\.0)
            // 90 with a whole head and 10 of 1,000 body bytes.
            let halfBody = try await Self.burst(90, on: server) { i in
                "PUT /files/slow\(i).bin HTTP/1.1\r\n\(host)\r\nContent-Length: 1000\r\n\r\n0123456789"
            }
            // 10 that keep sending, one byte of a head every 200 ms.
            let drips = try await Self.burst(10, on: server) { _ in nil }.map(\.0)
            let dripping = Task {
                let head = Array("PROPFIND /files/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + String(repeating: "x", count: 200))
                for byte in head {
                    for connection in drips where !connection.isClosedByServer { try? await connection.send(String(byte)) }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            defer { dripping.cancel() }
            // Kept alive after one request: 5 then silent, 5 then half of a second head.
            var keptIdle: [(RawConnection, ContinuousClock.Instant)] = []
            var keptHalf: [(RawConnection, ContinuousClock.Instant)] = []
            for i in 0..<10 {
                let connection = try await RawConnection.open(server)
                try await connection.send("GET /files/ HTTP/1.1\r\n\(host)\r\n\r\n")
                #expect(try await connection.response(within: .seconds(5)).status == 200)
                if i < 5 {
                    keptIdle.append((connection, .now))
                } else {
                    try await connection.send("GET /files/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    keptHalf.append((connection, .now))
                }
            }
            let all = silent + halfHead + halfBody.map(\.0) + drips + keptIdle.map(\.0) + keptHalf.map(\.0)
            defer { all.forEach { $0.close() } }
            let header = Duration.milliseconds(Int(Self.headerTimeout * 1000))
            let idle = Duration.milliseconds(Int(Self.idleTimeout * 1000))
            // None is closed before its timeout; setting them up takes about
            // a second, well within the shortest.
            let setup = ContinuousClock.now - started
            #expect(setup < header - .milliseconds(1500), "setting up took \(setup)")
            #expect(all.filter(\.isClosedByServer).isEmpty, "closed early: \(all.filter(\.isClosedByServer).count) after \(setup)")

            // While they are held, normal requests on new connections (a TLS
            // handshake each) are answered within a second.
            for _ in 0..<3 {
                try await withClient(server) { fresh in
                    let begin = ContinuousClock.now
                    let reply = try await fresh.send("PROPFIND", "/files/", headers: [("Depth", "1")])
                    let took = ContinuousClock.now - begin
                    #expect(reply.status == 207)
                    #expect(took < .seconds(1), "a normal request took \(took) with \(all.count) connections held")
                }
            }
            let held = all.filter { !$0.isClosedByServer }.count
            #expect(held == all.count, "\(held) of \(all.count) still held after the normal requests")

            // Then each is closed by its own timeout.
            let slack = Duration.seconds(3)
            for connection in all {
                _ = await connection.closedByServer(within: started + setup + idle + slack - .now)
            }
            func expectClosed(_ connection: RawConnection, after start: ContinuousClock.Instant, by timeout: Duration, _ what: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
                guard let closedAt = connection.closedAt else {
                    Issue.record("\(what): still open", sourceLocation: sourceLocation)
                    return
                }
                let after = closedAt - start
                #expect(after >= timeout - .milliseconds(200), "\(what): closed after \(after), before its timeout \(timeout)",
                        sourceLocation: sourceLocation)
                #expect(after <= timeout + slack, "\(what): closed after \(after), its timeout is \(timeout)", sourceLocation: sourceLocation)
            }
            for connection in silent {
                expectClosed(connection, after: connection.openedAt, by: header, "a connection without TLS handshake")
                #expect(connection.received.isEmpty, "closed without a word")
            }
            for connection in halfHead + drips {
                expectClosed(connection, after: connection.openedAt, by: header, "a half-sent head")
                let reply = try? RawHTTP.parse(connection.received)
                #expect(reply?.status == 408, "a half-sent head: \(reply.map(String.init(describing:)) ?? "no answer")")
                #expect(reply?.text.contains("header_timeout") == true)
            }
            for (connection, sent) in halfBody {
                expectClosed(connection, after: sent, by: idle, "a stalled body")
            }
            for (connection, answered) in keptIdle {
                expectClosed(connection, after: answered, by: idle, "a silent kept-alive connection")
            }
            for (connection, firstByte) in keptHalf {
                expectClosed(connection, after: firstByte, by: header, "half of a second head")
                #expect(connection.responses.map(\.status) == [200, 408])
            }
            // Logged once each: the half-sent heads (not the silent ones).
            let answered = halfHead.count + drips.count + keptHalf.count
            #expect(await server.logLines(containing: "-> 408:", awaiting: answered) == answered)
            // The stalled bodies stored nothing.
            let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            #expect(Multistatus(listing)?.hrefs == ["/files/"], "\(listing.text)")
            #expect(try await client.uploadsDrained())
            #expect(try server.upstreamNames().isEmpty)
            try await expectAliveAndBounded(server, client, after: "slowloris")
        }
    }
}
