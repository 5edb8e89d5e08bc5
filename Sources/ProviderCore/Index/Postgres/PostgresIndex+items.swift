import Foundation
import PostgresNIO

/// Item rows: lookups, pages of children, and the writes of the provider,
/// as `SQLiteIndex+items` defines them. Reads are one statement each (a
/// network round trip), so a path's chain is one recursive query rather
/// than a query per name.
extension PostgresIndex {
    func root(domain: String) async throws -> Item {
        let existing = try await read { t in
            try await t.items("SELECT \(unescaped: Item.columns) FROM item WHERE domain = \(domain) AND parent_id IS NULL").first
        }
        if let existing { return existing }
        return try await write { t in
            // Another instance may have made it since the read.
            if let root = try await t.items("SELECT \(unescaped: Item.columns) FROM item WHERE domain = \(domain) AND parent_id IS NULL").first {
                return root
            }
            let now = Date().timeIntervalSince1970
            return try await t.items("""
                INSERT INTO item (domain, parent_id, name, is_folder, modified, created, state)
                VALUES (\(domain), NULL, '', true, \(now), \(now), 'folder') RETURNING \(unescaped: Item.columns)
                """)[0]
        }
    }

    /// The chain from the root down the path's names, in one statement:
    /// the names go as an array, and the walk stops at the first missing
    /// name or at a file.
    func chain(domain: String, path: ItemPath) async throws -> [Item] {
        try await read { t in
            try await t.items("""
                WITH RECURSIVE walk(id, depth) AS (
                    SELECT id, 0 FROM item WHERE domain = \(domain) AND parent_id IS NULL
                    UNION ALL
                    SELECT item.id, walk.depth + 1 FROM walk
                    JOIN item parent ON parent.id = walk.id AND parent.is_folder
                    JOIN item ON item.parent_id = walk.id AND item.name = (\(path)::text[])[walk.depth + 1]
                    WHERE walk.depth < cardinality(\(path)::text[]))
                SELECT \(unescaped: Self.qualified(Item.columns, "item")) FROM walk JOIN item ON item.id = walk.id ORDER BY walk.depth
                """)
        }
    }

    func item(id: Int64) async throws -> Item? {
        try await read { t in try await t.item(id: id) }
    }

    func conflictCopies(in folder: Int64) async throws -> [Item] {
        try await read { t in
            try await t.items("SELECT \(unescaped: Item.columns) FROM item WHERE parent_id = \(folder) AND state = \(StoredState.conflict.rawValue)")
        }
    }

    func child(of parent: Int64, named name: String) async throws -> Item? {
        try await read { t in try await t.child(of: parent, named: name) }
    }

    func children(of parent: Int64, after name: String?, limit: Int) async throws -> [Item] {
        try await read { t in
            if let name {
                return try await t.items("SELECT \(unescaped: Item.columns) FROM item WHERE parent_id = \(parent) AND name > \(name) ORDER BY name LIMIT \(limit)")
            }
            return try await t.items("SELECT \(unescaped: Item.columns) FROM item WHERE parent_id = \(parent) ORDER BY name LIMIT \(limit)")
        }
    }

    func descendants(of id: Int64) async throws -> [Item] {
        try await read { t in try await t.descendants(of: id) }
    }

    func descendantsWithPaths(of folder: Int64, at path: ItemPath) async throws -> [(Item, ItemPath)] {
        try await read { t in try await t.descendantsWithPaths(of: folder, at: path) }
    }

    func ancestry(of id: Int64) async throws -> [Int64] {
        try await read { t in
            try await t.rows("""
                WITH RECURSIVE up(id, parent_id, depth) AS (
                    SELECT id, parent_id, 0 FROM item WHERE id = \(id)
                    UNION ALL SELECT item.id, item.parent_id, up.depth + 1 FROM item JOIN up ON item.id = up.parent_id)
                SELECT id FROM up ORDER BY depth DESC
                """).map { try $0.decode(Int64.self) }
        }
    }

    func path(of id: Int64) async throws -> ItemPath {
        try await read { t in try await t.path(of: id) }
    }

    func descendantsWithDeadProperties(of id: Int64) async throws -> [Int64] {
        try await read { t in
            try await t.rows("""
                WITH RECURSIVE sub(id) AS (SELECT id FROM item WHERE parent_id = \(id) UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                SELECT DISTINCT item_id FROM dead_property WHERE item_id IN (SELECT id FROM sub)
                """).map { try $0.decode(Int64.self) }
        }
    }

