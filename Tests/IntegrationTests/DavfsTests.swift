import DavgateTestSupport
import Foundation
import Testing

/// davfs2, the real client, mounted through FUSE on the real davgate over
/// TLS (the tests run as root, as CI does). What the user does in the mount
/// is checked in the upstream folder's checksums after every step, and the
/// whole tree is read back through a second mount with an empty cache, so
/// neither davfs2's cache nor davgate's can hide a lost or stale byte.
@Suite("davfs2 against davgate over TLS")
struct DavfsTests {
    @Test("davfs2: 50 MiB in and back, edit in place, rename, remove, rsync -r, unmount, remount with an empty cache, diff -r")
    func davfsMount() async throws {
        try await withGateway { server, _ in try await Self.scenario(on: server, size: 50 << 20) }
    }

    /// What a user does in a davfs2 mount, checked in the upstream folder
    /// and through a second mount with an empty cache: against one davgate
    /// here, and through HAProxy in front of three (ClusterTests). `size`:
    /// the big file's, copied in, edited in place and renamed.
    static func scenario(on server: some GatewayEndpoint, size: Int) async throws {
        let mountDavfs = try #require(findExecutable("mount.davfs"), "davfs2 is not installed (apt-get install davfs2)")
        let umount = try #require(findExecutable("umount"), "umount (mount) is missing")
        let rsync = try #require(findExecutable("rsync"), "rsync is not installed (apt-get install rsync)")
        let diff = try #require(findExecutable("diff"), "diff (diffutils) is missing")
        let cp = try #require(findExecutable("cp"), "cp (coreutils) is missing")
        let cmp = try #require(findExecutable("cmp"), "cmp (diffutils) is missing")
        try #require(getuid() == 0, "mounting davfs2 needs root, as CI runs the tests")
        try #require(FileManager.default.fileExists(atPath: "/dev/fuse"), "mounting davfs2 needs /dev/fuse")
        let davfs = try DavfsMounter(server: server, mountDavfs: mountDavfs, umount: umount)
        let local = davfs.home.appendingPathComponent("local")
        let mount = try await davfs.mount(cache: "cache-1")
        try await davfs.unmounting(mount) {
            // The big file in one copy, read back through the mount, identical upstream.
            let big = try randomData(size)
            try writeTree(at: local, ["big.bin": big])
            let copied = try await davfs.command.run(cp, [local.appendingPathComponent("big.bin").path, mount.appendingPathComponent("big.bin").path])
            #expect(copied.succeeded, "\(copied)")
            #expect(try Data(contentsOf: mount.appendingPathComponent("big.bin")) == big, "read back through the mount")
            try await davfs.expectUpstream(server, "big.bin", equals: local.appendingPathComponent("big.bin"))

            // Edit in place: overwrite six bytes at 1 MB in the open file.
            for file in [local, mount].map({ $0.appendingPathComponent("big.bin") }) {
                let handle = try FileHandle(forUpdating: file)
                try handle.seek(toOffset: 1_000_000)
                try handle.write(contentsOf: Data("EDITED".utf8))
                try handle.close()
            }
            try await davfs.expectUpstream(server, "big.bin", equals: local.appendingPathComponent("big.bin"))

            // Rename (into a name with a space and an accent).
            try FileManager.default.moveItem(at: mount.appendingPathComponent("big.bin"), to: mount.appendingPathComponent("Groß 2026.bin"))
            try await davfs.expectUpstream(server, "Groß 2026.bin", equals: local.appendingPathComponent("big.bin"))
            #expect(!FileManager.default.fileExists(atPath: server.upstream.appendingPathComponent("big.bin").path), "the old name is gone")

            // Remove a file once it has reached the upstream.
            try Data("short-lived\n".utf8).write(to: mount.appendingPathComponent("weg damit.txt"))
            let doomed = server.upstream.appendingPathComponent("weg damit.txt")
            try await eventually("the new file reaches the upstream") { FileManager.default.fileExists(atPath: doomed.path) }
            try FileManager.default.removeItem(at: mount.appendingPathComponent("weg damit.txt"))
            try await eventually("the removed file leaves the upstream") { !FileManager.default.fileExists(atPath: doomed.path) }

            // rsync -r of a nested tree (temporary names, then renames).
            try writeTree(at: local.appendingPathComponent("tree"), [
                "a/f1.bin": try randomData(10_000), "a/f2.bin": try randomData(200_000), "a/b/c/tief.txt": Data("deep\n".utf8),
                "Ordner ü/Résumé 2026.txt": Data("Grüße\n".utf8), "leer.txt": Data(),
                "Ordner ü/50% off #1, ok & más+.txt": Data("percent, hash, comma, ampersand, plus\n".utf8),
            ])
            let synced = try await davfs.command.run(rsync, ["-r", local.appendingPathComponent("tree").path + "/", mount.appendingPathComponent("tree").path + "/"])
            #expect(synced.succeeded, "\(synced)")
            let expected = try await treeChecksums(local.appendingPathComponent("tree"), davfs.command)
            try await eventually("the upstream holds the rsynced tree") {
                try await treeChecksums(server.upstream.appendingPathComponent("tree"), davfs.command) == expected
            }
            try await davfs.expectNothingLost(mount)
        }

        // A second mount with an empty cache reads everything from davgate.
        let again = try await davfs.mount(cache: "cache-2")
        try await davfs.unmounting(again) {
            let names = try FileManager.default.contentsOfDirectory(atPath: again.path).map(\.precomposedStringWithCanonicalMapping).sorted()
            #expect(names == ["Groß 2026.bin", "lost+found", "tree"].map(\.precomposedStringWithCanonicalMapping), "\(names)")
            let big = try await davfs.command.run(cmp, [local.appendingPathComponent("big.bin").path, again.appendingPathComponent("Groß 2026.bin").path])
            #expect(big.succeeded, "the edited file, read back through davgate: \(big)")
            let compared = try await davfs.command.run(diff, ["-r", local.appendingPathComponent("tree").path, again.appendingPathComponent("tree").path])
            #expect(compared.succeeded, "diff -r of the remounted tree: \(compared)")
            try await davfs.expectNothingLost(again)
        }
    }
}

extension DavfsMounter {
    /// Waits until the upstream file `name` has the checksum of `file`.
    func expectUpstream(_ server: some GatewayEndpoint, _ name: String, equals file: URL,
                        sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let want = try #require(try await checksum(of: file, command))
        let upstream = server.upstream.appendingPathComponent(name.precomposedStringWithCanonicalMapping)
        try await eventually("upstream \(name) has the checksum of \(file.lastPathComponent)", sourceLocation: sourceLocation) {
            try await checksum(of: upstream, command) == want
        }
    }
}
