import DavgateTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real clients (rclone as a WebDAV client, davfs2, cadaver) against
/// davgate's domain `s3`, whose upstream is a real S3 server's bucket. Each
/// scenario ends by reading the bucket through the S3 server itself, not
/// through davgate: the exact set of keys (folder markers included, the
/// deleted and moved-away names absent), every object's bytes, no multipart
/// upload left open; and then the same tree and bytes through davgate.
@Suite("Real clients on an S3 domain")
struct S3ClientTests {
    @Test("rclone (WebDAV): copy up a tree with nested, empty and unicode folders and a 6 MiB file in parts; sync a change, a deletion and a new folder; moveto; purge",
          arguments: S3ServerKind.allCases)
    func rcloneOnS3(kind: S3ServerKind) async throws {
        let rclone = try #require(debianRclone(), "rclone is not installed (apt-get install rclone)")
        // Parts from 5 MiB on: the 6 MiB file goes up as a multipart upload.
        try await withS3Gateway(kind, extraDomain: "multipart_threshold = \"5 MiB\"") { g in
            let remote = try await RcloneRemote(server: g.gateway, rclone: rclone, domain: "s3")
            let local = remote.home.appendingPathComponent("local")
            var tree: [String: Data] = [
                "docs/readme.txt": Data("first version\n".utf8),
                "Ordner ü/tief/Résumé 2026.bin": try randomData(300_000),
                "Ordner ü/Notizen mit Leerzeichen.txt": Data("Grüße, ünïcödé 😀\n".utf8),
                "Ordner ü/50% off #1, ok & más+.txt": Data("percent, hash, comma, ampersand, plus\n".utf8),
                "groß 6 MiB.bin": try randomData(6 << 20 | 4321),
                "leer.txt": Data(),
                "top level.txt": Data("top\n".utf8),
            ]
            try writeTree(at: local, tree)
            try FileManager.default.createDirectory(at: local.appendingPathComponent("leerer Ordner"), withIntermediateDirectories: true)
            /// The bucket as `tree` under `tree/` makes it: rclone makes every
            /// folder with MKCOL, so each has its marker, the empty one too.
            func bucket(folders: [String]) -> [String: Data] {
                var keys = Dictionary(uniqueKeysWithValues: tree.map { ("tree/" + $0.key, $0.value) })
                for folder in ["tree"] + folders.map({ "tree/" + $0 }) { keys[g.marker(folder)] = Data() }
                return keys
            }

            let copy = try await remote.run(["copy", "--create-empty-src-dirs", local.path, "dg:tree"])
            #expect(copy.succeeded, "\(copy)")
            #expect(try await g.client.uploadsDrained(), "the journal delivered the copy")
            try await g.expectBucket(holds: bucket(folders: ["docs", "Ordner ü", "Ordner ü/tief", "leerer Ordner"]))

            // A change of size, a deletion and a new nested folder, by sync.
            tree["docs/readme.txt"] = Data("second, longer version\n".utf8)
            tree["top level.txt"] = nil
            tree["neu/unter neu/datei é.txt"] = Data("new\n".utf8)
            try FileManager.default.removeItem(at: local.appendingPathComponent("top level.txt"))
            try writeTree(at: local, tree.filter { $0.key.hasPrefix("docs/") || $0.key.hasPrefix("neu/") })
            let sync = try await remote.run(["sync", "--create-empty-src-dirs", local.path, "dg:tree"])
            #expect(sync.succeeded, "\(sync)")
            #expect(sync.output.contains("docs/readme.txt: Copied (replaced existing)"), "\(sync)")
            #expect(sync.output.contains("top level.txt: Deleted"), "\(sync)")
            #expect(try await g.client.uploadsDrained(), "the journal delivered the sync")
            let check = try await remote.run(["check", "--download", local.path, "dg:tree"])
            #expect(check.succeeded && check.output.contains("0 differences found") && check.output.contains("7 matching files"), "\(check)")
            try await g.expectBucket(holds: bucket(folders: ["docs", "Ordner ü", "Ordner ü/tief", "leerer Ordner", "neu", "neu/unter neu"]))

            // moveto (MOVE, Overwrite: F) into another folder: the source key
            // goes, and `docs`, now empty, keeps its marker.
            let moveto = try await remote.run(["moveto", "dg:tree/docs/readme.txt", "dg:tree/Ordner ü/tief/readme verschoben.txt"])
            #expect(moveto.succeeded, "\(moveto)")
            tree["Ordner ü/tief/readme verschoben.txt"] = tree.removeValue(forKey: "docs/readme.txt")
            #expect(try await g.client.uploadsDrained(), "the journal delivered the move")
            try await g.expectBucket(holds: bucket(folders: ["docs", "Ordner ü", "Ordner ü/tief", "leerer Ordner", "neu", "neu/unter neu"]))

            // purge: every key goes, markers too.
            let purge = try await remote.run(["purge", "dg:tree"])
            #expect(purge.succeeded, "\(purge)")
            #expect(try await g.client.uploadsDrained(), "the journal delivered the purge")
            try await g.expectBucket(holds: [:])
        }
    }

