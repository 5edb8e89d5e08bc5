import Foundation
@testable import ProviderCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The start's repair of the write-back journal (`recoverJournal`) when a
/// row's outbox file is gone: before, the start failed with "cannot link a
/// write into the cache" (seen by WriteBackTests.crashLoop after a kill -9
/// between a conflict copy taking the outbox file and its row going).
@Suite("journal recovery with a missing outbox file")
struct JournalRecoveryTests {
    @Test("a row whose outbox file is gone does not stop the start: that write is reported failed, the others are put back in the cache")
    func missingOutboxFile() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let lost = try await f.put("lost bytes", at: ["lost.txt"])
        let kept = try await f.put("kept bytes", at: ["kept.txt"])
        let entries = try await f.provider.index.journal(domain: "files")
        let lostEntry = try #require(entries.first { $0.itemID == lost.id })
        let keptEntry = try #require(entries.first { $0.itemID == kept.id })
        // The cache files go too, so the start must link both back.
        #expect(unlink(f.provider.cache.outboxFile(lostEntry.file).path) == 0)
        for id in [lost.id, kept.id] { #expect(unlink(f.provider.cache.path(for: id)) == 0) }

        try await f.provider.recoverJournal()
        #expect(f.provider.cache.holds(keptEntry.file, for: kept.id), "the other write is back in the cache")
        let after = try await f.provider.index.journal(domain: "files")
        let failed = try #require(after.first { $0.seq == lostEntry.seq })
        #expect(failed.failed && failed.lastError?.contains("outbox file") == true, "\(failed)")
        #expect(after.first { $0.seq == keptEntry.seq }?.failed == false)
        #expect(try await f.provider.status().uploads.failed.count == 1, "the status page reports it")
    }
}
