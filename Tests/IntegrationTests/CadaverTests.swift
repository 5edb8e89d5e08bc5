import DavgateTestSupport
import Foundation
import Testing

/// cadaver (neon), the real client, driven through a pseudo-terminal against
/// the real davgate over TLS: it accepts the self-signed certificate at its
/// prompt, reads credentials from a `.netrc` in a temporary HOME, and every
/// result is checked in cadaver's own output, over HTTP and in the upstream
/// folder.
@Suite("cadaver against davgate over TLS")
struct CadaverTests {
    @Test("cadaver: mkcol, put, get, move, copy, propset/propget, lock/unlock, names with spaces and accents")
    func cadaverSession() async throws {
        try await withGateway { server, client in try await Self.scenario(on: server, client: client) }
    }

    /// What a user does with cadaver, checked in cadaver's output, in the
    /// upstream folder and over HTTP through `client`: against one davgate
    /// here, and through HAProxy in front of three (ClusterTests).
    static func scenario(on server: some GatewayEndpoint, client: DAVClient) async throws {
        let cadaver = try #require(findExecutable("cadaver"), "cadaver is not installed (apt-get install cadaver)")
        let python = try #require(findExecutable("python3"), "python3 drives cadaver through a pseudo-terminal")
        let session = try CadaverSession(server: server, cadaver: cadaver, python: python)
        let original = Data("Hello Résumé\nzweite Zeile, ünïcödé 😀\n".utf8)
        try session.writeLocal("Résumé 2026.txt", original)
        let edited = Data("edited under a lock\n".utf8)
        try session.writeLocal("edited.txt", edited)

        // Session 1: everything the README promises cadaver can do.
        let first = try await session.run([
            "mkcol \"Ordner ü\"",
            "cd \"Ordner ü\"",
            "put \"Résumé 2026.txt\"",
            "ls",
            "get \"Résumé 2026.txt\" back.txt",
            "move \"Résumé 2026.txt\" \"Lebenslauf 2026.txt\"",
            "copy \"Lebenslauf 2026.txt\" \"Kopie 2026.txt\"",
            "propset \"Lebenslauf 2026.txt\" farbe blau",
            "propget \"Lebenslauf 2026.txt\" farbe",
            "propnames \"Lebenslauf 2026.txt\"",
            "lock \"Lebenslauf 2026.txt\"",
            "discover \"Lebenslauf 2026.txt\"",
            "put edited.txt \"Lebenslauf 2026.txt\"",
            "unlock \"Lebenslauf 2026.txt\"",
            "lock \"/files/Ordner ü/\"",
            "put \"Résumé 2026.txt\" \"unter Sperre.txt\"",
        ])
        #expect(first.start.contains("Do you wish to accept the certificate?"), "the self-signed certificate is offered: \(first.start)")
        #expect(!first.loginPrompted, "credentials come from .netrc")
        #expect(first["mkcol \"Ordner ü\""]?.contains("succeeded") == true, "\(first)")
        #expect(first["put \"Résumé 2026.txt\""]?.hasSuffix("succeeded.\n") == true, "\(first)")
        #expect(first["ls"]?.contains("Résumé 2026.txt") == true, "\(first)")
        #expect(first["get \"Résumé 2026.txt\" back.txt"]?.contains("succeeded") == true, "\(first)")
        #expect(try session.readLocal("back.txt") == original, "get brings back exactly the bytes put")
        #expect(first["move \"Résumé 2026.txt\" \"Lebenslauf 2026.txt\""]?.contains("succeeded") == true, "\(first)")
        #expect(first["copy \"Lebenslauf 2026.txt\" \"Kopie 2026.txt\""]?.contains("succeeded") == true, "\(first)")
        #expect(first["propset \"Lebenslauf 2026.txt\" farbe blau"]?.contains("succeeded") == true, "\(first)")
        #expect(first["propget \"Lebenslauf 2026.txt\" farbe"]?.contains("Value of farbe is: blau") == true, "\(first)")
        let propnames = first["propnames \"Lebenslauf 2026.txt\""] ?? ""
        #expect(propnames.contains("http://webdav.org/cadaver/custom-properties/ farbe"), "\(propnames)")
        #expect(propnames.contains("DAV: getetag"))
        #expect(propnames.contains("http://apache.org/dav/props/ executable"))
        #expect(first["lock \"Lebenslauf 2026.txt\""]?.contains("succeeded") == true, "\(first)")
        let discovered = first["discover \"Lebenslauf 2026.txt\""] ?? ""
        #expect(discovered.contains("Lock token <urn:uuid:"), "\(discovered)")
        #expect(discovered.contains("Depth 0 on `\(server.baseURL)/files/Ordner%20%C3%BC/Lebenslauf%202026.txt'"), "upper-case hex in the lockroot: \(discovered)")
        #expect(discovered.contains("Scope: exclusive"))
        #expect(first["put edited.txt \"Lebenslauf 2026.txt\""]?.hasSuffix("succeeded.\n") == true, "a put under the lock carries the If header: \(first)")
        #expect(first["unlock \"Lebenslauf 2026.txt\""]?.contains("succeeded") == true, "\(first)")
        #expect(first["lock \"/files/Ordner ü/\""]?.contains("Locking collection") == true, "\(first)")
        #expect(first["lock \"/files/Ordner ü/\""]?.contains("succeeded") == true, "\(first)")
        #expect(first["put \"Résumé 2026.txt\" \"unter Sperre.txt\""]?.hasSuffix("succeeded.\n") == true,
                "a put into the locked collection: If: <collection URL> (<token>): \(first)")

