import DavgateTestSupport
import Dispatch
import Foundation
import Testing

/// davgate in front of a real Apache mod_dav: the domain `lazy` bridged to
/// Apache over HTTP, Apache's password only in davgate's vault. What davgate
/// asks of its upstream is read off Apache's access log.
struct ApacheGateway {
    let apache: ApacheServer
    let gateway: DavgateProcess
    let client: DAVClient
    /// Starts davgate as `withApacheGateway` did, on the state folder given.
    let start: @Sendable (_ reuse: URL?) async throws -> DavgateProcess

    /// Stops davgate and runs `body` against a new davgate process on the
    /// same state folder, as after a restart.
    func afterRestart(_ body: (DavgateProcess, DAVClient) async throws -> Void) async throws {
        gateway.stop()
        let again = try await start(gateway.root)
        defer { again.stop() }
        try await withClient(again) { try await body(again, $0) }
    }

    /// What Apache serves at `/dav/`: files put here appear upstream
    /// without davgate's knowledge, as if someone used the upstream directly.
    var upstreamFolder: URL { apache.documentRoot.appendingPathComponent("dav") }

    func writeUpstream(_ path: String, _ data: Data) throws {
        let url = upstreamFolder.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
    }

    /// Apache's access log lines from `mark` (an earlier `accessLines.count`) on.
    func upstreamRequests(since mark: Int) -> [String] {
        Array(apache.accessLines.dropFirst(mark))
    }

    /// Reads `path` once and waits until its copy is recorded as cached and
    /// Apache has logged the fetch. A read's last bytes reach the client
    /// before its fetch is recorded, and Apache writes its log line after
    /// it answered; a test that marks the log too early sees the line of
    /// this fetch as a request of its own, or reads through a fetch still
    /// being recorded (CI saw both on a loaded machine).
    func readUntilCached(_ path: String) async throws {
        let mark = apache.accessLines.count
        #expect(try await client.send("GET", path).status == 200)
        try await eventually("\(path) cached and its upstream GET logged") {
            try await ItemStateTests().state(client, path).state == "materialized"
                && upstreamRequests(since: mark).contains { $0.hasPrefix("GET ") }
        }
    }

    /// `curl` against davgate, for what AsyncHTTPClient hides: time to first
    /// byte and a transfer cut short. Returns curl's exit status, the bytes
    /// received and curl's `-w` report. Waits on a thread of its own (see
    /// `onOwnThread`). The body is written to `output` as it arrives (watch it
    /// grow), or to a temporary file.
    func curl(_ path: String, output: URL? = nil, report: String = "%{time_starttransfer} %{time_total}") async throws -> (status: Int32, body: Data, report: String) {
        try await onOwnThread { try runCurl(path, output: output, report: report) }
    }

    private func runCurl(_ path: String, output given: URL?, report: String) throws -> (status: Int32, body: Data, report: String) {
        let output = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sS", "--cacert", gateway.certificate.path, "-u", "admin:\(gateway.adminPassword)",
                             "-o", output.path, "-w", report, gateway.baseURL + path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let written = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, (try? Data(contentsOf: output)) ?? Data(), written)
    }
}

/// Starts Apache, a vault holding its password and davgate with the `lazy`
/// domain in front of it; runs `body`; always cleans up.
/// `password` replaces Apache's real one in the vault (a wrong one, to test refusals).
func withApacheGateway(rateLimitKiB: Int? = nil, apacheConfig: String = "", extraDomain: String = "", password: String = ApacheServer.password,
                       _ body: (ApacheGateway) async throws -> Void) async throws {
    let apache = try await ApacheServer(rateLimitKiB: rateLimitKiB, extraConfig: apacheConfig)
    defer { apache.cleanUp() }
    let (vault, key) = try await makeVault()
    defer { try? FileManager.default.removeItem(at: vault.deletingLastPathComponent()) }
    let stored = try await runDavgate(["vault", "set", "apache", ApacheServer.user, "--group", "lazy", "--vault", vault.path, "--key-file", key.path],
                                stdin: password + "\n")
    try #require(stored.status == 0, "\(stored.output)")
    let start: @Sendable (URL?) async throws -> DavgateProcess = { reuse in
        try await DavgateProcess(
            extraServer: "vault = \"\(vault.path)\"",
            extraDomain: """

                [[domain]]
                name = "lazy"
                upstream = "\(apache.baseURL.absoluteString)"
                credentials = { service = "apache", account = "\(ApacheServer.user)" }
                \(extraDomain)
                """,
            arguments: ["--key-file", key.path], reuse: reuse)
    }
    let gateway = try await start(nil)
    defer { gateway.cleanUp() }
    let client = try DAVClient(gateway)
    do {
        try await body(ApacheGateway(apache: apache, gateway: gateway, client: client, start: start))
        try await client.shutdown()
    } catch {
        print(gateway.stderr)
        try? await client.shutdown()
        throw error
    }
}
