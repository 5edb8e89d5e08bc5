import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real clients through HAProxy, one scenario each, with the helpers
/// their own suites use (RcloneTests, DavfsTests, CadaverTests): each of
/// their requests lands on the next instance, a lock taken on one and
/// honoured on another. Checked in the shared upstream folder, and in
/// each instance's access log that all three took part.
extension ClusterTests {
    @Test("rclone through HAProxy: sync a tree up, check both ways, change it and sync again, moveto, purge")
    func rclone() async throws {
        let rclone = try #require(debianRclone(), "rclone is not installed (apt-get install rclone)")
        try await withCluster { cluster, _ in
            let remote = try await RcloneRemote(server: cluster, rclone: rclone)
            let local = remote.home.appendingPathComponent("local")
            let upstream = cluster.upstream.appendingPathComponent("sync")
            try writeTree(at: local, [
                "docs/readme.txt": Data("first version\n".utf8),
                "Ordner ü/tief/Résumé 2026.bin": try randomData(300_000),
                "Ordner ü/Notizen.txt": Data("Grüße, ünïcödé 😀\n".utf8),
                "leer.txt": Data(),
                "top level.txt": Data("top\n".utf8),
            ])
            let firstSync = try await remote.run(["sync", local.path, "dg:sync"])
            #expect(firstSync.succeeded, "\(firstSync)")
            #expect(try await treeChecksums(upstream, remote.command) == treeChecksums(local, remote.command), "the upstream holds the synced tree")
            for (from, to) in [(local.path, "dg:sync"), ("dg:sync", local.path)] {
                let check = try await remote.run(["check", "--download", from, to])
                #expect(check.succeeded && check.output.contains("0 differences found") && check.output.contains("5 matching files"), "\(check)")
            }
            let again = try await remote.run(["sync", local.path, "dg:sync"])
            #expect(again.output.contains("There was nothing to transfer"), "every instance lists the sizes rclone sent: \(again)")

            try Data("second, longer version\n".utf8).write(to: local.appendingPathComponent("docs/readme.txt"))
            try FileManager.default.removeItem(at: local.appendingPathComponent("top level.txt"))
            try writeTree(at: local, ["neu/datei é.txt": Data("new\n".utf8)])
            let secondSync = try await remote.run(["sync", local.path, "dg:sync"])
            #expect(secondSync.succeeded && secondSync.output.contains("docs/readme.txt: Copied (replaced existing)")
                    && secondSync.output.contains("top level.txt: Deleted"), "\(secondSync)")
            #expect(try await treeChecksums(upstream, remote.command) == treeChecksums(local, remote.command))
            let checkBack = try await remote.run(["check", "--download", "dg:sync", local.path])
            #expect(checkBack.succeeded, "\(checkBack)")

            let notes = try Data(contentsOf: local.appendingPathComponent("Ordner ü/Notizen.txt"))
            let move = try await remote.run(["moveto", "dg:sync/Ordner ü/Notizen.txt", "dg:sync/docs/verschoben é.txt"])
            #expect(move.succeeded, "\(move)")
            #expect(!FileManager.default.fileExists(atPath: upstream.appendingPathComponent("Ordner ü/Notizen.txt").path), "the source is gone")
            #expect(try Data(contentsOf: upstream.appendingPathComponent("docs/verschoben é.txt")) == notes)
            let listing = try await remote.run(["lsf", "-R", "dg:sync"])
            #expect(Set(listing.stdout.split(separator: "\n").map(String.init)) == [
                "Ordner ü/", "Ordner ü/tief/", "Ordner ü/tief/Résumé 2026.bin", "docs/", "docs/readme.txt", "docs/verschoben é.txt",
                "leer.txt", "neu/", "neu/datei é.txt",
            ], "\(listing)")

            let purge = try await remote.run(["purge", "dg:sync"])
            #expect(purge.succeeded, "\(purge)")
            #expect(!FileManager.default.fileExists(atPath: upstream.path), "purge removed the upstream folder")
            Self.expectEveryInstanceServed(cluster, atLeast: 5)
        }
    }

    @Test("davfs2 through HAProxy: a 4 MiB file in and back, edit in place, rename, rsync -r, unmount, remount with an empty cache, diff -r")
    func davfs() async throws {
        let mountDavfs = try #require(findExecutable("mount.davfs"), "davfs2 is not installed (apt-get install davfs2)")
        let umount = try #require(findExecutable("umount"), "umount (mount) is missing")
        let rsync = try #require(findExecutable("rsync"), "rsync is not installed (apt-get install rsync)")
        let diff = try #require(findExecutable("diff"), "diff (diffutils) is missing")
        let cmp = try #require(findExecutable("cmp"), "cmp (diffutils) is missing")
        try #require(getuid() == 0, "mounting davfs2 needs root, as CI runs the tests")
        try #require(FileManager.default.fileExists(atPath: "/dev/fuse"), "mounting davfs2 needs /dev/fuse")
        try await withCluster { cluster, _ in
            let davfs = try DavfsMounter(server: cluster, mountDavfs: mountDavfs, umount: umount)
            let local = davfs.home.appendingPathComponent("local")
            let mount = try await davfs.mount(cache: "cache-1")
            try await davfs.unmounting(mount) {
                let big = try randomData(4 << 20)
                try writeTree(at: local, ["big.bin": big])
                try big.write(to: mount.appendingPathComponent("big.bin"))
                #expect(try Data(contentsOf: mount.appendingPathComponent("big.bin")) == big, "read back through the mount")
                try await davfs.expectUpstream(cluster, "big.bin", equals: local.appendingPathComponent("big.bin"))

                for file in [local, mount].map({ $0.appendingPathComponent("big.bin") }) {
                    let handle = try FileHandle(forUpdating: file)
                    try handle.seek(toOffset: 1_000_000)
                    try handle.write(contentsOf: Data("EDITED".utf8))
                    try handle.close()
                }
                try await davfs.expectUpstream(cluster, "big.bin", equals: local.appendingPathComponent("big.bin"))

                try FileManager.default.moveItem(at: mount.appendingPathComponent("big.bin"), to: mount.appendingPathComponent("Groß 2026.bin"))
                try await davfs.expectUpstream(cluster, "Groß 2026.bin", equals: local.appendingPathComponent("big.bin"))
                #expect(!FileManager.default.fileExists(atPath: cluster.upstream.appendingPathComponent("big.bin").path), "the old name is gone")

                try writeTree(at: local.appendingPathComponent("tree"), [
                    "a/f1.bin": try randomData(10_000), "a/b/tief.txt": Data("deep\n".utf8),
                    "Ordner ü/Résumé 2026.txt": Data("Grüße\n".utf8), "leer.txt": Data(),
                ])
                let synced = try await davfs.command.run(rsync, ["-r", local.appendingPathComponent("tree").path + "/", mount.appendingPathComponent("tree").path + "/"])
                #expect(synced.succeeded, "\(synced)")
                let expected = try await treeChecksums(local.appendingPathComponent("tree"), davfs.command)
                try await eventually("the upstream holds the rsynced tree") {
                    try await treeChecksums(cluster.upstream.appendingPathComponent("tree"), davfs.command) == expected
                }
                try await davfs.expectNothingLost(mount)
            }

            let again = try await davfs.mount(cache: "cache-2")
            try await davfs.unmounting(again) {
                let names = try FileManager.default.contentsOfDirectory(atPath: again.path).map(\.precomposedStringWithCanonicalMapping).sorted()
                #expect(names == ["Groß 2026.bin", "lost+found", "tree"].map(\.precomposedStringWithCanonicalMapping), "\(names)")
                let big = try await davfs.command.run(cmp, [local.appendingPathComponent("big.bin").path, again.appendingPathComponent("Groß 2026.bin").path])
                #expect(big.succeeded, "the edited file, read back through the cluster: \(big)")
                let compared = try await davfs.command.run(diff, ["-r", local.appendingPathComponent("tree").path, again.appendingPathComponent("tree").path])
                #expect(compared.succeeded, "diff -r of the remounted tree: \(compared)")
                try await davfs.expectNothingLost(again)
            }
            Self.expectEveryInstanceServed(cluster, atLeast: 5)
        }
    }

    @Test("cadaver through HAProxy: mkcol, put, get, move, propset/propget, lock, put under the lock, unlock; a second session without the token gets 423")
    func cadaver() async throws {
        let cadaver = try #require(findExecutable("cadaver"), "cadaver is not installed (apt-get install cadaver)")
        let python = try #require(findExecutable("python3"), "python3 drives cadaver through a pseudo-terminal")
        try await withCluster { cluster, _ in
            let session = try CadaverSession(server: cluster, cadaver: cadaver, python: python)
            let original = Data("Hello Résumé\nzweite Zeile, ünïcödé 😀\n".utf8)
            try session.writeLocal("Résumé 2026.txt", original)
            let edited = Data("edited under a lock\n".utf8)
            try session.writeLocal("edited.txt", edited)

            let first = try await session.run([
                "mkcol \"Ordner ü\"",
                "cd \"Ordner ü\"",
                "put \"Résumé 2026.txt\"",
                "ls",
                "get \"Résumé 2026.txt\" back.txt",
                "move \"Résumé 2026.txt\" \"Lebenslauf 2026.txt\"",
                "propset \"Lebenslauf 2026.txt\" farbe blau",
                "propget \"Lebenslauf 2026.txt\" farbe",
                "lock \"Lebenslauf 2026.txt\"",
                "put edited.txt \"Lebenslauf 2026.txt\"",
                "unlock \"Lebenslauf 2026.txt\"",
                "lock \"/files/Ordner ü/\"",
                "put \"Résumé 2026.txt\" \"unter Sperre.txt\"",
            ])
            #expect(!first.loginPrompted, "credentials come from .netrc")
            for command in ["mkcol \"Ordner ü\"", "get \"Résumé 2026.txt\" back.txt", "move \"Résumé 2026.txt\" \"Lebenslauf 2026.txt\"",
                            "propset \"Lebenslauf 2026.txt\" farbe blau", "lock \"Lebenslauf 2026.txt\"", "unlock \"Lebenslauf 2026.txt\"",
                            "lock \"/files/Ordner ü/\""] {
                #expect(first[command]?.contains("succeeded") == true, "\(command): \(first)")
            }
            for command in ["put \"Résumé 2026.txt\"", "put edited.txt \"Lebenslauf 2026.txt\"", "put \"Résumé 2026.txt\" \"unter Sperre.txt\""] {
                #expect(first[command]?.hasSuffix("succeeded.\n") == true, "\(command): \(first)")
            }
            #expect(first["ls"]?.contains("Résumé 2026.txt") == true, "\(first)")
            #expect(try session.readLocal("back.txt") == original, "get brings back exactly the bytes put")
            #expect(first["propget \"Lebenslauf 2026.txt\" farbe"]?.contains("Value of farbe is: blau") == true, "\(first)")

            let second = try await session.run([
                "cd \"Ordner ü\"",
                "put \"Résumé 2026.txt\" \"ohne Token.txt\"",
                "discover \"/files/Ordner ü/\"",
                "unlock \"/files/Ordner ü/\"",
                "put \"Résumé 2026.txt\" \"ohne Token.txt\"",
            ])
            let refused = second.outputs[1].output
            #expect(refused.contains("423") && !refused.contains("succeeded"), "a put without the token is refused as Locked: \(refused)")
            #expect(second["unlock \"/files/Ordner ü/\""]?.contains("succeeded") == true, "\(second)")
            #expect(second.outputs[4].output.hasSuffix("succeeded.\n"), "after unlock the put works: \(second)")

            let folder = cluster.upstream.appendingPathComponent("Ordner ü")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(Set(names.map { Array($0.utf8) }) == Set(["Lebenslauf 2026.txt", "unter Sperre.txt", "ohne Token.txt"]
                .map { Array($0.precomposedStringWithCanonicalMapping.utf8) }), "upstream: \(names)")
            #expect(try Data(contentsOf: folder.appendingPathComponent("Lebenslauf 2026.txt")) == edited)
            #expect(try Data(contentsOf: folder.appendingPathComponent("unter Sperre.txt")) == original)
            #expect(try Data(contentsOf: folder.appendingPathComponent("ohne Token.txt")) == original)
            Self.expectEveryInstanceServed(cluster, atLeast: 3)
        }
    }

    /// Each instance answered at least `count` of the client's requests: the
    /// balancer spread them, so the scenario crossed instances.
    static func expectEveryInstanceServed(_ cluster: DavgateCluster, atLeast count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        for index in DavgateCluster.names.indices {
            let served = cluster.requests(servedBy: index).count
            #expect(served >= count, "instance \(DavgateCluster.names[index]) answered \(served) requests", sourceLocation: sourceLocation)
        }
    }
}
