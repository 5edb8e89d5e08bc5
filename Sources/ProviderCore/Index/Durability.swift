import NIOConcurrencyHelpers

/// Where the fsync of an index write is waited for.
///
/// An index write is durable when it returns: `SQLiteIndex.write` commits
/// without an fsync and then waits for a grouped one (`GroupSync`) of the
/// write-ahead log. Under the domain's coordination that wait would hold
/// every other writer of the domain for it, so `Provider.coordinated` opens
/// a scope: writes made inside it skip their own wait, and the coordination
/// waits for one sync covering all of them after it has let the next writer
/// in. Nothing is acknowledged before that wait: the server answers after
/// `coordinated` returns.
///
/// A scope that `batches` (a write-back commit) goes further on SQLite: its
/// small writes join one transaction shared with the commits before and
/// after it, which the next round of the grouped fsync commits
/// (`SQLiteIndex+batch`). Should that commit fail, every write in the
/// batch is lost, and each scope that joined it learns so here
/// (`batchFailure`) before its caller is answered.
final class DurabilityScope: Sendable {
    @TaskLocal static var current: DurabilityScope?

    private struct State {
        var open = true
        var wrote = false
        var batchFailure: (any Error)?
    }

    private let state = NIOLockedValueBox(State())
    /// Whether the scope's small writes may join the shared transaction.
    let batches: Bool
    /// The task that opened the scope, whose writes alone join it: a task
    /// it starts inherits the scope (`current` is task-local) but is work
    /// of its own (a listing refresh other requests share, a fetch), which
    /// must neither read the batch nor fail with it. Kept only to compare
    /// (it keeps the task object alive while the scope lives); the scope
    /// closes before that task ends, so no other task can match it.
    nonisolated(unsafe) private let owner: UnsafeCurrentTask?

    init(batches: Bool = false) {
        self.batches = batches
        owner = batches ? withUnsafeCurrentTask { $0 } : nil
    }

    /// Called after a commit: true when the scope's owner will sync for it.
    /// False once the owner is about to sync: a write that finds its scope
    /// closed (an unstructured task that inherited it and outlived it)
    /// syncs for itself.
    func deferSync() -> Bool {
        state.withLockedValue { state in
            if state.open { state.wrote = true }
            return state.open
        }
    }

    /// Closes the scope; returns whether anything was written in it (and
    /// so must be synced).
    func close() -> Bool {
        state.withLockedValue { state in
            state.open = false
            return state.wrote
        }
    }

    /// Whether a write or a read made now is one of the scope's batched
    /// commit: made by the task that opened the scope, before it closed it.
    var joinsBatch: Bool {
        guard batches, let owner, withUnsafeCurrentTask(body: { $0 == owner }) else { return false }
        return state.withLockedValue { $0.open }
    }

    /// The batch this scope wrote in could not be committed.
    func batchFailed(_ error: any Error) {
        state.withLockedValue { state in
            if state.batchFailure == nil { state.batchFailure = error }
        }
    }

    /// Why the writes of this scope were lost with their batch, if they were.
    var batchFailure: (any Error)? {
        state.withLockedValue { $0.batchFailure }
    }
}
