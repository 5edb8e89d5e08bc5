/// Coordination between writers: who may change an item, checked where the
/// change commits.
///
/// Lock order (a lock may be taken while holding the ones above it, never
/// the other way round):
/// 1. `mutations`, the domain's coordination: namespace changes, the
///    commit of a write (each checked against its `WriteConditions` inside
///    it) and the grant of a new lock, one at a time. Write-through uploads
///    run under it; write-back commits are a rename and a savepoint in
///    the transaction they share until the next grouped fsync commits it
///    (`SQLiteIndex+batch`); any other holder commits that one first.
///    With a shared index, the domain's turn among instances is taken
///    inside it (`IndexStore.withDomainTurn`), and a folder's listing
///    turn inside a listing's single flight.
/// 2. `uploadSlots`: one upload per item, a DELETE holding its items;
///    `evictions`, a pass of eviction. Then `contentInstalls`: a cache
///    file a write-back write may race, made, replaced or moved aside.
/// 3. `listingApplication`: a listing's generation check with its
///    application, and an upload's generation bump.
/// 4. The index's SQLite writer and the small `NIOLockedValueBox`es (fetch
///    table, upload progress, generation), never held across an `await`.
///    A write-back commit's lookups wait for the writer while the shared
///    transaction is open; nothing that holds the writer waits for them.
/// File system calls (the cache's renames and fsyncs) run under 1 and 2 at
/// most, never under 3 or 4.
extension Provider {
    /// Runs `body` under the domain's coordination without marking a
    /// namespace change (a lock grant changes no listing). The index writes
    /// it makes are made durable by one grouped fsync after the next writer
    /// was let in (`DurabilityScope`), and before this returns, failed or
    /// not: the commit of one writer and the fsync of the one before it
    /// overlap, which is where a domain's small-write rate comes from.
    /// - Parameter expectingSync: a write-back commit, which will sync: said
    ///   to the index before the coordination is waited for, so that a sync
    ///   starting meanwhile waits a moment for it (`IndexStore.expectSync`).
    ///   Its small writes share one transaction with the write-back commits
    ///   before and after it (`SQLiteIndex+batch`), unless a dirty budget
    ///   is set, whose check reads what the journal holds committed.
    func coordinated<T: Sendable>(expectingSync: Bool = false, _ body: () async throws -> T) async throws -> T {
        let scope = DurabilityScope(batches: expectingSync && uploads.dirtyBudget == nil)
        if expectingSync { index.expectSync() }
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await DurabilityScope.$current.withValue(scope) {
                try await mutations.withLock {
                    // A change that does not join the write-back commits'
                    // transaction reads the index as everyone else does:
                    // they are committed first.
                    if !scope.batches { try await index.settleBatch() }
                    // One waiter per instance asks the shared index for the turn.
                    return try await index.withDomainTurn(domain: domain, body)
                }
            })
        } catch {
            outcome = .failure(error)
        }
        if scope.close() {
            try await index.sync(expected: expectingSync)
        } else if expectingSync {
            index.expectedSyncDropped()
        }
        let value = try outcome.get()
        // Committed with others and lost with them: never acknowledged.
        if let failure = scope.batchFailure { throw failure }
        return value
    }

    /// Runs `body` under `contentInstalls`, once the write-back commits'
    /// shared transaction is committed: each install decides on what the
    /// index says, and a fetch or a read that did not see a newer write
    /// still in it could put older bytes over that write's file.
    func installingContent<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await contentInstalls.withLock {
            try await index.settleBatch()
            return try await body()
        }
    }

    /// The checks of a change that removes or replaces `item` (DELETE, a
    /// MOVE's source, an overwritten destination): its locks and those
    /// below it, and its parent's. `judged`: whether the request's
    /// conditions were about this item.
    func checkRemoval(_ conditions: WriteConditions, of item: Item, judged: Bool) async throws {
        try await check(judged ? conditions : conditions.locksOnly, target: item, parent: nil, descendants: true)
        if let parentID = item.parentID, let parent = try await index.item(id: parentID) {
            try await check(conditions.locksOnly, target: nil, parent: parent)
        }
    }

    /// Throws unless `conditions` allow a write to `target` (nil: a new
    /// item under `parent`): every lock covering it (and, with
    /// `descendants`, every lock below it) must have one of its tokens
    /// submitted by its owner, and the content must be what the request's
    /// conditions were judged against. The server calls it before a body,
    /// the provider again under the coordination at commit. `locks` false:
    /// the content only (a COPY's source, which the COPY does not change).
    public func check(_ conditions: WriteConditions, target: Item?, parent: Item?, descendants: Bool = false,
                      locks checkingLocks: Bool = true) async throws {
        if let judged = conditions.judgedAgainst, judged != WriteConditions.judged(target) {
            throw ProviderError.conditionChanged
        }
        guard checkingLocks, let subject = target ?? parent else { return }
        var locks = try await locks(covering: subject)
        if descendants, let target { locks += try await self.locks(below: target) }
        // One token per lock root suffices: shared locks on one root are alternatives.
        for group in Dictionary(grouping: locks, by: \.itemID).values {
            if group.contains(where: { conditions.tokens.contains($0.token) && $0.principal == conditions.principal }) { continue }
            let root = try await lockRoot(of: group[0])
            throw ProviderError.locked(domain: domain, root: root.path, isFolder: root.isFolder)
        }
    }
}
