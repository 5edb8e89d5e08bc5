import Foundation
import PostgresNIO

/// The write-back journal in the shared index: rows written in the same
/// transaction as the item they change, so an acknowledged write and its
/// place in the upload queue are durable together (`write` returns once
/// the commit is). SQLite's operations (`SQLiteIndex+journal.swift`), with
/// `RETURNING` where SQLite asks for the last row id or reads before it
/// deletes, and arrays of ids as one parameter.
extension PostgresIndex {
    /// Records a write of `size` bytes at `name` under `parent` whose bytes
    /// are durable in the outbox as `file`, or are `content`: the item
    /// (created, or updated with a new content version) becomes dirty, and
    /// a journal row queues its upload. The basis is the upstream version
    /// before the first pending edit, so a chain of edits uploads as one
    /// change. `content`: the bytes of a small write, kept in the row (no
    /// file is made of them before the upload or a read). The cache file is about to take the new bytes:
    /// this instance's holdings forget the version it held first.
    func recordLocalWrite(existing: Item?, parent: Int64, domain: String, name: String,
                          size: Int64, modified: Date, file: String, content: Data?,
                          checksum: String?) async throws -> Item {
        if let existing { try await holdings.forget([existing.id]) }
        return try await write { transaction in
            let now = Date().timeIntervalSince1970
            let id: Int64
            let basis: String?
            if let existing {
                id = existing.id
                basis = try await transaction.writeBasis(of: id)
                try await transaction.advance(id: id, on: .written(through: false))
                try await transaction.execute("""
                    UPDATE item SET size = \(size), modified = \(modified.timeIntervalSince1970), cached_version = NULL,
                        content_version = content_version + 1 WHERE id = \(id)
                    """)
            } else {
                basis = nil
                id = try await transaction.insertedID("""
                    INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, state)
                    VALUES (\(domain), \(parent), \(name), false, \(size), \(modified.timeIntervalSince1970), \(now), \(StoredState.modified.rawValue))
                    RETURNING id
                    """)
            }
            try await transaction.execute("""
                INSERT INTO journal (domain, item_id, file, size, basis, created, next_attempt, content)
                VALUES (\(domain), \(id), \(file), \(size), \(basis), \(now), \(now), \(content))
                """)
            try await transaction.recordChecksum(checksum, of: id)
            return try await transaction.existingItem(id: id)
        }
    }

    /// The newest entry of each item whose last write is older than
    /// `quietSince` and whose retry time has come, oldest first (the
    /// caller leaves out what a lock holds back).
    func uploadsDue(domain: String, quietSince: Date, now: Date, limit: Int) async throws -> [JournalEntry] {
        try await read { transaction in
            try await transaction.rows("""
                SELECT \(unescaped: JournalEntry.columns) FROM journal j
                WHERE domain = \(domain) AND NOT failed AND created <= \(quietSince.timeIntervalSince1970)
                  AND next_attempt <= \(now.timeIntervalSince1970)
                  AND seq = (SELECT max(seq) FROM journal WHERE item_id = j.item_id)
                ORDER BY seq LIMIT \(limit)
                """).map(JournalEntry.init(postgres:))
        }
    }

    /// How many files of the domain wait for their upload.
    func pendingUploads(domain: String) async throws -> Int {
        try await read { transaction in
            try await transaction.first("SELECT count(DISTINCT item_id) FROM journal WHERE domain = \(domain)", as: Int.self) ?? 0
        }
    }

    /// The newest entry of each item of the domain: what waits for upload.
    func newestEntries(domain: String) async throws -> [JournalEntry] {
        try await read { transaction in
            try await transaction.rows("""
                SELECT \(unescaped: JournalEntry.columns) FROM journal j
                WHERE domain = \(domain) AND seq = (SELECT max(seq) FROM journal WHERE item_id = j.item_id) ORDER BY seq
                """).map(JournalEntry.init(postgres:))
        }
    }

    /// The bytes of the newest write of each item waiting for upload, but
    /// `item`'s: what the dirty budget counts, asked by every write while a
    /// budget is set, so summed where the rows are. (`sum` of a bigint is a
    /// numeric in PostgreSQL: cast back.)
    func pendingBytes(domain: String, except item: Int64?) async throws -> Int64 {
        try await read { transaction in
            try await transaction.first("""
                SELECT COALESCE(sum(size), 0)::bigint FROM journal j
                WHERE domain = \(domain) AND item_id IS DISTINCT FROM \(item)
                  AND seq = (SELECT max(seq) FROM journal WHERE item_id = j.item_id)
                """, as: Int64.self) ?? 0
        }
    }

