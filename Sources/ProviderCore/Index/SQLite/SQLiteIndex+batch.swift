import Foundation
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
/// tenth of the server's CPU off each (issue 14). Nothing is acknowledged
/// earlier than before: a write-back PUT is answered once a round committed
/// and synced its rows.
///
/// What is in the open transaction is seen only on the writer's connection,
/// so every read must be on the right side of it:
/// - the commits that join it (the task that opened a `DurabilityScope`
///   that `batches`, under the domain's coordination, one at a time) read
///   on the writer while it is open (`seesBatch`), past the read caches but
///   for `writeChains`: joined writes that keep the folders change no
///   folder's row but, at the commit, the tree versions above (which a
///   write's chain does not use), and settling forgets those chains when
///   one did not;
/// - everyone else reads what is committed: lookups go to the read-only
///   connections rather than the idle writer, and the read caches and the
///   lock memo forget what they learnt meanwhile once it is committed
///   (the memo trusts no "none" while a lock waits in the batch); the one
///   exception is `writeChains`, which a joiner may fill from the batch
///   with folder rows whose tree versions the commit raises;
/// - whatever changes the index otherwise commits the batch first, in the
///   same writer access (`transaction`), and so does every change under the
///   coordination that does not join it and every install of a cache file
///   (`Provider.installingContent`), both of which decide on what they read.
///
/// Should the batch's commit fail, or SQLite roll back the transaction under
/// a failing statement (a full disk), every write in it is lost: each scope
/// that joined it is told (`DurabilityScope.batchFailed`), and its request
/// fails rather than being acknowledged. Whoever was committing it goes on
/// with its own work. Accesses to the writer that may commit or join a
/// batch are never cancelled halfway (`writeUncancelled`): GRDB interrupts a
/// cancelled task's statement, and SQLite then refuses all but a rollback of
/// the whole transaction, everybody's writes with it.
struct CommitBatch {
    /// The scopes whose writes the open transaction holds.
    var joiners: [DurabilityScope] = []
    /// A joined write changed folders' rows (`keepingFolders` false).
    var foldersChanged = false
    /// The feed's newest sequence number when the transaction began: the
    /// changes after it have their folders' tree versions raised at its
    /// commit (`SQLiteIndex+treeVersions`).
    var changesBefore: Int64 = 0
    /// Writes that joined a batch, and batches committed, for the tests.
    var joined = 0
    var committed = 0
    /// Thrown before the next commit, for the tests: a failure injected
    /// where SQLite's own (a full disk, an I/O error) would come.
    var failNextCommit: (@Sendable () throws -> Void)?
    /// For the tests: run (once) by the next round of the fsync that finds
    /// a batch open, before it commits it, which it may hold open meanwhile.
    var beforeRoundCommits: (@Sendable () -> Void)?
}

extension SQLiteIndex {
    /// Whether the caller's reads must see the open batch: it is one of the
    /// commits that join it.
    var seesBatch: Bool {
        batchOpen.load(ordering: .acquiring) && DurabilityScope.current?.joinsBatch == true
    }

