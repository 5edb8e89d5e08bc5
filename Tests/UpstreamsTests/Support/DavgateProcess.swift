import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built davgate binary on an ephemeral loopback port over TLS, with its
/// own config, state and upstream folder under a fresh temporary folder
/// (after Tests/IntegrationTests/Support/DavgateProcess.swift).
final class DavgateProcess: @unchecked Sendable {
    let root: URL
    let pid: pid_t
    let port: Int
    let adminPassword: String
    private let output: OutputCollector

    /// The domain `files`, served at `/files/`.
    var baseURL: URL { URL(string: "https://127.0.0.1:\(port)/files/")! }
    /// The self-signed certificate davgate made on first start.
    var certificate: URL { root.appendingPathComponent("certs/davgate.pem") }
    var upstream: URL { root.appendingPathComponent("var/upstream") }

    /// The built `davgate` executable, next to the test bundle.
    static var executable: URL {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = bundleDir.appendingPathComponent("davgate")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/davgate")
    }

    init() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("davgate-up-\(UUID().uuidString)")
        self.root = root
        let conf = root.appendingPathComponent("conf")
        try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
        let config = """
            [server]
            listen = "127.0.0.1:0"
            tls = true
            state = "../var"
            certificate = "../certs/davgate.pem"
            private_key = "../certs/davgate-key.pem"
            log_level = "warning"

            [[domain]]
            name = "files"
            upstream = "file:../var/upstream"
            """
        let configFile = conf.appendingPathComponent("davgate.toml")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        let collector = OutputCollector()
        let pid = try ChildProcess.spawn(Self.executable.path, ["serve", "--config", configFile.path],
                                         stdout: collector.stdoutPipe.fileHandleForWriting.fileDescriptor,
                                         stderr: collector.stderrPipe.fileHandleForWriting.fileDescriptor)
        // Only the child writes now: its end of the pipes closes when it ends.
        try collector.stdoutPipe.fileHandleForWriting.close()
        try collector.stderrPipe.fileHandleForWriting.close()
        self.pid = pid
        self.output = collector
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let line = collector.line(containing: "davgate listening on"),
               let password = collector.line(containing: "with password: ") {
                let afterHost = line.components(separatedBy: "127.0.0.1:")[1]
                port = Int(afterHost.prefix { $0.isNumber })!
                adminPassword = String(password.components(separatedBy: "with password: ")[1])
                return
            }
            if ChildProcess.hasEnded(pid) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        ChildProcess.stop(pid)
        Issue.record("davgate (\(Self.executable.path)) did not start: \(collector.stdoutText)\n\(collector.stderrText)")
        throw StartFailure()
    }

    struct StartFailure: Error {}

    /// Stops the process (SIGTERM, then SIGKILL) and waits for it.
    func stop() {
        ChildProcess.stop(pid)
    }

    /// Stops the process and removes its folder.
    func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    deinit { ChildProcess.stop(pid) }
}

/// Collects a child's stdout and stderr as they arrive.
final class OutputCollector: @unchecked Sendable {
    let stdoutPipe = Pipe()
    let stderrPipe = Pipe()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    init() {
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

    var stdoutText: String { lock.lock(); defer { lock.unlock() }; return String(decoding: out, as: UTF8.self) }
    var stderrText: String { lock.lock(); defer { lock.unlock() }; return String(decoding: err, as: UTF8.self) }

    func line(containing needle: String) -> String? {
        stdoutText.split(separator: "\n").first { $0.contains(needle) }.map(String.init)
    }
}
