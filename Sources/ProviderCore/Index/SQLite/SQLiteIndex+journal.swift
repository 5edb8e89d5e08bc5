import Foundation
import GRDB

extension JournalEntry {
    init(row: Row) {
        self.init(seq: row[0], itemID: row[1], file: row[2], size: row[3], basis: row[4],
                  created: Date(timeIntervalSince1970: row[5]), attempts: row[6], lastError: row[7], failed: row[8])
    }
}

/// The write-back journal: rows written in the same transaction as the item
/// they change, so an acknowledged write and its place in the upload queue
/// are durable together (`SQLiteIndex.write` returns once they are).
extension SQLiteIndex {
    /// Records a write of `size` bytes at `name` under `parent` whose bytes
    /// are durable in the outbox as `file`, or are `content`: the item
    /// (created, or updated with a new content version) becomes dirty, and
    /// a journal row queues its upload. The basis is the upstream version
    /// before the first pending edit, so a chain of edits uploads as one
    /// change. `content`: the bytes of a small write, kept in the row (no
    /// file is made of them before the upload or a read).
    func recordLocalWrite(existing: Item?, parent: Int64, domain: String, name: String,
                          size: Int64, modified: Date, file: String, content: Data?,
                          checksum: String?) async throws -> Item {
        // A file's row and its journal's: no folder changes but for the
        // tree versions above it.
        try await smallWrite(keepingFolders: true) { db in
            let now = Date().timeIntervalSince1970
            let id: Int64
            let basis: String?
            if let existing {
                id = existing.id
                basis = try Self.writeBasis(db, of: id)
                try Self.advance(db, id: id, on: .written(through: false))
                try db.cachedStatement(sql: """
                    UPDATE item SET size = ?, modified = ?, cached_version = NULL,
                        content_version = content_version + 1 WHERE id = ?
                    """).execute(arguments: [size, modified.timeIntervalSince1970, id])
                try Self.recordChecksum(db, checksum, of: id)
            } else {
                basis = nil
                // The checksum in the same statement: a new row's content
                // version is 1.
                try db.cachedStatement(sql: """
                    INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, state, checksum, checksum_version)
                    VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: [domain, parent, name, size, modified.timeIntervalSince1970, now, StoredState.modified.rawValue,
                                             checksum, checksum == nil ? nil : 1])
                id = db.lastInsertedRowID
            }
            try db.cachedStatement(sql: """
                INSERT INTO journal (domain, item_id, file, size, basis, created, next_attempt, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [domain, id, file, size, basis, now, now, content])
            return try Self.item(db, id: id)
        }
    }

    /// The upstream version a new write of item `id` is based on, read in
    /// the write's transaction: the basis of its pending writes, or the
    /// version it was last uploaded as. Not from the item the caller read
    /// before the transaction: an upload finishing in between made that
    /// stale, and the write, based on nothing or on the version before,
    /// became a conflict copy of davgate's own upload with the newer bytes
    /// away from their name (WriteBackTests' crash loop, once).
    private static func writeBasis(_ db: Database, of id: Int64) throws -> String? {
        if let pending = try Row.fetchOne(db.cachedStatement(sql: "SELECT basis FROM journal WHERE item_id = ? ORDER BY seq DESC LIMIT 1"),
                                          arguments: [id]) {
            return pending[0]
        }
        return try String.fetchOne(db.cachedStatement(sql: "SELECT upstream_version FROM item WHERE id = ?"), arguments: [id])
    }

    /// The newest entry of each item whose last write is older than
    /// `quietSince` and whose retry time has come, oldest first (the
    /// caller leaves out what a lock holds back).
    func uploadsDue(domain: String, quietSince: Date, now: Date, limit: Int) async throws -> [JournalEntry] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(JournalEntry.columns) FROM journal j
                WHERE domain = ? AND failed = 0 AND created <= ? AND next_attempt <= ?
                  AND seq = (SELECT MAX(seq) FROM journal WHERE item_id = j.item_id)
                ORDER BY seq LIMIT ?
                """), arguments: [domain, quietSince.timeIntervalSince1970, now.timeIntervalSince1970, limit]).map(JournalEntry.init(row:))
        }
    }

    /// How many files of the domain wait for their upload.
    func pendingUploads(domain: String) async throws -> Int {
        try await read { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(DISTINCT item_id) FROM journal WHERE domain = ?"), arguments: [domain]) ?? 0
        }
    }

    /// The newest entry of each item of the domain: what waits for upload.
    func newestEntries(domain: String) async throws -> [JournalEntry] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(JournalEntry.columns) FROM journal j
                WHERE domain = ? AND seq = (SELECT MAX(seq) FROM journal WHERE item_id = j.item_id) ORDER BY seq
                """), arguments: [domain]).map(JournalEntry.init(row:))
        }
    }

    /// The bytes of the newest write of each item waiting for upload, but
    /// `item`'s: what the dirty budget counts, asked by every write while a
    /// budget is set, so summed where the rows are.
    func pendingBytes(domain: String, except item: Int64?) async throws -> Int64 {
        try await read { db in
            try Int64.fetchOne(db.cachedStatement(sql: """
                SELECT COALESCE(SUM(size), 0) FROM journal j
                WHERE domain = ? AND item_id IS NOT ? AND seq = (SELECT MAX(seq) FROM journal WHERE item_id = j.item_id)
                """), arguments: [domain, item]) ?? 0
        }
    }

    /// Every entry of the domain, oldest first (status, recovery).
    func journal(domain: String) async throws -> [JournalEntry] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: "SELECT \(JournalEntry.columns) FROM journal WHERE domain = ? ORDER BY seq"), arguments: [domain]).map(JournalEntry.init(row:))
        }
    }

    /// Whether a journal row names the outbox file `file`.
    func journalNames(file: String) async throws -> Bool {
        try await read { db in
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM journal WHERE file = ?)"), arguments: [file]) ?? false
        }
    }

    /// The newest entry of each of these items that has one. Every
    /// upload's check asks for one item; a flush for a folder's.
    func latestEntries(of ids: [Int64]) async throws -> [JournalEntry] {
        guard !ids.isEmpty else { return [] }
        return try lookupStatement { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(JournalEntry.columns) FROM journal j WHERE item_id IN (SELECT value FROM json_each(?))
                  AND seq = (SELECT MAX(seq) FROM journal WHERE item_id = j.item_id)
                """), arguments: [Self.jsonArray(ids)]).map(JournalEntry.init(row:))
        }
    }

    /// Removes the item's rows up to `entry`; returns their outbox files and
    /// how many newer rows the item still has.
    private static func settle(_ db: Database, _ entry: JournalEntry) throws -> (files: [String], newer: Int) {
        let files = try String.fetchAll(db.cachedStatement(sql: "SELECT file FROM journal WHERE item_id = ? AND seq <= ?"),
                                        arguments: [entry.itemID, entry.seq])
        try db.cachedStatement(sql: "DELETE FROM journal WHERE item_id = ? AND seq <= ?").execute(arguments: [entry.itemID, entry.seq])
        let newer = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM journal WHERE item_id = ?"), arguments: [entry.itemID]) ?? 0
        return (files, newer)
    }

    /// The upload of `entry` arrived as `uploaded`: its rows up to it go,
    /// and the item is clean again unless a newer write came meanwhile (that
    /// one is now based on what we uploaded). Returns the outbox files of the
    /// rows that went, for the caller to delete after a sync: the commit
    /// does not wait for the log's fsync (`IndexStore.completeUpload`).
    func completeUpload(_ entry: JournalEntry, uploaded: UpstreamEntry) async throws -> [String] {
        try await write(small: true, keepingFolders: true, durable: false) { db in
            let (files, newer) = try Self.settle(db, entry)
            try Self.advance(db, id: entry.itemID, on: .uploadSucceeded(newerPending: newer > 0))
            if newer == 0 {
                try db.cachedStatement(sql: """
                    UPDATE item SET upstream_version = ?, cached_version = ?, modified = ? WHERE id = ?
                    """).execute(arguments: [uploaded.version, uploaded.version, uploaded.modified.timeIntervalSince1970, entry.itemID])
            } else {
                try db.cachedStatement(sql: "UPDATE item SET upstream_version = ? WHERE id = ?").execute(arguments: [uploaded.version, entry.itemID])
                try db.cachedStatement(sql: "UPDATE journal SET basis = ? WHERE item_id = ?").execute(arguments: [uploaded.version, entry.itemID])
            }
            return files
        }
    }

    /// Our write lost to a newer upstream version and was kept as a copy:
    /// the item's rows up to `entry` go and, without newer writes, it becomes
    /// a placeholder of the upstream's version. Newer writes keep their old
    /// basis, so they too become a copy rather than overwrite the upstream's
    /// change. Returns the outbox files, and whether newer writes remain.
    /// `upstream` nil: the name is taken by something the store does not
    /// show (a link leading out of a folder upstream); the item keeps no
    /// version and goes with the next listing, which does not name it.
    func abandonUpload(_ entry: JournalEntry, upstream: UpstreamEntry?) async throws -> (files: [String], stillDirty: Bool) {
        try await write { db in
            let (files, newer) = try Self.settle(db, entry)
            try Self.advance(db, id: entry.itemID, on: .versionMismatch(newerPending: newer > 0))
            if newer == 0, let upstream {
                try db.cachedStatement(sql: """
                    UPDATE item SET upstream_version = ?, cached_version = NULL, size = ?, modified = ?,
                        content_version = content_version + 1 WHERE id = ?
                    """).execute(arguments: [upstream.version, upstream.size, upstream.modified.timeIntervalSince1970, entry.itemID])
            } else if newer == 0 {
                try db.cachedStatement(sql: """
                    UPDATE item SET upstream_version = NULL, cached_version = NULL,
                        content_version = content_version + 1 WHERE id = ?
                    """).execute(arguments: [entry.itemID])
            }
            return (files, newer > 0)
        }
    }

    /// An upload failed: retry at `next`, or give up (`failed`, kept and
    /// reported, never dropped).
    /// - Parameter reached: the attempt may have left bytes upstream.
    func uploadFailed(_ entry: JournalEntry, error: String, next: Date, failed: Bool, reached: Bool) async throws {
        try await smallWrite { db in
            try db.cachedStatement(sql: """
                UPDATE journal SET attempts = attempts + 1, last_error = ?, next_attempt = ?, failed = ?, reached = reached OR ? WHERE seq = ?
                """).execute(arguments: [error, next.timeIntervalSince1970, failed, reached, entry.seq])
            // Only the newest write's failure is the item's: an older one
            // failing while a newer waits leaves it modified.
            let newest = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(seq) FROM journal WHERE item_id = ?"), arguments: [entry.itemID])
            if newest == entry.seq { try Self.advance(db, id: entry.itemID, on: .uploadFailed(givenUp: failed)) }
        }
    }

    /// Whether any upload of the item may have reached the upstream.
    func uploadMayHaveReached(_ id: Int64) async throws -> Bool {
        try await read { db in
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM journal WHERE item_id = ? AND reached = 1)"), arguments: [id]) ?? false
        }
    }

    /// Drops the journal of these items (their content is deleted here, so
    /// there is nothing left to upload). Returns the outbox files.
    func dropJournal(of ids: [Int64]) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try await write { db in
            let marks = Array(repeating: "?", count: ids.count).joined(separator: ",")
            let files = try String.fetchAll(db, sql: "SELECT file FROM journal WHERE item_id IN (\(marks))", arguments: StatementArguments(ids))
            try db.execute(sql: "DELETE FROM journal WHERE item_id IN (\(marks))", arguments: StatementArguments(ids))
            return files
        }
    }

    /// Items of the domain under a live lock, or below a folder with one:
    /// their uploads wait for the UNLOCK (or the lock's expiry). Asked
    /// before every upload, so it starts from the (few) locks: with `JOIN`,
    /// SQLite chose to walk every item of the domain instead, and a backlog
    /// of small uploads spent a fifth of the server's CPU here (issue 14).
    func lockedItems(domain: String, now: Date) async throws -> Set<Int64> {
        guard try await hasLiveLocks(now: now) else { return [] }
        return try await read { db in
            Set(try Int64.fetchAll(db.cachedStatement(sql: """
                WITH RECURSIVE held(id) AS (
                    SELECT lock.item_id FROM lock CROSS JOIN item ON item.id = lock.item_id
                        WHERE item.domain = ? AND (lock.expires IS NULL OR lock.expires > ?)
                    UNION SELECT item.id FROM item JOIN held ON item.parent_id = held.id
                )
                SELECT id FROM held
                """), arguments: [domain, now.timeIntervalSince1970]))
        }
    }

    /// The bytes a small write's journal row holds, with the item's
    /// modification time; nil for a row without them (or none).
    func journaledContent(seq: Int64) async throws -> (content: Data, modified: Date)? {
        try await read { db in
            try Row.fetchOne(db.cachedStatement(sql: """
                SELECT journal.content, item.modified FROM journal JOIN item ON item.id = journal.item_id
                WHERE journal.seq = ? AND journal.content IS NOT NULL
                """), arguments: [seq]).map { ($0[0], Date(timeIntervalSince1970: $0[1])) }
        }
    }

    /// The small writes whose bytes the journal holds: outbox name, bytes
    /// and the item's modification time, to check the files made of them.
    func inlineWrites(domain: String) async throws -> [(file: String, content: Data, modified: Date)] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT journal.file, journal.content, item.modified FROM journal JOIN item ON item.id = journal.item_id
                WHERE journal.domain = ? AND journal.content IS NOT NULL
                """), arguments: [domain]).map { ($0[0], $0[1], Date(timeIntervalSince1970: $0[2])) }
        }
    }
}
