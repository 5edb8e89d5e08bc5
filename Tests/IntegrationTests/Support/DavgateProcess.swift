import Foundation
import Testing

/// A real davgate process on an ephemeral loopback port with its own config,
/// state folder and upstream folder under a fresh temporary directory.
final class DavgateProcess: @unchecked Sendable {
    let root: URL
    let process: Process
    let port: Int
    let tls: Bool
    let adminPassword: String
    let fingerprint: String?
    private let output: OutputCollector

    var configFile: URL { root.appendingPathComponent("conf/davgate.toml") }
    var state: URL { root.appendingPathComponent("var") }
    var upstream: URL { root.appendingPathComponent("var/upstream") }
    var certificate: URL { root.appendingPathComponent("certs/davgate.pem") }
    var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    var stderr: String { output.stderrText }

    /// The built `davgate` executable, next to the test bundle.
    static var executable: URL {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = bundleDir.appendingPathComponent("davgate")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/davgate")
    }

    /// Starts davgate; `extraServer` lines go into `[server]`, `extraDomain` into the domain table.
    /// `allowBasicOverHTTP` is the `allow_basic_over_http` key (davgate's default is false;
    /// the tests default to true so that litmus can run over plain HTTP).
    init(tls: Bool = true, allowBasicOverHTTP: Bool = true, extraServer: String = "", extraDomain: String = "",
         reuse root: URL? = nil) async throws {
        self.tls = tls
        let root = root ?? FileManager.default.temporaryDirectory.appendingPathComponent("davgate-it-\(UUID().uuidString)")
        self.root = root
        let conf = root.appendingPathComponent("conf")
        try FileManager.default.createDirectory(at: conf, withIntermediateDirectories: true)
        let config = """
            [server]
            listen = "127.0.0.1:0"
            tls = \(tls)
            state = "../var"
            certificate = "../certs/davgate.pem"
            private_key = "../certs/davgate-key.pem"
            allow_basic_over_http = \(allowBasicOverHTTP)
            log_level = "info"
            \(extraServer)

            [[domain]]
            name = "files"
            upstream = "file:../var/upstream"
            \(extraDomain)
            """
        try config.write(to: conf.appendingPathComponent("davgate.toml"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["serve", "--config", conf.appendingPathComponent("davgate.toml").path]
        let collector = OutputCollector()
        process.standardOutput = collector.stdoutPipe
        process.standardError = collector.stderrPipe
        try process.run()
        self.process = process
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
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        Issue.record("davgate did not start: \(collector.stdoutText)\n\(collector.stderrText)")
        throw StartFailure()
    }

    struct StartFailure: Error {}

    /// Stops the process (SIGTERM, then SIGKILL) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<100 where process.isRunning { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Stops the process and removes its folder.
    func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    deinit { if process.isRunning { process.terminate() } }
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
