import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// GNOME Files' backend, gvfs's dav backend driven by `gio`, against the real
/// davgate over TLS, in a private D-Bus session with its own HOME and XDG
/// folders. `gio mount` is answered on stdin as a user would answer the
/// dialogs: accept the unknown certificate, then give the password. Every
/// step is checked in gio's answer and in the upstream folder.
@Suite("gio (gvfs) against davgate over TLS")
struct GioTests {
    @Test("gio: mount davs://, list, copy both ways, overwrite, rename, move, remove, unmount")
    func gioSession() async throws {
        let gio = try #require(findExecutable("gio"), "gio is not installed (apt-get install libglib2.0-bin gvfs-backends)")
        let dbus = try #require(findExecutable("dbus-run-session"), "dbus-run-session is not installed (apt-get install dbus)")
        try #require(FileManager.default.fileExists(atPath: "/usr/libexec/gvfsd-dav"), "gvfs's dav backend is not installed (apt-get install gvfs-backends)")
        try await withGateway { server, _ in
            let session = try await GioSession(server: server, gio: gio, dbusRunSession: dbus)
            try await session.ending {
                let root = "davs://admin@127.0.0.1:\(server.port)/files/"
                let folder = root + hrefSegment("Ordner ü") + "/"
                let local = session.home.appendingPathComponent("local")
                let text = Data("Grüße aus GNOME, ünïcödé 😀\n".utf8)
                let big = try randomData(5 << 20)
                try writeTree(at: local, ["Résumé 2026.txt": text, "gross.bin": big, "ersatz.txt": Data("replaced\n".utf8)])

                let mounted = try await session.gio(["mount", root], input: "1\n\(server.adminPassword)\n")
                #expect(mounted.succeeded, "\(mounted)")
                #expect(mounted.output.contains("Are you really sure you would like to continue?"), "the self-signed certificate is offered: \(mounted)")
                try #require(mounted.succeeded)
                let mounts = try await session.gio(["mount", "-l"])
                #expect(mounts.stdout.contains("davs://admin@127.0.0.1:\(server.port)/"), "\(mounts)")

                // mkdir and copy up, into a folder with a space and an accent.
                try await session.expect(["mkdir", folder])
                try await session.expect(["copy", local.appendingPathComponent("Résumé 2026.txt").path, folder + hrefSegment("Résumé 2026.txt")])
                try await session.expect(["copy", local.appendingPathComponent("gross.bin").path, folder + "gross.bin"])
                let upstream = server.upstream.appendingPathComponent("Ordner ü")
                #expect(try await uploadsDrained(server), "the journal delivered both copies")
                #expect(try Data(contentsOf: upstream.appendingPathComponent("Résumé 2026.txt")) == text)
                #expect(try await checksum(of: upstream.appendingPathComponent("gross.bin"), session.command)
                        == checksum(of: local.appendingPathComponent("gross.bin"), session.command))

                // List with sizes and types, as the file manager shows them.
                let listing = try await session.expect(["list", "-l", folder])
                let rows = Set(listing.stdout.split(separator: "\n").map { $0.precomposedStringWithCanonicalMapping })
                #expect(rows == ["Résumé 2026.txt\t\(text.count)\t(regular)".precomposedStringWithCanonicalMapping,
                                 "gross.bin\t\(big.count)\t(regular)"], "\(listing)")

                // Copy down and compare bytes.
                try await session.expect(["copy", folder + hrefSegment("Résumé 2026.txt"), local.appendingPathComponent("down.txt").path])
                try await session.expect(["copy", folder + "gross.bin", local.appendingPathComponent("down.bin").path])
                #expect(try Data(contentsOf: local.appendingPathComponent("down.txt")) == text)
                #expect(try Data(contentsOf: local.appendingPathComponent("down.bin")) == big)

                // Copy over an existing file (gvfs's replace: HEAD for the ETag, then PUT).
                try await session.expect(["copy", local.appendingPathComponent("ersatz.txt").path, folder + hrefSegment("Résumé 2026.txt")])
                #expect(try await uploadsDrained(server), "the journal delivered the replacement")
                #expect(try Data(contentsOf: upstream.appendingPathComponent("Résumé 2026.txt")) == Data("replaced\n".utf8))

