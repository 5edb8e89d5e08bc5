import DavgateTestSupport
import Foundation
import Testing

/// Issue 17's trash through the real server: a DELETE (from curl-like
/// requests and from `rm -rf` in a davfs2 mount) moves into the domain's
/// trash upstream; `/.davgate/trash/DOMAIN/` lists, restores and purges in
/// Nextcloud's shape; `davgate trash` does the same from the command line;
/// the trash survives a lost index; nobody sees it in ordinary listings or
/// in a domain they may not use.
@Suite("trash over real TLS")
struct TrashViewTests {
    private func trashCommand(_ server: DavgateProcess, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await runDavgate(["trash"] + arguments + ["--config", server.configFile.path, "--url", server.baseURL, "--password-stdin"],
                             stdin: server.adminPassword + "\n")
    }

    @Test("DELETE keeps the item in the trash; the view lists, restores (where it was, or elsewhere) and purges; the trash folder is hidden and refused")
    func viewRestoreAndPurge() async throws {
        try await withGateway { server, client in
            #expect(try await client.send("PUT", "/files/a.txt", body: "alpha").status == 201)
            #expect(try await client.send("MKCOL", "/files/dir").status == 201)
            #expect(try await client.send("PUT", "/files/dir/b%20b.txt", body: "beta").status == 201)
            // Write-back: the trash keeps what reached the upstream.
            #expect(try await client.uploadsDrained())
            #expect(try await client.send("DELETE", "/files/a.txt").status == 204)
            #expect(try await client.send("DELETE", "/files/dir/").status == 204)
            #expect(try server.upstreamNames().isEmpty)

            let listed = try await client.trashEntries()
            #expect(listed.map(\.location) == ["dir", "a.txt"], "newest first: \(listed)")
            let root = try await client.send("PROPFIND", "/files/", headers: [("Depth", "1")])
            #expect(root.status == 207 && !root.text.contains("/files/.davgate/"), "the trash folder shows in a listing: \(root.text)")
            #expect(try await client.send("GET", "/files/.davgate/").status == 404)
            for (method, path, body) in [("MKCOL", "/files/.davgate", nil), ("PUT", "/files/.davgate/x.txt", "x"),
                                         ("MKCOL", "/files/.davgate/sub", nil)] as [(String, String, String?)] {
                let refused = try await client.send(method, path, body: body)
                #expect(refused.status == 403 && refused.text.contains("name-reserved"), "\(method) \(path): \(refused.status) \(refused.text)")
            }
            #expect(try await client.send("PUT", "/files/c.txt", body: "c").status == 201)
            let copied = try await client.send("COPY", "/files/c.txt", headers: [("Destination", "\(client.base)/files/.davgate")])
            #expect(copied.status == 403 && copied.text.contains("name-reserved"), "\(copied.text)")

            // Restore the folder where it was, the file somewhere else.
            let dir = try #require(listed.first { $0.location == "dir" })
            let restored = try await client.send("MOVE", "/.davgate/trash/files/\(dir.name)",
                                                 headers: [("Destination", "\(client.base)/.davgate/trash/files/restore/\(dir.name)")])
            #expect(restored.status == 201, "\(restored.text)")
            #expect(try await client.send("GET", "/files/dir/b%20b.txt").text == "beta")
            let a = try #require(listed.first { $0.location == "a.txt" })
            #expect(try await client.send("MOVE", "/.davgate/trash/files/\(a.name)", headers: [("Destination", "\(client.base)/files/dir/a-again.txt")]).status == 201)
            #expect(try await client.send("GET", "/files/dir/a-again.txt").text == "alpha")
            #expect(try await client.trashEntries().isEmpty)

            // A restore never replaces: the place is taken, 412, the entry stays.
            #expect(try await client.send("DELETE", "/files/dir/a-again.txt").status == 204)
            #expect(try await client.send("PUT", "/files/dir/a-again.txt", body: "newer").status == 201)
            #expect(try await client.uploadsDrained())
            let again = try #require(try await client.trashEntries().first)
            let taken = try await client.send("MOVE", "/.davgate/trash/files/\(again.name)",
                                              headers: [("Destination", "\(client.base)/.davgate/trash/files/restore/\(again.name)")])
            #expect(taken.status == 412, "\(taken.text)")
            #expect(try await client.send("GET", "/files/dir/a-again.txt").text == "newer")
            #expect(try await client.send("DELETE", "/.davgate/trash/files/\(again.name)").status == 204)
            #expect(try await client.send("DELETE", "/.davgate/trash/files/\(again.name)").status == 404)
            #expect(try await client.trashEntries().isEmpty)
            let trashFolder = server.upstream.appendingPathComponent(".davgate/trash")
            #expect(try FileManager.default.contentsOfDirectory(atPath: trashFolder.path).isEmpty, "purged upstream, sidecars too")
        }
    }

