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
final class DurabilityScope: Sendable {
    @TaskLocal static var current: DurabilityScope?

    private struct State {
        var open = true
        var wrote = false
    }

    private let state = NIOLockedValueBox(State())

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
}
