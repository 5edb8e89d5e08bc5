import Foundation
import Testing

/// Three davgate instances on one shared index behind HAProxy, as issue 19
/// runs them (docs/scale-out.md, section 5): a PostgreSQL 15 of their own
/// (fsync on: tests crash it and count what survived) and one `[index]
/// url`; one upstream folder (`upstream/` here) for the domain `files`; one
/// users file (`users.json` here, `users_file`: the first instance to start
/// makes `admin` in it); each instance its own state and cache folders, and
/// write-through, the default with `[index]`. The instances speak plain HTTP on loopback ports; HAProxy
/// terminates TLS in front of them (its own self-signed certificate) and
/// balances every request on its own, round robin.
///
/// An instance can be killed (SIGKILL) and started again on its port,
/// where HAProxy's checks find it within a second. ``cleanUp()`` stops
/// every process; if this test process ends first, however it ends, exit
/// guards do: PostgreSQL's and HAProxy's own, and one per instance.
public final class DavgateCluster: GatewayEndpoint, @unchecked Sendable {
    /// The instances' names, in the order of ``ports`` and HAProxy's servers.
    public static let names = ["a", "b", "c"]

    public let postgres: PostgresServer
    /// The `[index] url` every instance has.
    public let indexURL: String
    public let proxy: HAProxyServer
    /// Holds `upstream/`, `users.json` and each instance's folder (`a/`, `b/`, `c/`).
    public let root: URL
    /// Each instance's port, kept across restarts.
    public let ports: [Int]
    public let adminPassword: String
    public let certificate: URL
    public var upstream: URL { root.appendingPathComponent("upstream") }
    /// Through HAProxy: `https://127.0.0.1:PORT`.
    public var baseURL: String { proxy.baseURL }
    public var tls: Bool { true }

    private let lock = NSLock()
    /// The running process of each instance (nil while killed), with the
    /// guard that kills it if the tests end first.
    private var members: [(process: DavgateProcess, exitGuard: ExitGuard)?]
    /// Processes that were killed: their output, for ``diagnostics``.
    private var retired: [(name: String, process: DavgateProcess)] = []
    private let folderGuard: ExitGuard

    /// Starts PostgreSQL, three instances and HAProxy; returns once all serve.
    public init() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("davgate-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("upstream"), withIntermediateDirectories: true)
        self.root = root
        let folderGuard = try ExitGuard(command: "rm -rf " + ExitGuard.quoted(root.path))
        self.folderGuard = folderGuard
        var started: [(process: DavgateProcess, exitGuard: ExitGuard)] = []
        var postgres: PostgresServer?
        do {
            let server = try await PostgresServer(fsync: true)
            postgres = server
            try await server.createDatabase("cluster")
            let indexURL = server.url(database: "cluster")
            for name in Self.names {
                let folder = root.appendingPathComponent(name)
                if let first = started.first?.process {
                    // Made by the first in the shared users file: the others print no password.
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    try first.adminPassword.write(to: folder.appendingPathComponent("admin-password"), atomically: true, encoding: .utf8)
                }
                started.append(try await Self.start(folder, in: root, index: indexURL, port: 0))
            }
            let ports = started.map(\.process.port)
            let proxy = try await HAProxyServer(backends: ports, tls: true)
            guard let certificate = proxy.certificate else { throw HAProxyServer.Failure.didNotStart }
            self.postgres = server
            self.indexURL = indexURL
            self.proxy = proxy
            self.ports = ports
            self.certificate = certificate
            adminPassword = started[0].process.adminPassword
            members = started
        } catch {
            for member in started {
                member.process.stop()
                member.exitGuard.disarm()
            }
            await postgres?.cleanUp()
            folderGuard.fire()
            throw error
        }
    }

    /// The running process of instance `index` (0 is `a`); only while it runs.
    public func instance(_ index: Int) -> DavgateProcess {
        lock.withLock { members[index] }!.process
    }

    /// Kills instance `index` at once (SIGKILL: no shutdown of any kind).
    public func kill(_ index: Int) {
        guard let member = lock.withLock({ () -> (process: DavgateProcess, exitGuard: ExitGuard)? in
            defer { members[index] = nil }
            return members[index]
        }) else { return }
        member.process.crash()
        member.exitGuard.disarm()
        lock.withLock { retired.append((Self.names[index], member.process)) }
    }

    /// Starts instance `index` again, with its configuration, folder and
    /// port (killing it first if it runs); returns once it serves.
    public func restart(_ index: Int) async throws {
        kill(index)
        let member = try await Self.start(root.appendingPathComponent(Self.names[index]), in: root, index: indexURL, port: ports[index])
        lock.withLock { members[index] = member }
    }

    /// The requests to the domain `files` that instance `index` answered
    /// since it last started: its access-log lines (`access_log = true`),
    /// without HAProxy's health checks.
    public func requests(servedBy index: Int) -> [Substring] {
        instance(index).stderr.split(separator: "\n").filter { $0.contains(" duration_ms=") && $0.contains(" path=/files/") }
    }

    /// The end of every instance's output, HAProxy's log and PostgreSQL's:
    /// what to print when a test fails.
    public var diagnostics: String {
        let (running, retired) = lock.withLock { (members, self.retired) }
        // Without HAProxy's health checks, two a second.
        func log(_ process: DavgateProcess, last count: Int) -> String {
            process.stderr.split(separator: "\n").filter { !$0.hasSuffix("[DAVServer] OPTIONS / 200") }.suffix(count).joined(separator: "\n")
        }
        var parts: [String] = []
        for (name, process) in retired { parts.append("instance \(name) (killed):\n" + log(process, last: 10)) }
        for (index, member) in running.enumerated() {
            if let member { parts.append("instance \(Self.names[index]):\n" + log(member.process, last: 40)) }
        }
        for (name, log) in [("HAProxy", proxy.log), ("PostgreSQL", postgres.log)] {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            parts.append("\(name):\n" + String(text.suffix(3_000)))
        }
        return parts.joined(separator: "\n\n")
    }

    /// Stops HAProxy, the instances and PostgreSQL, and removes every folder.
    public func cleanUp() async {
        proxy.cleanUp()
        let running = lock.withLock {
            defer { members = members.map { _ in nil } }
            return members
        }
        for member in running.compactMap({ $0 }) {
            member.process.stop()
            member.exitGuard.disarm()
        }
        await postgres.cleanUp()
        folderGuard.fire()
    }

    /// One instance in `folder` (made by its first start) of the cluster
    /// in `root`, plain HTTP on loopback with Basic auth allowed, its guard armed.
    private static func start(_ folder: URL, in root: URL, index: String,
                              port: Int) async throws -> (process: DavgateProcess, exitGuard: ExitGuard) {
        let usersFile = root.appendingPathComponent("users.json")
        let process = try await DavgateProcess(tls: false, allowBasicOverHTTP: true, extraServer: "access_log = true\nusers_file = \"\(usersFile.path)\"",
                                               reuse: folder, index: index, upstream: root.appendingPathComponent("upstream"), port: port)
        do {
            return (process, try ExitGuard(command: "kill -KILL \(process.pid)"))
        } catch {
            process.stop()
            throw error
        }
    }
}
