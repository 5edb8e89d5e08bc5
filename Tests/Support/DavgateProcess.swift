import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real davgate process on an ephemeral loopback port with its own config,
/// state folder and upstream folder under a fresh temporary directory; shared
/// by every test target that needs a running davgate.
public final class DavgateProcess: GatewayEndpoint, @unchecked Sendable {
    public let root: URL
    public let pid: pid_t
    public let port: Int
    public let tls: Bool
    public let adminPassword: String
    public let fingerprint: String?
    /// The domain `files`'s upstream folder: `var/upstream`, or the folder
    /// given at start (one several instances share).
    public let upstream: URL
    private let output: OutputCollector

    public var configFile: URL { root.appendingPathComponent("conf/davgate.toml") }
    public var state: URL { root.appendingPathComponent("var") }

    public var certificate: URL { root.appendingPathComponent("certs/davgate.pem") }
    /// `scheme://127.0.0.1:port`, without a path.
    public var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    public var stderr: String { output.stderrText }
    public var stdout: String { output.stdoutText }

    /// The built `davgate` executable, next to the test bundle.
    public static var executable: URL {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = bundleDir.appendingPathComponent("davgate")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/davgate")
    }

    /// Starts davgate; `extraServer` lines go into `[server]`, `extraDomain` into the domain table.
    /// `allowBasicOverHTTP` is the `allow_basic_over_http` key (davgate's default is false;
    /// the tests default to true so that litmus can run over plain HTTP). `environment` entries
    /// are added to the process's (a test playing systemd sets `NOTIFY_SOCKET`).
    /// `index`: an `[index] url` (a shared index) for this instance.
    /// `upstream`: the domain `files`'s upstream folder (it must exist)
    /// instead of `var/upstream`, for instances that share one. `port`:
    /// the port to listen on instead of a free one, for an instance
    /// restarted where a proxy expects it.
    public init(tls: Bool = true, allowBasicOverHTTP: Bool = true, extraServer: String = "", extraDomain: String = "",
         arguments: [String] = [], environment: [String: String] = [:], reuse root: URL? = nil, index indexURL: String? = nil,
         upstream sharedUpstream: URL? = nil, port listenPort: Int = 0) async throws {
        self.tls = tls
        let root = root ?? FileManager.default.temporaryDirectory.appendingPathComponent("davgate-it-\(UUID().uuidString)")
        self.root = root
        self.upstream = sharedUpstream ?? root.appendingPathComponent("var/upstream")
        let conf = root.appendingPathComponent("conf")
        try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
        // DAVGATE_TEST_INDEX=postgres: the instance uses a shared index, a
        // database of its own (the same one again when `root` is reused).
        var index = indexURL.map { "[index]\nurl = \"\($0)\"\n" } ?? ""
        if indexURL == nil, ProcessInfo.processInfo.environment["DAVGATE_TEST_INDEX"] == "postgres" {
            index = "[index]\nurl = \"\(try await SharedPostgres.shared.database(for: root.lastPathComponent))\"\n"
        }
        let config = """
            [server]
            listen = "127.0.0.1:\(listenPort)"
            tls = \(tls)
            state = "../var"
            certificate = "../certs/davgate.pem"
            private_key = "../certs/davgate-key.pem"
            allow_basic_over_http = \(allowBasicOverHTTP)
            log_level = "info"
            \(extraServer)

            \(index)
            [[domain]]
            name = "files"
            upstream = "\(sharedUpstream.map { "file:\($0.path)" } ?? "file:../var/upstream")"
            \(extraDomain)
            """
        try config.write(to: conf.appendingPathComponent("davgate.toml"), atomically: true, encoding: .utf8)
        let collector = OutputCollector()
        // Not Foundation's Process: it hands the child the calling thread's
        // signal mask, where SIGTERM is blocked, so davgate would never hear it.
        let pid = try ChildProcess.spawn(Self.executable.path, ["serve", "--config", conf.appendingPathComponent("davgate.toml").path] + arguments,
                                         stdin: .nowhere,
                                         stdout: .descriptor(collector.stdoutPipe.fileHandleForWriting.fileDescriptor),
                                         stderr: .descriptor(collector.stderrPipe.fileHandleForWriting.fileDescriptor),
                                         environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        try collector.stdoutPipe.fileHandleForWriting.close()
        try collector.stderrPipe.fileHandleForWriting.close()
        self.pid = pid
        self.output = collector
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let line = collector.line(containing: "davgate listening on") {
                let afterColon = line.components(separatedBy: "127.0.0.1:")[1]
                port = Int(afterColon.prefix { $0.isNumber })!
                let passwordLine = collector.line(containing: "with password: ")
                adminPassword = passwordLine.map { String($0.components(separatedBy: "with password: ")[1]) }
                    ?? (try? String(contentsOf: root.appendingPathComponent("admin-password"), encoding: .utf8)) ?? ""
                try adminPassword.write(to: root.appendingPathComponent("admin-password"), atomically: true, encoding: .utf8)
                fingerprint = collector.line(containing: "fingerprint: ").map { String($0.components(separatedBy: "fingerprint: ")[1]) }
                return
            }
            if ChildProcess.hasEnded(pid) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        ChildProcess.stop(pid)
        Issue.record("davgate did not start: \(collector.stdoutText)\n\(collector.stderrText)")
        throw StartFailure()
    }

    public struct StartFailure: Error {}

    /// Stops the process (SIGTERM, then SIGKILL) and waits for it.
    public func stop() {
        ChildProcess.stop(pid)
    }

    /// Sends SIGTERM and waits up to `timeout` for the process to end.
    /// - Returns: its exit code (128 + the signal when a signal ended it),
    ///   or nil when it was still running at the deadline (then killed).
    public func terminate(timeout: Duration) async throws -> Int32? {
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F) }
            try await Task.sleep(for: .milliseconds(20))
        }
        crash()
        return nil
    }

    /// Kills the process at once (SIGKILL: no shutdown of any kind) and reaps it.
    public func crash() {
        guard !ChildProcess.hasEnded(pid) else { return }
        kill(pid, SIGKILL)
        _ = ChildProcess.wait(pid)
    }

    /// Stops the process and removes its folder.
    public func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    deinit { ChildProcess.stop(pid) }
}

/// Collects a child's stdout and stderr as they arrive.
public final class OutputCollector: @unchecked Sendable {
    public let stdoutPipe = Pipe()
    public let stderrPipe = Pipe()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    public init() {
        stdoutPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock(); self.out.append(data); self.lock.unlock()
        }
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.lock(); self.err.append(data); self.lock.unlock()
        }
    }

    public var stdoutText: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
    public var stderrText: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }

    public func line(containing needle: String) -> String? {
        stdoutText.split(separator: "\n").first { $0.contains(needle) }.map(String.init)
    }
}