    /// `updates` in a savepoint of the writer's open transaction, which it
    /// opens if none is. On the writer's connection.
    func joinBatch<T>(_ db: Database, _ scope: DurabilityScope, keepingFolders: Bool,
                      _ updates: (Database) throws -> T) throws -> T {
        closeIfRolledBack(db)
        if !db.isInsideTransaction {
            let changesBefore = try Self.beginWriting(db)
            batch.withLockedValue { $0.changesBefore = changesBefore }
            batchOpen.store(true, ordering: .releasing)
        }
        batch.withLockedValue { batch in
            batch.joiners.append(scope)
            if !keepingFolders { batch.foldersChanged = true }
        }
        try db.cachedStatement(sql: "SAVEPOINT joined").execute()
        do {
            let result = try updates(db)
            try Self.requireTransaction(db)
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
                    // Nothing of anyone's left in it: not kept open, where
                    // it would keep every lookup off the writer.
                    if batch.withLockedValue({ $0.joiners.allSatisfy { $0 === scope } }) { settleBatch(db) }
                } catch {
                    closeBatch(db, failure: error)
                }
            } else {
                closeBatch(db, failure: error)
            }
            throw error
        }
    }

    /// Commits the open batch, if there is one. On the writer's connection.
    /// A batch that cannot be committed fails its joiners, not the caller,
    /// who goes on with its own work on a connection with no transaction.
    func settleBatch(_ db: Database) {
        closeIfRolledBack(db)
        guard batchOpen.load(ordering: .acquiring) else { return }
        do {
            let (fail, changesBefore) = batch.withLockedValue { ($0.failNextCommit, $0.changesBefore) }
            try fail?()
            try Self.raiseTreeVersions(db, changesAfter: changesBefore)
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            closeBatch(db, failure: nil)
        } catch {
            closeBatch(db, failure: error)
        }
    }

    /// Commits the open batch, if there is one, from anywhere but the writer.
    func settleBatch() async {
        guard batchOpen.load(ordering: .acquiring) else { return }
        try? await writeUncancelled { db in self.settleBatch(db) }
    }

    /// A round of the grouped fsync commits the batch before it syncs, on
    /// the blocking pool. A failed commit reaches the batch's joiners; the
    /// round goes on for everyone else's commits.
    func settleBatchForSync() {
        guard batchOpen.load(ordering: .acquiring) else { return }
        batch.withLockedValue { batch in
            defer { batch.beforeRoundCommits = nil }
            return batch.beforeRoundCommits
        }?()
        writerUse.wrappingAdd(1, ordering: .acquiringAndReleasing)
        defer { writerUse.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        pool.writeWithoutTransaction { db in settleBatch(db) }
    }

    /// A batch whose transaction SQLite rolled back by itself, under a
    /// failing statement of someone's read on the writer, is lost.
    private func closeIfRolledBack(_ db: Database) {
        if batchOpen.load(ordering: .acquiring), !db.isInsideTransaction { closeBatch(db, failure: Self.rolledBack) }
    }

    /// Ends the open batch, committed (`failure` nil) or lost: in the
    /// latter case what is left of the transaction is rolled back and every
    /// joiner is told. Either way what was read and remembered while it
    /// was open is forgotten: the caches' answers of what was committed
    /// before, and the lock memo's "none", which a lock in the batch
    /// (`insertLock` under a joiner) belies once it is committed.
    private func closeBatch(_ db: Database, failure: (any Error)?) {
        if failure != nil, db.isInsideTransaction { try? db.rollback() }
        let (joiners, foldersChanged) = batch.withLockedValue { batch in
            defer {
                batch.joiners.removeAll()
                batch.foldersChanged = false
                if failure == nil { batch.committed += 1 } else { batch.failNextCommit = nil }
            }
            return (batch.joiners, batch.foldersChanged)
        }
        batchOpen.store(false, ordering: .releasing)
        if let failure { for scope in joiners { scope.batchFailed(failure) } }
        forgetReads(keepingFolders: !foldersChanged && failure == nil)
        lockState.withLockedValue { state in
            state.lockMayExist()
            state.inOpenBatch = false
        }
        if failure == nil { try? Self.trimWriterCache(db) }
    }

    /// Throws unless `db` is still inside the transaction the caller began:
    /// SQLite rolls it back by itself under some failures (a full disk, an
    /// I/O error), and what follows must not run as statements of their own.
    static func requireTransaction(_ db: Database) throws {
        guard db.isInsideTransaction else { throw rolledBack }
    }

    static var rolledBack: DatabaseError {
        DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back")
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
        // Whoever else has the writer: a lookup that claimed it before the
        // batch opened, a write that commits the batch before its own (and
        // may then run long: a listing's page), or the sync committing it
        // (with, every thousand pages of log, SQLite's checkpoint). Waited
        // for on the writer's queue, holding the caller's thread: spinning
        // for it instead cost a burst of small PUTs a tenth of its CPU.
        // GRDB runs it in place if the caller is a write itself.
        return try pool.unsafeReentrantWrite(read)
    }

    /// GRDB's async read, but on the writer's connection for a joiner of the
    /// open batch, which must see it.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard seesBatch else { return try await pool.read(body) }
        return try await writeUncancelled(body)
    }

    /// An access to the writer's connection that runs to its end once
    /// queued, whatever happens to the caller's task: GRDB's async access
    /// interrupts a cancelled task's statements, which in a batch would roll
    /// back every joiner's writes.
    func writeUncancelled<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        writerUse.wrappingAdd(1, ordering: .acquiringAndReleasing)
        defer { writerUse.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        return try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
            pool.asyncWriteWithoutTransaction { db in done.resume(with: Result { try body(db) }) }
        }
    }

    /// Writes that joined a batch, and batches committed, for the tests.
    var batchCounts: (joined: Int, committed: Int) {
        batch.withLockedValue { ($0.joined, $0.committed) }
    }
}
