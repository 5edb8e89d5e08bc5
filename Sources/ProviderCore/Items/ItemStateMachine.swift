/// The item's life as one state machine, in the SwiftNIO style: an event
/// either moves the item to its next state and returns what the provider
/// must do about it, or is refused as impossible in the state it is in.
///
/// ```text
///              listed                fetchStarted            fetchFinished
///   (new) ───────────────▶ placeholder ─────────▶ fetching ─────────────▶ materialized
///                           ▲  │  ▲ rangeFetched        │ fetchFailed        │  ▲
///                evicted,   │  │  └── partial ◀─────────┘                    │  │ uploadSucceeded
///           upstreamChanged │  │        │ evicted, upstreamChanged ─▶ placeholder │
///                           │  ▼ written (back)                             │  │
///                           │ modified ◀──────────────── written (back) ────┘  │
///        versionMismatch    │  │  ▲ uploadFailed                               │
///   (our bytes kept as a    │  ▼  │                                            │
///    conflict copy) ────────┴─ uploading ──────────────────────────────────────┘
///                              │ uploadFailed(givenUp) ─▶ failed ─ written ─▶ modified
///   keepBoth ─▶ conflict ─ written ─▶ modified;  conflict ─ upstreamChanged ─▶ placeholder
/// ```
///
/// Written through (write-through mode), a file goes straight to
/// `materialized`. The provider persists `state.stored` in the same
/// transaction as the change that caused the event; the transient states
/// (`fetching`, `partial`, `uploading`) are replayed over the stored one
/// from the provider's in-memory tables (`Provider.state(of:)`).
public struct ItemStateMachine: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        /// A download of the whole current content began.
        case fetchStarted
        /// A range was fetched into the sparse file: this many bytes are local.
        case rangeFetched(bytesLocal: Int64)
        /// The whole current content arrived in the cache.
        case fetchFinished
        /// A download was given up (the upstream failed, the reader left).
        case fetchFailed
        /// New content written here: through (uploaded before the answer) or
        /// back (journaled, uploaded later).
        case written(through: Bool)
        case uploadStarted
        case uploadProgressed(bytesSent: Int64)
        /// The upstream took the upload; a newer write may wait behind it.
        case uploadSucceeded(newerPending: Bool)
        /// The upload failed: retried later, or given up after the maximum age.
        case uploadFailed(givenUp: Bool)
        /// The upstream moved on since the edit was based on it: ours went to
        /// a conflict copy, and the item shows the upstream's version
        /// (unless a newer write of ours waits).
        case versionMismatch(newerPending: Bool)
        /// A listing or a revalidation found a new version upstream.
        case upstreamChanged
        /// The cache dropped the content to make room.
        case evicted
    }

    /// What the provider must do once the new state is recorded.
    public enum Action: Sendable, Equatable {
        case none
        /// Remove the cached bytes: they are not the current version.
        case dropCache
        /// A journal row was written: the uploader will send it.
        case awaitUpload
    }

    /// An event that cannot happen in the state the item is in; a bug when
    /// it does, so the provider refuses it rather than guess.
    public struct IllegalTransition: Error, Sendable, Equatable, CustomStringConvertible {
        public var state: ItemState
        public var event: Event
        public var description: String { "item state \(state.name) cannot take the event \(event)" }

        public init(state: ItemState, event: Event) {
            self.state = state
            self.event = event
        }
    }

    public private(set) var state: ItemState

    public init(_ state: ItemState) {
        self.state = state
    }

    public init(stored: StoredState) {
        self.state = stored.state
    }

    /// Moves to the state `event` leads to and returns what to do.
    @discardableResult
    public mutating func handle(_ event: Event) throws(IllegalTransition) -> Action {
        guard let (next, action) = Self.transition(from: state, on: event) else {
            throw IllegalTransition(state: state, event: event)
        }
        state = next
        return action
    }

    /// The table itself; nil where the event is illegal.
    static func transition(from state: ItemState, on event: Event) -> (ItemState, Action)? {
        switch (state, event) {
        case (.folder, _):
            return nil

        case (.placeholder, .fetchStarted), (.partial, .fetchStarted):
            return (.fetching, .none)
        case (.placeholder, .rangeFetched(let bytes)), (.partial, .rangeFetched(let bytes)):
            return (.partial(bytesLocal: bytes), .none)
        case (.fetching, .rangeFetched):
            // A range read while the whole file comes: the whole download wins.
            return (.fetching, .none)
        case (.placeholder, .fetchFinished), (.fetching, .fetchFinished), (.partial, .fetchFinished):
            return (.materialized, .none)
        case (.fetching, .fetchFailed):
            return (.placeholder, .none)

        case (.modified, .written(let through)), (.uploading, .written(let through)), (.failed, .written(let through)):
            // Through: an earlier write-back edit was flushed first, so the
            // new content is what the upstream now holds.
            return through ? (.materialized, .none) : (.modified, .awaitUpload)
        case (_, .written(let through)):
            return through ? (.materialized, .none) : (.modified, .awaitUpload)

        case (.modified, .uploadStarted), (.failed, .uploadStarted):
            return (.uploading(bytesSent: 0), .none)
        case (.uploading, .uploadProgressed(let sent)):
            return (.uploading(bytesSent: sent), .none)
        case (.uploading, .uploadSucceeded(let newer)), (.modified, .uploadSucceeded(let newer)), (.failed, .uploadSucceeded(let newer)):
            // A failed upload is still delivered by a MOVE's flush.
            return (newer ? .modified : .materialized, .none)
        case (.uploading, .uploadFailed(let givenUp)), (.modified, .uploadFailed(let givenUp)), (.failed, .uploadFailed(let givenUp)):
            return (givenUp ? .failed : .modified, .none)
        case (.uploading, .versionMismatch(let newer)), (.modified, .versionMismatch(let newer)), (.failed, .versionMismatch(let newer)):
            return newer ? (.modified, .none) : (.placeholder, .dropCache)

        case (.modified, .upstreamChanged), (.uploading, .upstreamChanged), (.failed, .upstreamChanged):
            // Ours is the truth until its upload settles any conflict.
            return (state, .none)
        case (.placeholder, .upstreamChanged):
            return (.placeholder, .none)
        case (.fetching, .upstreamChanged), (.partial, .upstreamChanged), (.materialized, .upstreamChanged),
             (.conflict, .upstreamChanged):
            // A conflict copy changed upstream is someone's resolution: theirs now.
            return (.placeholder, .dropCache)

        case (.materialized, .evicted), (.partial, .evicted):
            return (.placeholder, .dropCache)

        default:
            return nil
        }
    }
}

extension StoredState {
    /// The stored states eviction may take content from: those in which the
    /// machine accepts `evicted` (the index selects candidates by them).
    public static var evictable: [StoredState] {
        allCases.filter { ItemStateMachine.transition(from: $0.state, on: .evicted) != nil }
    }
}
