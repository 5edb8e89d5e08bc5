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

    /// `chain`: with instances sharing the index, nothing here can know
    /// when another instance's write made a remembered chain stale.
    func writeChain(domain: String, path: ItemPath) async throws -> [Item] {
        try await chain(domain: domain, path: path)
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
                SELECT \(unescaped: Item.qualifiedColumns) FROM walk JOIN item ON item.id = walk.id ORDER BY walk.depth
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

    /// A `cachedVersion` (the bytes are in this instance's cache: written
    /// through, or a conflict copy made here) goes to the holdings once the
    /// row is committed; the shared row keeps none.
    @discardableResult
    func insertItem(_ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?, listed: Bool,
                    checksum: String?, conflictCopy: Bool) async throws -> Item {
        let item = try await write { t in
            let item = try await t.insert(entry, parent: parent, domain: domain, listed: listed, state: conflictCopy ? .conflict : nil)
            guard checksum != nil else { return item }
            try await t.recordChecksum(checksum, of: item.id)
            return try await t.existingItem(id: item.id)
        }
        guard let cachedVersion, !entry.isFolder else { return item }
        await holdAfterCommit(cachedVersion, of: item.id)
        return holdings.overlay(item)
    }

    /// Written through, the new content is in this instance's cache
    /// already (the provider installs it before it calls this): the old
    /// entry goes before the transaction, so a commit that fails cannot
    /// leave it naming the new bytes, and the new one comes after it.
    @discardableResult
    func updateContent(id: Int64, entry: UpstreamEntry, event: ItemStateMachine.Event, checksum: String?) async throws -> Item {
        let through = event == .written(through: true)
        if through { try await holdings.forget([id]) }
        let item = try await write { t in
            try await t.advance(id: id, on: event)
            try await t.execute("""
                UPDATE item SET size = \(entry.size), modified = \(entry.modified.timeIntervalSince1970), upstream_version = \(entry.version),
                    cached_version = NULL, executable = \(entry.executable), content_version = content_version + 1
                WHERE id = \(id)
                """)
            try await t.recordChecksum(checksum, of: id)
            return try await t.existingItem(id: id)
        }
        guard through else { return item }
        await holdAfterCommit(entry.version, of: id)
        return holdings.overlay(item)
    }

    /// The fetched `version` is in this instance's cache: recorded in its
    /// holdings if the row still names that version (no write or listing
    /// moved it on meanwhile). The check needs no lock: should the row move
    /// on between it and the record, the entry no longer equals the row's
    /// version, and the item is a placeholder here again.
    func markCached(id: Int64, version: String) async throws -> Bool {
        let current = try await read { t in
            try await t.rows("SELECT upstream_version FROM item WHERE id = \(id)").first.map { try $0.decode(String?.self) }
        }
        guard let current, current == version else { return false }
        do {
            try await holdings.record(version, for: id)
        } catch {
            // The fetched bytes serve the reader that waits for them; the next read fetches again.
            logger.warning("holdings: cannot record a fetched version", metadata: ["item": "\(id)", "error": "\(error)"])
            return false
        }
        return true
    }

    /// Records a version this instance's cache holds once the index has
    /// committed the row naming it. Not had, it costs a fetch on the next
    /// read, never stale bytes, so the change that committed is not failed
    /// for it.
    func holdAfterCommit(_ version: String, of id: Int64) async {
        do {
            try await holdings.record(version, for: id)
        } catch {
            logger.warning("holdings: cannot record a cached version; the next read fetches it again",
                           metadata: ["item": "\(id)", "error": "\(error)"])
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
        let ids = try await write { t in try await t.deleteSubtree(id: id) }
        // Ids are never reused, so the entries would match nothing; they go to keep the holdings small.
        try? await holdings.forget(ids)
        return ids
    }

    /// Re-parents and renames an item (MOVE); locks rooted in the moved
    /// subtree are dropped (RFC 4918 section 7.5).
    ///
    /// The store may report the same content under a new version string (a
    /// rename keeps the inode, not always the version): this instance's
    /// cached bytes stay valid when they were the current version, so its
    /// holdings follow. Other instances' entries no longer match the row,
    /// and they fetch the file again on their next read.
    func move(id: Int64, to parent: Int64, name: String, entry: UpstreamEntry) async throws -> Item {
        let (item, before) = try await write { t in
            try await t.execute("""
                WITH RECURSIVE sub(id) AS (SELECT \(id)::bigint UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                DELETE FROM lock WHERE item_id IN (SELECT id FROM sub)
                """)
            let before = try await t.first("SELECT upstream_version FROM item WHERE id = \(id) FOR UPDATE", as: String?.self) ?? nil
            try await t.execute("UPDATE item SET parent_id = \(parent), name = \(name), modified = \(entry.modified.timeIntervalSince1970) WHERE id = \(id)")
            if !entry.isFolder {
                try await t.execute("UPDATE item SET cached_version = NULL, upstream_version = \(entry.version) WHERE id = \(id)")
            }
            return (try await t.existingItem(id: id), before)
        }
        guard !entry.isFolder, let before, before != entry.version else { return item }
        do {
            _ = try await holdings.replace(before, with: entry.version, for: id)
        } catch {
            logger.warning("holdings: cannot follow a moved file's new version; the next read fetches it again",
                           metadata: ["item": "\(id)", "error": "\(error)"])
        }
        return holdings.overlay(item)
    }

    func resetDomain(_ domain: String) async throws -> Int {
        try await write { t in
            let count = try await t.first("SELECT count(*) FROM item WHERE domain = \(domain)", as: Int64.self) ?? 0
            try await t.execute("DELETE FROM item WHERE domain = \(domain) AND parent_id IS NULL")
            return Int(count)
        }
    }
}

extension PostgresTransaction {
    /// A new row starts as a folder or a clean file (`placeholder` in the
    /// shared row: whether content is cached is each instance's holdings'
    /// business, `PostgresIndex.insertItem`), or in `state`.
    func insert(_ entry: UpstreamEntry, parent: Int64, domain: String, listed: Bool, state: StoredState? = nil) async throws -> Item {
        let now = Date().timeIntervalSince1970
        let initial = state ?? (entry.isFolder ? .folder : .placeholder)
        let listedAt: Double? = listed ? now : nil
        return try await items("""
            INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, upstream_version, executable, listed_at, state)
            VALUES (\(domain), \(parent), \(entry.name), \(entry.isFolder), \(entry.isFolder ? 0 : entry.size), \(entry.modified.timeIntervalSince1970),
                    \(now), \(entry.version), \(entry.executable), \(listedAt), \(initial.rawValue))
            RETURNING \(unescaped: Item.columns)
            """)[0]
    }

    /// Every item below `id` (not including it), parents before children.
    func descendants(of id: Int64) async throws -> [Item] {
        try await items("""
            WITH RECURSIVE sub(id, depth) AS (
                SELECT id, 1 FROM item WHERE parent_id = \(id)
                UNION ALL SELECT item.id, sub.depth + 1 FROM item JOIN sub ON item.parent_id = sub.id)
            SELECT \(unescaped: Item.qualifiedColumns) FROM item JOIN sub ON item.id = sub.id ORDER BY sub.depth
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
                marked = try await insert(entry, parent: folder, domain: domain, listed: false).id
            case .keepOurs, .unchanged:
                break
            case .replace:
                effects.stale += try await deleteSubtree(id: item!.id)
                marked = try await insert(entry, parent: folder, domain: domain, listed: false).id
            case .newContent:
                // `item` is as this instance sees it: its cached bytes go
                // (`stale`); other instances' no longer match the row's
                // version, so they read the new one and evict the old.
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
