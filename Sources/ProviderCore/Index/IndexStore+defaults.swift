import Foundation

/// The usual arguments of the index's operations: now, on this machine's
/// clock; the first page of children; nothing cached, listed or inline.
/// (A protocol's requirements cannot have default arguments.)
extension IndexStore {
    func children(of parent: Int64, after name: String? = nil) async throws -> [Item] {
        try await children(of: parent, after: name, limit: 500)
    }

    @discardableResult
    func insert(_ entry: UpstreamEntry, parent: Int64, domain: String, cachedVersion: String? = nil, listed: Bool = false,
                checksum: String? = nil, conflictCopy: Bool = false) async throws -> Item {
        try await insertItem(entry, parent: parent, domain: domain, cachedVersion: cachedVersion, listed: listed,
                             checksum: checksum, conflictCopy: conflictCopy)
    }

    @discardableResult
    func updateContent(id: Int64, entry: UpstreamEntry, event: ItemStateMachine.Event) async throws -> Item {
        try await updateContent(id: id, entry: entry, event: event, checksum: nil)
    }

    func markListed(id: Int64) async throws { try await markListed(id: id, at: Date()) }

    func sync() async throws { try await sync(expected: false) }

    func applyListingPage(folder: Int64, domain: String, entries: [UpstreamEntry], pass: Int64) async throws -> ListingEffects {
        try await applyListingPage(folder: folder, domain: domain, entries: entries, pass: pass, namespace: nil)
    }

    func finishListing(folder: Int64, pass: Int64, version: String?) async throws -> [Int64] {
        try await finishListing(folder: folder, pass: pass, version: version, namespace: nil)
    }

    func applyUpstreamChanges(domain: String, present: [(path: ItemPath, entry: UpstreamEntry)], removed: [ItemPath],
                              position: String, last: Bool) async throws -> ListingEffects {
        try await applyUpstreamChanges(domain: domain, present: present, removed: removed, position: position, last: last, namespace: nil)
    }
    func keptItems(domain: String) async throws -> Set<Int64> { try await keptItems(domain: domain, now: Date()) }
    func hasLiveLocks() async throws -> Bool { try await hasLiveLocks(now: Date()) }
    func locksCovering(ancestry: [Int64]) async throws -> [Lock] { try await locksCovering(ancestry: ancestry, now: Date()) }
    func locksBelow(_ id: Int64) async throws -> [Lock] { try await locksBelow(id, now: Date()) }
    func lock(token: String) async throws -> Lock? { try await lock(token: token, now: Date()) }
    func insertLock(_ lock: Lock, ancestry: [Int64]) async throws { try await insertLock(lock, ancestry: ancestry, now: Date()) }
    func refreshLock(token: String, timeout: Int?) async throws -> Lock? { try await refreshLock(token: token, timeout: timeout, now: Date()) }
    func mirroredLocks(domain: String) async throws -> [Lock] { try await mirroredLocks(domain: domain, now: Date()) }
    func lockedItems(domain: String) async throws -> Set<Int64> { try await lockedItems(domain: domain, now: Date()) }

    func uploadsDue(domain: String, quietSince: Date, limit: Int = 64) async throws -> [JournalEntry] {
        try await uploadsDue(domain: domain, quietSince: quietSince, now: Date(), limit: limit)
    }

    func items(in state: StoredState, domain: String) async throws -> [Int64] {
        try await items(in: state, domain: domain, limit: 200)
    }
}
