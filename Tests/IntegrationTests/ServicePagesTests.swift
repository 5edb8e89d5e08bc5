import DavgateTestSupport
import Foundation
import Testing

/// `/.davgate/metrics`, `/.davgate/status` and `/.davgate/status.json`:
/// what an operator and `davgate status` read.
@Suite("service pages: metrics and status")
struct ServicePagesTests {
    /// The value of one series in Prometheus' text format.
    static func value(_ metrics: String, _ series: String) -> Double? {
        metrics.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    @Test("metrics: requests by method and status, bytes in and out, cache hits and misses, fetches, uploads")
    func metrics() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            try Data(count: 10_000).write(to: server.upstream.appendingPathComponent("cloud.bin"))
            #expect(try await client.send("GET", "/.davgate/metrics", auth: false).status == 401, "signed-in users only")
            #expect(try await client.send("PUT", "/files/a.txt", body: "twelve bytes").status == 201)
            // Waiting for the upload asks status.json, GETs that count too.
            #expect(try await client.uploadsDrained())
            let gets = Self.value(try await client.send("GET", "/.davgate/metrics").text, "davgate_requests_total{method=\"GET\",status=\"200\"}") ?? 0
            #expect(try await client.send("GET", "/files/cloud.bin").body.count == 10_000)
            #expect(try await client.send("GET", "/files/cloud.bin").body.count == 10_000)
            #expect(try await client.send("GET", "/files/missing.txt").status == 404)

            let reply = try await client.send("GET", "/.davgate/metrics")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = reply.text
            #expect(Self.value(text, "davgate_requests_total{method=\"PUT\",status=\"201\"}") == 1, "\(text)")
            #expect(Self.value(text, "davgate_requests_total{method=\"GET\",status=\"200\"}") == gets + 3, "two file GETs and the metrics GET that read the count")
            #expect(Self.value(text, "davgate_requests_total{method=\"GET\",status=\"404\"}") == 1)
            #expect(Self.value(text, "davgate_requests_total{method=\"GET\",status=\"401\"}") == 1)
            #expect(Self.value(text, "davgate_bytes_received_total") == 12)
            #expect(Self.value(text, "davgate_bytes_sent_total") == 20_000)
            #expect(Self.value(text, "davgate_cache_misses_total{domain=\"files\"}") == 1, "the first read fetched")
            #expect(Self.value(text, "davgate_cache_hits_total{domain=\"files\"}") == 1, "the second read came from the cache")
            // A fetch is counted once recorded, which may be a moment after
            // its last bytes reached the client (seen on a loaded machine).
            try await eventually("the fetch is counted") {
                let later = try await client.send("GET", "/.davgate/metrics").text
                return Self.value(later, "davgate_fetches_total{domain=\"files\"}") == 1
                    && Self.value(later, "davgate_fetched_bytes_total{domain=\"files\"}") == 10_000
            }
            #expect(Self.value(text, "davgate_uploads_total{domain=\"files\"}") == 1)
            #expect(Self.value(text, "davgate_uploaded_bytes_total{domain=\"files\"}") == 12)
            #expect(Self.value(text, "davgate_uploads_in_flight{domain=\"files\"}") == 0)
            #expect(try await client.send("POST", "/.davgate/metrics").status == 405)
            #expect(try await client.send("GET", "/.davgate/nothing").status == 404)
        }
    }

    @Test("status.json: per domain the upstream's health, item counts, cache use, uploads and conflict copies")
    func statusJSON() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            _ = try await client.makeConflict(server, name: "report.txt")

            let reply = try await client.send("GET", "/.davgate/status.json")
            #expect(reply.status == 200)
            #expect(reply.header("Content-Type") == "application/json")
            let json = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
            let domains = try #require(json["domains"] as? [[String: Any]])
            let files = try #require(domains.first { $0["name"] as? String == "files" })
            let health = try #require(files["health"] as? [String: Any])
            #expect(health["failing"] as? Bool == false)
            #expect(health["last_success"] is String)
            let items = try #require(files["items"] as? [String: Any])
            #expect(items["files"] as? Int == 2)
            #expect((items["local"] as? Int ?? 0) >= 1, "at least our conflict copy is local")
            let states = try #require(items["states"] as? [String: Any], "\(items)")
            #expect(states["conflict"] as? Int == 1, "the conflict copy counted in its state: \(states)")
            let cache = try #require(files["cache"] as? [String: Any])
            #expect((cache["bytes"] as? Int ?? 0) > 0)
            let conflicts = try #require(files["conflicts"] as? [[String: Any]])
            #expect(conflicts.count == 1)
            #expect((conflicts.first?["path"] as? String)?.hasPrefix("/report (conflicted copy ") == true, "\(conflicts)")
            #expect((json["uptime_seconds"] as? Int ?? -1) >= 0)

            let page = try await client.send("GET", "/.davgate/status")
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text.contains("data-domain=\"files\""))
            #expect(page.text.contains("report (conflicted copy "))
        }
    }

    @Test("davgate status: the running server's domains for people and, with --json, for scripts; a wrong password is refused")
    func statusCommand() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/a.txt", body: "cached here").status == 201)
            let arguments = ["status", "--config", server.configFile.path, "--url", server.baseURL, "--user", "admin", "--password-stdin"]
            let human = try await runDavgate(arguments, stdin: server.adminPassword + "\n")
            #expect(human.status == 0, "\(human.output)")
            #expect(human.output.contains("davgate at \(server.baseURL), up "), "\(human.output)")
            #expect(human.output.contains("files: file:"))
            #expect(human.output.contains("upstream:  ok, last answer "))
            #expect(human.output.contains("items:     1 files"))
            #expect(human.output.contains("uploads:   0 running"))
            #expect(human.output.contains("conflicts: 0"))

            let json = try await runDavgate(arguments + ["--json"], stdin: server.adminPassword + "\n")
            #expect(json.status == 0)
            let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
            #expect((parsed?["domains"] as? [[String: Any]])?.first?["name"] as? String == "files", "\(json.output)")

            let refused = try await runDavgate(arguments, stdin: "wrong\n")
            #expect(refused.status != 0)
            #expect(refused.output.contains("answered 401"), "\(refused.output)")
        }
    }

    @Test("davgate status names each file waiting for upload with its size; --offline reads the same from the state folder, the server stopped")
    func statusQueueAndOffline() async throws {
        let server = try await DavgateProcess(extraDomain: "upload_delay = 600")
        defer { server.cleanUp() }
        try await withClient(server) { client async throws in
            #expect(try await client.send("PUT", "/files/Bericht 2026.txt", body: String(repeating: "x", count: 3000)).status == 201)
            #expect(try await client.send("PUT", "/files/b.txt", body: "b").status == 201)
        }
        let online = try await runDavgate(["status", "--config", server.configFile.path, "--url", server.baseURL, "--password-stdin"],
                                    stdin: server.adminPassword + "\n")
        #expect(online.output.contains("uploads:   0 running, 2 pending (3 KB)"), "\(online.output)")
        #expect(online.output.contains("    /Bericht 2026.txt: 3 KB, waiting"), "\(online.output)")
        #expect(online.output.contains("    /b.txt: 1 byte, waiting"), "\(online.output)")
        server.stop()

        let offline = try await runDavgate(["status", "--offline", "--config", server.configFile.path])
        #expect(offline.status == 0, "\(offline.output)")
        #expect(offline.output.contains("davgate state at \(server.state.path) (the server was not asked)"), "\(offline.output)")
        #expect(offline.output.contains("upstream:  not asked (offline)"))
        #expect(offline.output.contains("2 pending (3 KB)") && offline.output.contains("    /Bericht 2026.txt: 3 KB, waiting"), "\(offline.output)")
        #expect(offline.output.contains("states:    2 modified"), "the stored states, read offline: \(offline.output)")
        let json = try await runDavgate(["status", "--offline", "--json", "--config", server.configFile.path])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let files = (parsed?["domains"] as? [[String: Any]])?.first { $0["name"] as? String == "files" }
        let queue = (files?["uploads"] as? [String: Any])?["queue"] as? [[String: Any]]
        #expect(queue?.map { $0["path"] as? String } == ["/Bericht 2026.txt", "/b.txt"], "oldest first: \(json.output)")
        #expect(queue?.first?["size"] as? Int == 3000)

        // A state folder davgate never served from: said so, and nothing made there.
        let fresh = server.root.appendingPathComponent("conf/fresh.toml")
        try String(contentsOf: server.configFile, encoding: .utf8).replacingOccurrences(of: "state = \"../var\"", with: "state = \"../fresh\"")
            .write(to: fresh, atomically: true, encoding: .utf8)
        let nowhere = try await runDavgate(["status", "--offline", "--config", fresh.path])
        #expect(nowhere.status != 0 && nowhere.output.contains("no index at"), "\(nowhere.output)")
        #expect(!FileManager.default.fileExists(atPath: server.root.appendingPathComponent("fresh/index.sqlite").path))
    }
}