    /// Every entry of the domain, oldest first (status, recovery).
    func journal(domain: String) async throws -> [JournalEntry] {
        try await read { transaction in
            try await transaction.rows("SELECT \(unescaped: JournalEntry.columns) FROM journal WHERE domain = \(domain) ORDER BY seq")
                .map(JournalEntry.init(postgres:))
        }
    }

    /// Whether a journal row names the outbox file `file`.
    func journalNames(file: String) async throws -> Bool {
        try await read { transaction in
            try await transaction.first("SELECT EXISTS (SELECT 1 FROM journal WHERE file = \(file))", as: Bool.self) ?? false
        }
    }

    /// The newest entry of each of these items that has one.
    func latestEntries(of ids: [Int64]) async throws -> [JournalEntry] {
        guard !ids.isEmpty else { return [] }
        return try await read { transaction in
            try await transaction.rows("""
                SELECT \(unescaped: JournalEntry.columns) FROM journal j WHERE item_id = ANY(\(ids))
                  AND seq = (SELECT max(seq) FROM journal WHERE item_id = j.item_id)
                """).map(JournalEntry.init(postgres:))
        }
    }

    /// The upload of `entry` arrived as `uploaded`: its rows up to it go,
    /// and the item is clean again unless a newer write came meanwhile (that
    /// one is now based on what we uploaded). Returns the outbox files of the
    /// rows that went, for the caller to delete. Clean again, the item's
    /// cache file (this instance's: the uploader reads its own outbox)
    /// holds the uploaded version, which its holdings take after the commit.
    func completeUpload(_ entry: JournalEntry, uploaded: UpstreamEntry) async throws -> [String] {
        let (files, clean) = try await write { transaction in
            let (files, newer) = try await transaction.settle(entry)
            try await transaction.advance(id: entry.itemID, on: .uploadSucceeded(newerPending: newer > 0))
            if newer == 0 {
                try await transaction.execute("""
                    UPDATE item SET upstream_version = \(uploaded.version), cached_version = NULL,
                        modified = \(uploaded.modified.timeIntervalSince1970) WHERE id = \(entry.itemID)
                    """)
            } else {
                try await transaction.execute("UPDATE item SET upstream_version = \(uploaded.version) WHERE id = \(entry.itemID)")
                try await transaction.execute("UPDATE journal SET basis = \(uploaded.version) WHERE item_id = \(entry.itemID)")
            }
            return (files, newer == 0)
        }
        if clean { await holdAfterCommit(uploaded.version, of: entry.itemID) }
        return files
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
        try await write { transaction in
            let (files, newer) = try await transaction.settle(entry)
            try await transaction.advance(id: entry.itemID, on: .versionMismatch(newerPending: newer > 0))
            if newer == 0, let upstream {
                try await transaction.execute("""
                    UPDATE item SET upstream_version = \(upstream.version), cached_version = NULL, size = \(upstream.size),
                        modified = \(upstream.modified.timeIntervalSince1970), content_version = content_version + 1
                    WHERE id = \(entry.itemID)
                    """)
            } else if newer == 0 {
                try await transaction.execute("""
                    UPDATE item SET upstream_version = NULL, cached_version = NULL,
                        content_version = content_version + 1 WHERE id = \(entry.itemID)
                    """)
            }
            return (files, newer > 0)
        }
    }

    /// An upload failed: retry at `next`, or give up (`failed`, kept and
    /// reported, never dropped).
    /// - Parameter reached: the attempt may have left bytes upstream.
    func uploadFailed(_ entry: JournalEntry, error: String, next: Date, failed: Bool, reached: Bool) async throws {
        try await write { transaction in
            try await transaction.execute("""
                UPDATE journal SET attempts = attempts + 1, last_error = \(error), next_attempt = \(next.timeIntervalSince1970),
                    failed = \(failed), reached = reached OR \(reached) WHERE seq = \(entry.seq)
                """)
            // Only the newest write's failure is the item's: an older one
            // failing while a newer waits leaves it modified.
            let newest = try await transaction.first("SELECT max(seq) FROM journal WHERE item_id = \(entry.itemID)", as: Int64?.self) ?? nil
            if newest == entry.seq { try await transaction.advance(id: entry.itemID, on: .uploadFailed(givenUp: failed)) }
        }
    }

