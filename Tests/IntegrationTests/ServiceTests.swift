import AsyncHTTPClient
import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Running davgate as a system service (issue 18): the service manager's
/// notifications on a socket the test binds as systemd would, a reload on
/// SIGHUP that swaps the certificate under open connections and refuses a
/// broken configuration, a stop that lets short requests finish and cuts
/// long ones cleanly, and log lines a shipper can parse.
@Suite("running as a service")
struct ServiceTests {
    @Test("READY=1 once listening, WATCHDOG=1 at half WATCHDOG_USEC, RELOADING=1 and READY=1 around SIGHUP, STOPPING=1 and exit 0 on SIGTERM")
    func notifications() async throws {
        let name = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        let socket = try NotifySocket(name: name)
        let server = try await DavgateProcess(environment: ["NOTIFY_SOCKET": name, "WATCHDOG_USEC": "400000"])
        defer { server.cleanUp() }
        let start = socket.receive(until: { $0.hasPrefix("READY=1") })
        #expect(start.last?.hasPrefix("READY=1\nSTATUS=serving https://127.0.0.1:\(server.port)/files/") == true, "\(start)")
        let pings = socket.receive(until: { $0 == "WATCHDOG=1" }, timeout: .seconds(5))
        #expect(pings.last == "WATCHDOG=1", "\(pings)")

        kill(server.pid, SIGHUP)
        let reload = socket.receive(until: { $0 == "READY=1" }).filter { $0 != "WATCHDOG=1" }
        #expect(reload.count == 2, "\(reload)")
        #expect(reload.first?.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") == true, "\(reload)")
        try await withClient(server) { client async throws in
            #expect(try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")]).status == 207, "serving after the reload")
        }

        let code = try await server.terminate(timeout: .seconds(30))
        #expect(code == 0, "\(server.stderr)")
        let stop = socket.receive(until: { $0 == "STOPPING=1" }, timeout: .seconds(2))
        #expect(stop.last == "STOPPING=1", "\(stop)")
    }

