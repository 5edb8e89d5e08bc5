import CSQLiteTuning
import Foundation
import GRDB
import GRDBSQLite
import NIOConcurrencyHelpers
import Synchronization

/// The embedded index: every domain's items, dead properties, locks,
/// journal and change feed in one SQLite database in WAL mode, so reads run
/// concurrently with the single writer, and short reads run in place on the
/// calling thread (`lookup`). Its single writer is what makes each
/// read-modify-write below safe, and its caches (`chains`, `properties`,
/// `lockState`) are coherent because every write goes through `write`: both
/// hold for one process only, which is all the embedded default is.
final class SQLiteIndex: IndexStore {
    let pool: DatabasePool
    /// Read-only connections for `lookup`, which reads synchronously on an
    /// event loop: never `pool`'s, whose readers async reads hold while
    /// they wait to resume on the same loops (a loop blocked waiting for a
    /// reader would wait forever).
    let lookups: LookupConnections
    /// One fsync of the log for every write waiting (`write`).
    private let logSync: GroupSync
    /// What `hasLiveLocks` remembers: no live lock seen since the last insert.
    let lockState = NIOLockedValueBox(LockState())
    /// Recently walked paths and the properties of recently read items,
    /// forgotten on every write (`write`).
    let chains: ReadCache<ChainKey, [Item]>
    /// Folders' chains for writes, kept across writes that change no
    /// folder (`writeChain`).
    let writeChains: ReadCache<ChainKey, [Item]>
    let properties: ReadCache<Int64, [DeadProperty]>
    /// Who has the writer: the writes begun and not finished (the low
    /// bits; `smallWrite` runs in place at zero), plus `lookupOnWriter`
    /// while a lookup reads on it (`onIdleWriter`).
    let writerUse = Atomic<Int>(0)
    static let lookupOnWriter = 1 << 32
    /// The write-back commits sharing the writer's open transaction
    /// (`SQLiteIndex+batch`).
    let batch = NIOLockedValueBox(CommitBatch())
    /// Whether that transaction is open: read without the lock by every
    /// lookup, written only on the writer's connection.
    let batchOpen = Atomic<Bool>(false)
    /// Lookups that read on the writer's connection, for the tests.
    let lookupsOnWriter = Atomic<Int>(0)
    /// Writes that ran in place, for the tests.
    let inPlaceWrites = Atomic<Int>(0)
    /// Chains `writeChain` read from the database, for the tests.
    let writeChainReads = Atomic<Int>(0)

    /// The index a grouped fsync's round settles the batch of.
    struct WeakIndex {
        weak var index: SQLiteIndex?
    }

    struct ChainKey: Hashable {
        let domain: String
        let path: ItemPath
    }

    struct LockState {
        var none = false
        var insertions: UInt64 = 0
        /// A lock waits in the write-back commits' open transaction: "none"
        /// is neither trusted nor remembered until it is committed or lost
        /// (`SQLiteIndex+batch`), since readers outside it do not see it.
        var inOpenBatch = false

        /// A lock may exist that a read did not see: "none" is forgotten,
        /// and a read that overlapped this moment cannot put it back.
        mutating func lockMayExist() {
            none = false
            insertions &+= 1
        }
    }

    /// The read caches forget what a change may have made stale; the
    /// chains of writes too unless it kept every folder (`writeChain`).
    func forgetReads(keepingFolders: Bool) {
        chains.invalidate()
        properties.invalidate()
        if !keepingFolders { writeChains.invalidate() }
    }

    /// Before the first database is opened (see sqlite_tuning.h): no memory
    /// statistics, and each commit's log frames written in one write(2)
    /// rather than two per frame (wal_write_batching.c).
    private static let tuned: Void = {
        _ = davgate_sqlite_disable_memory_statistics()
        _ = davgate_sqlite_batch_log_writes()
    }()

