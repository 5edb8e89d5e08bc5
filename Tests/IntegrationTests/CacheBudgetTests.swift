import DavgateTestSupport
import Foundation
import Testing

/// The cache is a cache (issue 5): `cache_budget` evicts the least recently
/// read content back to placeholders; PROPPATCH of `g:pinned` fetches
/// content at once and keeps it through the pressure.
@Suite("cache budget and pinning, from a client")
struct CacheBudgetTests {
    static let pin = """
        <D:propertyupdate xmlns:D="DAV:" xmlns:g="https://davgate.dev/ns"><D:set><D:prop><g:pinned>1</g:pinned></D:prop></D:set></D:propertyupdate>
        """

    /// Waits (up to 10 s) until `path` has `state`; eviction and pinned
    /// fetches run after the request that caused them.
    func waitForState(_ client: DAVClient, _ path: String, _ state: String) async throws -> Bool {
        let tests = ItemStateTests()
        for _ in 0..<200 {
            if try await tests.state(client, path).state == state { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("over cache_budget the least recently read files become placeholders; a pinned file and a pinned folder are fetched and kept")
    func budgetAndPins() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600\ncache_budget = \"300 KiB\"") { server, client in
            for i in 0..<6 { try Data(repeating: UInt8(i), count: 100_000).write(to: server.upstream.appendingPathComponent("f\(i).bin")) }
            try FileManager.default.createDirectory(at: server.upstream.appendingPathComponent("album"), withIntermediateDirectories: true)
            for name in ["a.jpg", "b.jpg"] { try Data(count: 20_000).write(to: server.upstream.appendingPathComponent("album/\(name)")) }

            for i in 0..<5 { #expect(try await client.send("GET", "/files/f\(i).bin").body.count == 100_000) }
            #expect(try await waitForState(client, "/files/f0.bin", "placeholder"), "the least recently read went back to the cloud")
            #expect(try await waitForState(client, "/files/f1.bin", "placeholder"))
            #expect(try await waitForState(client, "/files/f4.bin", "materialized"))

            // Pinning a placeholder fetches it; it then survives reads of others.
            #expect(try await client.send("PROPPATCH", "/files/f0.bin", body: Self.pin).status == 207)
            #expect(try await waitForState(client, "/files/f0.bin", "materialized"), "pinning fetched it")
            for i in [5, 1, 2] { #expect(try await client.send("GET", "/files/f\(i).bin").status == 200) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await waitForState(client, "/files/f0.bin", "materialized"), "pinned: kept through the pressure")
            #expect(try await waitForState(client, "/files/f3.bin", "placeholder"))

            // A pinned folder: everything below is fetched.
            #expect(try await client.send("PROPPATCH", "/files/album/", body: Self.pin).status == 207)
            #expect(try await waitForState(client, "/files/album/a.jpg", "materialized"))
            #expect(try await waitForState(client, "/files/album/b.jpg", "materialized"))
            #expect(server.stderr.contains("evicted"), "eviction is logged")
            // The summary line follows the last file's fetch: the files are
            // local a moment before it is written.
            try await eventually("the pinned folder's fetch is logged") { server.stderr.contains("eager /album: fetched 2 files") }
            // Content served after an eviction is still right.
            #expect(try await client.send("GET", "/files/f1.bin").body == Data(repeating: 1, count: 100_000))
        }
    }

    @Test("davgate pin fetches a folder with a progress report and keeps it from evict; unpin lets evict free it")
    func pinCommands() async throws {
        try await withGateway(extraDomain: "listing_ttl = 600") { server, client in
            try FileManager.default.createDirectory(at: server.upstream.appendingPathComponent("docs/sub"), withIntermediateDirectories: true)
            for name in ["a.bin", "b.bin", "sub/c.bin"] {
                try Data(count: 200_000).write(to: server.upstream.appendingPathComponent("docs/\(name)"))
            }
            func davgate(_ command: String, _ path: String) async throws -> (status: Int32, output: String) {
                try await runDavgate([command, path, "--config", server.configFile.path, "--url", server.baseURL, "--password-stdin"],
                               stdin: server.adminPassword + "\n")
            }
            let pinned = try await davgate("pin", "/files/docs/")
            #expect(pinned.status == 0, "\(pinned.output)")
            #expect(pinned.output.contains("pinning /files/docs/ [##############################] 100%"), "\(pinned.output)")
            #expect(pinned.output.contains("3 of 3 files"))
            #expect(try await ItemStateTests().state(client, "/files/docs/sub/c.bin").state == "materialized")

            let kept = try await davgate("evict", "/files/docs/")
            #expect(kept.status == 0 && kept.output.contains("evicted /files/docs/: 0 files, Zero KB; 3 kept"), "\(kept.output)")
            #expect(try await davgate("unpin", "/files/docs/").status == 0)
            let freed = try await davgate("evict", "/files/docs/")
            #expect(freed.output.contains("evicted /files/docs/: 3 files"), "\(freed.output)")
            #expect(try await ItemStateTests().state(client, "/files/docs/a.bin").state == "placeholder")
            #expect(try await client.send("GET", "/files/docs/a.bin").body.count == 200_000, "fetched again on the next read")

            let nowhere = try await davgate("evict", "/files/nothing.txt")
            #expect(nowhere.status != 0 && nowhere.output.contains("404"), "\(nowhere.output)")
        }
    }
}
