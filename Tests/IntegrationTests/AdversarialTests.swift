import DavgateTestSupport
import Foundation
import Testing

/// Attacks on the real davgate binary over real sockets (project issue 12):
/// request smuggling and broken framing, oversized heads and URLs, bad
/// percent-encoding and UTF-8 in paths and Destination, namespace cycles,
/// range floods, huge XML bodies, racing writers, bodies cut short, lock
/// floods and slow clients holding connections. Every probe names the status
/// it expects; each group ends by checking that the server still answers a
/// normal request and stays within its memory bound. The groups live in
/// `Adversarial+*.swift`.
///
/// Serialized: the slowloris group measures answer times, which another
/// group's load on this two-core machine would skew.
@Suite("adversarial probes against the real binary", .serialized)
struct AdversarialTests {
    /// The resident memory davgate must stay under after any group. A debug
    /// build runs at about 60 MiB idle and at most about 75 MiB after the
    /// heaviest group (slowloris); a leak per request, connection or lock
    /// (thousands of each here, and megabytes of refused bodies) would cross
    /// it.
    static let memoryBound = 150 << 20

    /// The credentials line for raw requests.
    static func authorization(_ server: DavgateProcess) -> String {
        "Authorization: Basic " + Data("admin:\(server.adminPassword)".utf8).base64EncodedString()
    }
}

extension DavgateProcess {
    /// davgate's resident set (VmRSS of /proc/PID/status) in bytes.
    var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kiB = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kiB * 1024
    }

    /// How many lines of davgate's log contain `needle`.
    func logLines(containing needle: String) -> Int {
        stderr.split(separator: "\n").filter { $0.contains(needle) }.count
    }

    /// The same, once `expected` lines have arrived or five seconds have
    /// passed: the log reaches the test through a pipe, behind the answers.
    func logLines(containing needle: String, awaiting expected: Int) async -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        while logLines(containing: needle) < expected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return logLines(containing: needle)
    }
}

/// The end of every group: the process is running, a normal PROPFIND and GET
/// are answered, and its memory is under the bound.
func expectAliveAndBounded(_ server: DavgateProcess, _ client: DAVClient, after group: String,
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
    #expect(!ChildProcess.hasEnded(server.pid), "davgate died during \(group)", sourceLocation: sourceLocation)
    let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
    #expect(listing.status == 207, "PROPFIND after \(group): \(listing.status)", sourceLocation: sourceLocation)
    _ = try await client.send("PUT", "/files/alive.txt", body: "alive")
    let get = try await client.send("GET", "/files/alive.txt")
    #expect(get.status == 200 && get.text == "alive", "GET after \(group): \(get.status)", sourceLocation: sourceLocation)
    let rss = try #require(server.residentBytes, sourceLocation: sourceLocation)
    #expect(rss < AdversarialTests.memoryBound,
            "davgate uses \(rss >> 20) MiB after \(group), over the bound of \(AdversarialTests.memoryBound >> 20) MiB",
            sourceLocation: sourceLocation)
}

/// One raw request and the status it must get.
struct Probe: CustomStringConvertible, Sendable {
    var name: String
    var bytes: Data
    var expected: Int
    var description: String { "\(name) -> \(expected)" }

    init(_ name: String, _ text: String, expect expected: Int) {
        self.name = name
        self.bytes = Data(text.utf8)
        self.expected = expected
    }

    init(_ name: String, bytes: Data, expect expected: Int) {
        self.name = name
        self.bytes = bytes
        self.expected = expected
    }
}

extension AdversarialTests {
    /// Sends one probe on its own connection; the answer must be its status
    /// with a DAV error body and the only answer on the connection, which
    /// the server then closes (after broken framing nothing more is read;
    /// probes handled by the responder ask for `Connection: close`).
    static func run(_ probe: Probe, on server: DavgateProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let connection = try await RawConnection.open(server)
        defer { connection.close() }
        try await connection.send(probe.bytes)
        #expect(await connection.closedByServer(within: .seconds(10)), "\(probe): connection left open", sourceLocation: sourceLocation)
        let reply = try await connection.response(within: .seconds(10))
        #expect(reply.status == probe.expected, "\(probe): got \(reply)", sourceLocation: sourceLocation)
        #expect(reply.header("Content-Type")?.hasPrefix("application/xml") == true, "\(probe): no DAV error body", sourceLocation: sourceLocation)
        #expect(reply.text.contains("<D:error"), "\(probe): no DAV error body: \(reply.text)", sourceLocation: sourceLocation)
        #expect(connection.responses.count == 1, "\(probe): \(connection.responses.count) answers on one connection", sourceLocation: sourceLocation)
    }
}