    /// Opens (and migrates) the database at `file`.
    /// - Parameter readCacheLifetime: how long the read caches may serve an
    ///   answer (`ReadCache`).
    init(file: URL, readCacheLifetime: Duration = .seconds(2)) throws {
        Self.tuned
        chains = ReadCache(lifetime: readCacheLifetime)
        writeChains = ReadCache(lifetime: readCacheLifetime)
        properties = ReadCache(lifetime: readCacheLifetime)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(10)
        // The writer's transaction stays open between the write-back commits
        // that share it (`SQLiteIndex+batch`); readers never hold one open.
        configuration.allowsUnsafeTransactions = true
        configuration.prepareDatabase { db in
            // Commits do not fsync; `write` waits for a grouped fsync of the
            // log instead, which makes it as durable as FULL before it
            // returns, at one fsync for every writer waiting.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Statement journals (the pages a statement inside a transaction
            // changed, to undo it alone) in memory: past 64 KiB SQLite moved
            // them to a file in /var/tmp, and a cold listing of 10,000 files
            // made 51,880 pwrite(2) calls on the system disk (issue 14).
            // Raising that threshold instead allocates chunks of its size,
            // one per statement: 8 MiB made the same listing twice as slow.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            if db.configuration.readonly { try Self.limitReaderCache(db) }
        }
        pool = try DatabasePool(path: file.path, configuration: configuration)
        // Set once `self` is whole: the sync's rounds commit the batch first.
        // (Not a closure kept in the box: taken out of it, generic storage
        // wraps a function in one more thunk each time.)
        let settling = NIOLockedValueBox(WeakIndex())
        logSync = Self.logSync(of: file, settlingFirst: { settling.withLockedValue { $0.index }?.settleBatchForSync() })
        // An index a newer davgate migrated may rely on what this one does
        // not do (v16 moved the folders' tree versions from a trigger to
        // the commit: an older davgate would leave them where they are, and
        // the folders' ETags would stop moving): refused, not served wrong.
        if try pool.read({ db in try Self.migrator.hasBeenSuperseded(db) }) {
            throw MetadataIndex.IndexTooNewError(location: file.path)
        }
        try Self.migrator.migrate(pool)
        lookups = try LookupConnections(file: file)
        settling.withLockedValue { $0.index = self }
    }

    /// The page cache of a connection that only reads, in KiB.
    static let readerCacheKiB = 256

    /// Gives a reading connection (the pool's five readers, the eight of
    /// `LookupConnections`) a page cache of `readerCacheKiB` instead of
    /// SQLite's 2 MiB. The kernel's page cache holds the index file
    /// anyway: beyond the B-trees' upper levels, which every lookup walks
    /// and 64 pages hold, a larger cache only spares a pread(2) of a page
    /// the kernel has. Thirteen readers at 2 MiB could keep 26 MiB, and a
    /// listing of a 10,000-file folder fills one. The writer keeps the
    /// default while a transaction runs (one that changes more pages than
    /// its cache holds spills them to the log) and is trimmed after it
    /// (`trimWriterCache`).
    static func limitReaderCache(_ db: Database) throws {
        try db.execute(sql: "PRAGMA cache_size = -\(readerCacheKiB)")
    }

    /// The writer's page cache, in KiB, beyond which a commit trims it, to
    /// half of it.
    static let writerCacheKeptKiB = 1024

    /// SQLite's own page cache size, in KiB, which the writer has while a
    /// transaction runs.
    static let writerCacheKiB = 2000

    /// After a commit: when the writer's page cache holds more than
    /// `writerCacheKeptKiB`, its least recently used pages are freed down
    /// to half of that (lowering `cache_size` evicts them at once; raising
    /// it again lets the next transaction use SQLite's whole 2 MiB, so a
    /// large one, a folder's DELETE or a first listing of thousands, does
    /// not spill to the log). The pages that thousands of small PUTs or one
    /// large DELETE left stayed allocated for good, while the kernel holds
    /// them anyway: in a reproduction of the bench's steps (a listed
    /// 10,000-file folder, two bursts of 10,000 PUTs, their DELETEs) the
    /// heap in use before its 1 GiB transfers was 5.4-5.7 MiB with this
    /// (4.8-5.0 with every page freed) against 7.0-7.2 without. Only the
    /// coldest go: the writer's cache is the one lookups during a burst of
    /// writes rely on (`onIdleWriter`).
    static func trimWriterCache(_ db: Database) throws {
        guard pageCacheBytes(db) > writerCacheKeptKiB * 1024 else { return }
        try db.cachedStatement(sql: "PRAGMA cache_size = -\(writerCacheKeptKiB / 2)").execute()
        try db.cachedStatement(sql: "PRAGMA cache_size = -\(writerCacheKiB)").execute()
    }

