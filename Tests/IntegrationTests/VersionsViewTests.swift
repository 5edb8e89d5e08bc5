import DavgateTestSupport
import Foundation
import Testing

/// Issue 17's versions through the real server and real clients: cadaver
/// overwrites a file, `davgate versions` lists what it replaced, `davgate
/// restore` writes it back; the WebDAV view lists, reads and restores.
@Suite("versions over real TLS")
struct VersionsViewTests {
    private func command(_ server: DavgateProcess, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runDavgate(arguments + ["--config", server.configFile.path, "--url", server.baseURL, "--password-stdin"],
                             stdin: server.adminPassword + "\n")
    }

    @Test("an overwrite from cadaver keeps the old content; davgate versions lists it and davgate restore brings it back")
    func cadaverOverwriteThenRestore() async throws {
        let cadaver = try #require(findExecutable("cadaver"), "cadaver is not installed (apt-get install cadaver)")
        let python = try #require(findExecutable("python3"), "python3 drives cadaver through a pseudo-terminal")
        try await withGateway { server, client in
            let session = try CadaverSession(server: server, cadaver: cadaver, python: python)
            try session.writeLocal("good.txt", Data("the good draft\n".utf8))
            try session.writeLocal("empty.txt", Data())
            let first = try await session.run(["put good.txt \"Bericht 2026.txt\""])
            #expect(first["put good.txt \"Bericht 2026.txt\""]?.contains("succeeded") == true, "\(first)")
            #expect(try await client.uploadsDrained())
            // The editor's accident: an empty file saved over the good one.
            let second = try await session.run(["put empty.txt \"Bericht 2026.txt\""])
            #expect(second["put empty.txt \"Bericht 2026.txt\""]?.contains("succeeded") == true, "\(second)")
            #expect(try await client.uploadsDrained())
            #expect(try Data(contentsOf: server.upstream.appendingPathComponent("Bericht 2026.txt")).isEmpty)

            let listed = try await command(server, ["versions", "/files/Bericht 2026.txt"])
            #expect(listed.status == 0 && listed.output.contains("1    ") && listed.output.contains("15 bytes"), "\(listed.output)")
            let restored = try await command(server, ["restore", "/files/Bericht 2026.txt", "--version", "1"])
            #expect(restored.status == 0, "\(restored.output)")
            #expect(try await client.send("GET", "/files/Bericht%202026.txt").text == "the good draft\n")
            #expect(try await client.uploadsDrained())
            #expect(try String(contentsOf: server.upstream.appendingPathComponent("Bericht 2026.txt"), encoding: .utf8) == "the good draft\n")
            // The empty save is a version now, and the listing shows none of it.
            let again = try await command(server, ["versions", "/files/Bericht 2026.txt"])
            #expect(again.output.contains("1    ") && again.output.contains("2    ") && again.output.contains("Zero KB"), "\(again.output)")
            let root = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            #expect(!root.text.contains(".davgate"), "\(root.text)")
        }
    }

    @Test("the WebDAV view: PROPFIND lists versions newest first, GET reads one, COPY restores it elsewhere, DELETE removes it")
    func webdavView() async throws {
        try await withGateway { server, client in
            for text in ["one", "two", "three"] {
                #expect([201, 204].contains(try await client.send("PUT", "/files/f.txt", body: text).status))
                #expect(try await client.uploadsDrained())
            }
            let listing = try await client.send("PROPFIND", "/.davgate/versions/files/f.txt", headers: [("Depth", "1")])
            #expect(listing.status == 207, "\(listing.text)")
            let tree = try #require(XMLTree.parse(listing.text))
            let ids = tree.all("response").compactMap { $0.child("href")?.text }.filter { !$0.hasSuffix("/") }
                .compactMap { $0.split(separator: "/").last.map(String.init) }
            #expect(ids.count == 2, "\(listing.text)")
            let newest = try #require(ids.first), oldest = try #require(ids.last)
            #expect(try await client.send("GET", "/.davgate/versions/files/f.txt/\(newest)").text == "two")
            #expect(try await client.send("GET", "/.davgate/versions/files/f.txt/\(oldest)").text == "one")
            let copied = try await client.send("COPY", "/.davgate/versions/files/f.txt/\(oldest)",
                                               headers: [("Destination", "\(client.base)/files/f%20as%20it%20was.txt")])
            #expect(copied.status == 201, "\(copied.text)")
            #expect(try await client.send("GET", "/files/f%20as%20it%20was.txt").text == "one")
            #expect(try await client.send("DELETE", "/.davgate/versions/files/f.txt/\(oldest)").status == 204)
            #expect(try await client.send("GET", "/.davgate/versions/files/f.txt/\(oldest)").status == 404)
            #expect(try await client.send("GET", "/files/f.txt").text == "three")
        }
    }

