import Foundation
@testable import ProviderCore
import Testing

/// A write-back write reads its target item under the coordination, and the
/// uploader is not under it: an upload of the same item may finish between
/// that read and the write's commit. The write must still be based on what
/// the upstream holds then, our own upload, and replace it; based on the
/// item as read before, it became a conflict copy of davgate's own upload
/// and the newer, acknowledged bytes were away from their name (seen once
/// in WriteBackTests' crash loop: the name kept write 428 of 431).
@Suite("a write committed just after an upload of the same item finished")
struct WriteBasisRaceTests {
    /// Commits `text` at `path` the way `write` does, but with `existing`,
    /// the item as the write read it before an upload finished.
    func commit(_ f: Fixture, _ text: String, at path: ItemPath, existing: Item) async throws {
        let request = try f.request(text, at: path)
        let outbox = try await f.provider.cache.adoptInOutbox(request.file, durable: true)
        _ = try await f.provider.recordWrite(request, outbox: outbox, parent: try await f.provider.root(), existing: existing)
    }

    func uploadAll(_ f: Fixture) async throws {
        for entry in try await f.provider.dueUploads(limit: 10) { try await f.provider.upload(entry) }
        #expect(try await f.provider.index.journal(domain: "files").isEmpty, "the journal drained")
    }

    func expectOnlyName(_ f: Fixture, holding text: String) throws {
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path) == ["x.txt"], "no conflict copy of our own upload")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("x.txt"), encoding: .utf8) == text)
    }

    @Test("read while its first write waited, committed after that write's upload: the newest bytes replace it")
    func readDirtyCommittedClean() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        let stale = try await f.put("first", at: ["x.txt"])
        #expect(stale.dirty)
        try await uploadAll(f)
        try await commit(f, "second, longer", at: ["x.txt"], existing: stale)
        try await uploadAll(f)
        try expectOnlyName(f, holding: "second, longer")
    }

    @Test("read clean at one version, committed after a newer write of ours was uploaded: still no conflict")
    func readCleanCommittedNewer() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        _ = try await f.put("first", at: ["x.txt"])
        try await uploadAll(f)
        let stale = try #require(try await f.provider.item(at: ["x.txt"]))
        #expect(!stale.dirty)
        _ = try await f.put("second", at: ["x.txt"])
        try await uploadAll(f)
        try await commit(f, "third, the newest", at: ["x.txt"], existing: stale)
        try await uploadAll(f)
        try expectOnlyName(f, holding: "third, the newest")
    }

    @Test("a change made upstream by someone else before the write is still a conflict")
    func someoneElseStillConflicts() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        let item = try await f.put("first", at: ["x.txt"])
        try await uploadAll(f)
        try f.write("theirs, changed upstream", "x.txt")
        try await commit(f, "ours", at: ["x.txt"], existing: item)
        try await uploadAll(f)
        let names = try FileManager.default.contentsOfDirectory(atPath: f.upstream.path)
        #expect(names.count == 2 && names.contains("x.txt"), "both kept: \(names)")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("x.txt"), encoding: .utf8) == "theirs, changed upstream")
    }
}
