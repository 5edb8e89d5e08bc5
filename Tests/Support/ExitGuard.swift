import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A shell command that runs once this test process is gone, however it
/// went: a normal exit that never deinitialized a shared server, a crash, a
/// SIGKILL from a timeout. It stops servers that outlive the process that
/// started them: PostgreSQL's `pg_ctl start` detaches the server into a
/// session of its own, and HAProxy keeps running when its parent dies.
///
/// A `/bin/sh` in a process group of its own (a signal to the tests' group
/// does not reach it), ignoring SIGHUP, SIGINT and SIGTERM, reads from a
/// socket whose only peer this process holds (close-on-exec, so no other
/// child inherits it) until the end. The kernel closes the peer when the
/// process ends, so the command runs without polling and without a process
/// id that could be reused meanwhile.
final class ExitGuard: @unchecked Sendable {
    private let pid: pid_t
    private let lock = NSLock()
    /// Our end of the socket pair; -1 once the command has run or was disarmed.
    private var ownEnd: Int32

    /// Starts the guard.
    /// - Parameters: `command` is a shell command line; quote what it names
    ///   with ``quoted(_:)``.
    init(command: String) throws {
        // A socket pair, not a pipe: Glibc's module has no pipe2, and a
        // pipe made close-on-exec by fcntl afterwards could leak into a
        // child another test spawns in between.
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw ChildProcess.SpawnError(message: "socketpair: errno \(errno)")
        }
        let script = "trap '' HUP INT TERM; read -r _; \(command)"
        let pid: pid_t
        do {
            // dup2 onto its stdin clears close-on-exec there, and only there.
            pid = try ChildProcess.spawn("/bin/sh", ["-c", script], stdin: .descriptor(ends[0]), stdout: .nowhere,
                                         stderr: .nowhere, newProcessGroup: true)
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[0])
        self.pid = pid
        self.ownEnd = ends[1]
    }

    /// Runs the command now and waits until it has finished.
    func fire() {
        lock.lock()
        defer { lock.unlock() }
        guard ownEnd >= 0 else { return }
        close(ownEnd)
        ownEnd = -1
        ChildProcess.wait(pid)
    }

    /// Ends the guard without running the command (SIGKILL, which it cannot
    /// ignore): what it would clean up is already gone.
    func disarm() {
        lock.lock()
        defer { lock.unlock() }
        guard ownEnd >= 0 else { return }
        kill(pid, SIGKILL)
        ChildProcess.wait(pid)
        close(ownEnd)
        ownEnd = -1
    }

    /// A word the shell takes as it is: single quotes, each `'` written as `'\''`.
    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    deinit { fire() }
}
