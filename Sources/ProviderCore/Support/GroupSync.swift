import Dispatch
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
///
/// A caller may say beforehand that it will ask soon (`expect`): a round
/// about to start then waits, up to `gatherLimit`, for the callers expected
/// before it, so that they share its fsync rather than each start the
/// next. Why: in a burst of small PUTs from 8 clients a round served 1.7 of
/// them, the others still queueing for the domain's coordination or
/// committing under it, and each fsync of the log cost the server about
/// 135 us of CPU on this machine's disk, where the PUTs were bound by the
/// CPU. A caller that holds up the expected ones (one asking from inside
/// the coordination they queue for) asks `urgent`, and its round does not
/// wait.
///
/// While writers keep coming (the round before served more than one), a
/// round also waits a moment (`burstGather`) before it takes its callers,
/// for those whose requests are still arriving, which no expectation
/// covers. Why: in a burst of small PUTs from 8 clients a round still
/// served fewer than three, and each round's fsync and commit cost the
/// server CPU that the PUTs were short of. Waiting 300 us took 5-10% of the
/// server's CPU off the same PUTs and made them 1-6% faster (8 clients),
/// 8% (4 clients); two clients and one were as fast as before (issue 14).
/// A lone writer never waits: its rounds serve one.
final class GroupSync: Sendable {
    private typealias Waiter = CheckedContinuation<Void, any Error>

    private struct State {
        var running = false
        var waiting: [Waiter] = []
        /// Callers that said they would ask (`expect`), and how many of
        /// them have asked or given up.
        var expected = 0
        var arrived = 0
        /// While a round waits for the callers expected before it: the
        /// count of arrivals it waits for.
        var gatheringUntil: Int?
        /// A waiter of the next round must not wait for expected callers.
        var urgent = false
        /// How many callers the last round served.
        var lastRound = 0

        /// Every waiter, for a round.
        mutating func takeWaiting() -> [Waiter] {
            defer { waiting.removeAll() }
            return waiting
        }
    }

    private let state = NIOLockedValueBox(State())
    private let sync: @Sendable () throws -> Void
    private let gatherLimit: Duration?
    private let burstGather: Duration?
    /// Signalled by the arrival a gathering round waits for.
    private let gathered = DispatchSemaphore(value: 0)

    /// `sync` makes durable everything done before it starts; it runs on
    /// the blocking pool, never on an event loop.
    /// - Parameters:
    ///   - gatherLimit: how long a round waits for expected callers; nil:
    ///     it never waits.
    ///   - burstGather: how long a round waits before taking its callers
    ///     when the last one served several; nil: it never does.
    init(gatherLimit: Duration? = nil, burstGather: Duration? = nil, _ sync: @escaping @Sendable () throws -> Void) {
        self.gatherLimit = gatherLimit
        self.burstGather = burstGather
        self.sync = sync
    }

    /// The caller will ask for a sync soon, or say it will not
    /// (`expectationDropped`).
    func expect() {
        state.withLockedValue { $0.expected += 1 }
    }

    /// An expected caller will not ask after all.
    func expectationDropped() {
        if state.withLockedValue({ Self.arrive(&$0) }) { gathered.signal() }
    }

    /// Returns once a sync that started after this call has succeeded.
    /// - Parameters:
    ///   - expected: the caller announced this call (`expect`).
    ///   - urgent: the caller may be what the expected ones wait for: its
    ///     round syncs without waiting for them.
    func sync(expected: Bool = false, urgent: Bool = false) async throws {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let (start, signal) = state.withLockedValue { state -> (Bool, Bool) in
                state.waiting.append(waiter)
                var signal = expected && Self.arrive(&state)
                if urgent {
                    state.urgent = true
                    // A round gathering now stops waiting: this caller may
                    // be what the expected ones queue behind.
                    if state.gatheringUntil != nil {
                        state.gatheringUntil = nil
                        signal = true
                    }
                }
                guard !state.running else { return (false, signal) }
                state.running = true
                return (true, signal)
            }
            if signal { gathered.signal() }
            if start { blockingPool.submit { _ in self.runRounds() } }
        }
    }

    /// Counts an arrival; true when it is the last one a gathering round
    /// waits for (the caller then signals it).
    private static func arrive(_ state: inout State) -> Bool {
        state.arrived += 1
        assert(state.arrived <= state.expected, "an arrival nobody announced (GroupSync.expect)")
        guard let until = state.gatheringUntil, state.arrived >= until else { return false }
        state.gatheringUntil = nil
        return true
    }

    /// Rounds until nobody waits: take every waiter, sync, answer them.
    private func runRounds() {
        while true {
            if let burstGather, state.withLockedValue({ $0.lastRound > 1 && !$0.urgent }) {
                usleep(useconds_t(burstGather.nanoseconds / 1000))
            }
            var (round, urgent) = state.withLockedValue { state -> ([Waiter], Bool) in
                let round = state.takeWaiting()
                if round.isEmpty {
                    state.running = false
                    // Nobody came during the wait: the burst is over.
                    state.lastRound = 0
                }
                defer { state.urgent = false }
                return (round, state.urgent)
            }
            guard !round.isEmpty else { return }
            if let gatherLimit, !urgent, gatherExpected(for: gatherLimit) {
                round += state.withLockedValue { $0.takeWaiting() }
            }
            state.withLockedValue { [count = round.count] in $0.lastRound = count }
            let result = Result { try sync() }
            for waiter in round { waiter.resume(with: result) }
        }
    }

    /// Waits up to `limit` until every caller expected so far has asked
    /// (or given up); false when none was awaited.
    private func gatherExpected(for limit: Duration) -> Bool {
        let awaiting = state.withLockedValue { state -> Bool in
            guard state.arrived < state.expected else { return false }
            state.gatheringUntil = state.expected
            return true
        }
        guard awaiting else { return false }
        if gathered.wait(timeout: .now() + .nanoseconds(Int(limit.nanoseconds))) == .timedOut {
            // An arrival that signalled just as the wait ended left its
            // signal behind: taken here, so the next round does not find it.
            let signalled = state.withLockedValue { state -> Bool in
                defer { state.gatheringUntil = nil }
                return state.gatheringUntil == nil
            }
            if signalled { gathered.wait() }
        }
        return true
    }

    /// Whether a round is waiting for expected callers now, for the tests.
    var isGathering: Bool { state.withLockedValue { $0.gatheringUntil != nil } }

    /// Callers announced and not arrived yet, for the tests.
    var outstanding: Int { state.withLockedValue { $0.expected - $0.arrived } }
}
