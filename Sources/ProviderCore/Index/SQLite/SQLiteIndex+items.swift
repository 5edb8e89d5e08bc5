import Foundation
import GRDB
import Synchronization

/// Item rows: lookups, pages of children, and the writes of the provider.
extension SQLiteIndex {
    func root(domain: String) async throws -> Item {
        // Every request resolves from the root: read first, the hot path writes nothing.
        if let existing = try lookupStatement({ db in try Self.root(db, domain: domain) }) { return existing }
        return try await write { db in
            if let existing = try Self.root(db, domain: domain) { return existing }
            let now = Date().timeIntervalSince1970
            try db.cachedStatement(sql: "INSERT INTO item (domain, parent_id, name, is_folder, modified, created, state) VALUES (?, NULL, '', 1, ?, ?, 'folder')").execute(arguments: [domain, now, now])
            return try Self.item(db, id: db.lastInsertedRowID)
        }
    }

    static func root(_ db: Database, domain: String) throws -> Item? {
        try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE domain = ? AND parent_id IS NULL").item([domain])
    }

    /// Walks a path from the domain's root in one statement: the items
    /// found, root first, stopping at the first name that is missing (or
    /// below a file). Empty when the domain has no root yet. One statement
    /// is one snapshot, so it needs no transaction around it (a statement
    /// per name inside `BEGIN`/`COMMIT` was a tenth of a small PUT's time,
    /// asked twice per PUT, issue 14).
    func chain(domain: String, path: ItemPath) async throws -> [Item] {
        // A joiner of the open batch reads it, which nobody else may see.
        if seesBatch { return try readChain(domain: domain, path: path) }
        return try chains.value(for: ChainKey(domain: domain, path: path)) { try readChain(domain: domain, path: path) }
    }

    /// The chain of a write's folder: `chain`, except that each folder's
    /// `treeVersion` may lag behind changes made below it since. Kept
    /// across the writes that change no folder (`keepingFolders`: a PUT's
    /// commit, an upload's completion), which in a burst of small PUTs into
    /// one folder made `chain` read the same two rows again for every PUT,
    /// a twelfth of its CPU (issue 14): each such write raises the tree
    /// versions of the folders above it, and nothing else of them, so only
    /// `chain`, whose last folder a PROPFIND shows with its ETag, forgets.
    /// A write resolves its target from the folders' ids, kinds and
    /// listing times; every write that may change those forgets this too.
    func writeChain(domain: String, path: ItemPath) async throws -> [Item] {
        try writeChains.value(for: ChainKey(domain: domain, path: path)) {
            writeChainReads.wrappingAdd(1, ordering: .relaxed)
            return try readChain(domain: domain, path: path)
        }
    }

    private func readChain(domain: String, path: ItemPath) throws -> [Item] {
        try lookupStatement { db in
            // Sorted here: an ORDER BY made SQLite build a temporary
            // B-tree for every walk.
            var walked: [(depth: Int64, item: Item)] = []
            try db.cachedStatement(sql: Self.chainQuery).forEachItem([domain, Self.jsonArray(path), path.count]) { item, rest in
                walked.append((rest.integer(0), item))
                return true
            }
            return walked.sorted { $0.depth < $1.depth }.map(\.item)
        }
    }

    /// The recursion takes the `depth`-th name of the JSON array bound
    /// second, through the (parent, name) index, while the item reached is
    /// a folder.
    private static let chainQuery = """
        WITH RECURSIVE walk(depth, id, is_folder) AS (
            SELECT 0, id, is_folder FROM item WHERE domain = ?1 AND parent_id IS NULL
            UNION ALL
            SELECT walk.depth + 1, item.id, item.is_folder FROM walk
                JOIN item ON item.parent_id = walk.id AND item.name = json_extract(?2, '$[' || walk.depth || ']')
                WHERE walk.depth < ?3 AND walk.is_folder)
        SELECT \(Item.qualifiedColumns), walk.depth FROM walk JOIN item ON item.id = walk.id
        """