    @Test("davgate in front of davgate: a DELETE through the front lands in the upstream davgate's trash, not in a second one")
    func chainedDeleteUsesTheUpstreamsTrash() async throws {
        let upstream = try await DavgateProcess()
        defer { upstream.cleanUp() }
        let chained = try await ChainedFront(upstream: upstream)
        defer { chained.cleanUp() }
        let front = chained.front
        try await withClient(front) { client async throws in
            #expect(try await client.send("PUT", "/chained/plan.txt", body: "the plan").status == 201)
            // Delivered by both: each trash keeps only what reached its upstream.
            #expect(try await client.uploadsDrained())
            #expect(try await uploadsDrained(upstream))
            #expect(try await client.send("DELETE", "/chained/plan.txt").status == 204)
            #expect(try await client.trashEntries("chained").isEmpty, "the front kept a trash of its own")
        }
        try await withClient(upstream) { client async throws in
            let entries = try await client.trashEntries("files")
            #expect(entries.map(\.location) == ["plan.txt"], "\(entries)")
        }
        #expect(!front.stderr.contains("the trash could not take it"), "\(front.stderr)")
    }

    @Test("a conflict copy is a version: the versions view lists and reads it, the browser listing and the status page link to it")
    func conflictCopyIsAVersion() async throws {
        try await withGateway { server, client in
            let copyHref = try await client.makeConflict(server, name: "plan.txt")
            let copyName = try #require(copyHref.removingPercentEncoding?.split(separator: "/").last.map(String.init))
            let listing = try await client.send("PROPFIND", "/.davgate/versions/files/plan.txt", headers: [("Depth", "1")])
            #expect(listing.status == 207 && listing.text.contains("conflict-copy") && listing.text.contains(copyHref), "\(listing.text)")
            let member = "/.davgate/versions/files/plan.txt/" + hrefSegment(copyName)
            #expect(try await client.send("GET", member).text == "ours v2", "the other side reads through the versions view")

            let browser = try await client.send("GET", "/files/", headers: [("Accept", "text/html")])
            #expect(browser.text.contains("class=\"other-side\" href=\"/.davgate/versions/files/plan.txt\""), "\(browser.text)")
            let status = try await client.send("GET", "/.davgate/status")
            #expect(status.text.contains("versions of plan.txt"), "\(status.text)")
            let printed = try await runDavgate(["versions", "/files/plan.txt", "--config", server.configFile.path, "--url", server.baseURL,
                                                "--password-stdin"], stdin: server.adminPassword + "\n")
            #expect(printed.status == 0 && printed.output.contains("conflict copy: \(copyName)"), "\(printed.output)")

            // Restored over the file, the other side wins; theirs becomes a version.
            let restored = try await client.send("COPY", member, headers: [("Destination", "\(client.base)/files/plan.txt")])
            #expect(restored.status == 204, "\(restored.text)")
            #expect(try await client.send("GET", "/files/plan.txt").text == "ours v2")
        }
    }