    @Test("a user sees only the trash of domains they may use, and a read-only user cannot restore or purge")
    func access() async throws {
        try await withGateway(extraDomain: DomainAccessTests.teamDomain) { server, admin in
            try await server.addUser("alice", password: "alice-pw")
            try await server.addUser("bob", password: "bob-pw")
            try await server.addUser("carol", password: "carol-pw")
            var entry = ""
            try await withClient(server, user: "alice", password: "alice-pw") { alice async throws in
                #expect(try await alice.send("PUT", "/team/plan.txt", body: "plan").status == 201)
                #expect(try await alice.uploadsDrained())
                #expect(try await alice.send("DELETE", "/team/plan.txt").status == 204)
                entry = try #require(try await alice.trashEntries("team").first).name
            }
            try await withClient(server, user: "bob", password: "bob-pw") { bob async throws in
                #expect(try await bob.trashEntries("team").map(\.location) == ["plan.txt"])
                #expect(try await bob.send("DELETE", "/.davgate/trash/team/\(entry)").status == 403)
                #expect(try await bob.send("MOVE", "/.davgate/trash/team/\(entry)", headers: [("Destination", "\(bob.base)/team/plan.txt")]).status == 403)
            }
            try await withClient(server, user: "carol", password: "carol-pw") { carol async throws in
                #expect(try await carol.send("PROPFIND", "/.davgate/trash/team/", headers: [("Depth", "1")]).status == 404)
            }
            #expect(try await admin.send("PROPFIND", "/.davgate/trash/team/", headers: [("Depth", "1")]).status == 404, "admin is not a user of team")
            #expect(try await admin.trashEntries("files").isEmpty, "one domain's deletions are not in another's trash")
        }
    }

    @Test("davgate trash list, restore and empty; the trash is read back from the upstream after the index is lost")
    func commandLineAndLostIndex() async throws {
        let server = try await DavgateProcess()
        defer { server.cleanUp() }
        try await withClient(server) { client async throws in
            #expect(try await client.send("PUT", "/files/keep.txt", body: "keep me").status == 201)
            #expect(try await client.send("PUT", "/files/drop.txt", body: "drop me").status == 201)
            #expect(try await client.uploadsDrained())
            #expect(try await client.send("DELETE", "/files/keep.txt").status == 204)
            #expect(try await client.send("DELETE", "/files/drop.txt").status == 204)
        }
        let listed = try await trashCommand(server, ["list", "files"])
        #expect(listed.status == 0 && listed.output.contains("/keep.txt") && listed.output.contains("/drop.txt"), "\(listed.output)")
        #expect(listed.output.contains("by admin"), "\(listed.output)")

        // The gateway's index and cache are lost; the upstream keeps the trash.
        server.stop()
        for name in try FileManager.default.contentsOfDirectory(atPath: server.state.path) where name.hasPrefix("index.sqlite") || name == "cache" {
            try FileManager.default.removeItem(at: server.state.appendingPathComponent(name))
        }
        let second = try await DavgateProcess(reuse: server.root)
        defer { second.stop() }
        try await withClient(second) { client async throws in
            let found = try await client.trashEntries()
            #expect(Set(found.map(\.location)) == ["keep.txt", "drop.txt"], "\(found)")
            let keep = try #require(found.first { $0.location == "keep.txt" })
            let restored = try await trashCommand(second, ["restore", "files", keep.name])
            #expect(restored.status == 0, "\(restored.output)")
            #expect(try await client.send("GET", "/files/keep.txt").text == "keep me")
            let emptied = try await trashCommand(second, ["empty", "files"])
            #expect(emptied.status == 0, "\(emptied.output)")
            #expect(try await client.trashEntries().isEmpty)
        }
        #expect(try second.upstreamNames() == ["keep.txt"])
    }

