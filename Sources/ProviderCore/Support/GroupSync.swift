import NIOConcurrencyHelpers
import NIOPosix

/// Group commit for one fsync: every caller that asks while a round is
/// running is served by the next round, one fsync for all of them. A caller
/// asks after its own change (a rename, a commit) was made, and a round
/// starts its fsync after taking its callers, so the fsync that answers a
/// caller always covers that caller's change.
///
/// Why: a small PUT is acknowledged only once its journal row and its
/// outbox entry would survive power loss. One fsync each per PUT, taken in
/// turn, held the whole domain to the disk's fsync rate (issue 14: 766
/// files/s with 8 clients); one per round serves every client waiting.
final class GroupSync: Sendable {
    private typealias Waiter = CheckedContinuation<Void, any Error>

    private struct State {
        var running = false
        var waiting: [Waiter] = []
    }

    private let state = NIOLockedValueBox(State())
    private let sync: @Sendable () throws -> Void

    /// `sync` makes durable everything done before it starts; it runs on
    /// the blocking pool, never on an event loop.
    init(_ sync: @escaping @Sendable () throws -> Void) {
        self.sync = sync
    }

    /// Returns once a sync that started after this call has succeeded.
    func sync() async throws {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let start = state.withLockedValue { state -> Bool in
                state.waiting.append(waiter)
                guard !state.running else { return false }
                state.running = true
                return true
            }
            if start { blockingPool.submit { _ in self.runRounds() } }
        }
    }

    /// Rounds until nobody waits: take every waiter, sync, answer them.
    private func runRounds() {
        while true {
            let round = state.withLockedValue { state -> [Waiter] in
                let round = state.waiting
                state.waiting.removeAll()
                if round.isEmpty { state.running = false }
                return round
            }
            guard !round.isEmpty else { return }
            let result = Result { try sync() }
            for waiter in round { waiter.resume(with: result) }
        }
    }
}
