import DavgateTestSupport
import Foundation
import Testing

/// The real HAProxy the cluster tests will put in front of several davgate
/// instances (docs/scale-out.md, steps 3 and 8), here in front of two small
/// Python servers that answer with their names: it balances every request,
/// not every connection, and a backend that dies costs no failed request.
@Suite("HAProxyServer: a real HAProxy in front of backends")
struct HAProxyServerTests {
    @Test("over TLS, four requests on one kept-alive connection alternate between two backends; with one killed, the other answers them all")
    func roundRobinAndFailover() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haproxy-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let a = try await backend("a", log: folder.appendingPathComponent("a.log"))
        defer { a.stop() }
        let b = try await backend("b", log: folder.appendingPathComponent("b.log"))
        defer { b.stop() }
        let proxy = try await HAProxyServer(backends: [a.port, b.port], tls: true)
        defer { proxy.cleanUp() }
        let certificate = try #require(proxy.certificate)

        let first = try await curl(proxy, certificate: certificate, requests: 4)
        #expect(Set(first) == ["a 200", "b 200"], "both backends answered: \(first)")
        #expect(zip(first, first.dropFirst()).allSatisfy { $0 != $1 }, "each request went to the other backend: \(first)")

        b.stop()
        let after = try await curl(proxy, certificate: certificate, requests: 4)
        #expect(after == ["a 200", "a 200", "a 200", "a 200"], "\(after); HAProxy: \((try? String(contentsOf: proxy.log, encoding: .utf8)) ?? "")")
    }

    @Test("without TLS the frontend speaks plain HTTP")
    func plainHTTP() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("haproxy-test-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let only = try await backend("only", log: log)
        defer { only.stop() }
        let proxy = try await HAProxyServer(backends: [only.port], tls: false)
        defer { proxy.cleanUp() }
        #expect(proxy.baseURL == "http://127.0.0.1:\(proxy.port)")
        #expect(proxy.certificate == nil)
        let response = try await LoopbackHTTP.send(port: proxy.port, method: "GET", target: "/")
        #expect(response.status == 200)
        #expect(response.text == "only")
    }

    /// A backend on a free port that answers every GET with `name`.
    private func backend(_ name: String, log: URL) async throws -> PortAnnouncingProcess {
        try await PortAnnouncingProcess(Python.executable(), ["-u", Python.helper("namedbackend.py"), name], log: log)
    }

    /// GETs `/` through the proxy `requests` times in one curl, which keeps
    /// its connection open between them, trusting only the proxy's certificate.
    /// - Returns: each answer's body and status, as `a 200` (` 503` for a
    ///   failure: curl's exit status tells only of the last request).
    private func curl(_ proxy: HAProxyServer, certificate: URL, requests: Int) async throws -> [String] {
        let url = proxy.baseURL + "/"
        let output = try await ChildProcess.output("/usr/bin/curl", [
            "--silent", "--show-error", "--fail", "--noproxy", "*", "--max-time", "120", "--cacert", certificate.path,
            "--write-out", " %{http_code}\\n",
        ] + Array(repeating: url, count: requests), check: false)
        return output.text.split(separator: "\n").map(String.init)
    }
}
