import Foundation
@testable import ProviderCore
import Testing

/// In write-back a PUT's body is written straight into the outbox, where its
/// journal row will name it: no rename from tmp/ into the outbox, and a new
/// item's cache file is one link of it. Fewer folder operations per small
/// PUT (issue 14), and the same guarantees: nothing partial is ever named
/// by a row, a refused write leaves no file, a crash's leftovers go at the
/// next start.
@Suite("write-back bodies written in the outbox")
struct OutboxBodyTests {
    func names(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    @Test("a new file's body stays where it was written: its journal row names that file, the cache file is the same inode, tmp/ stays empty")
    func bodyStaysInOutbox() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let request = try f.request("new body", at: ["new.txt"])
        #expect(request.file.deletingLastPathComponent().standardizedFileURL == f.provider.cache.outbox.standardizedFileURL)
        let item = try await f.provider.write(request).item
        let entry = try #require(try await f.provider.index.journal(domain: "files").first)
        #expect(entry.file == request.file.lastPathComponent, "the row names the file the body was written to")
        #expect(f.provider.cache.holds(entry.file, for: item.id))
        #expect(try names(in: f.provider.cache.outbox) == [entry.file])
        #expect(try names(in: f.provider.cache.temporary).isEmpty)
        #expect(try String(contentsOfFile: f.provider.cache.path(for: item.id), encoding: .utf8) == "new body")
    }

    @Test("a second write of the same file replaces its cache file with the new outbox file, and both rows keep their own files")
    func overwriteReplacesCacheFile() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let first = try await f.put("first", at: ["a.txt"])
        let second = try await f.put("second, longer", at: ["a.txt"])
        #expect(first.id == second.id)
        let entries = try await f.provider.index.journal(domain: "files")
        #expect(entries.count == 2)
        let newest = try #require(entries.last)
        #expect(f.provider.cache.holds(newest.file, for: second.id))
        #expect(try String(contentsOfFile: f.provider.cache.path(for: second.id), encoding: .utf8) == "second, longer")
        #expect(try names(in: f.provider.cache.outbox) == entries.map(\.file).sorted())
        #expect(try names(in: f.provider.cache.temporary).isEmpty)
    }

    @Test("a write refused at its commit (the file is locked by another) leaves no outbox file and no row")
    func refusedWriteLeavesNothing() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let item = try await f.put("locked", at: ["l.txt"])
        _ = try await f.provider.createLock(on: item, depthInfinity: false, exclusive: true, ownerXML: nil, principal: "alice", timeout: 600)
        let before = try names(in: f.provider.cache.outbox)
        var request = try f.request("overwrite", at: ["l.txt"])
        request.conditions = WriteConditions(principal: "bob")
        await #expect(throws: ProviderError.self) { try await f.provider.write(request) }
        #expect(try names(in: f.provider.cache.outbox) == before, "the refused body is gone from the outbox")
        #expect(try await f.provider.index.journal(domain: "files").count == 1)
        #expect(try String(contentsOfFile: f.provider.cache.path(for: item.id), encoding: .utf8) == "locked")
    }

    @Test("a body cut off by a crash while it was written (in the outbox, no row names it) is removed at the next start")
    func partialBodyGoesAtStart() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let kept = try await f.put("acknowledged", at: ["kept.txt"])
        let partial = f.provider.newWriteFile()
        try Data("half a bo".utf8).write(to: partial)
        try await f.provider.recoverJournal()
        #expect(!FileManager.default.fileExists(atPath: partial.path))
        let entry = try #require(try await f.provider.index.journal(domain: "files").first)
        #expect(try names(in: f.provider.cache.outbox) == [entry.file])
        #expect(try String(contentsOfFile: f.provider.cache.path(for: kept.id), encoding: .utf8) == "acknowledged")
    }

    @Test("write-through bodies are written in tmp/, never in the outbox")
    func writeThroughUsesTmp() async throws {
        let f = try await Fixture(writeMode: .through)
        defer { f.cleanUp() }
        let request = try f.request("through", at: ["t.txt"])
        #expect(request.file.deletingLastPathComponent().standardizedFileURL == f.provider.cache.temporary.standardizedFileURL)
        _ = try await f.provider.write(request)
        #expect(try names(in: f.provider.cache.outbox).isEmpty)
        #expect(try names(in: f.provider.cache.temporary).isEmpty)
    }
}
