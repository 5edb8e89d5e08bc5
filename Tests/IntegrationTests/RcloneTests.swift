import DavgateTestSupport
import Foundation
import Testing

/// rclone's webdav backend (vendor `other`), the real client, against the
/// real davgate over TLS. rclone trusts davgate's own certificate as its CA
/// and reads its remote from environment variables with an obscured password,
/// so nothing outside the test's folder is read or written. Each step is
/// checked in rclone's own report and in the upstream folder's checksums.
@Suite("rclone against davgate over TLS")
struct RcloneTests {
    @Test("rclone: sync up a nested tree, check both ways, change and sync again, moveto, purge")
    func rcloneSession() async throws {
        let rclone = try #require(debianRclone(), "rclone is not installed (apt-get install rclone)")
        try await withGateway { server, _ in
            let remote = try await RcloneRemote(server: server, rclone: rclone)
            let local = remote.home.appendingPathComponent("local")
            let upstream = server.upstream.appendingPathComponent("sync")
            try writeTree(at: local, [
                "docs/readme.txt": Data("first version\n".utf8),
                "Ordner ü/tief/Résumé 2026.bin": try randomData(300_000),
                "Ordner ü/Notizen mit Leerzeichen.txt": Data("Grüße, ünïcödé 😀\n".utf8),
                "leer.txt": Data(),
                "top level.txt": Data("top\n".utf8),
                "Ordner ü/50% off #1, ok & más+.txt": Data("percent, hash, comma, ampersand, plus\n".utf8),
            ])

            let firstSync = try await remote.run(["sync", local.path, "dg:sync"])
            #expect(firstSync.succeeded, "\(firstSync)")
            #expect(try await uploadsDrained(server), "the journal delivered the sync")
            #expect(try await treeChecksums(upstream, remote.command) == treeChecksums(local, remote.command),
                    "the upstream holds exactly the synced tree")
            for (from, to) in [(local.path, "dg:sync"), ("dg:sync", local.path)] {
                let check = try await remote.run(["check", "--download", from, to])
                #expect(check.succeeded, "\(check)")
                #expect(check.output.contains("0 differences found"), "\(check)")
                #expect(check.output.contains("6 matching files"), "\(check)")
            }
            let again = try await remote.run(["sync", local.path, "dg:sync"])
            #expect(again.output.contains("There was nothing to transfer"), "sizes in PROPFIND match: \(again)")

            // A change of size (vendor `other` has no modification times or hashes,
            // so rclone compares sizes), a deletion and a new folder.
            try Data("second, longer version\n".utf8).write(to: local.appendingPathComponent("docs/readme.txt"))
            try FileManager.default.removeItem(at: local.appendingPathComponent("top level.txt"))
            try writeTree(at: local, ["neu/unter neu/datei é.txt": Data("new\n".utf8)])
            let stale = try await remote.run(["check", "--download", local.path, "dg:sync"])
            #expect(stale.status == 1 && stale.output.contains("3 differences found"), "check sees the changes: \(stale)")
            let secondSync = try await remote.run(["sync", local.path, "dg:sync"])
            #expect(secondSync.succeeded, "\(secondSync)")
            #expect(secondSync.output.contains("docs/readme.txt: Copied (replaced existing)"), "\(secondSync)")
            #expect(secondSync.output.contains("top level.txt: Deleted"), "\(secondSync)")
            #expect(try await uploadsDrained(server), "the journal delivered the sync")
            #expect(try await treeChecksums(upstream, remote.command) == treeChecksums(local, remote.command))
            let checkBack = try await remote.run(["check", "--download", "dg:sync", local.path])
            #expect(checkBack.succeeded, "\(checkBack)")

            // moveto renames on the server (MOVE, Overwrite: F) into another folder.
            let notes = try Data(contentsOf: local.appendingPathComponent("Ordner ü/Notizen mit Leerzeichen.txt"))
            let move = try await remote.run(["moveto", "dg:sync/Ordner ü/Notizen mit Leerzeichen.txt", "dg:sync/docs/verschoben é.txt"])
            #expect(move.succeeded, "\(move)")
            #expect(try await uploadsDrained(server), "the journal delivered the sync")
            let moved = try await treeChecksums(upstream, remote.command)
            #expect(moved["Ordner ü/Notizen mit Leerzeichen.txt"] == nil, "the source is gone: \(moved.keys.sorted())")
            #expect(try Data(contentsOf: upstream.appendingPathComponent("docs/verschoben é.txt")) == notes)
            let listing = try await remote.run(["lsf", "-R", "dg:sync"])
            #expect(listing.succeeded, "\(listing)")
            #expect(Set(listing.stdout.split(separator: "\n").map(String.init)) == Set([
                "Ordner ü/", "Ordner ü/50% off #1, ok & más+.txt", "Ordner ü/tief/", "Ordner ü/tief/Résumé 2026.bin", "docs/", "docs/readme.txt",
                "docs/verschoben é.txt", "leer.txt", "neu/", "neu/unter neu/", "neu/unter neu/datei é.txt",
            ]), "\(listing)")

            // purge removes the whole tree, on the server too.
            let purge = try await remote.run(["purge", "dg:sync"])
            #expect(purge.succeeded, "\(purge)")
            #expect(!FileManager.default.fileExists(atPath: upstream.path), "purge removed the upstream folder")
            let top = try await remote.run(["lsf", "dg:"])
            #expect(top.succeeded && !top.stdout.contains("sync"), "\(top)")
        }
    }
}

