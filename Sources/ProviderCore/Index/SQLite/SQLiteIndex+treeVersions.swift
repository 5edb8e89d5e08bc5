import GRDB
import GRDBSQLite

/// Folder versions that move (`createTreeVersions`): a folder's
/// `tree_version` is the sequence number of the newest change at or below
/// it, raised once per transaction, just before it commits, rather than by
/// a trigger on every change.
///
/// Why: the trigger walked up from each change's folder with a recursive
/// query, whose queue and `IN` list SQLite keeps in temporary tables set up
/// afresh every time. In a burst of small PUTs into one folder a build
/// without it spent 8% less CPU a PUT (issue 14), and a DELETE of a folder
/// of 10,000 files walked up 10,000 times. Once per commit, the PUTs that
/// share a transaction (`SQLiteIndex+batch`) raise their folder and each
/// one above it once, with plain statements from the cache: 5% less CPU a
/// PUT than the trigger.
///
/// The values are those the trigger gave: the transaction's changes are
/// read in sequence order and each folder on the way up gets the newest one
/// below it. Every change commits through `transaction` or the write-back
/// commits' shared transaction, and both raise before `COMMIT`; readers see
/// the versions with the changes, in the same commit. Inside an open
/// transaction a folder's version may lag its changes, which only the
/// writer's own reads could see: the write-back commits judge conditions on
/// files, whose ETags have no tree version, and `writeChain` is allowed the
/// lag already. A shared index (PostgreSQL) keeps its trigger: its writers
/// commit through other instances too.
extension SQLiteIndex {
    /// The feed's newest sequence number (`sqlite_sequence` keeps the
    /// highest ever given, also after the newest rows were compacted away):
    /// taken at a transaction's start, the changes after it are that
    /// transaction's.
    static func latestChange(_ db: Database) throws -> Int64 {
        var latest: Int64 = 0
        try db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'change'").forEachRow([]) { row in
            latest = sqlite3_column_int64(row, 0)
            return false
        }
        return latest
    }

    /// Begins the writer's transaction and returns where its changes will
    /// start (`latestChange`), for `raiseTreeVersions` at its commit;
    /// nothing stays begun if that read fails.
    static func beginWriting(_ db: Database) throws -> Int64 {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            return try latestChange(db)
        } catch {
            try? db.rollback()
            throw error
        }
    }

    /// Raises the tree versions of the folders the changes after `sequence`
    /// happened in, and of every folder above them, to the newest change
    /// below each. Folders are walked from the newest change's down, so the
    /// first visit to a folder brings its highest number and a walk stops
    /// at the first folder another walk raised. A folder gone meanwhile
    /// (removed in the same transaction) ends its walk: its own removal is a
    /// change in the folder above it.
    static func raiseTreeVersions(_ db: Database, changesAfter sequence: Int64) throws {
        // In sequence order (the table's rowid, so no sort): the last row
        // per folder is its newest change. No GROUP BY: its temporary
        // B-tree cost more than the rows it groups. Read with SQLite's
        // calls (`forEachRow`): GRDB's rows were most of this walk's time.
        var newest: [Int64: Int64] = [:]
        try db.cachedStatement(sql: "SELECT parent_id, seq FROM change WHERE seq > ? ORDER BY seq").forEachRow([sequence]) { row in
            newest[sqlite3_column_int64(row, 0)] = sqlite3_column_int64(row, 1)
            return true
        }
        guard !newest.isEmpty else { return }
        let raise = try db.cachedStatement(sql: "UPDATE item SET tree_version = ? WHERE id = ?")
        let parent = try db.cachedStatement(sql: "SELECT parent_id FROM item WHERE id = ?")
        var raised = Set<Int64>()
        for (folder, seq) in newest.sorted(by: { $0.value > $1.value }) {
            var next: Int64? = folder
            while let current = next, raised.insert(current).inserted {
                try raise.execute(arguments: [seq, current])
                next = nil
                try parent.forEachRow([current]) { row in
                    if sqlite3_column_type(row, 0) != SQLITE_NULL { next = sqlite3_column_int64(row, 0) }
                    return false
                }
            }
        }
    }
}
