import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A statement that never answers (as postgres-nio left one on a dropped
/// connection after a database crash) must not hold its caller: the caller
/// is answered at the deadline, and the connection is closed.
@Suite("StatementDeadline: a statement answered by its end or its deadline")
struct StatementDeadlineTests {
    struct Expired: Error {}

    @Test("a statement that never ends: the caller gets the deadline's error at the deadline, not later, and the connection is closed")
    func neverAnswered() async throws {
        let closed = NIOLockedFlag()
        let started = ContinuousClock.now
        await #expect(throws: Expired.self) {
            try await StatementDeadline.run(limit: .milliseconds(300), timedOut: { Expired() }, expired: { _ = closed.set() }) {
                // Not cancellable, as the lost statement was not.
                while true { try? await Task.sleep(for: .seconds(3600)) }
            }
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(300) && waited < .seconds(5), "answered at the deadline: \(waited)")
        #expect(await eventually { closed.isSet }, "the connection was closed")
    }

    @Test("a statement that ends in time: its rows or its error, and nothing is closed")
    func answered() async throws {
        let closed = NIOLockedFlag()
        let rows = try await StatementDeadline.run(limit: .seconds(5), timedOut: { Expired() }, expired: { _ = closed.set() }) { [1, 2, 3] }
        #expect(rows == [1, 2, 3])
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await StatementDeadline.run(limit: .seconds(5), timedOut: { Expired() }, expired: { _ = closed.set() }) { () async throws -> Int in
                throw Refused()
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!closed.isSet)
    }

    @Test("the caller's cancellation does not cut the statement short: it runs to its end, as an awaited statement did")
    func cancellationWaitsForTheStatement() async throws {
        let ended = NIOLockedFlag()
        let caller = Task {
            try await StatementDeadline.run(limit: .seconds(5), timedOut: { Expired() }, expired: {}) {
                try? await Task.sleep(for: .milliseconds(300))
                _ = ended.set()
                return 7
            }
        }
        caller.cancel()
        #expect(try await caller.value == 7)
        #expect(ended.isSet)
    }
}
