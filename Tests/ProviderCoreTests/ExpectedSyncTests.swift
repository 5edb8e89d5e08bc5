import Foundation
@testable import ProviderCore
import Testing

/// A write-back commit announces its sync before it queues for the
/// domain's coordination (`IndexStore.expectSync`) and must then ask for
/// it or drop it, whatever happens in between: one announcement left over
/// would hold every later round of the log's fsync for its limit.
@Suite("expected syncs of write-back commits")
struct ExpectedSyncTests {
    @Test("after PUTs that land and PUTs refused inside the coordination (the dirty budget, a folder for a file), no announced sync is left",
          .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
    func announcementsPaired() async throws {
        let f = try await Fixture(ttl: 60, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600, dirtyBudget: 16))
        defer { f.cleanUp() }
        let index = try #require(f.provider.index as? SQLiteIndex)
        _ = try await f.put("small", at: ["a.txt"], inline: true)
        await #expect(throws: ProviderError.self) { _ = try await f.put("more than the budget", at: ["b.txt"], inline: true) }
        _ = try await f.provider.makeFolder(at: ["folder"])
        await #expect(throws: ProviderError.self) { _ = try await f.put("x", at: ["folder"], inline: true) }
        _ = try await f.put("again", at: ["a.txt"], inline: true)
        #expect(index.outstandingExpectedSyncs == 0)
    }

    @Test("a write refused for the dirty budget ends the uploads' wait for a burst")
    func budgetRefusalEndsTheWait() {
        let activity = WriteActivity()
        activity.noteWrite(window: .seconds(60))
        #expect(activity.burstGoesOn(window: .seconds(60), limit: .seconds(60)))
        activity.noteBudgetRefusal()
        activity.noteWrite(window: .seconds(60))
        #expect(!activity.burstGoesOn(window: .seconds(60), limit: .seconds(60)), "uploads held while the budget refuses writes")
    }
}
