import Foundation
import Logging

/// The domain's change feed for clients (RFC 6578 sync-collection): what
/// changed below a folder since a token, answered from the index's record
/// of changes (`MetadataIndex+changes`) instead of a walk of the tree.
extension Provider {
    /// What a sync answers: members to report with their properties, places
    /// whose item is gone, and the token to continue from.
    public struct ChangeSet: Sendable {
        /// Items that are there now and changed (or, for a first sync, every
        /// member), with their paths.
        public var present: [(Item, ItemPath)]
        /// Paths that held something the client may know and hold nothing now.
        public var removed: [ItemPath]
        public var token: SyncToken
        /// More changes wait past `token`: the client asks again with it.
        public var truncated: Bool
    }

    /// Why a token cannot be answered: RFC 6578's `valid-sync-token`
    /// precondition; the client starts over with an empty token.
    public struct InvalidSyncToken: Error, CustomStringConvertible {
        public let token: String
        public let reason: String
        public var description: String { "sync token \(token) \(reason); sync again from an empty token" }
    }

    /// The token naming the feed's present: `DAV:sync-token` of every collection.
    public func currentSyncToken() async throws -> SyncToken {
        let position = try await index.feedPosition()
        return SyncToken(feed: position.identity, sequence: position.latest)
    }

    /// The changes below `folder` (at `path`) since `token`, or every member
    /// for an empty token; `infinite` reaches the whole subtree, otherwise
    /// the folder's members only. At most `limit` places per answer.
    /// - Throws: `InvalidSyncToken` for a token of another feed, from the
    ///   future, or older than the changes still kept.
    public func changes(below folder: Item, at path: ItemPath, since token: String, infinite: Bool, limit: Int?) async throws -> ChangeSet {
        guard !token.isEmpty else { return try await everything(below: folder, at: path, infinite: infinite) }
        let position = try await index.feedPosition()
        guard let parsed = SyncToken(token), parsed.feed == position.identity else {
            throw InvalidSyncToken(token: token, reason: "is not one of this server's")
        }
        guard parsed.sequence <= position.latest else { throw InvalidSyncToken(token: token, reason: "names a change that never happened") }
        guard parsed.sequence >= position.oldest else {
            throw InvalidSyncToken(token: token, reason: "is older than the changes this server still keeps")
        }
        // Members changed upstream since the folder's last listing are
        // recorded when it is read again.
        if !infinite { try await refreshIfStale(folder) }
        let found = try await index.changes(domain: domain, below: folder.id, at: path, infinite: infinite, since: parsed.sequence, limit: limit)
        return ChangeSet(present: found.present, removed: found.removed, token: SyncToken(feed: position.identity, sequence: found.covered),
                         truncated: found.truncated)
    }

    /// A first sync: every member (or every item below, `infinite`). The
    /// token is read after the refresh and before the members: a change
    /// racing the answer may be reported twice, never missed.
    private func everything(below folder: Item, at path: ItemPath, infinite: Bool) async throws -> ChangeSet {
        try await refreshIfStale(folder)
        let position = try await index.feedPosition()
        let token = SyncToken(feed: position.identity, sequence: position.latest)
        var present: [(Item, ItemPath)] = []
        if infinite {
            present = try await index.descendantsWithPaths(of: folder.id, at: path)
        } else {
            try await forEachChildPage(of: folder) { page in
                present += page.map { ($0, path + [$0.name]) }
            }
        }
        return ChangeSet(present: present, removed: [], token: token, truncated: false)
    }

    /// Forgets changes older than 30 days beyond the newest 100,000, once
    /// per start (`runUploads`): the feed stays bounded, and a client away
    /// longer syncs again from an empty token.
    func compactChangeFeed() async {
        do {
            let removed = try await index.compactChanges(olderThan: 30 * 86_400, keep: 100_000)
            if removed > 0 { logger.info("change feed: forgot \(removed) changes older than 30 days") }
        } catch {
            logger.warning("change feed: compaction failed: \(error)")
        }
    }
}
