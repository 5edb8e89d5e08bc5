import Foundation

/// What the provider asks of the index: the one door between the provider
/// and whichever database holds items, dead properties, locks, the
/// write-back journal and the change feed (`SQLiteIndex`, the embedded
/// default).
///
/// Every operation is `async`: an implementation whose reads are cheap
/// enough to run in place (SQLite's) does so inside, and one that crosses
/// a network awaits without blocking an event loop. Each write is one
/// transaction, durable when it returns (or, inside a `DurabilityScope`,
/// once the scope's owner has called `sync`), and each multi-statement
/// read sees one snapshot. The contract of each operation is written at
/// its SQLite implementation, which defined it.
protocol IndexStore: Sendable {
    // MARK: The tree
    func root(domain: String) async throws -> Item
    func chain(domain: String, path: ItemPath) async throws -> [Item]
    func writeChain(domain: String, path: ItemPath) async throws -> [Item]
    func item(id: Int64) async throws -> Item?
    func conflictCopies(in folder: Int64) async throws -> [Item]
    func child(of parent: Int64, named name: String) async throws -> Item?
    func children(of parent: Int64, after name: String?, limit: Int) async throws -> [Item]
    func descendants(of id: Int64) async throws -> [Item]
    func descendantsWithPaths(of folder: Int64, at path: ItemPath) async throws -> [(Item, ItemPath)]
    func descendantsWithDeadProperties(of id: Int64) async throws -> [Int64]
    func ancestry(of id: Int64) async throws -> [Int64]
    func path(of id: Int64) async throws -> ItemPath
    func listedVersion(of id: Int64) async throws -> String?
    func bytesBelow(_ id: Int64) async throws -> Int64

    @discardableResult
    func insertItem(_ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String?, listed: Bool,
                    checksum: String?, conflictCopy: Bool) async throws -> Item
    @discardableResult
    func updateContent(id: Int64, entry: UpstreamEntry, event: ItemStateMachine.Event, checksum: String?) async throws -> Item
    func markListed(id: Int64, at date: Date) async throws
    /// `namespace`: applied only while the shared clock still reads it
    /// (nil: no shared clock to check); otherwise `NamespaceChangedWhileListing`.
    func applyListingPage(folder: Int64, domain: String, entries: [UpstreamEntry], pass: Int64,
                          namespace: NamespaceStamp?) async throws -> ListingEffects
    func finishListing(folder: Int64, pass: Int64, version: String?, namespace: NamespaceStamp?) async throws -> [Int64]
    func delete(id: Int64) async throws -> [Int64]
    func move(id: Int64, to parent: Int64, name: String, entry: UpstreamEntry) async throws -> Item
    func resetDomain(_ domain: String) async throws -> Int

    // MARK: This instance's cached content
    func markCached(id: Int64, version: String) async throws -> Bool
    func markEvicted(id: Int64, cachedVersion: String?) async throws -> Bool
    func cachedVersions(of ids: [Int64]) async throws -> [Int64: String?]
    func keptItems(domain: String, now: Date) async throws -> Set<Int64>

    // MARK: Content policies
    func effectivePolicies(of ids: [Int64]) async throws -> [Int64: EffectivePolicy]
    func eagerRoots(domain: String) async throws -> [Item]

    // MARK: Dead properties
    func deadProperties(of id: Int64) async throws -> [DeadProperty]
    func deadProperties(of ids: [Int64]) async throws -> [Int64: [DeadProperty]]
    func applyPropertyChanges(_ changes: [PropertyChange], to id: Int64) async throws
    func copyDeadProperties(from source: Int64, to destination: Int64) async throws

    // MARK: Locks
    func hasLiveLocks(now: Date) async throws -> Bool
    func locksCovering(ancestry: [Int64], now: Date) async throws -> [Lock]
    func locksBelow(_ id: Int64, now: Date) async throws -> [Lock]
    func lock(token: String, now: Date) async throws -> Lock?
    func insertLock(_ lock: Lock, ancestry: [Int64], now: Date) async throws
    func refreshLock(token: String, timeout: Int?, now: Date) async throws -> Lock?
    func setUpstreamToken(_ upstreamToken: String, of token: String) async throws
    func mirroredLocks(domain: String, now: Date) async throws -> [Lock]
    @discardableResult
    func removeLock(token: String) async throws -> Bool
    func lockedItems(domain: String, now: Date) async throws -> Set<Int64>