    /// `names` as a JSON array of strings, for `json_extract`.
    static func jsonArray(_ names: [String]) -> String {
        var text = "["
        for (index, name) in names.enumerated() {
            if index > 0 { text += "," }
            text += "\""
            for scalar in name.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case _ where scalar.value < 0x20: text += "\\u00" + [UInt8(scalar.value)].hexEncoded()
                default: text.unicodeScalars.append(scalar)
                }
            }
            text += "\""
        }
        return text + "]"
    }

    /// `ids` as a JSON array, for `IN (SELECT value FROM json_each(?))`:
    /// one prepared statement serves any number of ids, where a list of
    /// `?` made a statement to parse and plan per batch.
    static func jsonArray(_ ids: [Int64]) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    func item(id: Int64) async throws -> Item? {
        try lookupStatement { db in
            try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE id = ?").item([id])
        }
    }

    /// The conflict copies in a folder (`Provider.keepBoth` stores them in
    /// the conflict state), from the state's index rather than a listing.
    func conflictCopies(in folder: Int64) async throws -> [Item] {
        try lookupStatement { db in
            try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? AND state = ?")
                .items([folder, StoredState.conflict.rawValue])
        }
    }

    func child(of parent: Int64, named name: String) async throws -> Item? {
        try lookupStatement { db in try Self.child(db, of: parent, named: name) }
    }

    static func child(_ db: Database, of parent: Int64, named name: String) throws -> Item? {
        try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? AND name = ?").item([parent, name])
    }

    /// One page of a folder's children in name order, starting after `name`;
    /// PROPFIND walks large folders page by page so memory stays flat.
    func children(of parent: Int64, after name: String?, limit: Int) async throws -> [Item] {
        // Decoded straight from SQLite's columns (`ItemColumns`): GRDB's
        // `fetchAll` copies every row into values first, which was a seventh
        // of a PROPFIND of 10,000 members.
        try lookupStatement { db in
            if let name {
                return try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? AND name > ? ORDER BY name LIMIT ?")
                    .items([parent, name, limit])
            }
            return try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? ORDER BY name LIMIT ?").items([parent, limit])
        }
    }

    /// Every item below `id` (not including it), parents before children.
    func descendants(of id: Int64) async throws -> [Item] {
        try await read { db in try Self.descendants(db, of: id) }
    }

    static func descendants(_ db: Database, of id: Int64) throws -> [Item] {
        try db.cachedStatement(sql: """
            WITH RECURSIVE sub(id, depth) AS (
                SELECT id, 1 FROM item WHERE parent_id = ?
                UNION ALL SELECT item.id, sub.depth + 1 FROM item JOIN sub ON item.parent_id = sub.id)
            SELECT \(Item.qualifiedColumns)
            FROM item JOIN sub ON item.id = sub.id ORDER BY sub.depth
            """).items([id])
    }

    /// Every item below `folder` (at `path`), parents first, with its path.
    static func descendantsWithPaths(_ db: Database, of folder: Int64, at path: ItemPath) throws -> [(Item, ItemPath)] {
        Item.withPaths(try descendants(db, of: folder), below: folder, at: path)
    }

    func descendantsWithPaths(of folder: Int64, at path: ItemPath) async throws -> [(Item, ItemPath)] {
        try await read { db in try Self.descendantsWithPaths(db, of: folder, at: path) }
    }

    /// The ids from the root down to `id`, inclusive (for lock inheritance).
    func ancestry(of id: Int64) async throws -> [Int64] {
        try lookupStatement { db in
            try Int64.fetchAll(db.cachedStatement(sql: """
                WITH RECURSIVE up(id, parent_id, depth) AS (
                    SELECT id, parent_id, 0 FROM item WHERE id = ?
                    UNION ALL SELECT item.id, item.parent_id, up.depth + 1 FROM item JOIN up ON item.id = up.parent_id)
                SELECT id FROM up ORDER BY depth DESC
                """), arguments: [id])
        }
    }

    /// Inserts a new item under `parent` from an upstream entry.
    @discardableResult
    /// - Parameter conflictCopy: the item holds our edit kept beside the
    ///   upstream's newer version (its state starts as `conflict`).
    func insertItem(_ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?, listed: Bool,
                    checksum: String?, conflictCopy: Bool) async throws -> Item {
        try await smallWrite { db in
            let item = try Self.insert(db, entry, parent: parent, domain: domain, cachedVersion: cachedVersion, listed: listed,
                                       state: conflictCopy ? .conflict : nil)
            guard checksum != nil else { return item }
            try Self.recordChecksum(db, checksum, of: item.id)
            return try Self.item(db, id: item.id)
        }
    }

    /// A new row starts as a folder, a placeholder, or materialized when its
    /// content is cached already (written through, or copied here).
    static func insert(_ db: Database, _ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?, listed: Bool,
                       state: StoredState? = nil) throws -> Item {
        try Self.item(db, id: insertRow(db, entry, parent: parent, domain: domain, cachedVersion: cachedVersion, listed: listed, state: state))
    }

    /// `insert` without reading the new row back, for a listing's members:
    /// `seen` (the refresh that found it) is set in the same statement.
    @discardableResult
    private static func insertRow(_ db: Database, _ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?,
                                  listed: Bool, state: StoredState? = nil, seen: Int64? = nil) throws -> Int64 {
        let now = Date().timeIntervalSince1970
        let initial = state ?? (entry.isFolder ? .folder : cachedVersion != nil && cachedVersion == entry.version ? .materialized : .placeholder)
        try db.cachedStatement(sql: """
                INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, upstream_version, cached_version, executable, listed_at, state, seen)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [domain, parent, entry.name, entry.isFolder, entry.isFolder ? 0 : entry.size,
                        entry.modified.timeIntervalSince1970, now, entry.version, cachedVersion, entry.executable,
                        listed ? now : nil, initial.rawValue, seen])
        return db.lastInsertedRowID
    }

    /// Records new content for an existing file: the upstream's entry and a
    /// bumped content version (new ETag). `event` says how it came: written
    /// through here (the cache holds it), or found changed upstream (the
    /// cached bytes are stale: the caller drops them).
    @discardableResult
    func updateContent(id: Int64, entry: UpstreamEntry, event: ItemStateMachine.Event, checksum: String?) async throws -> Item {
        let cachedVersion: String? = event == .written(through: true) ? entry.version : nil
        return try await smallWrite { db in
            try Self.advance(db, id: id, on: event)
            try db.cachedStatement(sql: """
                    UPDATE item SET size = ?, modified = ?, upstream_version = ?, cached_version = ?, executable = ?,
                        content_version = content_version + 1 WHERE id = ?
                    """).execute(arguments: [entry.size, entry.modified.timeIntervalSince1970, entry.version, cachedVersion, entry.executable, id])
            try Self.recordChecksum(db, checksum, of: id)
            return try Self.item(db, id: id)
        }
    }

    /// Marks the cache as holding `version` of the item (`fetchFinished`),
    /// unless the row moved on meanwhile (then the fetched bytes are already
    /// stale and stay unused).
    func markCached(id: Int64, version: String) async throws -> Bool {
        try await smallWrite { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT state, upstream_version FROM item WHERE id = ?"), arguments: [id]),
                  (row[1] as String?) == version
            else { return false }
            // Content fetched again for an item that is local already (its
            // cache file went missing) keeps its state.
            if (row[0] as String) == StoredState.placeholder.rawValue {
                try Self.advance(db, id: id, on: .fetchFinished)
            }
            try db.cachedStatement(sql: "UPDATE item SET cached_version = ? WHERE id = ?").execute(arguments: [version, id])
            return true
        }
    }

    /// Moves an item's stored state by `event` through the state machine, in
    /// the caller's transaction; an event the machine refuses rolls it back.
    @discardableResult
    static func advance(_ db: Database, id: Int64, on event: ItemStateMachine.Event) throws -> ItemStateMachine.Action {
        guard let raw = try String.fetchOne(db.cachedStatement(sql: "SELECT state FROM item WHERE id = ?"), arguments: [id]) else { return .none }
        var machine = ItemStateMachine(stored: StoredState(rawValue: raw) ?? .placeholder)
        let action = try machine.handle(event)
        if machine.state.stored.rawValue != raw {
            try db.cachedStatement(sql: "UPDATE item SET state = ? WHERE id = ?").execute(arguments: [machine.state.stored.rawValue, id])
        }
        return action
    }

    func markListed(id: Int64, at date: Date) async throws {
        try await smallWrite { db in
            try db.cachedStatement(sql: "UPDATE item SET listed_at = ? WHERE id = ?").execute(arguments: [date.timeIntervalSince1970, id])
        }
    }

    /// Records the checksum of an item's current content version, in the
    /// transaction that made that version (nil: none known, none recorded).
    static func recordChecksum(_ db: Database, _ checksum: String?, of id: Int64) throws {
        guard let checksum else { return }
        try db.cachedStatement(sql: "UPDATE item SET checksum = ?, checksum_version = content_version WHERE id = ?").execute(arguments: [checksum, id])
    }

    static func item(_ db: Database, id: Int64) throws -> Item {
        try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE id = ?").item([id])!
    }

    /// The upstream folder's version when its listing was last applied.
    func listedVersion(of id: Int64) async throws -> String? {
        try await read { db in
            try String.fetchOne(try db.cachedStatement(sql: "SELECT listed_version FROM item WHERE id = ?"), arguments: [id])
        }
    }

    /// Applies one page of a fresh upstream listing (all of it, for stores
    /// that list in one answer; 1,000 keys for S3) in one transaction: new
    /// names become placeholders, changed versions drop the cached content
    /// and bump the ETag, and each member named is marked with the
    /// refresh's `pass`; `finishListing` then removes what no page named.
    /// A folder of any size is listed holding one page at a time. Returns
    /// the ids whose cached content is now stale or gone (for the cache to
    /// delete), and the local files that changed (for the content policy).
    /// `namespace` is nil from one process's provider: its own clock covers it.
    func applyListingPage(folder: Int64, domain: String, entries: [UpstreamEntry], pass: Int64,
                          namespace: NamespaceStamp?) async throws -> ListingEffects {
        try await write { db in try Self.apply(db, entries, folder: folder, domain: domain, pass: pass) }
    }

    /// Ends a paged listing: members no page named are gone upstream.
    func finishListing(folder: Int64, pass: Int64, version: String?, namespace: NamespaceStamp?) async throws -> [Int64] {
        try await write { db in try Self.sweep(db, folder: folder, pass: pass, version: version) }
    }

    /// The page's members the index holds are read in one statement and
    /// marked seen in one: a refresh of an unchanged folder of 10,000 was
    /// 20,000 statements (a lookup and a mark per name), a quarter second
    /// of CPU each time its listing went stale.
    static func apply(_ db: Database, _ entries: [UpstreamEntry], folder: Int64, domain: String, pass: Int64) throws -> ListingEffects {
        var effects = ListingEffects()
        var held = try Self.members(db, of: folder, named: entries.map(\.name))
        var seen: [Int64] = []
        seen.reserveCapacity(entries.count)
        for entry in entries {
            // Taken out, so a name listed twice finds the row the first made.
            let item = try held.removeValue(forKey: ExactName(entry.name)) ?? Self.child(db, of: folder, named: entry.name)
            switch ListingDecision(existing: item, entry: entry) {
            case .insert:
                try Self.insertRow(db, entry, parent: folder, domain: domain, cachedVersion: nil, listed: false, seen: pass)
                continue
            case .keepOurs, .unchanged:
                break
            case .replace:
                effects.stale.append(contentsOf: try Self.deleteSubtree(db, id: item!.id))
                try Self.insertRow(db, entry, parent: folder, domain: domain, cachedVersion: nil, listed: false, seen: pass)
                continue
            case .newContent:
                let item = item!
                try db.cachedStatement(sql: """
                    UPDATE item SET size = ?, modified = ?, upstream_version = ?, cached_version = NULL, executable = ?,
                        content_version = content_version + 1 WHERE id = ?
                    """).execute(arguments: [entry.size, entry.modified.timeIntervalSince1970, entry.version, entry.executable, item.id])
                if try Self.advance(db, id: item.id, on: .upstreamChanged) == .dropCache || item.cachedVersion != nil {
                    effects.stale.append(item.id)
                }
                if item.isMaterialized { effects.changedLocal.append(item.id) }
            case .newFolderDate:
                try db.cachedStatement(sql: "UPDATE item SET modified = ? WHERE id = ?").execute(arguments: [entry.modified.timeIntervalSince1970, item!.id])
            }
            seen.append(item!.id)
        }
        if !seen.isEmpty {
            try db.cachedStatement(sql: "UPDATE item SET seen = ? WHERE id IN (SELECT value FROM json_each(?))")
                .execute(arguments: [pass, jsonArray(seen)])
        }
        return effects
    }

    /// A name compared byte for byte, as SQLite compares `item.name`:
    /// Swift's `String` equality would take a decomposed name for its
    /// composed twin, and two members may hold those.
    struct ExactName: Hashable {
        let bytes: [UInt8]
        init(_ name: String) { bytes = Array(name.utf8) }
    }

    /// The members of `folder` among `names`, by name.
    private static func members(_ db: Database, of folder: Int64, named names: [String]) throws -> [ExactName: Item] {
        var found: [ExactName: Item] = [:]
        found.reserveCapacity(names.count)
        try db.cachedStatement(sql: """
            SELECT \(Item.columns) FROM item WHERE parent_id = ? AND name IN (SELECT value FROM json_each(?))
            """).forEachItem([folder, jsonArray(names)]) { item, _ in
            found[ExactName(item.name)] = item
            return true
        }
        return found
    }

    /// Removes the members `pass` did not see (but what waits to be
    /// uploaded, itself or below it) and records the folder as listed now.
    private static func sweep(_ db: Database, folder: Int64, pass: Int64, version: String?) throws -> [Int64] {
        var stale: [Int64] = []
        let unseen = try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? AND seen IS NOT ?").items([folder, pass])
        for item in unseen where !item.dirty {
            // A folder gone upstream with writes waiting below it stays: its
            // journal rows would go with it (a cascade), and an answered
            // write with them. Their uploads then fail and are reported.
            if item.isFolder, try Self.holdsWaitingWrites(db, folder: item.id) { continue }
            stale.append(contentsOf: try Self.deleteSubtree(db, id: item.id))
        }
        try db.cachedStatement(sql: "UPDATE item SET listed_at = ?, listed_version = ? WHERE id = ?").execute(arguments: [Date().timeIntervalSince1970, version, folder])
        return stale
    }

    /// `sub(id)`: the item bound to its `?` and everything below it, the
    /// head of every query of a subtree.
    static let subtree = "WITH RECURSIVE sub(id) AS (SELECT ? UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)"

    /// Whether a journal row names anything below `folder`.
    private static func holdsWaitingWrites(_ db: Database, folder: Int64) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: """
            \(Self.subtree)
            SELECT EXISTS (SELECT 1 FROM journal WHERE item_id IN (SELECT id FROM sub))
            """), arguments: [folder]) ?? false
    }

    /// Deletes an item and everything below it (properties and locks go by
    /// cascade); returns the ids whose cache files must be removed.
    func delete(id: Int64) async throws -> [Int64] {
        try await write { db in try Self.deleteSubtree(db, id: id) }
    }

    static func deleteSubtree(_ db: Database, id: Int64) throws -> [Int64] {
        let ids = try Int64.fetchAll(db.cachedStatement(sql: """
            \(Self.subtree)
            SELECT id FROM sub
            """), arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?").execute(arguments: [id])
        return ids
    }

    /// Re-parents and renames an item (MOVE). Locks rooted in the moved
    /// subtree are dropped: RFC 4918 section 7.5, a lock does not move with
    /// its resource.
    func move(id: Int64, to parent: Int64, name: String, entry: UpstreamEntry) async throws -> Item {
        try await write { db in
            try db.cachedStatement(sql: """
                \(Self.subtree)
                DELETE FROM lock WHERE item_id IN (SELECT id FROM sub)
                """).execute(arguments: [id])
            try db.cachedStatement(sql: "UPDATE item SET parent_id = ?, name = ?, modified = ? WHERE id = ?").execute(arguments: [parent, name, entry.modified.timeIntervalSince1970, id])
            if !entry.isFolder {
                // Keep the cached bytes valid when the store reports the same
                // content under a new version string (a rename keeps the inode).
                try db.cachedStatement(sql: """
                    UPDATE item SET cached_version = CASE WHEN cached_version = upstream_version THEN ? ELSE cached_version END,
                        upstream_version = ? WHERE id = ?
                    """).execute(arguments: [entry.version, entry.version, id])
            }
            return try Self.item(db, id: id)
        }
    }
}

extension SQLiteIndex {
    /// The item path of an item (names below its domain's root).
    func path(of id: Int64) async throws -> ItemPath {
        try lookupStatement { db in try Self.path(db, of: id) }
    }

    static func path(_ db: Database, of id: Int64) throws -> ItemPath {
        try String.fetchAll(db.cachedStatement(sql: """
            WITH RECURSIVE up(id, parent_id, name, depth) AS (
                SELECT id, parent_id, name, 0 FROM item WHERE id = ?
                UNION ALL SELECT item.id, item.parent_id, item.name, up.depth + 1 FROM item JOIN up ON item.id = up.parent_id)
            SELECT name FROM up WHERE parent_id IS NOT NULL ORDER BY depth DESC
            """), arguments: [id])
    }

    /// Ids of items below `id` that carry dead properties (COPY needs them).
    func descendantsWithDeadProperties(of id: Int64) async throws -> [Int64] {
        try await read { db in
            try Int64.fetchAll(db.cachedStatement(sql: """
                WITH RECURSIVE sub(id) AS (SELECT id FROM item WHERE parent_id = ? UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                SELECT DISTINCT item_id FROM dead_property WHERE item_id IN (SELECT id FROM sub)
                """), arguments: [id])
        }
    }
}

extension SQLiteIndex {
    /// Forgets a domain entirely: its items (placeholders), dead properties
    /// and locks go; the upstream is not touched. Returns how many items went.
    func resetDomain(_ domain: String) async throws -> Int {
        try await write { db in
            let count = try Int.fetchOne(try db.cachedStatement(sql: "SELECT COUNT(*) FROM item WHERE domain = ?"), arguments: [domain]) ?? 0
            try db.cachedStatement(sql: "DELETE FROM item WHERE domain = ? AND parent_id IS NULL").execute(arguments: [domain])
            return count
        }
    }
}
