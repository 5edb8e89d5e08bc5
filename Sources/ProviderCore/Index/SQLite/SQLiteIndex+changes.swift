import Foundation
import GRDB

/// The change feed: every change to a domain's namespace, recorded by the
/// database itself in the transaction that makes it, as the File
/// Provider's change enumeration needs. Triggers on `item` and
/// `dead_property` write it, so no code path can change an item and forget
/// the feed: writes through davgate, listings refreshed from the upstream,
/// uploads landing, COPY's new rows and the rows a folder's DELETE cascades
/// to all arrive the same way.
///
/// A row names a place (parent, name) and what happened there: `new` (an
/// item arrived: created, copied, moved in), `changed` (its content,
/// size, executable bit or dead properties), `removed` (it left: deleted,
/// moved away). A MOVE is a `removed` at the old place and a `new` at the
/// new one. Changes that no client sees as a property (where the content
/// is cached, when a listing was read) are not recorded.
extension SQLiteIndex {
    static func createChangeFeed(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE feed (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                identity TEXT NOT NULL,
                compacted_through INTEGER NOT NULL DEFAULT 0
            );
            INSERT INTO feed (id, identity) VALUES (1, lower(hex(randomblob(8))));
            CREATE TABLE change (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                domain TEXT NOT NULL,
                item_id INTEGER NOT NULL,
                parent_id INTEGER NOT NULL,
                name TEXT NOT NULL,
                kind TEXT NOT NULL,
                at REAL NOT NULL DEFAULT (julianday('now'))
            );
            CREATE INDEX change_by_parent ON change(parent_id, seq);
            CREATE INDEX change_by_domain ON change(domain, seq);

            CREATE TRIGGER change_item_new AFTER INSERT ON item WHEN NEW.parent_id IS NOT NULL BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind) VALUES (NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'new');
            END;
            CREATE TRIGGER change_item_removed AFTER DELETE ON item WHEN OLD.parent_id IS NOT NULL BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind) VALUES (OLD.domain, OLD.id, OLD.parent_id, OLD.name, 'removed');
            END;
            CREATE TRIGGER change_item_moved AFTER UPDATE OF parent_id, name ON item
                WHEN OLD.parent_id IS NOT NULL AND (OLD.parent_id IS NOT NEW.parent_id OR OLD.name IS NOT NEW.name) BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind) VALUES (OLD.domain, OLD.id, OLD.parent_id, OLD.name, 'removed');
                INSERT INTO change (domain, item_id, parent_id, name, kind) VALUES (NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'new');
            END;
            CREATE TRIGGER change_item_changed AFTER UPDATE OF content_version, size, executable ON item
                WHEN NEW.parent_id IS NOT NULL AND OLD.parent_id IS NEW.parent_id AND OLD.name IS NEW.name
                    AND (OLD.content_version IS NOT NEW.content_version OR OLD.size IS NOT NEW.size OR OLD.executable IS NOT NEW.executable) BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind) VALUES (NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'changed');
            END;
            CREATE TRIGGER change_property_set AFTER INSERT ON dead_property BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind)
                    SELECT domain, id, parent_id, name, 'changed' FROM item WHERE id = NEW.item_id AND parent_id IS NOT NULL;
            END;
            CREATE TRIGGER change_property_replaced AFTER UPDATE ON dead_property BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind)
                    SELECT domain, id, parent_id, name, 'changed' FROM item WHERE id = NEW.item_id AND parent_id IS NOT NULL;
            END;
            CREATE TRIGGER change_property_removed AFTER DELETE ON dead_property BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind)
                    SELECT domain, id, parent_id, name, 'changed' FROM item WHERE id = OLD.item_id AND parent_id IS NOT NULL;
            END;
            """)
    }

    /// Folder versions that move: each change raises `tree_version` of the
    /// folder it happened in and of every folder above, to its sequence
    /// number, in the same transaction. A folder's ETag includes it, so a
    /// client that has a subtree's ETag knows nothing below changed. The
    /// trigger made here was dropped in v16: the raise is now once per
    /// commit (`SQLiteIndex+treeVersions`).
    static func createTreeVersions(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE item ADD COLUMN tree_version INTEGER NOT NULL DEFAULT 0;
            CREATE TRIGGER change_raises_tree_versions AFTER INSERT ON change BEGIN
                UPDATE item SET tree_version = NEW.seq WHERE id IN (
                    WITH RECURSIVE above(id) AS (
                        SELECT NEW.parent_id
                        UNION ALL
                        SELECT item.parent_id FROM item JOIN above ON item.id = above.id WHERE item.parent_id IS NOT NULL)
                    SELECT id FROM above);
            END;
            """)
    }

    /// The feed's identity and the range of sequence numbers it still
    /// answers for: a token below `oldest` asks about changes compacted away.
    func feedPosition() async throws -> (identity: String, oldest: Int64, latest: Int64) {
        try lookup { db in try Self.feedPosition(db) }
    }

    static func feedPosition(_ db: Database) throws -> (identity: String, oldest: Int64, latest: Int64) {
        let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT identity, compacted_through FROM feed WHERE id = 1"))!
        return (row[0], row[1], try latestChange(db))
    }

    /// What changed since `sequence` among the members of `folder` (at
    /// `path`), or anywhere below it (`infinite`), all read in one snapshot,
    /// so that the items reported are those of the sequence number the
    /// answer covers, and the next answer repeats none of them:
    /// - each changed place once, in the order of its first change, with
    ///   the item there now, or as removed when nothing is;
    /// - with `infinite`, a folder that arrived is reported with
    ///   everything in it, except, on a page cut short by `limit`, what
    ///   changed after the page's end: the page that reads that change
    ///   reports it (reported here as well, a file made in a new folder
    ///   while a client synced behind the writer came twice);
    /// - `covered`: the latest sequence number, or, when `limit` places
    ///   were reached first, the last change of those places read (the next
    ///   request continues from there).
    func changes(domain: String, below folder: Int64, at path: ItemPath, infinite: Bool, since sequence: Int64, limit: Int?) async throws
        -> (present: [(Item, ItemPath)], removed: [ItemPath], covered: Int64, truncated: Bool) {
        try await read { db in
            let latest = try Self.feedPosition(db).latest
            let scope = infinite
                ? """
                    WITH RECURSIVE folders(id) AS (
                        SELECT ? UNION ALL SELECT item.id FROM item JOIN folders ON item.parent_id = folders.id WHERE item.is_folder = 1)
                    SELECT seq, parent_id, name, kind FROM change
                    WHERE domain = ? AND seq > ? AND parent_id IN (SELECT id FROM folders) ORDER BY seq
                    """
                : "SELECT seq, parent_id, name, kind FROM change WHERE parent_id = ? AND domain = ? AND seq > ? ORDER BY seq"
            var collected = ChangedPlaces(latest: latest, limit: limit)
            let rows = try Row.fetchCursor(db, sql: scope, arguments: [folder, domain, sequence])
            while let row = try rows.next(), collected.add(sequence: row[0], parent: row[1], name: row[2], kind: row[3]) {}
            collected.finish()

            var present: [(Item, ItemPath)] = []
            var removed: [ItemPath] = []
            var parentPaths: [Int64: ItemPath] = [folder: path]
            // A place reached twice (a folder that arrived, then a change
            // inside it) is reported once.
            var reported = Set<ItemPath>()
            for place in collected.places {
                let parentPath: ItemPath
                if let known = parentPaths[place.parent] {
                    parentPath = known
                } else {
                    parentPath = try Self.path(db, of: place.parent)
                    parentPaths[place.parent] = parentPath
                }
                let placePath = parentPath + [place.name]
                guard reported.insert(placePath).inserted else { continue }
                guard let item = try Self.child(db, of: place.parent, named: place.name) else {
                    removed.append(placePath)
                    continue
                }
                present.append((item, placePath))
                // A folder that arrived (made, copied or moved in) is new to
                // the client with everything in it.
                if infinite && item.isFolder && collected.arrived.contains(place) {
                    let later = collected.truncated ? try Self.placesChanged(db, below: item.id, after: collected.covered) : [:]
                    let members = try Self.descendantsWithPaths(db, of: item.id, at: placePath)
                    for (member, memberPath) in ChangedPlaces.membersToReport(members, later: later)
                    where reported.insert(memberPath).inserted {
                        present.append((member, memberPath))
                    }
                }
            }
            return (present, removed, max(collected.covered, sequence), collected.truncated)
        }
    }

    /// The places at any depth below `folder` with a change after
    /// `sequence`, and whether something arrived there then
    /// (`ChangedPlaces.membersToReport`).
    static func placesChanged(_ db: Database, below folder: Int64, after sequence: Int64) throws -> [ChangedPlaces.Place: Bool] {
        var places: [ChangedPlaces.Place: Bool] = [:]
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            WITH RECURSIVE folders(id) AS (
                SELECT ? UNION ALL SELECT item.id FROM item JOIN folders ON item.parent_id = folders.id WHERE item.is_folder = 1)
            SELECT parent_id, name, MAX(kind = 'new') FROM change WHERE seq > ? AND parent_id IN (SELECT id FROM folders)
            GROUP BY parent_id, name
            """), arguments: [folder, sequence])
        while let row = try rows.next() { places[ChangedPlaces.Place(parent: row[0], name: row[1])] = row[2] }
        return places
    }

    /// Forgets changes older than `age`, keeping the newest `keep` at least;
    /// tokens from before what is forgotten answer 403 `valid-sync-token`.
    @discardableResult
    func compactChanges(olderThan age: TimeInterval, keep: Int) async throws -> Int {
        try await write { db in
            let cutoff = try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT MAX(seq) FROM change
                WHERE at < julianday('now') - ? / 86400.0
                  AND seq <= (SELECT COALESCE(MAX(seq), 0) FROM change) - ?
                """), arguments: [age, keep])
            guard let cutoff else { return 0 }
            try db.cachedStatement(sql: "DELETE FROM change WHERE seq <= ?").execute(arguments: [cutoff])
            let removed = db.changesCount
            try db.cachedStatement(sql: "UPDATE feed SET compacted_through = MAX(compacted_through, ?) WHERE id = 1").execute(arguments: [cutoff])
            return removed
        }
    }
}