    // MARK: The write-back journal
    func recordLocalWrite(existing: Item?, parent: Int64, domain: String, name: String, size: Int64, modified: Date,
                          file: String, content: Data?, checksum: String?) async throws -> Item
    func uploadsDue(domain: String, quietSince: Date, now: Date, limit: Int) async throws -> [JournalEntry]
    func pendingUploads(domain: String) async throws -> Int
    func newestEntries(domain: String) async throws -> [JournalEntry]
    func pendingBytes(domain: String, except item: Int64?) async throws -> Int64
    func journal(domain: String) async throws -> [JournalEntry]
    func journalNames(file: String) async throws -> Bool
    func latestEntries(of ids: [Int64]) async throws -> [JournalEntry]
    /// The upload of `entry` arrived as `uploaded`: settles its rows and
    /// returns their outbox files. Unlike the other writes it may return
    /// before its commit is durable (SQLite: no wait for the log's fsync):
    /// a power loss that takes it back leaves the rows, and their upload
    /// runs again over our own file, which `Provider.holdsCutUpload`
    /// recognises where the store keeps modification times to the
    /// microsecond (a folder; a WebDAV upstream keeps seconds, and there
    /// such an upload becomes a conflict copy of itself, as after a kill
    /// between an upload and its completion). So the caller deletes the
    /// returned files only after `sync()` (`Provider.removeSettledOutbox`).
    func completeUpload(_ entry: JournalEntry, uploaded: UpstreamEntry) async throws -> [String]
    func abandonUpload(_ entry: JournalEntry, upstream: UpstreamEntry?) async throws -> (files: [String], stillDirty: Bool)
    func uploadFailed(_ entry: JournalEntry, error: String, next: Date, failed: Bool, reached: Bool) async throws
    func uploadMayHaveReached(_ id: Int64) async throws -> Bool
    func dropJournal(of ids: [Int64]) async throws -> [String]
    func inlineWrites(domain: String) async throws -> [(file: String, content: Data, modified: Date)]
    func journaledContent(seq: Int64) async throws -> (content: Data, modified: Date)?

    // MARK: The change feed (sync-collection, `davgate watch`)
    func feedPosition() async throws -> (identity: String, oldest: Int64, latest: Int64)
    func changes(domain: String, below folder: Int64, at path: ItemPath, infinite: Bool, since sequence: Int64, limit: Int?) async throws
        -> (present: [(Item, ItemPath)], removed: [ItemPath], covered: Int64, truncated: Bool)
    @discardableResult
    func compactChanges(olderThan age: TimeInterval, keep: Int) async throws -> Int

    // MARK: The upstream's change feed
    func upstreamFeed(domain: String) async throws -> UpstreamFeedState?
    func startUpstreamFeed(domain: String, at state: UpstreamFeedState) async throws
    func forgetUpstreamFeed(domain: String) async throws
    func applyUpstreamChanges(domain: String, present: [(path: ItemPath, entry: UpstreamEntry)], removed: [ItemPath],
                              position: String, last: Bool, namespace: NamespaceStamp?) async throws -> ListingEffects

    // MARK: Trash
    func trashEntries(domain: String) async throws -> [TrashEntry]
    func trashEntry(domain: String, name: String) async throws -> TrashEntry?
    func insertTrashEntry(_ entry: TrashEntry, domain: String) async throws
    func deleteTrashEntries(_ names: [String], domain: String) async throws

    // MARK: Memory
    /// Frees the database connections' page caches and statements and the
    /// read caches, once the server has gone quiet: they refill as the next
    /// requests need them.
    func releaseMemory()

    // MARK: Status
    func storedStateCounts(domain: String) async throws -> [ItemState.Name: Int]
    func bytesListed(domain: String) async throws -> Int64
    func items(in state: StoredState, domain: String, limit: Int) async throws -> [Int64]

    /// Returns once every write committed before the call is durable (the
    /// owner of a `DurabilityScope` calls it after closing the scope).
    /// - Parameter expected: the caller announced it (`expectSync`).
    func sync(expected: Bool) async throws

    /// A write-back commit entering the domain's coordination will ask for
    /// a `sync` once it leaves, or say it will not
    /// (`expectedSyncDropped`): a grouped fsync about to start waits a
    /// moment for it (`GroupSync.expect`).
    func expectSync()
    func expectedSyncDropped()

    /// Commits what the write-back commits before the caller left in the
    /// transaction they share (`SQLiteIndex+batch`), so that the caller's
    /// reads see them: a change under the coordination that does not join
    /// them, an install of a cache file. The writes of a `DurabilityScope`
    /// that `batches` may share one; the shared index commits each at once.
    func settleBatch() async throws

    // MARK: Coordination between instances (a shared index)
    // The embedded index serves one process, whose memory coordinates it;
    // these are then no-ops, and the provider's own locks do the work.

    /// Whether several instances may use the index at once.
    var isShared: Bool { get }

    /// Runs `body` as the only coordinated writer of the domain among every
    /// instance on the index (the provider already made it the only one in
    /// its own process).
    func withDomainTurn<T>(domain: String, _ body: () async throws -> T) async throws -> T
    /// Runs `body` as the only listing refresh of `folder` among every
    /// instance; `waited`: another instance held the turn first, so the
    /// folder may be fresh by now.
    func withListingTurn<T>(folder: Int64, _ body: (_ waited: Bool) async throws -> T) async throws -> T
    /// The domain's shared namespace clock; nil when the index has none.
    func namespaceStamp(domain: String) async throws -> NamespaceStamp?
    func moveNamespaceClock(domain: String, _ move: NamespaceMove) async throws
    /// An instance's heartbeat (`InstanceStatus`).
    func beat(instance id: String, address: String, started: Date, uploads: Int) async throws
    func instances() async throws -> [InstanceStatus]
    /// A stopping instance's last word: it is no longer listed.
    func leave(instance id: String) async throws
}