    func listedVersion(of id: Int64) async throws -> String? {
        try await read { t in
            try await t.rows("SELECT listed_version FROM item WHERE id = \(id)").first.flatMap { try $0.decode(String?.self) }
        }
    }

    @discardableResult
    func insertItem(_ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?, listed: Bool,
                    checksum: String?, conflictCopy: Bool) async throws -> Item {
        try await write { t in
            let item = try await t.insert(entry, parent: parent, domain: domain, cachedVersion: cachedVersion, listed: listed,
                                          state: conflictCopy ? .conflict : nil)
            guard checksum != nil else { return item }
            try await t.recordChecksum(checksum, of: item.id)
            return try await t.existingItem(id: item.id)
        }
    }

    @discardableResult
    func updateContent(id: Int64, entry: UpstreamEntry, event: ItemStateMachine.Event, checksum: String?) async throws -> Item {
        let cachedVersion: String? = event == .written(through: true) ? entry.version : nil
        return try await write { t in
            try await t.advance(id: id, on: event)
            try await t.execute("""
                UPDATE item SET size = \(entry.size), modified = \(entry.modified.timeIntervalSince1970), upstream_version = \(entry.version),
                    cached_version = \(cachedVersion), executable = \(entry.executable), content_version = content_version + 1
                WHERE id = \(id)
                """)
            try await t.recordChecksum(checksum, of: id)
            return try await t.existingItem(id: id)
        }
    }

    func markCached(id: Int64, version: String) async throws -> Bool {
        try await write { t in
            guard let row = try await t.rows("SELECT state, upstream_version FROM item WHERE id = \(id) FOR UPDATE").first else { return false }
            let (state, upstreamVersion) = try row.decode((String, String?).self)
            guard upstreamVersion == version else { return false }
            // Content fetched again for an item that is local already keeps its state.
            if state == StoredState.placeholder.rawValue {
                try await t.advance(id: id, on: .fetchFinished)
            }
            try await t.execute("UPDATE item SET cached_version = \(version) WHERE id = \(id)")
            return true
        }
    }

    func markListed(id: Int64, at date: Date) async throws {
        try await write { t in try await t.execute("UPDATE item SET listed_at = \(date.timeIntervalSince1970) WHERE id = \(id)") }
    }

    func applyListingPage(folder: Int64, domain: String, entries: [UpstreamEntry], pass: Int64,
                          namespace: NamespaceStamp?) async throws -> ListingEffects {
        try await write { t in
            try await t.require(namespace)
            return try await t.apply(entries, folder: folder, domain: domain, pass: pass)
        }
    }

    /// Ends a paged listing: members no page named are gone upstream (but
    /// what waits to be uploaded stays), and the folder is listed now.
    func finishListing(folder: Int64, pass: Int64, version: String?, namespace: NamespaceStamp?) async throws -> [Int64] {
        try await write { t in
            try await t.require(namespace)
            var stale: [Int64] = []
            let unseen = try await t.items("SELECT \(unescaped: Item.columns) FROM item WHERE parent_id = \(folder) AND seen IS DISTINCT FROM \(pass)")
            for item in unseen where !item.dirty {
                stale += try await t.deleteSubtree(id: item.id)
            }
            try await t.execute("UPDATE item SET listed_at = \(Date().timeIntervalSince1970), listed_version = \(version) WHERE id = \(folder)")
            return stale
        }
    }

    func delete(id: Int64) async throws -> [Int64] {
        try await write { t in try await t.deleteSubtree(id: id) }
    }

    /// Re-parents and renames an item (MOVE); locks rooted in the moved
    /// subtree are dropped (RFC 4918 section 7.5).
    func move(id: Int64, to parent: Int64, name: String, entry: UpstreamEntry) async throws -> Item {
        try await write { t in
            try await t.execute("""
                WITH RECURSIVE sub(id) AS (SELECT \(id)::bigint UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                DELETE FROM lock WHERE item_id IN (SELECT id FROM sub)
                """)
            try await t.execute("UPDATE item SET parent_id = \(parent), name = \(name), modified = \(entry.modified.timeIntervalSince1970) WHERE id = \(id)")
            if !entry.isFolder {
                // Keep the cached bytes valid when the store reports the same
                // content under a new version string (a rename keeps the inode).
                try await t.execute("""
                    UPDATE item SET cached_version = CASE WHEN cached_version = upstream_version THEN \(entry.version) ELSE cached_version END,
                        upstream_version = \(entry.version) WHERE id = \(id)
                    """)
            }
            return try await t.existingItem(id: id)
        }
    }

