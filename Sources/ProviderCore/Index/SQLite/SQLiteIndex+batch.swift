import GRDB
import NIOConcurrencyHelpers
import Synchronization

/// The write-back commits of a burst share one transaction: each runs in a
/// savepoint of the writer's open transaction, and the next round of the
/// grouped fsync commits them all before it syncs (`settleBatchForSync`).
///
/// Why: a transaction of its own per small PUT wrote every page it touched
/// to the log again (the folder's row and its ancestors', the leaves of the
/// item, change and journal tables and their five indexes): 11 to 14 pages
/// a PUT, where one PUT's rows share all but the body's overflow page with
/// the next. Committing the PUTs that queue for one fsync together took a
/// tenth of the server's CPU off each and put small PUTs past Apache's rate
/// (issue 14). Nothing is acknowledged earlier than before: a write-back
/// PUT is answered once a round committed and synced its rows.
///
/// What is in the open transaction is seen only on the writer's connection,
/// so every read must be on the right side of it:
/// - the commits that join it (a `DurabilityScope` that `batches`, under
///   the domain's coordination, one at a time) read on the writer while it
///   is open, bypassing the read caches (`seesBatch`);
/// - everyone else reads what is committed: lookups go to the read-only
///   connections rather than the idle writer, and the read caches forget
///   everything once the batch is committed;
/// - whatever changes the index otherwise commits the batch first, in the
///   same writer access (`transaction`), and so does every change under the
///   coordination that does not join it and every install of a cache file
///   (`Provider.installingContent`), both of which decide on what they read.
///
/// Should the batch's commit fail, or SQLite roll back the transaction under
/// a failing statement (a full disk), every write in it is lost: each scope
/// that joined it is told (`DurabilityScope.batchFailed`), and its request
/// fails rather than being acknowledged.
struct CommitBatch {
    /// The scopes whose writes the open transaction holds.
    var joiners: [DurabilityScope] = []
    /// Writes that joined a batch, and batches committed, for the tests.
    var joined = 0
    var committed = 0
    /// Thrown before the next commit, for the tests: a failure injected
    /// where SQLite's own (a full disk, an I/O error) would come.
    var failNextCommit: (@Sendable () throws -> Void)?
}

extension SQLiteIndex {
    /// Whether the caller's reads must see the open batch: it is one of the
    /// commits that join it.
    var seesBatch: Bool {
        batchOpen.load(ordering: .acquiring) && DurabilityScope.current?.joinsBatch == true
    }

    /// `updates` in a savepoint of the writer's open transaction, which it
    /// opens if none is. On the writer's connection.
    func joinBatch<T>(_ db: Database, _ scope: DurabilityScope, _ updates: (Database) throws -> T) throws -> T {
        if !db.isInsideTransaction {
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            batchOpen.store(true, ordering: .releasing)
        }
        batch.withLockedValue { $0.joiners.append(scope) }
        try db.cachedStatement(sql: "SAVEPOINT joined").execute()
        do {
            let result = try updates(db)
            guard db.isInsideTransaction else { throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back") }
            try db.cachedStatement(sql: "RELEASE SAVEPOINT joined").execute()
            batch.withLockedValue { $0.joined += 1 }
            return result
        } catch {
            // This write alone is undone, unless SQLite rolled back the
            // whole transaction, and with it the writes before this one.
            if db.isInsideTransaction {
                do {
                    try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT joined").execute()
                    try db.cachedStatement(sql: "RELEASE SAVEPOINT joined").execute()
                } catch {
                    try? db.rollback()
                    abandonBatch(because: error)
                }
            } else {
                abandonBatch(because: error)
            }
            throw error
        }
    }

    /// Commits the open batch, if there is one. On the writer's connection.
    func settleBatch(_ db: Database) throws {
        guard batchOpen.load(ordering: .acquiring) else { return }
        if db.isInsideTransaction {
            do {
                try batch.withLockedValue { $0.failNextCommit }?()
                try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            } catch {
                if db.isInsideTransaction { try? db.rollback() }
                abandonBatch(because: error)
                throw error
            }
        }
        batch.withLockedValue { batch in
            batch.joiners.removeAll()
            batch.committed += 1
        }
        batchOpen.store(false, ordering: .releasing)
        // Answers read meanwhile from what was committed before are stale now.
        forgetReads()
        try? Self.trimWriterCache(db)
    }

    /// Commits the open batch, if there is one, from anywhere but the writer.
    func settleBatch() async throws {
        guard batchOpen.load(ordering: .acquiring) else { return }
        writerUse.wrappingAdd(1, ordering: .acquiringAndReleasing)
        defer { writerUse.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        try await pool.writeWithoutTransaction { db in try self.settleBatch(db) }
    }

    /// A round of the grouped fsync commits the batch before it syncs, on
    /// the blocking pool. A failed commit reaches the batch's joiners
    /// (`abandonBatch`); the round goes on for everyone else's commits.
    func settleBatchForSync() {
        guard batchOpen.load(ordering: .acquiring) else { return }
        writerUse.wrappingAdd(1, ordering: .acquiringAndReleasing)
        defer { writerUse.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        try? pool.writeWithoutTransaction { db in try settleBatch(db) }
    }

    /// The open transaction is gone without a commit: its writes are lost.
    private func abandonBatch(because error: any Error) {
        let joiners = batch.withLockedValue { batch in
            defer {
                batch.joiners.removeAll()
                batch.failNextCommit = nil
            }
            return batch.joiners
        }
        batchOpen.store(false, ordering: .releasing)
        for scope in joiners { scope.batchFailed(error) }
        forgetReads()
    }

    /// The read caches forget everything.
    private func forgetReads() {
        chains.invalidate()
        properties.invalidate()
        writeChains.invalidate()
    }

    /// Where a lookup reads: on the idle writer (`onIdleWriter`) or, nil,
    /// on a read-only connection; for a joiner of the open batch, on the
    /// writer, waiting for it, since only there is the batch to be seen.
    func onWriterIfIdleOrBatched<T>(_ read: (Database) throws -> T) throws -> T? {
        guard seesBatch else { return try onIdleWriter(read) }
        if claimIdleWriter() {
            defer { releaseWriterClaim() }
            return try pool.writeWithoutTransaction(read)
        }
        // Whoever else has the writer holds it briefly: a lookup that
        // claimed it before the batch opened, a write that commits the batch
        // before its own, or the sync committing it (with, every thousand
        // pages of log, SQLite's checkpoint). Waited for on the writer's
        // queue rather than spun for, which cost a burst of small PUTs a
        // tenth of its CPU. GRDB runs it in place if the caller is a write.
        return try pool.unsafeReentrantWrite(read)
    }

    /// GRDB's async read, but on the writer's connection for a joiner of the
    /// open batch, which must see it.
    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        guard seesBatch else { return try await pool.read(body) }
        writerUse.wrappingAdd(1, ordering: .acquiringAndReleasing)
        defer { writerUse.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        return try await pool.writeWithoutTransaction(body)
    }

    /// Writes that joined a batch, and batches committed, for the tests.
    var batchCounts: (joined: Int, committed: Int) {
        batch.withLockedValue { ($0.joined, $0.committed) }
    }
}
