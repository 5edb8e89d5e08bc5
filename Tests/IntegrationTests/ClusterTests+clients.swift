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

    @Test("davfs2 through HAProxy: DavfsTests' mount with a 4 MiB file (in and back, edit in place, rename, remove, rsync -r, remount with an empty cache, diff -r)")
    func davfs() async throws {
        try await withCluster { cluster, _ in
            try await DavfsTests.scenario(on: cluster, size: 4 << 20)
            Self.expectEveryInstanceServed(cluster, atLeast: 5)
        }
    }

    @Test("cadaver through HAProxy: CadaverTests' session (mkcol, put, get, move, copy, properties, locks; a second session without the token gets 423), every step possibly on another instance")
    func cadaver() async throws {
        try await withCluster { cluster, clients in
            try await CadaverTests.scenario(on: cluster, client: clients.proxy)
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
