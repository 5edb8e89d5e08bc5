/// What `markEvicted` does to a file eviction chose, from the row as it is
/// now: the decision both index implementations apply, each in its own
/// SQL, so eviction means the same whichever database holds the index.
enum EvictionDecision: Equatable {
    /// Leave it: its content changed since eviction chose it (the cached
    /// version differs: a write landed, a newer version was fetched), or
    /// its state is one the machine does not evict.
    case keep
    /// A placeholder: its sparse ranges go without a change of state, only
    /// the cached version is forgotten.
    case forget
    /// Materialized: the state machine makes it a placeholder again, and
    /// the cached version is forgotten.
    case evict

    /// - Parameters:
    ///   - state: the row's stored state, as stored.
    ///   - cachedVersion: the row's cached version.
    ///   - expected: the cached version eviction saw when it chose the file.
    init(state: String, cachedVersion: String?, expected: String?) {
        guard cachedVersion == expected, let state = StoredState(rawValue: state) else { self = .keep; return }
        if state == .placeholder {
            self = .forget
        } else if StoredState.evictable.contains(state) {
            self = .evict
        } else {
            self = .keep
        }
    }
}

extension StoredState {
    /// Local states the machine refuses to evict (not uploaded yet, a
    /// conflict copy): eviction keeps their items' content.
    static var unevictable: [StoredState] {
        allCases.filter { $0.isLocal && !evictable.contains($0) }
    }
}
