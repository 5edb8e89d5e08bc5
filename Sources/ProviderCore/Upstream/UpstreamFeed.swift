import Foundation

/// One page of what changed below a store's root since a position of the
/// upstream's own change feed (another davgate's RFC 6578 sync-collection):
/// one request for a whole tree instead of a listing per folder.
public struct UpstreamChanges: Sendable {
    /// Entries there now that changed (created, modified, moved in), each
    /// with its path from the store's root, parents before their members.
    public var present: [(path: ItemPath, entry: UpstreamEntry)]
    /// Paths that held something and hold nothing now.
    public var removed: [ItemPath]
    /// Where the next page, or the next refresh, continues from.
    public var position: String
    /// More changes wait past `position`.
    public var more: Bool

    public init(present: [(path: ItemPath, entry: UpstreamEntry)], removed: [ItemPath], position: String, more: Bool) {
        self.present = present
        self.removed = removed
        self.position = position
        self.more = more
    }
}

/// Why a store's change feed cannot answer.
public enum UpstreamFeedError: Error, Sendable, Equatable {
    /// The store, or the server behind it, has no change feed.
    case unsupported
    /// The upstream no longer knows the position (compacted, or the feed
    /// was rebuilt): listings are read again and a new position taken.
    case positionRefused
}

/// Stores with a change feed. The provider asks for a position before it
/// lists anything, then keeps every listing it has current with
/// `changes(since:limit:)`; stores without one keep the default, and the
/// provider lists folder by folder.
extension UpstreamStore {
    /// The feed's position now, or nil when the store has no feed.
    public func feedPosition() async throws -> String? { nil }

    public func changes(since position: String, limit: Int) async throws -> UpstreamChanges {
        throw UpstreamFeedError.unsupported
    }
}
