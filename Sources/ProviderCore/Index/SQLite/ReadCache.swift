import NIOConcurrencyHelpers

/// Answers of recent index reads (the items on a walked path, an item's dead
/// properties), so that a GET or a PROPFIND of a hot file reads no SQLite
/// at all: in issue 14's profile the reads were the largest part of a small
/// request once the thread hops were gone.
///
/// Coherent by construction: every write to the index ends by moving the
/// generation on and forgetting everything (`SQLiteIndex.write`), and so
/// does the commit of the write-back commits' shared transaction
/// (`SQLiteIndex+batch`), which readers did not see before; an answer read
/// at an older generation is never kept. A read that races a
/// write sees the database before or after it, as a SQLite read would;
/// nothing older survives the write's return. Entries also expire after
/// `lifetime`, which bounds what a writer outside this process (an
/// operator's `davgate domain reset` beside a running server) can leave
/// stale. Under a write-heavy load the cache is simply empty.
final class ReadCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    static var capacity: Int { 4096 }
    let lifetime: Duration

    /// - Parameter lifetime: how long an answer may be served; the tests
    ///   of what a write keeps give a long one, so that a slow machine does
    ///   not expire what they look for.
    init(lifetime: Duration = .seconds(2)) {
        self.lifetime = lifetime
    }

    private struct Entry {
        let value: Value
        let expires: ContinuousClock.Instant
    }

    private struct State {
        var generation: UInt64 = 0
        var entries: [Key: Entry] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// The values of `keys`: those cached, and those `read` answers for the
    /// rest (remembered when no write ended while it ran).
    func values(for keys: [Key], read: ([Key]) throws -> [Key: Value]) rethrows -> [Key: Value] {
        let now = ContinuousClock.now
        var found: [Key: Value] = [:]
        var missing: [Key] = []
        let generation = state.withLockedValue { state in
            for key in keys {
                if let entry = state.entries[key], entry.expires > now { found[key] = entry.value } else { missing.append(key) }
            }
            return state.generation
        }
        guard !missing.isEmpty else { return found }
        let read = try read(missing)
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.entries.count + missing.count > Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            for key in missing {
                if let value = read[key] { state.entries[key] = Entry(value: value, expires: now + lifetime) }
            }
        }
        return found.merging(read) { cached, _ in cached }
    }

    /// The value of one key, cached or read.
    func value(for key: Key, read: () throws -> Value) rethrows -> Value {
        try values(for: [key]) { _ in [key: try read()] }[key]!
    }

    /// Forgets everything and gives the table's storage back, when the
    /// server has gone quiet (`SQLiteIndex.releaseMemory`).
    func release() {
        state.withLockedValue { state in
            state.generation &+= 1
            state.entries = [:]
        }
    }

    /// Called after every write to the index, committed or not.
    func invalidate() {
        state.withLockedValue { state in
            state.generation &+= 1
            if !state.entries.isEmpty { state.entries.removeAll(keepingCapacity: true) }
        }
    }
}