    /// Whether any upload of the item may have reached the upstream.
    func uploadMayHaveReached(_ id: Int64) async throws -> Bool {
        try await read { transaction in
            try await transaction.first("SELECT EXISTS (SELECT 1 FROM journal WHERE item_id = \(id) AND reached)", as: Bool.self) ?? false
        }
    }

    /// Drops the journal of these items (their content is deleted here, so
    /// there is nothing left to upload). Returns the outbox files.
    func dropJournal(of ids: [Int64]) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try await write { transaction in
            try await transaction.rows("DELETE FROM journal WHERE item_id = ANY(\(ids)) RETURNING file").map { try $0.decode(String.self) }
        }
    }

    /// Items of the domain under a live lock, or below a folder with one:
    /// their uploads wait for the UNLOCK (or the lock's expiry). Asked
    /// before every upload, so it starts from the (few) locks. SQLite asks
    /// `hasLiveLocks` first because its answer is usually remembered; here
    /// that would be a second round trip, and with no live lock this walk
    /// starts from nothing and is as cheap.
    func lockedItems(domain: String, now: Date) async throws -> Set<Int64> {
        try await read { transaction in
            Set(try await transaction.rows("""
                WITH RECURSIVE held(id) AS (
                    SELECT lock.item_id FROM lock JOIN item ON item.id = lock.item_id
                        WHERE item.domain = \(domain) AND (lock.expires IS NULL OR lock.expires > \(now.timeIntervalSince1970))
                    UNION SELECT item.id FROM item JOIN held ON item.parent_id = held.id
                )
                SELECT id FROM held
                """).map { try $0.decode(Int64.self) })
        }
    }

    /// The bytes a small write's journal row holds, with the item's
    /// modification time; nil for a row without them (or none).
    func journaledContent(seq: Int64) async throws -> (content: Data, modified: Date)? {
        try await read { transaction in
            try await transaction.rows("""
                SELECT journal.content, item.modified FROM journal JOIN item ON item.id = journal.item_id
                WHERE journal.seq = \(seq) AND journal.content IS NOT NULL
                """).first.map { row in
                let (content, modified) = try row.decode((Data, Double).self)
                return (content: content, modified: Date(timeIntervalSince1970: modified))
            }
        }
    }

    /// The small writes whose bytes the journal holds: outbox name, bytes
    /// and the item's modification time, to check the files made of them.
    func inlineWrites(domain: String) async throws -> [(file: String, content: Data, modified: Date)] {
        try await read { transaction in
            try await transaction.rows("""
                SELECT journal.file, journal.content, item.modified FROM journal JOIN item ON item.id = journal.item_id
                WHERE journal.domain = \(domain) AND journal.content IS NOT NULL
                """).map { row in
                let (file, content, modified) = try row.decode((String, Data, Double).self)
                return (file: file, content: content, modified: Date(timeIntervalSince1970: modified))
            }
        }
    }
}

extension PostgresTransaction {
    /// The upstream version a new write of item `id` is based on, read in
    /// the write's transaction: the basis of its pending writes, or the
    /// version it was last uploaded as. Every write transaction takes the
    /// feed's row first (`PostgresIndex.write`), so an upload's completion
    /// is wholly before this read or wholly after the write. Taken from the
    /// item the caller read earlier, it was stale after such an upload, and
    /// the write became a conflict copy of davgate's own upload
    /// (WriteBackTests' crash loop, on SQLite).
    fileprivate func writeBasis(of id: Int64) async throws -> String? {
        let pending = try await rows("SELECT basis FROM journal WHERE item_id = \(id) ORDER BY seq DESC LIMIT 1")
        if let newest = pending.first { return try newest.decode(String?.self) }
        return try await first("SELECT upstream_version FROM item WHERE id = \(id)", as: String?.self) ?? nil
    }

    /// Removes the item's journal rows up to `entry`; returns their outbox
    /// files and how many newer rows the item still has.
    fileprivate func settle(_ entry: JournalEntry) async throws -> (files: [String], newer: Int) {
        let files = try await rows("DELETE FROM journal WHERE item_id = \(entry.itemID) AND seq <= \(entry.seq) RETURNING file")
            .map { try $0.decode(String.self) }
        let newer = try await first("SELECT count(*) FROM journal WHERE item_id = \(entry.itemID)", as: Int.self) ?? 0
        return (files, newer)
    }
}
