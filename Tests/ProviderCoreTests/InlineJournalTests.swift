import Foundation
@testable import ProviderCore
import Testing

/// Small write-back writes are acknowledged without an fsync of their file:
/// the journal row holds their bytes, durable with the grouped commit. A
/// crash may then leave the outbox file (and the cache file, the same
/// inode) short or empty; the next start rebuilds it from the journal.
@Suite("small writes kept in the journal")
struct InlineJournalTests {
    @Test("an outbox file emptied by a crash is rebuilt at start from the journal, and the cache serves it again")
    func rebuiltAfterCrash() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        #expect(f.provider.inlineWriteLimit > 0)
        let item = try await f.put("acknowledged, never fsynced", at: ["small.txt"], inline: true)
        let entry = try #require(try await f.provider.index.journal(domain: "files").first)
        let inline = try await f.provider.index.inlineWrites(domain: "files")
        #expect(inline.map(\.content) == [Data("acknowledged, never fsynced".utf8)])

        // What power loss can leave of a file whose data was never synced.
        let outbox = f.provider.cache.outboxFile(entry.file).path
        #expect(truncate(outbox, 0) == 0)
        #expect(try String(contentsOfFile: f.provider.cache.path(for: item.id), encoding: .utf8) == "")

        try await f.provider.recoverJournal()
        #expect(try String(contentsOfFile: outbox, encoding: .utf8) == "acknowledged, never fsynced")
        #expect(f.provider.cache.holds(entry.file, for: item.id), "the cache file is the rebuilt outbox file again")
        var st = stat()
        #expect(stat(outbox, &st) == 0)
        #expect(abs(Double(st.st_mtim.tv_sec) - item.modified.timeIntervalSince1970) < 1, "the modification time is the item's")
    }

    @Test("write-through takes no bytes inline: the upstream has them before the answer")
    func writeThroughSyncsItself() async throws {
        let f = try await Fixture(writeMode: .through)
        defer { f.cleanUp() }
        #expect(f.provider.inlineWriteLimit == 0)
        _ = try await f.put("through", at: ["t.txt"], inline: true)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("t.txt"), encoding: .utf8) == "through")
        #expect(try await f.provider.index.inlineWrites(domain: "files").isEmpty)
    }
}