    func resetDomain(_ domain: String) async throws -> Int {
        try await write { t in
            let count = try await t.first("SELECT count(*) FROM item WHERE domain = \(domain)", as: Int64.self) ?? 0
            try await t.execute("DELETE FROM item WHERE domain = \(domain) AND parent_id IS NULL")
            return Int(count)
        }
    }

    /// `columns` with each name prefixed by `table.`, for joins.
    static func qualified(_ columns: String, _ table: String) -> String {
        columns.split(separator: ",").map { "\(table).\($0.trimmingCharacters(in: .whitespaces))" }.joined(separator: ", ")
    }
}

extension PostgresTransaction {
    /// A new row starts as a folder, a placeholder, or materialized when its
    /// content is cached already (written through, or copied here).
    func insert(_ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?, listed: Bool,
                state: StoredState? = nil) async throws -> Item {
        let now = Date().timeIntervalSince1970
        let initial = state ?? (entry.isFolder ? .folder : cachedVersion != nil && cachedVersion == entry.version ? .materialized : .placeholder)
        let listedAt: Double? = listed ? now : nil
        return try await items("""
            INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, upstream_version, cached_version, executable, listed_at, state)
            VALUES (\(domain), \(parent), \(entry.name), \(entry.isFolder), \(entry.isFolder ? 0 : entry.size), \(entry.modified.timeIntervalSince1970),
                    \(now), \(entry.version), \(cachedVersion), \(entry.executable), \(listedAt), \(initial.rawValue))
            RETURNING \(unescaped: Item.columns)
            """)[0]
    }

    /// Every item below `id` (not including it), parents before children.
    func descendants(of id: Int64) async throws -> [Item] {
        try await items("""
            WITH RECURSIVE sub(id, depth) AS (
                SELECT id, 1 FROM item WHERE parent_id = \(id)
                UNION ALL SELECT item.id, sub.depth + 1 FROM item JOIN sub ON item.parent_id = sub.id)
            SELECT \(unescaped: PostgresIndex.qualified(Item.columns, "item")) FROM item JOIN sub ON item.id = sub.id ORDER BY sub.depth
            """)
    }

    func descendantsWithPaths(of folder: Int64, at path: ItemPath) async throws -> [(Item, ItemPath)] {
        Item.withPaths(try await descendants(of: folder), below: folder, at: path)
    }

    /// One page of a listing, decided as SQLite decides it (`ListingDecision`).
    func apply(_ entries: [UpstreamEntry], folder: Int64, domain: String, pass: Int64) async throws -> ListingEffects {
        var effects = ListingEffects()
        for entry in entries {
            let item = try await child(of: folder, named: entry.name)
            var marked = item?.id
            switch ListingDecision(existing: item, entry: entry) {
            case .insert:
                marked = try await insert(entry, parent: folder, domain: domain, cachedVersion: nil, listed: false).id
            case .keepOurs, .unchanged:
                break
            case .replace:
                effects.stale += try await deleteSubtree(id: item!.id)
                marked = try await insert(entry, parent: folder, domain: domain, cachedVersion: nil, listed: false).id
            case .newContent:
                let item = item!
                try await execute("""
                    UPDATE item SET size = \(entry.size), modified = \(entry.modified.timeIntervalSince1970), upstream_version = \(entry.version),
                        cached_version = NULL, executable = \(entry.executable), content_version = content_version + 1
                    WHERE id = \(item.id)
                    """)
                if try await advance(id: item.id, on: .upstreamChanged) == .dropCache || item.cachedVersion != nil {
                    effects.stale.append(item.id)
                }
                if item.isMaterialized { effects.changedLocal.append(item.id) }
            case .newFolderDate:
                try await execute("UPDATE item SET modified = \(entry.modified.timeIntervalSince1970) WHERE id = \(item!.id)")
            }
            try await execute("UPDATE item SET seen = \(pass) WHERE id = \(marked!)")
        }
        return effects
    }
}