    @Test("SIGHUP with a renewed certificate: new connections get it, an open connection keeps working, no request fails")
    func certificateReload() async throws {
        let server = try await DavgateProcess()
        defer { server.cleanUp() }
        let oldPEM = try Data(contentsOf: server.certificate)
        let fresh = server.root.appendingPathComponent("renewed")
        let tool = try ClientCommand(scratch: server.root.appendingPathComponent("scratch"))
        try await Self.makeCertificate(in: fresh, tool: tool)
        let newFingerprint = try await Self.fingerprint(ofFile: fresh.appendingPathComponent("cert.pem"), tool: tool)
        #expect(try await Self.presentedFingerprint(server, tool: tool) == server.fingerprint, "the first certificate at first")
        #expect(newFingerprint != server.fingerprint)

        // A connection opened before the reload, by a client that trusts
        // only the old certificate: it can only go on over that connection.
        let pinnedToOld = try DAVClient(server)
        defer { Task { try? await pinnedToOld.shutdown() } }
        #expect(try await pinnedToOld.send("PROPFIND", "/files/", headers: [("Depth", "0")]).status == 207)

        // A client trusting both keeps asking, on new connections too, all through the reload.
        let both = try Self.client(trusting: [oldPEM, try Data(contentsOf: fresh.appendingPathComponent("cert.pem"))], server: server)
        let answered = NIOLockedValueBox(0)
        let load = Task {
            var failures: [String] = []
            while !Task.isCancelled {
                do {
                    // A new connection each time: the pool's idle connections are closed by `Connection: close`.
                    let reply = try await both.send("PROPFIND", "/files/", headers: [("Depth", "0"), ("Connection", "close")])
                    if reply.status != 207 { failures.append("status \(reply.status)") }
                } catch is CancellationError {
                    break  // the test is done asking
                } catch {
                    failures.append("\(error)")
                }
                answered.withLockedValue { $0 += 1 }
            }
            return failures
        }
        try await eventually("requests are answered before the reload") { answered.withLockedValue { $0 } >= 2 }
        try FileManager.default.removeItem(at: server.certificate)
        try FileManager.default.copyItem(at: fresh.appendingPathComponent("cert.pem"), to: server.certificate)
        let key = server.root.appendingPathComponent("certs/davgate-key.pem")
        try FileManager.default.removeItem(at: key)
        try FileManager.default.copyItem(at: fresh.appendingPathComponent("key.pem"), to: key)
        kill(server.pid, SIGHUP)
        try await eventually("the reload is logged") { server.stderr.contains("fingerprint \(newFingerprint)") }
        let atReload = answered.withLockedValue { $0 }
        try await eventually("requests are answered after the reload") { answered.withLockedValue { $0 } >= atReload + 3 }
        load.cancel()
        let failures = await load.value
        try await both.shutdown()
        #expect(failures.isEmpty, "\(failures.prefix(3)) of \(answered.withLockedValue { $0 })")

        #expect(try await Self.presentedFingerprint(server, tool: tool) == newFingerprint, "a new connection sees the renewed certificate")
        #expect(try await pinnedToOld.send("PROPFIND", "/files/", headers: [("Depth", "0")]).status == 207,
                "the connection opened before the reload carries on with the old certificate")
    }

    @Test("a broken configuration or a key of another certificate on SIGHUP is refused and the server keeps serving as before; live settings apply, restart-only ones are named")
    func reloadRefusalsAndLiveSettings() async throws {
        try await withGateway { server, client in
            let tool = try ClientCommand(scratch: server.root.appendingPathComponent("scratch"))
            let original = try String(contentsOf: server.configFile, encoding: .utf8)
            #expect(try await client.send("PUT", "/files/a.txt", body: "before").status == 201)

            // TOML that does not parse, carrying a change that must not apply.
            try (original.replacingOccurrences(of: "name = \"files\"", with: "name = \"files\"\nusers = { admin = \"ro\" }") + "\n[server\n")
                .write(to: server.configFile, atomically: true, encoding: .utf8)
            kill(server.pid, SIGHUP)
            try await eventually("the refusal is logged") { server.stderr.contains("reload refused") }
            #expect(server.stderr.contains("davgate.toml"), "the refusal names the file")
            #expect(try await client.send("PUT", "/files/a.txt", body: "still writable").status == 204)

            // A private key that belongs to another certificate.
            let other = server.root.appendingPathComponent("other")
            try await Self.makeCertificate(in: other, tool: tool)
            let key = server.root.appendingPathComponent("certs/davgate-key.pem")
            let goodKey = try Data(contentsOf: key)
            try original.write(to: server.configFile, atomically: true, encoding: .utf8)
            try Data(contentsOf: other.appendingPathComponent("key.pem")).write(to: key)
            kill(server.pid, SIGHUP)
            try await eventually("the key refusal is logged") { server.stderr.contains("does not belong to the certificate") }
            #expect(try await Self.presentedFingerprint(server, tool: tool) == server.fingerprint)
            #expect(try await client.send("GET", "/files/a.txt").text == "still writable")
            try goodKey.write(to: key)

            // Live: the domain's users table and the log level; restart-only: the listener and the realm.
            let changed = original
                .replacingOccurrences(of: "name = \"files\"", with: "name = \"files\"\nusers = { admin = \"ro\" }\nupload_delay = 0.5")
                .replacingOccurrences(of: "log_level = \"info\"", with: "log_level = \"debug\"\nrealm = \"elsewhere\"")
                .replacingOccurrences(of: "listen = \"127.0.0.1:0\"", with: "listen = \"127.0.0.1:1\"")
            try changed.write(to: server.configFile, atomically: true, encoding: .utf8)
            kill(server.pid, SIGHUP)
            try await eventually("the reload is logged") { server.stderr.contains("reloaded ") }
            let log = server.stderr
            #expect(log.contains("applied log_level, domain files: upload_delay, domain files: users"), "\(log)")
            #expect(log.contains("used only from the next start (restart davgate for them): listen, realm"), "\(log)")
            #expect(try await client.send("PUT", "/files/a.txt", body: "refused").status == 403, "admin is read-only now")
            #expect(try await client.send("GET", "/files/a.txt").text == "still writable")
            try await eventually("debug lines appear") { server.stderr.contains(" debug davgate:") }
        }
    }

    @Test("SIGTERM: a short download finishes within shutdown_grace, a slow download and a slow upload are cut, nothing partial is left, exit 0")
    func gracefulStop() async throws {
        let server = try await DavgateProcess(extraServer: "shutdown_grace = 3")
        defer { server.cleanUp() }
        let tool = try ClientCommand(scratch: server.root.appendingPathComponent("scratch"))
        let big = try randomData(48 << 20)
        try big.write(to: server.upstream.appendingPathComponent("big.bin"))
        try big.prefix(2 << 20).write(to: server.upstream.appendingPathComponent("small.bin"))
        let upload = server.root.appendingPathComponent("upload.bin")
        try big.write(to: upload)
        let scratch = server.root.appendingPathComponent("scratch")
        func curl(_ arguments: [String], log: String) throws -> ClientCommand.Running {
            try tool.start("/usr/bin/curl", ["-sS", "--cacert", server.certificate.path, "-u", "admin:\(server.adminPassword)",
                                             "-o", scratch.appendingPathComponent("\(log).body").path,
                                             "-w", "%{http_code} %{size_download} %{size_upload}"] + arguments,
                           log: scratch.appendingPathComponent("\(log).log"))
        }
        let slowDownload = try curl(["--limit-rate", "1M", server.baseURL + "/files/big.bin"], log: "down")
        let slowUpload = try curl(["--limit-rate", "1M", "-T", upload.path, server.baseURL + "/files/uploaded.bin"], log: "up")
        try await Task.sleep(for: .milliseconds(1500))
        let shortDownload = try curl(["--limit-rate", "1500K", server.baseURL + "/files/small.bin"], log: "short")
        // The stop comes once the short download is receiving (on a loaded
        // machine curl may take a while to start, and a stop before it
        // connects is a refused connection, not the case tested here); its
        // 2 MiB at 1.5 MB/s then end well within the 3 s grace.
        let shortBody = scratch.appendingPathComponent("short.body")
        try await eventually("the short download is receiving") {
            ((try? FileManager.default.attributesOfItem(atPath: shortBody.path)[.size] as? Int) ?? 0) > 0
        }

        let stopped = ContinuousClock.now
        let code = try await server.terminate(timeout: .seconds(40))
        let took = ContinuousClock.now - stopped
        #expect(code == 0, "\(server.stderr)")
        // The grace (3 s), then at most the cancellation's 5 s, plus the
        // closing of the domains; the bound leaves room for a loaded machine
        // and still tells a cut from a wait (the slow transfers need 48 s).
        #expect(took < .seconds(20), "\(took)")

        func finished(_ running: ClientCommand.Running, _ log: String) async throws -> (status: Int32, report: String) {
            for _ in 0..<500 {
                if let status = ClientCommand.reap(running.pid) {
                    return (status, (try? String(contentsOf: scratch.appendingPathComponent("\(log).log"), encoding: .utf8)) ?? "")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            kill(running.pid, SIGKILL)
            return (-1, "curl did not end")
        }
        let short = try await finished(shortDownload, "short")
        #expect(short.status == 0, "\(short.report)")
        #expect(short.report.hasPrefix("200 2097152"), "\(short.report)")
        #expect(try Data(contentsOf: scratch.appendingPathComponent("short.body")) == big.prefix(2 << 20))
        let down = try await finished(slowDownload, "down")
        #expect(down.status != 0, "the slow download is cut, and curl says so: \(down.report)")
        let up = try await finished(slowUpload, "up")
        #expect(up.status != 0 || !up.report.hasPrefix("20"), "the slow upload is not acknowledged: \(up.report)")

        // Nothing of the cut upload anywhere: not upstream, not in the index after a restart.
        let names = try server.upstreamNames().sorted()
        #expect(names == ["big.bin", "small.bin"], "\(names)")
        let again = try await DavgateProcess(reuse: server.root)
        defer { again.stop() }
        try await withClient(again) { client in
            #expect(try await client.send("GET", "/files/uploaded.bin").status == 404)
            let listing = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")]).text
            #expect(!listing.contains("uploaded.bin"), "\(listing)")
        }
    }

    @Test("log_format = json with access_log: every line is one JSON object; each request has a line with its method, path, status, bytes, duration, user, client and request id")
    func jsonAccessLog() async throws {
        try await withGateway(extraServer: "log_format = \"json\"\naccess_log = true") { server, client in
            #expect(try await client.send("PUT", "/files/a%20b.txt", body: "twelve bytes").status == 201)
            #expect(try await client.send("GET", "/files/a%20b.txt").body.count == 12)
            #expect(try await client.send("GET", "/files/missing.txt").status == 404)
            #expect(try await client.send("PROPFIND", "/files/", auth: false).status == 401)
            var lines: [[String: Any]] = []
            try await eventually("the access lines are written") {
                lines = try server.stderr.split(separator: "\n").map { line in
                    guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                        throw JSONLineError(line: String(line))
                    }
                    return object
                }
                return lines.filter { $0["status"] != nil }.count >= 4
            }
            #expect(lines.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
            let get = try #require(lines.first { $0["method"] as? String == "GET" && $0["status"] as? Int == 200 })
            #expect(get["path"] as? String == "/files/a%20b.txt")
            #expect(get["bytes"] as? Int == 12)
            #expect(get["user"] as? String == "admin")
            #expect(get["client"] as? String == "127.0.0.1")
            #expect((get["request_id"] as? String)?.isEmpty == false)
            #expect(get["duration_ms"] is Double || get["duration_ms"] is Int)
            #expect(get["level"] as? String == "info")
            let put = try #require(lines.first { $0["method"] as? String == "PUT" })
            #expect(put["status"] as? Int == 201 && put["bytes"] as? Int == 0)
            #expect(lines.contains { $0["method"] as? String == "GET" && $0["status"] as? Int == 404 && $0["path"] as? String == "/files/missing.txt" })
            let refused = try #require(lines.first { $0["method"] as? String == "PROPFIND" && $0["status"] as? Int == 401 })
            #expect(refused["user"] as? String == "-")
        }
    }

    struct JSONLineError: Error { var line: String }

    /// A fresh self-signed pair for localhost and 127.0.0.1, by openssl.
    static func makeCertificate(in folder: URL, tool: ClientCommand) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let result = try await tool.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", folder.appendingPathComponent("key.pem").path, "-out", folder.appendingPathComponent("cert.pem").path,
        ])
        try #require(result.succeeded, "\(result)")
    }

    /// A PEM certificate's SHA-256 fingerprint as davgate prints it.
    static func fingerprint(ofFile file: URL, tool: ClientCommand) async throws -> String {
        let result = try await tool.run("/usr/bin/openssl", ["x509", "-in", file.path, "-noout", "-fingerprint", "-sha256"])
        try #require(result.succeeded, "\(result)")
        return String(result.stdout.split(separator: "=", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The fingerprint of the certificate a new TLS connection is shown.
    static func presentedFingerprint(_ server: DavgateProcess, tool: ClientCommand) async throws -> String {
        let shown = try await tool.run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", "localhost"],
                                       timeout: .seconds(20))
        let pem = server.root.appendingPathComponent("scratch/presented-\(UUID().uuidString).pem")
        try shown.stdout.write(to: pem, atomically: true, encoding: .utf8)
        return try await fingerprint(ofFile: pem, tool: tool)
    }

    static func client(trusting pems: [Data], server: DavgateProcess) throws -> DAVClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try pems.flatMap { try NIOSSLCertificate.fromPEMBytes(Array($0)) })
        return DAVClient(server, tls: tls)
    }
}
