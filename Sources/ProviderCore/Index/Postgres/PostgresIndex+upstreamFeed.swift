import Foundation
import PostgresNIO

/// The upstream's change feed as the index keeps it, as
/// `SQLiteIndex+upstreamFeed` defines it.
extension PostgresIndex {
    func upstreamFeed(domain: String) async throws -> UpstreamFeedState? {
        try await read { t in
            try await t.rows("SELECT position, covers_since FROM upstream_feed WHERE domain = \(domain)").first.map { row in
                let (position, coversSince) = try row.decode((String, Double).self)
                return UpstreamFeedState(position: position, coversSince: Date(timeIntervalSince1970: coversSince))
            }
        }
    }

    func startUpstreamFeed(domain: String, at state: UpstreamFeedState) async throws {
        try await write { t in
            try await t.execute("""
                INSERT INTO upstream_feed (domain, position, covers_since) VALUES (\(domain), \(state.position), \(state.coversSince.timeIntervalSince1970))
                ON CONFLICT (domain) DO UPDATE SET position = EXCLUDED.position, covers_since = EXCLUDED.covers_since
                """)
        }
    }

    func forgetUpstreamFeed(domain: String) async throws {
        try await write { t in try await t.execute("DELETE FROM upstream_feed WHERE domain = \(domain)") }
    }

    func applyUpstreamChanges(domain: String, present: [(path: ItemPath, entry: UpstreamEntry)], removed: [ItemPath],
                              position: String, last: Bool, namespace: NamespaceStamp?) async throws -> ListingEffects {
        let present = present.map { UpstreamChange(path: $0.path, entry: $0.entry) }
        return try await write { t in
            try await t.require(namespace)
            guard let coversSince = try await t.first("SELECT covers_since FROM upstream_feed WHERE domain = \(domain)", as: Double.self)
            else { return ListingEffects() }
            var folders = FolderWalk(domain: domain)
            var effects = ListingEffects()
            for path in removed {
                // A folder that went takes what the walk cached below it.
                folders.forget(below: path)
                guard let name = path.last, let parent = try await folders.folder(Array(path.dropLast()), t),
                      let item = try await t.child(of: parent, named: name), !item.dirty else { continue }
                effects.stale += try await t.deleteSubtree(id: item.id)
            }
            for change in present {
                guard let parent = try await folders.folder(Array(change.path.dropLast()), t) else { continue }
                folders.forget(below: change.path)
                let applied = try await t.apply([change.entry], folder: parent, domain: domain, pass: 0)
                effects.stale += applied.stale
                effects.changedLocal += applied.changedLocal
            }
            try await t.execute("UPDATE upstream_feed SET position = \(position) WHERE domain = \(domain)")
            if last {
                try await t.execute("""
                    UPDATE item SET listed_at = \(Date().timeIntervalSince1970)
                    WHERE domain = \(domain) AND is_folder AND listed_at >= \(coversSince)
                    """)
            }
            return effects
        }
    }

    private struct UpstreamChange: Sendable {
        let path: ItemPath
        let entry: UpstreamEntry
    }

    /// Folder ids by path, found once per transaction.
    private struct FolderWalk {
        let domain: String
        var known: [ItemPath: Int64] = [:]

        mutating func forget(below path: ItemPath) {
            known = known.filter { !$0.key.starts(with: path) }
        }

        mutating func folder(_ path: ItemPath, _ t: PostgresTransaction) async throws -> Int64? {
            if let id = known[path] { return id }
            let id: Int64
            if path.isEmpty {
                guard let root = try await t.first("SELECT id FROM item WHERE domain = \(domain) AND parent_id IS NULL", as: Int64.self)
                else { return nil }
                id = root
            } else {
                guard let parent = try await folder(Array(path.dropLast()), t),
                      let child = try await t.child(of: parent, named: path.last!), child.isFolder else { return nil }
                id = child.id
            }
            known[path] = id
            return id
        }
    }
}
