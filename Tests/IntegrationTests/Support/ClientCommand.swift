import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Runs a real client's command line (rclone, mount.davfs, gio) the way a
/// shell would, for the client scenarios. Not Foundation's `Process`: it
/// hands the child the calling thread's signal mask, where SIGTERM is
/// blocked, and `dbus-run-session` stops its bus with SIGTERM. Output goes
/// to files, not pipes, because `mount.davfs` leaves a daemon behind that
/// would hold a pipe open for ever.
struct ClientCommand {
    /// A finished command: its exit code (128 + signal when killed) and output.
    struct Result: CustomStringConvertible {
        var command: String
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
        var succeeded: Bool { status == 0 && !timedOut }
        var output: String { stdout + stderr }
        var description: String {
            "`\(command)` exited \(status)\(timedOut ? " (timed out, killed)" : "")\nstdout: \(stdout)\nstderr: \(stderr)"
        }
    }

    /// A started command that runs until it is stopped.
    struct Running {
        let pid: pid_t
    }

    /// The environment every command starts from; `environment` entries replace or add to it.
    var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Where the output files go.
    let scratch: URL

    init(scratch: URL, environment: [String: String] = [:]) throws {
        self.scratch = scratch
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        self.environment.merge(environment) { $1 }
        self.environment["LANG"] = "C.UTF-8"
        self.environment["LC_ALL"] = "C.UTF-8"
    }

    /// Runs `executable` to its end (or kills its process group after `timeout`),
    /// `input` on its standard input.
    func run(_ executable: String, _ arguments: [String], input: String = "", environment extra: [String: String] = [:],
             timeout: Duration = .seconds(180)) async throws -> Result {
        let id = UUID().uuidString
        let files = (input: scratch.appendingPathComponent("\(id).in"), out: scratch.appendingPathComponent("\(id).out"),
                     err: scratch.appendingPathComponent("\(id).err"))
        defer { [files.input, files.out, files.err].forEach { try? FileManager.default.removeItem(at: $0) } }
        try Data(input.utf8).write(to: files.input)
        let pid = try spawn(executable, arguments, environment: extra, stdin: files.input, stdout: files.out, stderr: files.err)
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        var timedOut = false
        while true {
            if let ended = Self.reap(pid) { status = ended; break }
            if ContinuousClock.now > deadline {
                kill(-pid, SIGKILL)
                status = ChildProcess.wait(pid)
                timedOut = true
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
        return Result(command: ([executable] + arguments).joined(separator: " "), status: status,
                      stdout: text(files.out), stderr: text(files.err), timedOut: timedOut)
    }

    /// Starts `executable` and returns at once; output goes to `log`.
    func start(_ executable: String, _ arguments: [String], log: URL) throws -> Running {
        let devNull = URL(fileURLWithPath: "/dev/null")
        return Running(pid: try spawn(executable, arguments, environment: [:], stdin: devNull, stdout: log, stderr: log))
    }

    struct SpawnFailed: Error { var executable: String; var code: Int32 }

    /// The exit code of an ended child (reaping it), nil while it runs.
    static func reap(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 { return nil }
        if result < 0 { return -1 }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// In a new process group, no signal blocked, default dispositions.
    private func spawn(_ executable: String, _ arguments: [String], environment extra: [String: String],
                       stdin: URL, stdout: URL, stderr: URL) throws -> pid_t {
        try ChildProcess.spawn(executable, arguments, stdin: .file(stdin), stdout: .file(stdout), stderr: .file(stderr),
                               environment: environment.merging(extra) { $1 }, newProcessGroup: true)
    }
}
