import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

@Suite("GroupSync: one fsync for every writer waiting")
struct GroupSyncTests {
    /// Each caller makes a change, then asks for a sync; the sync records
    /// how many changes existed when it started. Every caller must come back
    /// only after a sync that started after its change, and callers that
    /// asked while a sync ran must share the next one.
    @Test("every caller returns after a sync that covers its change; concurrent callers share rounds")
    func roundsCoverTheirCallers() async throws {
        struct Ledger {
            var changes = 0
            var rounds = 0
            var durableUpTo = 0
        }
        let ledger = NIOLockedValueBox(Ledger())
        let group = GroupSync {
            let covered = ledger.withLockedValue { ledger -> Int in
                ledger.rounds += 1
                return ledger.changes
            }
            usleep(20_000)   // an fsync's time
            ledger.withLockedValue { $0.durableUpTo = max($0.durableUpTo, covered) }
        }
        let callers = 64
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for _ in 0..<callers {
                tasks.addTask {
                    let mine = ledger.withLockedValue { ledger -> Int in
                        ledger.changes += 1
                        return ledger.changes
                    }
                    try await group.sync()
                    let durable = ledger.withLockedValue { $0.durableUpTo }
                    #expect(durable >= mine, "change \(mine) answered before a sync covered it (durable up to \(durable))")
                }
            }
            try await tasks.waitForAll()
        }
        let rounds = ledger.withLockedValue { $0.rounds }
        #expect(rounds < callers / 4, "\(rounds) syncs for \(callers) callers: not grouped")
    }

    @Test("a failed sync fails every caller of its round, and the next round runs afresh")
    func failureReachesItsRound() async throws {
        let fail = NIOLockedValueBox(true)
        let group = GroupSync {
            if fail.withLockedValue({ $0 }) { throw ProviderError.local("disk gone") }
        }
        await #expect(throws: ProviderError.self) { try await group.sync() }
        fail.withLockedValue { $0 = false }
        try await group.sync()
    }
}
