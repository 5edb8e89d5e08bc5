import NIOConcurrencyHelpers

/// A FIFO mutual-exclusion lock for async code.
///
/// Namespace changes of one domain (create, move, copy, delete) run one at a
/// time so the upstream and the index change together; reads never take it.
/// A task cancelled while it waits for the lock stops waiting (throws
/// `CancellationError`) and the lock goes on to the next in line.
public final class AsyncMutex: Sendable {
    private struct State: WaitingState {
        var locked = false
        var waiters = WaitQueue<Void>()

        /// Taken only when free; a release hands it to the oldest waiter
        /// under the same mutex, so nobody overtakes the queue.
        mutating func grant(_: Void) -> Bool {
            guard !locked else { return false }
            locked = true
            return true
        }
    }
    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Tasks parked now (tests wait for a waiter to be parked).
    var waiting: Int { state.withLockedValue { $0.waiters.count } }

    /// Runs `body` holding the lock, after those who asked before.
    /// - Throws: `CancellationError` when the task is cancelled while it
    ///   waits (not once it holds the lock), or what `body` throws.
    public func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await state.wait(for: ())
        defer { state.updateAndWake { $0.locked = false } }
        return try await body()
    }
}
