import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A server program started on loopback port 0, which picks a free port
/// itself and prints it (`127.0.0.1:PORT`): no window in which another
/// test could take a port chosen for it, so no retry loop. Its stdout and
/// stderr go to a log file, quoted when it fails to start.
public final class PortAnnouncingProcess: Sendable {
    public let pid: pid_t
    public let port: Int
    public let log: URL

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts the program and returns once it accepts connections on the
    /// port it printed. The default wait is long because in the full
    /// integration suite dozens of servers and clients start at once on two
    /// cores: there moto and rclone, up in well under a second alone, were
    /// not seen listening within 30 s.
    /// - Throws: `Failure` with its log when it ends first or takes longer than `timeout`.
    public init(_ executable: String, _ arguments: [String], log: URL, environment: [String: String]? = nil,
                timeout: Duration = .seconds(120)) async throws {
        let pid = try ChildProcess.spawn(executable, arguments, stdin: .nowhere, stdout: .file(log), stderr: .file(log),
                                         environment: environment)
        let deadline = ContinuousClock.now + timeout
        var port: Int?
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if port == nil { port = Self.announcedPort(in: text) }
            if let port, ApacheServer.accepts(port: port) {
                self.pid = pid
                self.port = port
                self.log = log
                return
            }
            if ChildProcess.hasEnded(pid) {
                throw Failure(description: "\(executable) ended at start: \(text)")
            }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                ChildProcess.stop(pid)
                throw error
            }
        }
        ChildProcess.stop(pid)
        throw Failure(description: "\(executable) did not listen within \(timeout): \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// The port of the first complete `127.0.0.1:PORT` in the text (not
    /// `:0`, and not digits the program may still be writing).
    static func announcedPort(in text: String) -> Int? {
        var rest = text[...]
        while let range = rest.range(of: "127.0.0.1:") {
            let digits = rest[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
            rest = rest[digits.endIndex...]
            if !rest.isEmpty, let port = Int(digits), port > 0 { return port }
        }
        return nil
    }

    /// SIGTERM, then SIGKILL after five seconds; reaps it.
    public func stop() {
        ChildProcess.stop(pid)
    }
}