    /// rclone sends a MKCOL for every parent of every file it uploads, four
    /// uploads at a time, so MKCOLs of one folder race each other; on S3
    /// the folder's marker takes a round trip, which widens the race.
    @Test("MKCOLs of one folder at once, as rclone's parallel uploads send them: one 201, the others 405, one marker")
    func racingMKCOLs() async throws {
        try await withS3Gateway(.moto) { g in
            func atOnce(_ method: String, _ path: String, headers: [(String, String)] = []) async throws -> [Int] {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 { group.addTask { try await g.client.send(method, path, headers: headers).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // Eight connections open first, so that the MKCOLs leave together.
            _ = try await atOnce("PROPFIND", "/s3/", headers: [("Depth", "0")])
            let statuses = try await atOnce("MKCOL", "/s3/Ordner%20%C3%BC/")
            #expect(statuses.sorted() == [201] + Array(repeating: 405, count: 7),
                    "RFC 4918 section 9.3.1: MKCOL on an existing collection is 405 Method Not Allowed: \(statuses.sorted())")
            try await g.expectBucket(holds: [g.marker("Ordner ü"): Data()])
        }
    }

    @Test("davfs2: mkdir, write, edit in place and appended, rename a file across folders and a folder, remove, unmount",
          arguments: S3ServerKind.allCases)
    func davfsOnS3(kind: S3ServerKind) async throws {
        let mountDavfs = try #require(findExecutable("mount.davfs"), "davfs2 is not installed (apt-get install davfs2)")
        let umount = try #require(findExecutable("umount"), "umount (mount) is missing")
        try #require(getuid() == 0, "mounting davfs2 needs root, as CI runs the tests")
        try #require(FileManager.default.fileExists(atPath: "/dev/fuse"), "mounting davfs2 needs /dev/fuse")
        try await withS3Gateway(kind) { g in
            let davfs = try DavfsMounter(server: g.gateway, mountDavfs: mountDavfs, umount: umount, domain: "s3")
            var data = try randomData(1 << 20 | 77)
            var notes = Data("erste Zeile\n".utf8)
            let renamed = Data("rename me\n".utf8)
            let mount = try await davfs.mount(cache: "cache-1")
            try await davfs.unmounting(mount) {
                let fm = FileManager.default
                for folder in ["Projekt ü", "Projekt ü/unter", "leer"] {
                    try fm.createDirectory(at: mount.appendingPathComponent(folder), withIntermediateDirectories: false)
                }
                try writeTree(at: mount, [
                    "Projekt ü/notiz.txt": notes, "Projekt ü/unter/daten.bin": data,
                    "wird umbenannt.txt": renamed, "weg damit.txt": Data("short-lived\n".utf8),
                ])
                // Everything in the bucket first, so that the edits, the moves and
                // the deletion act on objects, not on uploads still pending.
                try await eventually("the four files reach the bucket") {
                    let keys = try await g.server.keys()
                    return ["Projekt ü/notiz.txt", "Projekt ü/unter/daten.bin", "wird umbenannt.txt", "weg damit.txt"].allSatisfy { keys[$0] != nil }
                        && keys["Projekt ü/unter/daten.bin"]?.size == data.count
                }
                #expect(try await g.client.uploadsDrained())

                // Edit in place (six bytes in the middle) and append.
                let handle = try FileHandle(forUpdating: mount.appendingPathComponent("Projekt ü/unter/daten.bin"))
                try handle.seek(toOffset: 500_000)
                try handle.write(contentsOf: Data("EDITED".utf8))
                try handle.close()
                data.replaceSubrange(500_000..<500_006, with: Data("EDITED".utf8))
                let appending = try FileHandle(forWritingTo: mount.appendingPathComponent("Projekt ü/notiz.txt"))
                try appending.seekToEnd()
                try appending.write(contentsOf: Data("zweite Zeile, ü\n".utf8))
                try appending.close()
                notes.append(Data("zweite Zeile, ü\n".utf8))
                // close() returns before FUSE hands davfs2 the release, and
                // davfs2 holds its LOCK on an edited file until its PUT is
                // through. It sends a folder's MOVE without the tokens of
                // locks inside, which RFC 4918 (and Apache) answer with 423:
                // a user renaming the folder in that second sees EIO. The
                // test waits for davfs2 to let go, as that user would retry.
                try await eventually("davfs2 has uploaded both edits and released its locks") {
                    for file in ["/s3/Projekt%20%C3%BC/notiz.txt", "/s3/Projekt%20%C3%BC/unter/daten.bin"] {
                        let reply = try await g.client.send("PROPFIND", file, headers: [("Depth", "0")], body: propfind(["lockdiscovery"]))
                        let discovery = try #require(Multistatus(reply)?.responses.first?.property("lockdiscovery"), "\(file): \(reply.text)")
                        if !discovery.node.descendants("activelock").isEmpty { return false }
                    }
                    return true
                }

                // A file into another folder under a new name, a folder renamed, a file removed.
                try fm.moveItem(at: mount.appendingPathComponent("wird umbenannt.txt"), to: mount.appendingPathComponent("Projekt ü/umbenannt é.txt"))
                try fm.moveItem(at: mount.appendingPathComponent("Projekt ü/unter"), to: mount.appendingPathComponent("Projekt ü/darunter"))
                try fm.removeItem(at: mount.appendingPathComponent("weg damit.txt"))
                #expect(try Data(contentsOf: mount.appendingPathComponent("Projekt ü/darunter/daten.bin")) == data)
                try await davfs.expectNothingLost(mount)
            }
            // Unmounting flushed davfs2's cache; then the journal delivers.
            #expect(try await g.client.uploadsDrained(), "the journal delivered every write")
            try await g.expectBucket(holds: [
                g.marker("Projekt ü"): Data(), g.marker("Projekt ü/darunter"): Data(), g.marker("leer"): Data(),
                "Projekt ü/notiz.txt": notes,
                "Projekt ü/darunter/daten.bin": data,
                "Projekt ü/umbenannt é.txt": renamed,
            ])
        }
    }

    @Test("cadaver, below a key prefix: mkcol, put, then (once in the bucket) mv a file and an empty folder, copy, rm, get",
          arguments: S3ServerKind.allCases)
    func cadaverOnS3(kind: S3ServerKind) async throws {
        let cadaver = try #require(findExecutable("cadaver"), "cadaver is not installed (apt-get install cadaver)")
        let python = try #require(findExecutable("python3"), "python3 drives cadaver through a pseudo-terminal")
        try await withS3Gateway(kind, prefix: "team/dav") { g in
            let session = try CadaverSession(server: g.gateway, cadaver: cadaver, python: python, domain: "s3")
            let resume = Data("Hello Résumé\nzweite Zeile, ünïcödé 😀\n".utf8)
            let data = try randomData(2 << 20 | 99)
            try session.writeLocal("Résumé 2026.txt", resume)
            try session.writeLocal("daten.bin", data)
            try session.writeLocal("weg.txt", Data("to be removed\n".utf8))

            let first = try await session.run([
                "mkcol \"Ordner ü\"",
                "mkcol \"Ordner ü/leer\"",
                "mkcol wandert",
                "cd \"Ordner ü\"",
                "put \"Résumé 2026.txt\"",
                "put daten.bin \"daten 2 MiB.bin\"",
                "put weg.txt",
            ])
            #expect(!first.loginPrompted, "credentials come from .netrc")
            for entry in first.outputs where entry.command.hasPrefix("mkcol") || entry.command.hasPrefix("put") {
                #expect(entry.output.contains("succeeded"), "\(entry.command): \(first)")
            }
            #expect(try await g.client.uploadsDrained(), "the journal delivered the puts")
            try await g.expectBucket(holds: [
                g.marker("Ordner ü"): Data(), g.marker("Ordner ü/leer"): Data(), g.marker("wandert"): Data(),
                "Ordner ü/Résumé 2026.txt": resume, "Ordner ü/daten 2 MiB.bin": data, "Ordner ü/weg.txt": Data("to be removed\n".utf8),
            ])

            let second = try await session.run([
                "cd \"Ordner ü\"",
                "mv \"Résumé 2026.txt\" \"Lebenslauf 2026.txt\"",
                "mv ../wandert gewandert",
                "copy \"Lebenslauf 2026.txt\" Kopie.txt",
                "rm weg.txt",
                "get \"Lebenslauf 2026.txt\" back.txt",
                "get \"daten 2 MiB.bin\" back.bin",
                "ls",
            ])
            for entry in second.outputs.dropFirst() where entry.command != "ls" {
                #expect(entry.output.contains("succeeded"), "\(entry.command): \(second)")
            }
            #expect(try session.readLocal("back.txt") == resume, "get brings back the moved file's bytes")
            #expect(try session.readLocal("back.bin") == data, "get brings back the 2 MiB file's bytes")
            let ls = second["ls"] ?? ""
            #expect(["Lebenslauf 2026.txt", "Kopie.txt", "daten 2 MiB.bin", "leer", "gewandert"].allSatisfy(ls.contains), "\(second)")
            #expect(!ls.contains("Résumé") && !ls.contains("weg.txt"), "\(second)")

            #expect(try await g.client.uploadsDrained(), "the journal delivered the moves, the copy and the removal")
            try await g.expectBucket(holds: [
                g.marker("Ordner ü"): Data(), g.marker("Ordner ü/leer"): Data(), g.marker("Ordner ü/gewandert"): Data(),
                "Ordner ü/Lebenslauf 2026.txt": resume, "Ordner ü/Kopie.txt": resume, "Ordner ü/daten 2 MiB.bin": data,
            ])
        }
    }
}