    @Test("a lock's owner restores a version onto the locked file, removes a locked conflict copy and restores from the trash into a locked folder with the token; without it 423, naming the lock's root in the tree the client used, and nothing changes")
    func lockTokensThroughTheViews() async throws {
        try await withGateway { server, client in
            let lockinfo = WriteCoordinationTests.lockinfo
            // A locked conflict copy: its lock's owner removes it with the
            // token. Made first, while the listing is fresh (a stale one lets
            // the second PUT see the upstream's change and replace it
            // knowingly, keeping it as a version: no conflict).
            let copyHref = try await client.makeConflict(server, name: "plan.txt")
            let copyName = try #require(copyHref.removingPercentEncoding?.split(separator: "/").last.map(String.init))
            let copyToken = try WriteCoordinationTests.token(try await client.send("LOCK", copyHref, body: lockinfo))
            let copyMember = "/.davgate/versions/files/plan.txt/" + hrefSegment(copyName)
            #expect(try await client.send("DELETE", copyMember).status == 423)
            #expect(try await client.send("GET", copyHref).status == 200, "a refused DELETE removed the copy")
            #expect(try await client.send("DELETE", copyMember, headers: [("If", "(<\(copyToken)>)")]).status == 204)
            #expect(try await client.send("GET", copyHref).status == 404)

            // A version restored onto a locked file.
            for text in ["one", "two"] {
                #expect([201, 204].contains(try await client.send("PUT", "/files/f.txt", body: text).status))
                #expect(try await client.uploadsDrained())
            }
            let listing = try await client.send("PROPFIND", "/.davgate/versions/files/f.txt", headers: [("Depth", "1")])
            let version = try #require(XMLTree.parse(listing.text)?.all("response").compactMap { $0.child("href")?.text }
                .first { !$0.hasSuffix("/") }?.split(separator: "/").last.map(String.init))
            let token = try WriteCoordinationTests.token(try await client.send("LOCK", "/files/f.txt", body: lockinfo))
            let member = "/.davgate/versions/files/f.txt/\(version)"
            let refused = try await client.send("COPY", member, headers: [("Destination", "\(client.base)/files/f.txt")])
            #expect(refused.status == 423 && refused.text.contains("<D:href>/files/f.txt</D:href>"), "\(refused.status) \(refused.text)")
            #expect(try await client.send("GET", "/files/f.txt").text == "two")
            let restored = try await client.send("COPY", member, headers: [("Destination", "\(client.base)/files/f.txt"), ("If", "(<\(token)>)")])
            #expect(restored.status == 204, "\(restored.text)")
            #expect(try await client.send("GET", "/files/f.txt").text == "one")
            // A stored version is no resource of the domain: an If sent with
            // its DELETE (the file's token, as a client holding it sends
            // with everything) is not judged at a made-up path.
            #expect(try await client.send("DELETE", member, headers: [("If", "(<\(token)>)")]).status == 204)

            // The same refusal through Nextcloud's tree names the root there.
            let mount = "/remote.php/dav/files/admin"
            let viaTree = try await client.send("PUT", "\(mount)/files/f.txt", body: "no token")
            #expect(viaTree.status == 423 && viaTree.text.contains("<D:href>\(mount)/files/f.txt</D:href>"), "\(viaTree.status) \(viaTree.text)")
            #expect(try await client.send("UNLOCK", "/files/f.txt", headers: [("Lock-Token", "<\(token)>")]).status == 204)

            // From the trash into a folder locked to depth infinity: neon's tagged If names the folder.
            #expect(try await client.send("MKCOL", "/files/dir").status == 201)
            #expect(try await client.send("PUT", "/files/dir/a.txt", body: "alpha").status == 201)
            #expect(try await client.uploadsDrained())
            #expect(try await client.send("DELETE", "/files/dir/a.txt").status == 204)
            let entry = try #require(try await client.trashEntries().first { $0.location == "dir/a.txt" }?.name)
            let folderToken = try WriteCoordinationTests.token(try await client.send("LOCK", "/files/dir/", headers: [("Depth", "infinity")], body: lockinfo))
            let back = [("Destination", "\(client.base)/.davgate/trash/files/restore/\(hrefSegment(entry))")]
            let held = try await client.send("MOVE", "/.davgate/trash/files/\(hrefSegment(entry))", headers: back)
            #expect(held.status == 423, "\(held.status) \(held.text)")
            #expect(try await client.send("GET", "/files/dir/a.txt").status == 404)
            let moved = try await client.send("MOVE", "/.davgate/trash/files/\(hrefSegment(entry))",
                                              headers: back + [("If", "<\(client.base)/files/dir/> (<\(folderToken)>)")])
            #expect(moved.status == 201, "\(moved.text)")
            #expect(try await client.send("GET", "/files/dir/a.txt").text == "alpha")
        }
    }
}
