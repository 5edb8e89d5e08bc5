import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL 15 (Debian's `postgresql-15`) in a fresh temporary
/// folder: its own cluster made by initdb, on 127.0.0.1 at a free port, its
/// Unix socket in the same folder. The superuser is `davgate` with `trust`
/// authentication, so the index's URL needs no password. Never Debian's own
/// cluster (`main`, port 5432, which installing the package may start):
/// tests must neither depend on it nor collide with it.
///
/// As root, every server command runs as the `postgres` account (initdb and
/// pg_ctl refuse root), which owns the folder. The server is not a child of
/// the tests (pg_ctl detaches it), so an ``ExitGuard`` stops it and removes
/// the folder if this process ends without ``cleanUp()``.
public final class PostgresServer: Sendable {
    public static let user = "davgate"
    /// Debian's versioned binaries, not /usr/bin's wrappers: those pick a
    /// version through Debian's cluster configuration, which is not ours.
    public static let binaries = "/usr/lib/postgresql/15/bin"

    /// Holds `data/` (the cluster), `server.log` and the Unix socket.
    public let folder: URL
    public let port: Int
    /// Whether the server flushes to disk: off is faster for unit suites,
    /// on is needed where a test crashes the server and counts what survived.
    public let fsync: Bool
    public var dataFolder: URL { folder.appendingPathComponent("data") }
    /// The server's log, every start's appended.
    public var log: URL { folder.appendingPathComponent("server.log") }
    private let exitGuard: ExitGuard

    /// Makes a cluster and starts it; returns once it accepts connections.
    /// - Parameters: `fsync` sets `fsync` and `full_page_writes` (and
    ///   initdb's own syncing) together; off loses data only when the
    ///   machine, not the server, crashes, but a test of crash recovery
    ///   should not rely on that.
    public init(fsync: Bool = true) async throws {
        let initdb = "\(Self.binaries)/initdb", pgctl = "\(Self.binaries)/pg_ctl"
        guard FileManager.default.isExecutableFile(atPath: initdb), FileManager.default.isExecutableFile(atPath: pgctl),
              FileManager.default.isExecutableFile(atPath: "\(Self.binaries)/psql") else {
            Issue.record("PostgreSQL 15 is not installed: apt-get install -y postgresql-15 (scripts/test does this)")
            throw Failure.notInstalled
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString)")
        self.folder = folder
        self.fsync = fsync
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var owner: (uid: uid_t, gid: gid_t)?
        if getuid() == 0 {
            guard let account = getpwnam("postgres") else {
                try? FileManager.default.removeItem(at: folder)
                Issue.record("There is no postgres account (the postgresql-15 package makes it)")
                throw Failure.notInstalled
            }
            owner = (account.pointee.pw_uid, account.pointee.pw_gid)
            // initdb writes data/ into the folder, the server its socket.
            chown(folder.path, account.pointee.pw_uid, account.pointee.pw_gid)
        }
        // Under the lock's exclusive side: a pg_ctl start still running
        // when this process died ends first, and its server is then stopped.
        let stopNow = ["/usr/bin/flock", "--exclusive", Self.commandLock(folder).path]
            + Self.asServerAccount(Self.pgctl(folder, ["-m", "immediate", "-w", "-t", "60", "stop"]))
        let exitGuard = try ExitGuard(command: stopNow.map(ExitGuard.quoted).joined(separator: " ") + "; rm -rf "
                                      + ExitGuard.quoted(folder.path))
        self.exitGuard = exitGuard
        do {
            try await Self.asServer(folder, [initdb, "-D", data.path, "-U", Self.user, "-A", "trust", "-E", "UTF8",
                                             "--locale=C", "--no-instructions"] + (fsync ? [] : ["--no-sync"]))
            // Settings in a file of their own, included last so they win:
            // start() after a crash reads the same ones, port included.
            let include = "\ninclude 'davgate-tests.conf'\n"
            let mainConfig = try FileHandle(forWritingTo: data.appendingPathComponent("postgresql.conf"))
            try mainConfig.seekToEnd()
            try mainConfig.write(contentsOf: Data(include.utf8))
            try mainConfig.close()
        } catch {
            exitGuard.fire()
            Issue.record("initdb failed: \(error)")
            throw error
        }
        var lastError = ""
        for _ in 0..<5 {
            let port = try ApacheServer.freePort()
            let settings = """
                listen_addresses = '127.0.0.1'
                port = \(port)
                unix_socket_directories = '\(folder.path)'
                max_connections = 300
                fsync = \(fsync ? "on" : "off")
                full_page_writes = \(fsync ? "on" : "off")
                synchronous_commit = on
                """
            let settingsFile = data.appendingPathComponent("davgate-tests.conf")
            try settings.write(to: settingsFile, atomically: true, encoding: .utf8)
            if let owner { chown(settingsFile.path, owner.uid, owner.gid) }
            let logStart = Self.size(of: folder.appendingPathComponent("server.log"))
            do {
                try await Self.start(folder)
                self.port = port
                return
            } catch {
                lastError = "\(error)\n" + Self.text(of: folder.appendingPathComponent("server.log"), from: logStart)
                // Someone took the port between freePort and the server's bind: try another.
                if lastError.contains("could not bind") || lastError.contains("Address already in use") { continue }
                break
            }
        }
        exitGuard.fire()
        Issue.record("PostgreSQL did not start: \(lastError)")
        throw Failure.didNotStart
    }

    public enum Failure: Error { case notInstalled, didNotStart }

    /// `postgres://davgate@127.0.0.1:PORT/DATABASE`, the form of davgate's `[index] url`.
    public func url(database: String) -> String {
        "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)"
    }

    /// Makes an empty database, owned by `davgate`.
    public func createDatabase(_ name: String) async throws {
        try await psql("CREATE DATABASE \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"", database: "postgres")
    }

    /// Runs SQL through psql over the Unix socket, as `davgate`.
    /// - Returns: what it printed, unaligned and without headers: a line
    ///   per row, columns separated by `|`, the results of every statement
    ///   in order; the last newline cut off.
    /// - Throws: on any error in the SQL, with psql's message.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        // Not the caller's PG* variables: they would point psql elsewhere.
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PG") }
        let output = try await ChildProcess.output(
            "\(Self.binaries)/psql",
            ["--no-psqlrc", "--quiet", "--no-align", "--tuples-only", "--set", "ON_ERROR_STOP=1",
             "host=\(folder.path) port=\(port) user=\(Self.user) dbname=\(database) connect_timeout=60",
             "--command", sql],
            environment: environment)
        var text = output.text
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// Stops the server the way a crash would (`pg_ctl -m immediate`: no
    /// checkpoint, no flush of shared buffers); the next ``start()``
    /// recovers from the write-ahead log.
    public func crash() async throws {
        try await Self.asServer(folder, Self.pgctl(folder, ["-m", "immediate", "-w", "-t", "120", "stop"]))
    }

    /// Starts the server again after ``crash()`` or ``stop()``, on the same
    /// data and port; returns once it accepts connections.
    public func start() async throws {
        try await Self.start(folder)
    }

    /// Stops the server cleanly (`pg_ctl -m fast`: clients are disconnected,
    /// a checkpoint is written); ``start()`` can start it again.
    public func stop() async throws {
        try await Self.asServer(folder, Self.pgctl(folder, ["-m", "fast", "-w", "-t", "120", "stop"]))
    }

    /// Stops the server (at once: its data goes too) and removes its folder.
    public func cleanUp() async {
        _ = try? await Self.asServer(folder, Self.pgctl(folder, ["-m", "immediate", "-w", "-t", "120", "stop"]))
        try? FileManager.default.removeItem(at: folder)
        exitGuard.disarm()
    }

    /// A test that forgot ``cleanUp()``: the guard stops the server and
    /// removes the folder now, waiting for it (a second or so).
    deinit { exitGuard.fire() }

    /// pg_ctl start, waiting (long: two cores shared with a whole test suite) until the server is ready.
    private static func start(_ folder: URL) async throws {
        try await asServer(folder, pgctl(folder, ["-l", folder.appendingPathComponent("server.log").path, "-w", "-t", "120", "start"]))
    }

    private static func pgctl(_ folder: URL, _ arguments: [String]) -> [String] {
        ["\(binaries)/pg_ctl", "-D", folder.appendingPathComponent("data").path] + arguments
    }

    /// Runs a server program (initdb, pg_ctl) as the server's account,
    /// under the shared side of the folder's command lock (`flock
    /// --close`: held by flock while the program runs, not by a server it
    /// starts), which the exit guard waits for.
    @discardableResult
    private static func asServer(_ folder: URL, _ command: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.output("/usr/bin/flock", ["--shared", "--close", commandLock(folder).path] + asServerAccount(command))
    }

    /// The command run as `postgres` (runuser) when we are root: initdb and pg_ctl refuse root.
    private static func asServerAccount(_ command: [String]) -> [String] {
        getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command
    }

    private static func commandLock(_ folder: URL) -> URL {
        folder.appendingPathComponent("commands.lock")
    }

    private static func size(of file: URL) -> UInt64 {
        var info = stat()
        return stat(file.path, &info) == 0 ? UInt64(info.st_size) : 0
    }

    /// A log's text from byte `offset` on: what one start wrote.
    private static func text(of file: URL, from offset: UInt64) -> String {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return "" }
        defer { try? handle.close() }
        try? handle.seek(toOffset: offset)
        return String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self)
    }
}