extension RcloneTests {
    /// Vendor `nextcloud`: rclone then hashes with SHA-1 only, which davgate
    /// reports; with vendor `owncloud` rclone picks MD5 first, which it does not.
    @Test("rclone, vendor nextcloud: modification times kept (X-OC-Mtime) and SHA-1 checksums (oc:checksums) make sync exact")
    func rcloneOwnCloud() async throws {
        let rclone = try #require(debianRclone(), "rclone is not installed (apt-get install rclone)")
        try await withGateway { server, _ in
            let remote = try await RcloneRemote(server: server, rclone: rclone, vendor: "nextcloud")
            let local = remote.home.appendingPathComponent("local")
            let upstream = server.upstream.appendingPathComponent("oc")
            try writeTree(at: local, [
                "Ordner ü/bericht.txt": Data("version one\n".utf8),
                "bild.bin": try randomData(200_000),
            ])
            let then = Date(timeIntervalSince1970: 1_600_000_000)
            for name in ["Ordner ü/bericht.txt", "bild.bin"] {
                try FileManager.default.setAttributes([.modificationDate: then], ofItemAtPath: local.appendingPathComponent(name).path)
            }
            let copy = try await remote.run(["copy", local.path, "dg:oc"])
            #expect(copy.succeeded, "\(copy)")
            #expect(try await uploadsDrained(server), "the journal delivered the copy")
            for name in ["Ordner ü/bericht.txt", "bild.bin"] {
                let kept = try FileManager.default.attributesOfItem(atPath: upstream.appendingPathComponent(name).path)[.modificationDate] as? Date
                #expect(kept.map { abs($0.timeIntervalSince(then)) < 1 } == true, "\(name) upstream keeps the client's mtime: \(String(describing: kept))")
            }

            // rclone reads the SHA-1 from oc:checksums: no download needed to compare.
            let sums = try await remote.run(["sha1sum", "dg:oc"])
            #expect(sums.succeeded, "\(sums)")
            let local1 = try await remote.command.run("/usr/bin/sha1sum", [local.appendingPathComponent("bild.bin").path])
            let expected = String(local1.stdout.prefix(40))
            #expect(sums.stdout.contains("\(expected)  bild.bin"), "\(sums.stdout) vs \(expected)")
            let check = try await remote.run(["check", local.path, "dg:oc"])
            #expect(check.succeeded && check.output.contains("0 differences found"), "\(check)")
            #expect(!check.output.contains("could not be checked"), "compared by SHA-1: \(check)")

            // The same size, another content and mtime: found by mtime, compared by hash, uploaded.
            try Data("version two\n".utf8).write(to: local.appendingPathComponent("Ordner ü/bericht.txt"))
            let sync = try await remote.run(["sync", local.path, "dg:oc"])
            #expect(sync.succeeded && sync.output.contains("bericht.txt: Copied (replaced existing)"), "\(sync)")
            #expect(try await uploadsDrained(server), "the journal delivered the sync")
            #expect(try Data(contentsOf: upstream.appendingPathComponent("Ordner ü/bericht.txt")) == Data("version two\n".utf8))
        }
    }
}