    /// The bytes `db`'s page cache holds now.
    static func pageCacheBytes(_ db: Database) -> Int {
        var current: Int32 = 0, highest: Int32 = 0
        sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return Int(current)
    }

    /// How long a round of the log's fsync waits for the write-back commits
    /// expected before it (`GroupSync.expect`): about what eight small
    /// commits under the domain's coordination take on this machine.
    static let logGatherLimit = Duration.milliseconds(1)

    /// How long a round of the log's fsync waits for writers still arriving
    /// while a burst goes on (`GroupSync`'s `burstGather`).
    static let logBurstGather = Duration.microseconds(300)

    /// The grouped fsync of the write-ahead log (and, the first time, of the
    /// folder holding it, which the log may just have been created in).
    /// fdatasync, as SQLite syncs its own log and PostgreSQL its WAL on
    /// Linux: every write gives the log a new modification time, which a
    /// full fsync writes out with the inode each round. The size and the
    /// blocks, all that reading the log back needs, are synced. On this
    /// machine's ext4 without a journal the inode's block is written
    /// anyway (`ext4_fsync_nojournal`), so there the gain was small: the
    /// sync's share of a burst of PUTs' samples went from 12% to 10%
    /// (issue 14).
    /// - Parameter settlingFirst: commits the write-back commits' shared
    ///   transaction, if one is open, before the fsync (`SQLiteIndex+batch`).
    private static func logSync(of file: URL, settlingFirst settle: @escaping @Sendable () -> Void = {}) -> GroupSync {
        let log = file.path + "-wal", folder = file.deletingLastPathComponent().path
        let folderSynced = NIOLockedValueBox(false)
        return GroupSync(gatherLimit: logGatherLimit, burstGather: logBurstGather) {
            settle()
            // No log: nothing was written since the last connection closed
            // and checkpointed it into the database file.
            _ = try fsync(path: log, dataOnly: true) || fsync(path: file.path)
            if !folderSynced.withLockedValue({ $0 }) {
                try fsync(path: folder)
                folderSynced.withLockedValue { $0 = true }
            }
        }
    }

    /// Opens an index only to read it, changing nothing (no migration), as
    /// `davgate status --offline` does beside a running server.
    /// - Throws: `IndexVersionError` when its schema is not this davgate's.
    init(readingOnly file: URL) throws {
        (chains, writeChains, properties) = (ReadCache(), ReadCache(), ReadCache())
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        pool = try DatabasePool(path: file.path, configuration: configuration)
        logSync = Self.logSync(of: file)
        let current = try pool.read { db in try Self.migrator.hasCompletedMigrations(db) }
        guard current else { throw MetadataIndex.IndexVersionError(location: file.path) }
        lookups = try LookupConnections(file: file)
    }

    /// A short read (an item, a path's chain, a page of children, a lock, a
    /// few properties) done on the calling thread. GRDB's async read hops to
    /// a reader's Dispatch queue and back: two thread switches that cost more
    /// than the indexed read itself, and most of a small request's time in
    /// issue 14's profile. Reading in place holds the event loop for the
    /// read's CPU time only: the database is small and stays in the page
    /// cache, WAL readers do not wait for the writer, and a lookup's
    /// connection is only ever held by another lookup, which never suspends
    /// (or, on the idle writer's connection, by a small write in place).
    /// Recursive scans and writes (which wait for fsync) stay async.
    func lookup<T>(_ read: (Database) throws -> T) throws -> T {
        if let result = try onWriterIfIdleOrBatched(read) { return result }
        return try lookups.read(read)
    }

    /// A lookup of one statement, without the transaction `lookup` wraps
    /// around it: SQLite runs a lone statement in a read transaction of its
    /// own, one snapshot of the database, so `BEGIN` and `COMMIT` around it
    /// (two more statements, a savepoint and GRDB's bookkeeping) only cost.
    /// Reads of several statements that must agree stay in `lookup`.
    func lookupStatement<T>(_ read: (Database) throws -> T) throws -> T {
        if let result = try onWriterIfIdleOrBatched(read) { return result }
        return try lookups.readStatement(read)
    }