        // Session 2 knows no token: its put into the locked collection fails with 423;
        // its unlock asks for the token, which discover shows.
        let second = try await session.run([
            "cd \"Ordner ü\"",
            "put \"Résumé 2026.txt\" \"ohne Token.txt\"",
            "discover \"/files/Ordner ü/\"",
            "unlock \"/files/Ordner ü/\"",
            "put \"Résumé 2026.txt\" \"ohne Token.txt\"",
        ])
        let refused = second.outputs[1].output
        #expect(refused.contains("423"), "a put without the token is refused as Locked: \(refused)")
        #expect(!refused.contains("succeeded"))
        #expect(second["discover \"/files/Ordner ü/\""]?.contains("Depth infinity on `\(server.baseURL)/files/Ordner%20%C3%BC/'") == true, "\(second)")
        #expect(second["unlock \"/files/Ordner ü/\""]?.contains("succeeded") == true, "\(second)")
        #expect(second.outputs[4].output.hasSuffix("succeeded.\n"), "after unlock the put works: \(second)")

        // The upstream folder holds exactly what cadaver did, under NFC names.
        #expect(try await client.uploadsDrained(), "the journal delivered every write")
        let folder = server.upstream.appendingPathComponent("Ordner ü")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(Set(names.map { Array($0.utf8) }) == Set(["Lebenslauf 2026.txt", "Kopie 2026.txt", "unter Sperre.txt", "ohne Token.txt"]
            .map { Array($0.precomposedStringWithCanonicalMapping.utf8) }), "upstream: \(names)")
        #expect(try server.upstreamNames().map { Array($0.utf8) }
                == [Array("Ordner ü".precomposedStringWithCanonicalMapping.utf8)])
        #expect(try Data(contentsOf: folder.appendingPathComponent("Lebenslauf 2026.txt")) == edited)
        #expect(try Data(contentsOf: folder.appendingPathComponent("Kopie 2026.txt")) == original)
        #expect(try Data(contentsOf: folder.appendingPathComponent("unter Sperre.txt")) == original)
        #expect(try Data(contentsOf: folder.appendingPathComponent("ohne Token.txt")) == original)

        // And over HTTP: the dead property in cadaver's namespace, no lock left.
        let ask = """
            <?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:lockdiscovery/>\
            <C:farbe xmlns:C="http://webdav.org/cadaver/custom-properties/"/></D:prop></D:propfind>
            """
        let reply = try await client.send("PROPFIND", "/files/Ordner%20%C3%BC/", headers: [("Depth", "1"), xmlType], body: ask)
        let ms = try #require(Multistatus(reply), "\(reply.text)")
        let file = try #require(ms.response("/files/Ordner%20%C3%BC/Lebenslauf%202026.txt"), "hrefs: \(ms.hrefs)")
        #expect(file.value("farbe", "http://webdav.org/cadaver/custom-properties/") == "blau")
        #expect(ms.responses.allSatisfy { $0.property("lockdiscovery")?.node.children.isEmpty == true }, "no lock left: \(ms)")
    }
}
