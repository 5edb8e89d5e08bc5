import DavgateTestSupport
import Foundation
import Testing

/// A domain bridged to a WebDAV upstream (here another davgate over TLS),
/// whose password comes only from the vault, read within the domain's
/// access group.
@Suite("a WebDAV upstream with credentials from the vault")
struct WebDAVUpstreamTests {
    @Test("PUT, GET, PROPFIND, MOVE and DELETE through davgate reach the upstream davgate")
    func bridged() async throws {
        let upstream = try await DavgateProcess()
        defer { upstream.cleanUp() }
        let (vault, key) = try await makeVault()
        defer { try? FileManager.default.removeItem(at: vault.deletingLastPathComponent()) }
        let stored = try await runDavgate(["vault", "set", "upstream-a", "admin", "--group", "team", "--vault", vault.path, "--key-file", key.path],
                                      stdin: upstream.adminPassword + "\n")
        #expect(stored.status == 0, "\(stored.output)")

        let gateway = try await DavgateProcess(
            extraServer: "vault = \"\(vault.path)\"",
            extraDomain: """

                [[domain]]
                name = "team"
                upstream = "\(upstream.filesURL.absoluteString)"
                credentials = { service = "upstream-a", account = "admin" }
                access_group = "team"
                upstream_ca = "\(upstream.certificate.path)"
                """,
            arguments: ["--key-file", key.path])
        defer { gateway.cleanUp() }
        // The password is nowhere in the gateway's configuration or log.
        let gatewayConfig = try String(contentsOf: gateway.configFile, encoding: .utf8)
        #expect(!gatewayConfig.contains(upstream.adminPassword))
        try await withClient(gateway) { client async throws in
            #expect(try await client.send("MKCOL", "/team/docs").status == 201)
            #expect(try await client.send("PUT", "/team/docs/a.txt", body: "through the bridge").status == 201)
            // Both are write-back: the gateway's journal delivers to the upstream davgate, whose journal delivers to its folder.
            #expect(try await client.uploadsDrained(), "the gateway delivered the write")
            #expect(try await uploadsDrained(upstream), "the upstream davgate delivered it to its folder")
            #expect(try String(contentsOf: upstream.upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "through the bridge")
            let listing = try await client.send("PROPFIND", "/team/docs/", headers: [("Depth", "1")])
            #expect(listing.text.contains("/team/docs/a.txt"))
            #expect(try await client.send("GET", "/team/docs/a.txt").text == "through the bridge")
            let moved = try await client.send("MOVE", "/team/docs/a.txt", headers: [("Destination", "\(client.base)/team/docs/b.txt")])
            #expect(moved.status == 201)
            #expect(FileManager.default.fileExists(atPath: upstream.upstream.appendingPathComponent("docs/b.txt").path))
            #expect(try await client.send("DELETE", "/team/docs/b.txt").status == 204)
            #expect(!FileManager.default.fileExists(atPath: upstream.upstream.appendingPathComponent("docs/b.txt").path))
        }
        #expect(!gateway.stderr.contains(upstream.adminPassword))
    }

    @Test("a domain whose vault entry is in another access group is refused at start, naming the entry")
    func wrongGroup() async throws {
        let (vault, key) = try await makeVault()
        defer { try? FileManager.default.removeItem(at: vault.deletingLastPathComponent()) }
        try await runDavgate(["vault", "set", "upstream-a", "admin", "--group", "other", "--vault", vault.path, "--key-file", key.path],
                         stdin: "secret\n")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("conf"), withIntermediateDirectories: true)
        let config = root.appendingPathComponent("conf/davgate.toml")
        try """
            [server]
            listen = "127.0.0.1:0"
            vault = "\(vault.path)"
            [[domain]]
            name = "team"
            upstream = "https://127.0.0.1:9/files/"
            credentials = { service = "upstream-a", account = "admin" }
            access_group = "team"
            """.write(to: config, atomically: true, encoding: .utf8)
        let refused = try await runDavgate(["serve", "--config", config.path, "--key-file", key.path])
        #expect(refused.status != 0)
        #expect(refused.output.contains("upstream-a"))
        #expect(refused.output.contains("\"team\""))
        #expect(refused.output.contains("davgate vault set"))
    }
}