    @Test("rm -rf in a davfs2 mount, then davgate trash restore --all: diff -r finds the tree as it was")
    func davfsRemoveAndRestore() async throws {
        let mountDavfs = try #require(findExecutable("mount.davfs"), "davfs2 is not installed (apt-get install davfs2)")
        let umount = try #require(findExecutable("umount"), "umount (mount) is missing")
        let cp = try #require(findExecutable("cp"), "cp (coreutils) is missing")
        let rm = try #require(findExecutable("rm"), "rm (coreutils) is missing")
        let diff = try #require(findExecutable("diff"), "diff (diffutils) is missing")
        try #require(getuid() == 0, "mounting davfs2 needs root, as CI runs the tests")
        try #require(FileManager.default.fileExists(atPath: "/dev/fuse"), "mounting davfs2 needs /dev/fuse")
        try await withGateway { server, _ in
            let davfs = try DavfsMounter(server: server, mountDavfs: mountDavfs, umount: umount)
            let local = davfs.home.appendingPathComponent("local")
            try writeTree(at: local.appendingPathComponent("Projekt"), [
                "a/f1.bin": try randomData(10_000), "a/f2.bin": try randomData(300_000), "a/b/c/tief.txt": Data("deep\n".utf8),
                "Ordner ü/Résumé 2026.txt": Data("Grüße\n".utf8), "leer.txt": Data(), "a/b/leer/.keep": Data(),
            ])
            let mount = try await davfs.mount(cache: "cache-1")
            try await davfs.unmounting(mount) {
                let copied = try await davfs.command.run(cp, ["-r", local.appendingPathComponent("Projekt").path, mount.path + "/"])
                #expect(copied.succeeded, "\(copied)")
                let expected = try await treeChecksums(local.appendingPathComponent("Projekt"), davfs.command)
                try await eventually("the upstream holds the copied tree") {
                    try await treeChecksums(server.upstream.appendingPathComponent("Projekt"), davfs.command) == expected
                }
                let removed = try await davfs.command.run(rm, ["-rf", mount.appendingPathComponent("Projekt").path])
                #expect(removed.succeeded, "\(removed)")
                try await eventually("rm -rf reaches the upstream") {
                    !FileManager.default.fileExists(atPath: server.upstream.appendingPathComponent("Projekt").path)
                }
                let names = try FileManager.default.contentsOfDirectory(atPath: mount.path).filter { $0 != "lost+found" }
                #expect(names.isEmpty, "the mount shows the trash folder or leftovers: \(names)")
            }
            let restored = try await trashCommand(server, ["restore", "files", "--all"])
            #expect(restored.status == 0, "\(restored.output)")
            let compared = try await davfs.command.run(diff, ["-r", local.appendingPathComponent("Projekt").path,
                                                              server.upstream.appendingPathComponent("Projekt").path])
            #expect(compared.succeeded, "diff -r of the restored tree: \(compared)")
            // And through davgate, with an empty davfs2 cache.
            let again = try await davfs.mount(cache: "cache-2")
            try await davfs.unmounting(again) {
                let through = try await davfs.command.run(diff, ["-r", local.appendingPathComponent("Projekt").path, again.appendingPathComponent("Projekt").path])
                #expect(through.succeeded, "diff -r through davgate: \(through)")
            }
            #expect(try await trashCommand(server, ["list", "files"]).output.contains("is empty"))
        }
    }
}