    /// A lookup on the writer's own connection, when no write is running or
    /// queued; nil when one is (the lookup then reads on `lookups`). The
    /// writer's page cache is the one SQLite never has to throw away: a
    /// read-only connection drops its whole cache whenever another
    /// connection has committed, so in a burst of small PUTs every lookup
    /// read its pages again (20 `pread`s per PUT against 8 this way, and 3%
    /// less CPU; issue 14). Holding the writer's queue is the snapshot: no
    /// commit can come between the statements, so none needs a transaction.
    /// The lookup claims the writer first, so a write arriving meanwhile
    /// is queued behind it, and a lookup never waits for a write (a
    /// write-back commit's own may: `onWriterIfIdleOrBatched`).
    /// Not while the write-back commits' shared transaction is open: what
    /// only the writer shows is not committed (`SQLiteIndex+batch`).
    func onIdleWriter<T>(_ read: (Database) throws -> T) throws -> T? {
        guard !batchOpen.load(ordering: .acquiring), claimIdleWriter() else { return nil }
        defer { releaseWriterClaim() }
        // Checked again on the writer's queue, where nothing opens or
        // closes a batch meanwhile: one may have opened since (a small
        // write runs in place whatever lookup holds the claim).
        let found: T? = try pool.writeWithoutTransaction { db in
            batchOpen.load(ordering: .acquiring) ? nil : try read(db)
        }
        if found != nil { lookupsOnWriter.wrappingAdd(1, ordering: .relaxed) }
        return found
    }

    /// Claims the writer for a lookup: false when a write or another
    /// lookup has it. A write arriving while the claim is held queues.
    func claimIdleWriter() -> Bool {
        writerUse.compareExchange(expected: 0, desired: Self.lookupOnWriter, ordering: .acquiringAndReleasing).exchanged
    }

    func releaseWriterClaim() {
        writerUse.wrappingSubtract(Self.lookupOnWriter, ordering: .acquiringAndReleasing)
    }

