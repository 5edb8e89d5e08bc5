import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real Apache httpd with mod_dav and mod_dav_fs on a free loopback port,
/// with its own configuration, document root, logs and lock database under a
/// fresh temporary folder. Basic auth through an htpasswd file.
public final class ApacheServer: Sendable {
    public static let user = "davuser"
    public static let password = "dav secret:with colon"

    public let folder: URL
    public let port: Int
    public var documentRoot: URL { folder.appendingPathComponent("root") }
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/dav/")! }
    public var accessLog: URL { folder.appendingPathComponent("logs/access.log") }
    public var errorLog: URL { folder.appendingPathComponent("logs/error.log") }
    private var pidFile: URL { folder.appendingPathComponent("logs/httpd.pid") }

    /// The access log's lines: method, decoded path, status, `depth=` Depth
    /// header, request line, `range=` Range header, `bytes=` body bytes sent,
    /// `end=` when the response was sent, in milliseconds since 1970.
    public var accessLines: [String] {
        ((try? String(contentsOf: accessLog, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Starts Apache; returns once it accepts connections.
    /// - Parameters: `dumpRequestBodies` logs every request body into the
    ///   error log (mod_dumpio), to see what a client sent;
    ///   `rateLimitKiB` slows every response body down to that many KiB/s
    ///   (mod_ratelimit): an upstream on a slow network;
    ///   `extraConfig` goes into the server's main configuration as it is.
    public init(dumpRequestBodies: Bool = false, rateLimitKiB: Int? = nil, extraConfig: String = "") async throws {
        let apache = "/usr/sbin/apache2", modules = "/usr/lib/apache2/modules"
        guard FileManager.default.isExecutableFile(atPath: apache),
              FileManager.default.fileExists(atPath: "\(modules)/mod_dav_fs.so") else {
            Issue.record("Apache with mod_dav is not installed: apt-get install -y apache2 apache2-utils")
            throw Failure.notInstalled
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apache-\(UUID().uuidString)")
        self.folder = folder
        let configFile = folder.appendingPathComponent("httpd.conf")
        let pidFile = folder.appendingPathComponent("logs/httpd.pid")
        let errorLog = folder.appendingPathComponent("logs/error.log")
        let accessLog = folder.appendingPathComponent("logs/access.log")
        let root = folder.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("dav"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("logs"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("lock"), withIntermediateDirectories: true)
        try ChildProcess.run("/usr/bin/htpasswd", ["-cbs", folder.appendingPathComponent("htpasswd").path, Self.user, Self.password])

        // Apache refuses to serve as root: its children switch to www-data,
        // which must own what they write.
        var runAs = ""
        if getuid() == 0, let account = getpwnam("www-data") {
            runAs = "User www-data\nGroup www-data\n"
            for owned in [root, root.appendingPathComponent("dav"), folder.appendingPathComponent("lock")] {
                chown(owned.path, account.pointee.pw_uid, account.pointee.pw_gid)
            }
        }
        var lastError = ""
        for _ in 0..<5 {
            try? FileManager.default.removeItem(at: errorLog)
            let port = try Self.freePort()
            let rateLimitModule = rateLimitKiB == nil ? "" : "LoadModule ratelimit_module \(modules)/mod_ratelimit.so\nLoadModule env_module \(modules)/mod_env.so\n"
            let rateLimit = rateLimitKiB.map { "SetOutputFilter RATE_LIMIT\n    SetEnv rate-limit \($0)\n    " } ?? ""
            let dump = dumpRequestBodies
                ? "LoadModule dumpio_module \(modules)/mod_dumpio.so\nDumpIOInput On\nLogLevel warn dumpio:trace7\n" : ""
            let config = """
                ServerRoot "\(folder.path)"
                ServerName 127.0.0.1
                Listen 127.0.0.1:\(port)
                \(extraConfig)
                \(runAs)PidFile "\(pidFile.path)"
                DefaultRuntimeDir "\(folder.appendingPathComponent("logs").path)"
                ErrorLog "\(errorLog.path)"
                LogFormat "%m %U %>s depth=%{Depth}i \\"%r\\" range=%{Range}i bytes=%B begin=%{begin:msec}t end=%{end:msec}t" dav
                CustomLog "\(accessLog.path)" dav
                LoadModule mpm_event_module \(modules)/mod_mpm_event.so
                StartServers 1
                ServerLimit 2
                ThreadsPerChild 16
                MaxRequestWorkers 32
                LoadModule authz_core_module \(modules)/mod_authz_core.so
                LoadModule authn_core_module \(modules)/mod_authn_core.so
                LoadModule authn_file_module \(modules)/mod_authn_file.so
                LoadModule authz_user_module \(modules)/mod_authz_user.so
                LoadModule auth_basic_module \(modules)/mod_auth_basic.so
                LoadModule dav_module \(modules)/mod_dav.so
                LoadModule dav_fs_module \(modules)/mod_dav_fs.so
                \(rateLimitModule)\(dump)DAVLockDB "\(folder.appendingPathComponent("lock/davlock").path)"
                DocumentRoot "\(root.path)"
                <Directory "\(root.path)">
                    Require all denied
                </Directory>
                <Directory "\(root.appendingPathComponent("dav").path)">
                    \(rateLimit)Dav On
                    AuthType Basic
                    AuthName "davgate tests"
                    AuthUserFile "\(folder.appendingPathComponent("htpasswd").path)"
                    Require valid-user
                </Directory>
                """
            try config.write(to: configFile, atomically: true, encoding: .utf8)
            do {
                try ChildProcess.run(apache, ["-f", configFile.path, "-k", "start"])
            } catch {
                lastError = "\(error)"
                continue
            }
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if Self.accepts(port: port), Self.pid(in: pidFile) != nil {
                    self.port = port
                    return
                }
                // Someone took the port meanwhile: try another.
                let log = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
                if log.contains("could not bind") || log.contains("no listening sockets") { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            lastError = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
            Self.stop(pidFile: pidFile)
        }
        Issue.record("Apache did not start: \(lastError)")
        throw Failure.didNotStart
    }

    public enum Failure: Error { case notInstalled, didNotStart, command(String) }

    static func pid(in pidFile: URL) -> pid_t? {
        (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Stops the server (SIGTERM to the process whose id it wrote) and waits until it is gone.
    public func stop() {
        Self.stop(pidFile: pidFile)
    }

    static func stop(pidFile: URL) {
        guard let pid = pid(in: pidFile) else { return }
        kill(pid, SIGTERM)
        for _ in 0..<250 where isRunning(pid) { usleep(20_000) }
        // Apache is its own process group leader (it calls setsid): take its children too.
        if isRunning(pid) { kill(-pid, SIGKILL) }
        try? FileManager.default.removeItem(at: pidFile)
    }

    /// Alive and not a zombie (the daemon's parent is whoever adopted it,
    /// which may never reap it).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return true }
        return !stat[close...].hasPrefix(") Z")
    }

    /// Kills the server and its children at once (SIGKILL to its process
    /// group), cutting every transfer in flight: an upstream that crashes.
    public func crash() {
        guard let pid = Self.pid(in: pidFile) else { return }
        kill(-pid, SIGKILL)
        for _ in 0..<250 where Self.isRunning(pid) { usleep(20_000) }
        try? FileManager.default.removeItem(at: pidFile)
    }

    /// Starts the stopped server again, with the same port, folder and files:
    /// an upstream coming back after an outage.
    public func restart() async throws {
        try ChildProcess.run("/usr/sbin/apache2", ["-f", folder.appendingPathComponent("httpd.conf").path, "-k", "start"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure.didNotStart
    }

    /// Stops the server and removes its folder.
    public func cleanUp() {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A loopback port nobody listens on right now.
    public static func freePort() throws -> Int {
        let socket = try LoopbackSocket(listen: false)
        return socket.port
    }

    public static func accepts(port: Int) -> Bool {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = LoopbackSocket.address(port: 0)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// A TCP socket bound to a free loopback port. With `listen: true` it
/// accepts connections in the kernel's backlog and never answers: a server
/// that hangs.
public final class LoopbackSocket: Sendable {
    public let fd: Int32
    public let port: Int

    public init(listen shouldListen: Bool) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ApacheServer.Failure.command("socket: \(errno)") }
        var address = Self.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, !shouldListen || listen(fd, 16) == 0 else {
            close(fd)
            throw ApacheServer.Failure.command("bind/listen: \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    public static func address(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        address.sin_port = in_port_t(port.bigEndian)
        return address
    }

    deinit { close(fd) }
}
