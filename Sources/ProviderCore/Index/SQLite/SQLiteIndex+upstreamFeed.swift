import Foundation
import GRDB

/// The upstream's change feed as the index keeps it: the position it has
/// read up to, and since when: listings read after that moment are kept
/// current by the feed, older ones are read again when they go stale.
extension SQLiteIndex {
    static func createUpstreamFeed(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE upstream_feed (
                domain TEXT PRIMARY KEY,
                position TEXT NOT NULL,
                covers_since REAL NOT NULL
            )
            """)
    }

    func upstreamFeed(domain: String) async throws -> UpstreamFeedState? {
        try await read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT position, covers_since FROM upstream_feed WHERE domain = ?"), arguments: [domain]).map {
                UpstreamFeedState(position: $0[0], coversSince: Date(timeIntervalSince1970: $0[1]))
            }
        }
    }

    /// Starts following the feed from `position`, taken after `coversSince`.
    func startUpstreamFeed(domain: String, at state: UpstreamFeedState) async throws {
        try await write { db in
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO upstream_feed (domain, position, covers_since) VALUES (?, ?, ?)").execute(arguments: [domain, state.position, state.coversSince.timeIntervalSince1970])
        }
    }

    /// The upstream no longer knows the position: listings are read again
    /// until a new position is taken.
    func forgetUpstreamFeed(domain: String) async throws {
        try await write { db in try db.cachedStatement(sql: "DELETE FROM upstream_feed WHERE domain = ?").execute(arguments: [domain]) }
    }

    /// Applies one page of the upstream's changes in one transaction, as a
    /// listing page is applied (`apply`: what waits to be uploaded is kept,
    /// a changed version drops the cached content), and moves the position
    /// on with it. A change under a folder the index does not hold is
    /// skipped: that folder is listed when someone opens it. With `last`,
    /// every listing the feed covers is marked fresh.
    func applyUpstreamChanges(domain: String, present: [(path: ItemPath, entry: UpstreamEntry)], removed: [ItemPath],
                              position: String, last: Bool, namespace: NamespaceStamp?) async throws -> ListingEffects {
        try await write { db in
            guard let coversSince = try Double.fetchOne(db.cachedStatement(sql: "SELECT covers_since FROM upstream_feed WHERE domain = ?"), arguments: [domain])
            else { return ListingEffects() }
            var folders: [ItemPath: Int64] = [:]
            func folder(_ path: ItemPath) throws -> Int64? {
                if let known = folders[path] { return known }
                let id: Int64
                if path.isEmpty {
                    guard let root = try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM item WHERE domain = ? AND parent_id IS NULL"), arguments: [domain])
                    else { return nil }
                    id = root
                } else {
                    guard let parent = try folder(Array(path.dropLast())),
                          let child = try Self.child(db, of: parent, named: path.last!), child.isFolder else { return nil }
                    id = child.id
                }
                folders[path] = id
                return id
            }
            var effects = ListingEffects()
            for path in removed {
                // A folder that went takes what the walk cached below it.
                folders = folders.filter { !$0.key.starts(with: path) }
                guard let name = path.last, let parent = try folder(Array(path.dropLast())),
                      let item = try Self.child(db, of: parent, named: name), !item.dirty else { continue }
                effects.stale += try Self.deleteSubtree(db, id: item.id)
            }
            for (path, entry) in present {
                guard let parent = try folder(Array(path.dropLast())) else { continue }
                folders = folders.filter { !$0.key.starts(with: path) }
                let applied = try Self.apply(db, [entry], folder: parent, domain: domain, pass: 0)
                effects.stale += applied.stale
                effects.changedLocal += applied.changedLocal
            }
            try db.cachedStatement(sql: "UPDATE upstream_feed SET position = ? WHERE domain = ?").execute(arguments: [position, domain])
            if last {
                try db.cachedStatement(sql: "UPDATE item SET listed_at = ? WHERE domain = ? AND is_folder = 1 AND listed_at >= ?").execute(arguments: [Date().timeIntervalSince1970, domain, coversSince])
            }
            return effects
        }
    }
}
