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

    /// A round waits for the callers expected before it (`expect`), up to
    /// its limit: one sync then serves a caller that asked after the round
    /// began. Without the wait that caller needs a second round.
    @Test("a round waits for an expected caller and one sync serves both; a dropped expectation or an urgent caller ends the wait; a wait that runs out still counts the late arrival",
          .timeLimit(.minutes(1)))
    func roundsGatherExpectedCallers() async throws {
        let rounds = NIOLockedValueBox(0)
        let group = GroupSync(gatherLimit: .seconds(20)) { rounds.withLockedValue { $0 += 1 } }
        group.expect()
        async let first: Void = group.sync()
        #expect(await eventually { group.isGathering }, "the round did not wait for the expected caller")
        try await group.sync(expected: true)
        try await first
        #expect(rounds.withLockedValue { $0 } == 1, "the expected caller got a round of its own")

        // Given up: the round goes on at once, not after its 20 s.
        group.expect()
        async let second: Void = group.sync()
        #expect(await eventually { group.isGathering })
        group.expectationDropped()
        try await second
        #expect(rounds.withLockedValue { $0 } == 2)

        // An urgent caller (one the expected may queue behind) ends the wait.
        group.expect()
        async let third: Void = group.sync()
        #expect(await eventually { group.isGathering })
        try await group.sync(urgent: true)
        try await third
        #expect(group.outstanding == 1)
        group.expectationDropped()
        #expect(group.outstanding == 0)

        // Nobody comes: the round waits its limit, then syncs; the late
        // arrival is counted, so the next expected caller's own round does
        // not wait for it.
        let brief = GroupSync(gatherLimit: .milliseconds(300)) { rounds.withLockedValue { $0 += 1 } }
        brief.expect()
        let began = ContinuousClock.now
        try await brief.sync()
        #expect(ContinuousClock.now - began >= .milliseconds(250), "the round did not wait for the expected caller")
        try await brief.sync(expected: true)
        brief.expect()
        let next = ContinuousClock.now
        try await brief.sync(expected: true)
        #expect(ContinuousClock.now - next < .milliseconds(250), "an arrival was lost: the round waited for a caller already there")
        #expect(brief.outstanding == 0)
    }

    /// While writers keep coming (the last round served several), a round
    /// waits `burstGather` before it takes its callers: one that asks a
    /// moment after the round's first shares its sync. After a round of
    /// one (a lone writer), nobody waits.
    @Test("in a burst a round waits a moment for callers still arriving; a lone caller does not wait")
    func burstRoundsGather() async throws {
        let rounds = NIOLockedValueBox(0)
        let group = GroupSync(gatherLimit: .seconds(10), burstGather: .seconds(2)) { rounds.withLockedValue { $0 += 1 } }
        // A lone caller: no wait, though the gather is long.
        let lone = ContinuousClock.now
        try await group.sync()
        #expect(ContinuousClock.now - lone < .seconds(1), "a lone caller waited for a burst")
        // Two announced callers make a round of two: a burst.
        group.expect()
        group.expect()
        async let first: Void = group.sync(expected: true)
        async let second: Void = group.sync(expected: true)
        _ = try await (first, second)
        let before = rounds.withLockedValue { $0 }
        // The next round waits: a caller 50 ms after the first shares it.
        async let early: Void = group.sync()
        try await Task.sleep(for: .milliseconds(50))
        async let late: Void = group.sync()
        _ = try await (early, late)
        #expect(rounds.withLockedValue { $0 } - before == 1, "the late caller needed a round of its own")
    }
}
