import DavgateTestSupport
import Foundation
import Testing

@Suite("first start and authentication")
struct FirstStartTests {
    @Test("first start makes a certificate and an admin user, both usable over TLS")
    func firstStart() async throws {
        try await withGateway { server, client in
            #expect(FileManager.default.fileExists(atPath: server.certificate.path))
            let key = server.root.appendingPathComponent("certs/davgate-key.pem")
            let mode = try FileManager.default.attributesOfItem(atPath: key.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let fingerprint = try #require(server.fingerprint)
            #expect(fingerprint.split(separator: ":").count == 32)
            #expect(server.adminPassword.count >= 16)
            // The password is stored only as a bcrypt hash.
            let users = try String(contentsOf: server.state.appendingPathComponent("users.json"), encoding: .utf8)
            #expect(!users.contains(server.adminPassword))
            #expect(users.contains("$2"))
            // The client trusts exactly the generated certificate: a successful request proves it.
            let reply = try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")])
            #expect(reply.status == 207)
        }
    }

    @Test("missing or wrong credentials get 401 with WWW-Authenticate")
    func unauthorized() async throws {
        try await withGateway { server, client in
            let anonymous = try await client.send("PROPFIND", "/files/", headers: [("Depth", "0")], auth: false)
            #expect(anonymous.status == 401)
            #expect(anonymous.header("WWW-Authenticate")?.hasPrefix("Basic realm=\"davgate\"") == true)
            try await withClient(server, password: "not-the-password") { wrong in
                let denied = try await wrong.send("GET", "/files/", headers: [])
                #expect(denied.status == 401)
            }
        }
    }

    @Test("a restart keeps users, certificate and locks")
    func restartKeepsState() async throws {
        let first = try await DavgateProcess()
        defer { first.cleanUp() }
        let token = try await withClient(first) { client in
            let put = try await client.send("PUT", "/files/kept.txt", body: "v1")
            #expect(put.status == 201)
            let lock = try await client.send("LOCK", "/files/kept.txt", headers: [("Timeout", "Second-600")], body: Fixtures.lockBody)
            #expect(lock.status == 200)
            return try #require(lock.header("Lock-Token"))
        }
        first.stop()

        let second = try await DavgateProcess(reuse: first.root)
        defer { second.stop() }
        #expect(second.fingerprint == first.fingerprint)
        try await withClient(second, password: first.adminPassword) { again in
            let blocked = try await again.send("PUT", "/files/kept.txt", body: "v2")
            #expect(blocked.status == 423)
            let allowed = try await again.send("PUT", "/files/kept.txt", headers: [("If", "(\(token))")], body: "v2")
            #expect(allowed.status == 204)
        }
    }

    @Test("a bad configuration is refused with file, key and reason")
    func badConfig() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("davgate-badconf-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let file = root.appendingPathComponent("bad.toml")
        try "[server]\nlisten = \"127.0.0.1:8443\"\nbogus_key = 1\n[[domain]]\nname = \"files\"\nupstream = \"file:up\"\n"
            .write(to: file, atomically: true, encoding: .utf8)
        let ended = try await ChildProcess.output(DavgateProcess.executable.path, ["serve", "--config", file.path], check: false)
        let message = ended.errorText
        #expect(ended.status != 0)
        #expect(message.contains("bad.toml"))
        #expect(message.contains("bogus_key"))
    }
}

enum Fixtures {
    static let lockBody = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>
        <D:owner><D:href>http://example.org/tester</D:href></D:owner></D:lockinfo>
        """
}
