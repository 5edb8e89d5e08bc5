import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real HAProxy (Debian's `haproxy`) on a free loopback port in front of
/// backends on loopback ports, as a cluster of davgate instances would run
/// behind it: HTTP mode, so each request is balanced on its own (round
/// robin, no `prefer-last-server`), even on a kept-alive client connection.
/// Its own process (`haproxy -db`, a child of the tests), never Debian's
/// service; an ``ExitGuard`` kills it and removes its folder if this
/// process ends while it runs.
///
/// Configured by the repository's `conf/haproxy-cluster.cfg`, which says
/// why each setting is there: a backend is checked with `OPTIONS /` every
/// 500 ms, any status from 200 to 499 is healthy, two failures take it
/// out, one success brings it back.
public final class HAProxyServer: Sendable {
    public let folder: URL
    public let port: Int
    public let backends: [Int]
    public let tls: Bool
    /// The certificate the frontend presents (PEM), for clients to trust; nil without TLS.
    public let certificate: URL?
    /// `https://127.0.0.1:PORT` (or `http://`), without a path.
    public var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    public var configFile: URL { folder.appendingPathComponent("haproxy.cfg") }
    /// HAProxy's standard output and error: start-up alerts, and a line
    /// whenever a backend goes down or comes back.
    public var log: URL { folder.appendingPathComponent("haproxy.log") }
    private let pid: pid_t
    private let exitGuard: ExitGuard

    /// The repository's `conf/haproxy-cluster.cfg`, filled in: what the
    /// README shows and `scripts/bench --cluster` runs, so the tests check
    /// the configuration users are told to use.
    static func configuration(bind: String, servers: [String]) throws -> String {
        let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../conf/haproxy-cluster.cfg").standardizedFileURL
        return try String(contentsOf: template, encoding: .utf8)
            .replacingOccurrences(of: "{{GLOBAL}}\n", with: "")
            .replacingOccurrences(of: "{{BIND}}", with: bind)
            .replacingOccurrences(of: "{{SERVERS}}", with: servers.joined(separator: "\n"))
    }

    /// Starts HAProxy; returns once it accepts connections.
    /// - Parameters: `backends` are the ports of servers on 127.0.0.1 that
    ///   speak plain HTTP (`server b0`, `b1`, ... in that order);
    ///   with `tls` the frontend terminates TLS with `certificate` and
    ///   `privateKey` (PEM files; a DavgateProcess's `certs/davgate.pem`
    ///   and `certs/davgate-key.pem` make clients that trust that davgate
    ///   trust the proxy too), or, when they are nil, with a fresh
    ///   self-signed pair for localhost and 127.0.0.1 made by openssl.
    public init(backends: [Int], tls: Bool, certificate: URL? = nil, privateKey: URL? = nil) async throws {
        let haproxy = "/usr/sbin/haproxy"
        guard FileManager.default.isExecutableFile(atPath: haproxy) else {
            Issue.record("HAProxy is not installed: apt-get install -y haproxy (scripts/test does this)")
            throw Failure.notInstalled
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder
        self.backends = backends
        self.tls = tls
        let log = folder.appendingPathComponent("haproxy.log"), configFile = folder.appendingPathComponent("haproxy.cfg")

        var bind = ""
        if tls {
            let pair: (certificate: URL, privateKey: URL)
            if let certificate, let privateKey {
                pair = (certificate, privateKey)
            } else {
                pair = (folder.appendingPathComponent("cert.pem"), folder.appendingPathComponent("key.pem"))
                // As davgate's own development certificate: EC P-256, for localhost and the loopback addresses.
                _ = try await ChildProcess.output("/usr/bin/openssl", [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
                    "-keyout", pair.privateKey.path, "-out", pair.certificate.path,
                ])
            }
            // HAProxy takes the certificate and its key from one file.
            let front = folder.appendingPathComponent("front.pem")
            var pem = try Data(contentsOf: pair.certificate)
            if pem.last != UInt8(ascii: "\n") { pem.append(UInt8(ascii: "\n")) }
            pem.append(try Data(contentsOf: pair.privateKey))
            guard FileManager.default.createFile(atPath: front.path, contents: pem, attributes: [.posixPermissions: 0o600]) else {
                throw Failure.didNotStart
            }
            bind = " ssl crt \(front.path)"
            self.certificate = pair.certificate
        } else {
            self.certificate = nil
        }

        var lastError = ""
        for _ in 0..<5 {
            let port = try ApacheServer.freePort()
            let servers = backends.enumerated().map { index, backend in "    server b\(index) 127.0.0.1:\(backend)" }
            let config = try Self.configuration(bind: "127.0.0.1:\(port)\(bind)", servers: servers)
            try config.write(to: configFile, atomically: true, encoding: .utf8)
            let logStart = (try? Data(contentsOf: log).count) ?? 0
            let pid = try ChildProcess.spawn(haproxy, ["-f", configFile.path, "-db"], stdin: .nowhere, stdout: .file(log),
                                             stderr: .file(log))
            let exitGuard = try ExitGuard(command: "kill -KILL \(pid); rm -rf \(ExitGuard.quoted(folder.path))")
            // Long: in the full integration suite dozens of servers start at once on two cores.
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline, !ChildProcess.hasEnded(pid) {
                if ApacheServer.accepts(port: port) {
                    self.port = port
                    self.pid = pid
                    self.exitGuard = exitGuard
                    return
                }
                do {
                    try await Task.sleep(for: .milliseconds(20))
                } catch {
                    exitGuard.disarm()
                    ChildProcess.stop(pid)
                    throw error
                }
            }
            exitGuard.disarm()
            ChildProcess.stop(pid)
            lastError = String(decoding: ((try? Data(contentsOf: log)) ?? Data()).dropFirst(logStart), as: UTF8.self)
            // Someone took the port between freePort and HAProxy's bind: try another.
            if !lastError.contains("cannot bind socket") { break }
        }
        try? FileManager.default.removeItem(at: folder)
        Issue.record("HAProxy did not start: \(lastError)")
        throw Failure.didNotStart
    }

    public enum Failure: Error { case notInstalled, didNotStart }

    /// Stops HAProxy (SIGTERM, then SIGKILL after five seconds) and waits for it.
    public func stop() {
        exitGuard.disarm()
        ChildProcess.stop(pid)
    }

    /// Stops HAProxy and removes its folder.
    public func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A test that forgot ``cleanUp()``: nothing can read the log any more.
    deinit { cleanUp() }
}