    /// Every change to the database goes through here: the read caches
    /// forget what it may have made stale, and it is durable when this
    /// returns (or, inside a `DurabilityScope`, when the scope's owner has
    /// synced).
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await write(small: false, updates)
    }

    /// A write of a few rows (a PUT's commit, a lock, an upload's
    /// completion), run on the calling thread when no other write is
    /// running or waiting, else queued like any other. The hop to GRDB's
    /// writer queue and back cost more than such a write: in place, a small
    /// PUT made 4.4 thread switches instead of 6.5 and took a fifth less
    /// CPU (issue 14), and the domain's coordination, which such a commit
    /// runs under, is held for the write alone. Only writes of bounded size
    /// may ask: a long one in place would hold an event loop for its whole
    /// time. A write that finds the writer busy is queued, so an event loop
    /// never waits for another's transaction (two idle checks that race
    /// meet at the writer queue, for the other's few rows, as a small write
    /// meets a lookup reading there); only a write-back commit's lookups
    /// wait for the writer while the commits' shared transaction is open
    /// (`SQLiteIndex+batch`).
    /// - Parameter keepingFolders: the write changes no folder's row, its
    ///   place or its listing, but by the tree versions its changes raise
    ///   (`writeChain`).
    func smallWrite<T: Sendable>(keepingFolders: Bool = false, _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await write(small: true, keepingFolders: keepingFolders, updates)
    }

    /// `write` or `smallWrite`, as `small` says.
    /// - Parameter durable: false for the one write that may return before
    ///   the log's fsync covers it (`IndexStore.completeUpload`); the next
    ///   sync, anyone's, does.
    func write<T: Sendable>(small: Bool, keepingFolders: Bool = false, durable: Bool = true,
                            _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let result: T
        do {
            defer { forgetReads(keepingFolders: keepingFolders) }
            // A write-back commit under the coordination shares the
            // writer's transaction with those before it (`joinBatch`).
            let joining = small && durable ? DurabilityScope.current.flatMap { $0.joinsBatch ? $0 : nil } : nil
            let idle = writerUse.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue & (Self.lookupOnWriter - 1) == 0
            defer { writerUse.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
            if small && idle {
                result = try writeInPlace(joining: joining, keepingFolders: keepingFolders, updates)
                inPlaceWrites.wrappingAdd(1, ordering: .relaxed)
            } else {
                result = try await writeUncancelled { db in try self.transaction(db, joining: joining, keepingFolders: keepingFolders, updates) }
            }
        }
        // Checked after the commit: an open scope syncs after closing, so
        // after this commit.
        guard durable else { return result }
        if let scope = DurabilityScope.current, scope.deferSync() { return result }
        try await sync(expected: false)
        return result
    }

    /// GRDB's blocking write: on the calling thread when its writer queue is
    /// free (a serial queue's `sync` runs there). Not async, so that the
    /// blocking overload is the one chosen.
    private func writeInPlace<T>(joining scope: DurabilityScope?, keepingFolders: Bool, _ updates: (Database) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in try transaction(db, joining: scope, keepingFolders: keepingFolders, updates) }
    }

    /// `updates` in one transaction, as GRDB's `write` runs them, but with
    /// `BEGIN` and `COMMIT` from the connection's statement cache: GRDB
    /// prepares both afresh for every transaction (`execute(sql:)`), SQL
    /// parsed twice for a PUT's few rows. Any error rolls back. `updates`
    /// must let every error through, as all of the index's do: after one
    /// that SQLite answered by rolling back (a full disk), swallowed, the
    /// statements that follow would each commit on their own, which GRDB's
    /// own `write` refuses to run; here only the write fails.
    /// `scope`: the write joins the shared transaction of write-back
    /// commits (`joinBatch`); without one, that transaction, if open, is
    /// committed first.
    private func transaction<T>(_ db: Database, joining scope: DurabilityScope?, keepingFolders: Bool,
                                _ updates: (Database) throws -> T) throws -> T {
        if let scope { return try joinBatch(db, scope, keepingFolders: keepingFolders, updates) }
        settleBatch(db)
        let changesBefore = try Self.beginWriting(db)
        do {
            let result = try updates(db)
            try Self.requireTransaction(db)
            try Self.raiseTreeVersions(db, changesAfter: changesBefore)
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            // Committed: a failure to trim is no failure of the write.
            try? Self.trimWriterCache(db)
            return result
        } catch {
            // Unless SQLite rolled back already (a full disk, an I/O error).
            if db.isInsideTransaction { try? db.rollback() }
            throw error
        }
    }

    /// Returns once every write committed before the call is durable.
    /// Asked from inside a `DurabilityScope` (a write under the domain's
    /// coordination that could not defer its sync, a flush before a MOVE),
    /// the sync is urgent: the write-back commits it would wait for are
    /// queueing behind its caller.
    func sync(expected: Bool) async throws {
        try await logSync.sync(expected: expected, urgent: DurabilityScope.current != nil)
    }

    /// Write-back commits announced and not yet asking for their sync, for
    /// the tests.
    var outstandingExpectedSyncs: Int { logSync.outstanding }

    func expectSync() {
        logSync.expect()
    }

    func expectedSyncDropped() {
        logSync.expectationDropped()
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE item (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    domain TEXT NOT NULL,
                    parent_id INTEGER REFERENCES item(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    is_folder INTEGER NOT NULL,
                    size INTEGER NOT NULL DEFAULT 0,
                    modified REAL NOT NULL,
                    created REAL NOT NULL,
                    content_version INTEGER NOT NULL DEFAULT 1,
                    upstream_version TEXT,
                    cached_version TEXT,
                    executable INTEGER NOT NULL DEFAULT 0,
                    listed_at REAL
                );
                CREATE UNIQUE INDEX item_by_parent_name ON item(parent_id, name);
                CREATE UNIQUE INDEX item_root ON item(domain) WHERE parent_id IS NULL;

                CREATE TABLE dead_property (
                    item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                    namespace TEXT NOT NULL,
                    name TEXT NOT NULL,
                    xml TEXT NOT NULL,
                    PRIMARY KEY (item_id, namespace, name)
                );

                CREATE TABLE lock (
                    token TEXT PRIMARY KEY,
                    item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                    depth_infinity INTEGER NOT NULL,
                    exclusive INTEGER NOT NULL,
                    owner_xml TEXT,
                    principal TEXT NOT NULL,
                    timeout INTEGER,
                    expires REAL
                );
                CREATE INDEX lock_by_item ON lock(item_id);
                """)
        }
        migrator.registerMigration("v2: lock-created items") { db in
            // Marks a lock whose LOCK created its (empty) resource, RFC 4918
            // section 7.3: until the first PUT that resource counts as new.
            try db.execute(sql: "ALTER TABLE lock ADD COLUMN created_item INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v3: folder versions") { db in
            // The upstream folder's version when its listing was last read:
            // unchanged, the listing need not be read again.
            try db.execute(sql: "ALTER TABLE item ADD COLUMN listed_version TEXT")
        }
        migrator.registerMigration("v4: checksums") { db in
            // `SHA1:<hex>` of the content, valid while content_version equals checksum_version.
            try db.execute(sql: "ALTER TABLE item ADD COLUMN checksum TEXT")
            try db.execute(sql: "ALTER TABLE item ADD COLUMN checksum_version INTEGER")
        }
        migrator.registerMigration("v5: write-back journal") { db in
            // Writes acknowledged before their upload: each row names the
            // durable copy (in the cache's outbox) and the upstream version
            // the edit was based on (NULL: a new file).
            try db.execute(sql: """
                ALTER TABLE item ADD COLUMN dirty INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE journal (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    domain TEXT NOT NULL,
                    item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
                    file TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    basis TEXT,
                    created REAL NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt REAL NOT NULL,
                    last_error TEXT,
                    failed INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX journal_by_item ON journal(item_id);
                """)
        }
        migrator.registerMigration("v6: mirrored locks") { db in
            // The upstream's token of a lock mirrored there (mirror_locks).
            try db.execute(sql: "ALTER TABLE lock ADD COLUMN upstream_token TEXT")
        }
        migrator.registerMigration("v7: uploads that may have reached the upstream") { db in
            // Set when an attempt failed after sending (a timeout, a cut
            // connection): the upstream may hold the file, so a DELETE must
            // ask it; unset while every attempt failed to connect.
            try db.execute(sql: "ALTER TABLE journal ADD COLUMN reached INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v8: item states") { db in
            // The stored part of each item's state (`StoredState`), written
            // by the state machine with every change; it replaces `dirty`,
            // the journal's failed flag as the item's answer, and the
            // conflict-of property as the sign of a conflict copy.
            try db.execute(sql: """
                ALTER TABLE item ADD COLUMN state TEXT NOT NULL DEFAULT 'placeholder';
                UPDATE item SET state = CASE
                    WHEN is_folder = 1 THEN 'folder'
                    WHEN dirty = 1 AND (SELECT failed FROM journal WHERE journal.item_id = item.id ORDER BY seq DESC LIMIT 1) = 1 THEN 'failed'
                    WHEN dirty = 1 THEN 'modified'
                    WHEN cached_version IS NOT NULL AND cached_version = upstream_version AND EXISTS (
                        SELECT 1 FROM dead_property WHERE dead_property.item_id = item.id
                            AND namespace = 'https://davgate.dev/ns' AND name = 'conflict-of') THEN 'conflict'
                    WHEN cached_version IS NOT NULL AND cached_version = upstream_version THEN 'materialized'
                    ELSE 'placeholder' END;
                ALTER TABLE item DROP COLUMN dirty;
                CREATE INDEX item_by_state ON item(domain, state);
                """)
        }
        migrator.registerMigration("v9: small writes in the journal") { db in
            // The bytes of a small write-back write, durable with its row
            // (one grouped fsync of the log for many writes, instead of an
            // fsync of each file); the outbox file is rebuilt from them after
            // a crash (`Provider.recoverJournal`).
            try db.execute(sql: "ALTER TABLE journal ADD COLUMN content BLOB")
        }
        migrator.registerMigration("v10: listings in pages") { db in
            // The refresh that last saw each member upstream: a listing that
            // arrives in pages removes, once all are in, what none named.
            try db.execute(sql: "ALTER TABLE item ADD COLUMN seen INTEGER")
        }
        migrator.registerMigration("v11: change feed") { db in
            try Self.createChangeFeed(db)
        }
        migrator.registerMigration("v12: folder versions that move") { db in
            try Self.createTreeVersions(db)
        }
        migrator.registerMigration("v13: the upstream's change feed") { db in
            try Self.createUpstreamFeed(db)
        }
        migrator.registerMigration("v14: content policies") { db in
            try Self.createContentPolicies(db)
        }
        migrator.registerMigration("v15: trash") { db in
            try Self.createTrash(db)
        }
        migrator.registerMigration("v16: tree versions raised once per commit") { db in
            // `SQLiteIndex+treeVersions` raises them before each commit of
            // `transaction` and of the write-back batch; a later migration
            // that changes items must call `raiseTreeVersions` itself.
            try db.execute(sql: "DROP TRIGGER IF EXISTS change_raises_tree_versions")
        }
        return migrator
    }
}
