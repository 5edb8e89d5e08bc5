import Foundation
@testable import ProviderCore
import Testing

/// A DELETE answers once the upstream and the index have let go; the local
/// files of what it removed (content files, outbox files of uploads it
/// dropped) are unlinked after, off the request's path. These tests hold
/// that they do go, and only they.
@Suite("files of deleted items are removed after the answer")
struct DeletionCleanupTests {
    /// Waits until `done` holds, at most `prompt`.
    func eventually(_ done: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + prompt
        while ContinuousClock.now < deadline {
            if try done() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try done()
    }

    func outboxNames(_ f: Fixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: f.provider.cache.outbox.path)
    }

    /// Without a trash the pending uploads are dropped and their outbox
    /// files removed later; with one they are uploaded first (the trash
    /// takes what the upstream holds) and their outbox files go as each
    /// upload completes: either way none is left.
    @Test("a folder's DELETE with uploads pending: its content and outbox files go, a file outside keeps both", arguments: [false, true])
    func folderWithPendingUploads(trash: Bool) async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600),
                            trash: trash ? TrashPolicy() : nil)
        defer { f.cleanUp() }
        _ = try await f.provider.makeFolder(at: ["d"])
        var inside: [Item] = []
        for n in 0..<20 { inside.append(try await f.put("body \(n)", at: ["d", "f\(n).txt"])) }
        let outside = try await f.put("stays", at: ["outside.txt"])
        #expect(try outboxNames(f).count == 21, "every write waits in the outbox")

        try await f.provider.delete(at: ["d"])
        #expect(try await f.provider.item(at: ["d"]) == nil)
        for item in inside { #expect(try await f.provider.index.item(id: item.id) == nil) }

        let gone = try await eventually {
            try inside.allSatisfy { !f.provider.cache.hasFile(for: $0.id) } && outboxNames(f).count == 1
        }
        let outbox = try outboxNames(f)
        #expect(gone, "content files left: \(inside.filter { f.provider.cache.hasFile(for: $0.id) }.count), outbox: \(outbox)")
        #expect(f.provider.cache.hasFile(for: outside.id))
        let entry = try #require(try await f.provider.index.journal(domain: "files").first)
        #expect(try outboxNames(f) == [entry.file])
        #expect(f.provider.cache.holds(entry.file, for: outside.id), "the remaining write's outbox file is its content")
        #expect(try String(contentsOfFile: f.provider.cache.path(for: outside.id), encoding: .utf8) == "stays")
    }

    @Test("a file's DELETE after its upload: its content file goes")
    func uploadedFile() async throws {
        let f = try await Fixture(writeMode: .through)
        defer { f.cleanUp() }
        let item = try await f.put("uploaded", at: ["a.txt"])
        #expect(f.provider.cache.hasFile(for: item.id))
        try await f.provider.delete(at: ["a.txt"])
        #expect(try await eventually { !f.provider.cache.hasFile(for: item.id) })
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("a.txt").path))
    }

    @Test("at start, content files of items the index no longer holds are removed; the others stay")
    func orphansSweptAtStart() async throws {
        let f = try await Fixture(writeMode: .through)
        defer { f.cleanUp() }
        let kept = try await f.put("kept", at: ["kept.txt"])
        // What a stop leaves when it comes before a DELETE's unlinks ran:
        // a content file whose item is gone.
        let orphan = try await f.put("orphan", at: ["orphan.txt"])
        _ = try await f.provider.index.delete(id: orphan.id)
        #expect(f.provider.cache.hasFile(for: orphan.id))

        try await f.provider.removeOrphanedContent()
        #expect(!f.provider.cache.hasFile(for: orphan.id))
        #expect(try String(contentsOfFile: f.provider.cache.path(for: kept.id), encoding: .utf8) == "kept")
        #expect(try await f.provider.contents(of: kept, at: ["kept.txt"]).file.path == f.provider.cache.path(for: kept.id))
    }

    /// The opposite order at the same moment: a PUT of the deleted name
    /// lands before the DELETE's unlinks run. Its item has a new id, so
    /// the unlinks cannot take its file.
    @Test("a PUT of a deleted file's name right after its DELETE keeps its own content through the later unlinks", arguments: [WriteMode.through, .back])
    func putRightAfterDelete(mode: WriteMode) async throws {
        let f = try await Fixture(writeMode: mode, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let old = try await f.put("old", at: ["a.txt"])
        try await f.provider.delete(at: ["a.txt"])
        let new = try await f.put("new", at: ["a.txt"])
        #expect(new.id != old.id)
        #expect(try await eventually { !f.provider.cache.hasFile(for: old.id) })
        #expect(try String(contentsOfFile: f.provider.cache.path(for: new.id), encoding: .utf8) == "new")
        let read = try await f.provider.contents(of: new, at: ["a.txt"])
        #expect(try String(contentsOf: read.file, encoding: .utf8) == "new")
    }
}
