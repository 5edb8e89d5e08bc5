import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starts programs the way a shell would: no signal blocked, default
/// dispositions. `Process` passes on the calling thread's signal mask, and
/// the threads of Dispatch and of Swift concurrency block SIGTERM, so a
/// server started through it could never be stopped by SIGTERM.
public enum ChildProcess {
    /// Where a child's standard stream goes.
    public enum Stream {
        case nowhere
        case descriptor(Int32)
        /// Read from, or appended to (created when missing).
        case file(URL)
    }

    /// Spawns `executable` with stdin from /dev/null and stdout / stderr on
    /// the given descriptors.
    /// - Returns: the child's process id.
    public static func spawn(_ executable: String, _ arguments: [String], stdout: Int32, stderr: Int32) throws -> pid_t {
        try spawn(executable, arguments, stdin: .nowhere, stdout: .descriptor(stdout), stderr: .descriptor(stderr))
    }

    /// Spawns `executable` with its streams where told, `environment` (or
    /// ours), optionally in a process group of its own (so a whole tree of
    /// helpers it starts can be stopped at once).
    public static func spawn(_ executable: String, _ arguments: [String], stdin: Stream, stdout: Stream, stderr: Stream,
                             environment: [String: String]? = nil, newProcessGroup: Bool = false) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .nowhere: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, fd)
            case .file(let url):
                posix_spawn_file_actions_addopen(&actions, fd, url.path, fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND, 0o600)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), defaults = sigset_t()
        sigemptyset(&empty)
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGWINCH, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, &envp)
        guard spawned == 0 else { throw SpawnError(message: "\(executable): posix_spawn error \(spawned)") }
        return pid
    }

    /// Runs a program to its end with its output in a file (not a pipe: a
    /// daemon it starts would hold a pipe open for ever).
    /// - Throws: when it exits with a failure, with its output.
    public static func run(_ executable: String, _ arguments: [String]) throws {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let fd = open(outputFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SpawnError(message: "cannot create \(outputFile.path)") }
        let pid: pid_t
        do {
            pid = try spawn(executable, arguments, stdout: fd, stderr: fd)
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        let status = wait(pid)
        guard status == 0 else {
            let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
            throw SpawnError(message: "\(executable) \(arguments.joined(separator: " ")) (status \(status)): \(text)")
        }
    }

    /// Waits for a child to end; returns its exit code (128 + signal when killed).
    @discardableResult
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// Whether a child has ended (reaping it if so), without waiting.
    public static func hasEnded(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        return result == pid || (result < 0 && errno == ECHILD)
    }

    /// SIGTERM, up to five seconds to end, then SIGKILL; reaps the child.
    public static func stop(_ pid: pid_t) {
        guard !hasEnded(pid) else { return }
        kill(pid, SIGTERM)
        for _ in 0..<250 {
            if hasEnded(pid) { return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        wait(pid)
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