                // Rename (MOVE, Overwrite: F) and move to the root (MOVE, Overwrite: T).
                let renamed = try await session.expect(["rename", folder + hrefSegment("Résumé 2026.txt"), "Lebenslauf #2 100%.txt"])
                #expect(renamed.stdout.contains("Rename successful"), "\(renamed)")
                try await session.expect(["move", folder + "gross.bin", root + hrefSegment("groß verschoben.bin")])
                #expect(try Set(FileManager.default.contentsOfDirectory(atPath: upstream.path)) == ["Lebenslauf #2 100%.txt"])
                #expect(try await checksum(of: server.upstream.appendingPathComponent("groß verschoben.bin".precomposedStringWithCanonicalMapping), session.command)
                        == checksum(of: local.appendingPathComponent("gross.bin"), session.command))

                // Remove a file, then the emptied folder.
                try await session.expect(["remove", root + hrefSegment("groß verschoben.bin")])
                try await session.expect(["remove", folder + hrefSegment("Lebenslauf #2 100%.txt")])
                try await session.expect(["remove", folder])
                #expect(try server.upstreamNames().isEmpty, "the upstream is empty again")
                let empty = try await session.expect(["list", root])
                #expect(empty.stdout.isEmpty, "\(empty)")

                // Unmount: the location is gone for gio.
                try await session.expect(["mount", "-u", root])
                let after = try await session.gio(["list", root])
                #expect(!after.succeeded && after.stderr.contains("not mounted"), "\(after)")
            }
        }
    }
}

/// A private D-Bus session (`dbus-run-session`) with its own HOME, XDG
/// folders and runtime folder, so that gvfsd and its dav backend start
/// inside the test's folder and end with the session. The session's shell
/// writes the bus address and its own pid, then becomes `sleep`; ending it
/// ends the session.
struct GioSession {
    let gio: String
    let home: URL
    let command: ClientCommand
    let session: ClientCommand.Running
    let sleeper: pid_t

    init(server: DavgateProcess, gio: String, dbusRunSession: String) async throws {
        self.gio = gio
        home = server.root.appendingPathComponent("gio-home")
        var environment = ["HOME": home.path, "DBUS_SESSION_BUS_ADDRESS": ""]
        for (name, folder) in [("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "runtime")] {
            let url = home.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment[name] = url.path
        }
        let bare = try ClientCommand(scratch: home.appendingPathComponent("scratch"), environment: environment)
        let address = home.appendingPathComponent("bus-address")
        let pidFile = home.appendingPathComponent("sleep-pid")
        session = try bare.start(dbusRunSession, ["--", "/bin/sh", "-c",
                                                  "echo $$ > '\(pidFile.path)'; echo \"$DBUS_SESSION_BUS_ADDRESS\" > '\(address.path)'; exec sleep 600"],
                                 log: home.appendingPathComponent("session.log"))
        var bus = ""
        var sleeper: pid_t = 0
        // Generous: the integration suite starts dozens of servers at once,
        // and on two cores a session bus took over 20 s to come up then.
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            bus = (try? String(contentsOf: address, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            sleeper = pid_t((try? String(contentsOf: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            if !bus.isEmpty && sleeper > 0 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        self.sleeper = sleeper
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus
        command = try ClientCommand(scratch: home.appendingPathComponent("scratch"), environment: environment)
        if bus.isEmpty || sleeper == 0 {
            stop()
            let log = (try? String(contentsOf: home.appendingPathComponent("session.log"), encoding: .utf8)) ?? ""
            Issue.record("dbus-run-session gave no bus address: \(log)")
            throw ClientCommand.SpawnFailed(executable: dbusRunSession, code: -1)
        }
    }

    func gio(_ arguments: [String], input: String = "") async throws -> ClientCommand.Result {
        try await command.run(gio, arguments, input: input, timeout: .seconds(120))
    }

    /// Runs a gio command that must succeed.
    @discardableResult
    func expect(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> ClientCommand.Result {
        let result = try await gio(arguments)
        #expect(result.succeeded, "\(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs `body`, then ends the session, also when `body` fails.
    func ending(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            stop()
            throw error
        }
        stop()
    }

    /// Ends `sleep`, so dbus-run-session stops its bus; gvfsd and its
    /// backends leave with the bus, and whatever is left of the session's
    /// process group after ten seconds is killed.
    func stop() {
        if sleeper > 0 { kill(sleeper, SIGTERM) }
        for _ in 0..<500 {
            if ClientCommand.reap(session.pid) != nil { break }
            usleep(20_000)
        }
        kill(-session.pid, SIGKILL)
        _ = ClientCommand.reap(session.pid)
    }
}
