import Foundation
import Logging

/// WebDAV locks (class 2) as the coordination between writers; the index
/// keeps them so a restart keeps every lock.
extension Provider {
    /// Locks that apply to the item: its own and depth-infinity locks above it.
    public func locks(covering item: Item) async throws -> [Lock] {
        // Every write asks, twice (before its body and at its commit): with
        // no live lock anywhere, neither the ancestry nor the locks are read.
        guard try await index.hasLiveLocks() else { return [] }
        return try await index.locksCovering(ancestry: try await index.ancestry(of: item.id))
    }

    /// Locks rooted below a folder.
    public func locks(below item: Item) async throws -> [Lock] {
        guard item.isFolder else { return [] }
        return try await index.locksBelow(item.id)
    }

    public func lock(token: String) async throws -> Lock? {
        try await index.lock(token: token)
    }

    /// Where a lock is rooted: the resource a 423 names (RFC 4918 section
    /// 16) and `lockdiscovery` gives as `lockroot` (section 14.12). A lock
    /// goes with its item, so only a DELETE racing in between leaves the
    /// item gone; then the path is empty, the domain's root.
    public func lockRoot(of lock: Lock) async throws -> (path: ItemPath, isFolder: Bool) {
        let isFolder = try await index.item(id: lock.itemID)?.isFolder ?? false
        return (try await index.path(of: lock.itemID), isFolder)
    }

    /// Whether any unexpired lock exists (in any domain of the index):
    /// PROPFIND skips the per-item lookups of `lockdiscovery` when none
    /// does, the common case (as a write's lock check does; see
    /// `MetadataIndex.hasLiveLocks` for why that is safe).
    public func hasLiveLocks() async throws -> Bool {
        try await index.hasLiveLocks()
    }

    /// Takes a new lock with an unguessable `urn:uuid:` token, and mirrors
    /// it upstream when the domain asks for that.
    public func createLock(on item: Item, depthInfinity: Bool, exclusive: Bool, ownerXML: String?, principal: String,
                           timeout: Int?, createdItem: Bool = false) async throws -> Lock {
        let now = Date()
        var lock = newLock(on: item.id, isFolder: item.isFolder, depthInfinity: depthInfinity, exclusive: exclusive, ownerXML: ownerXML,
                           principal: principal, timeout: timeout, createdItem: createdItem, now: now)
        // Granted under the coordination: a write committing now either
        // landed before (the lock covers what it wrote) or sees this lock
        // and is refused; never granted and then overwritten.
        try await coordinated {
            try await index.insertLock(lock, ancestry: try await index.ancestry(of: item.id), now: now)
        }
        if let mirror = lockMirror, Self.mirrors(item, exclusive: exclusive, createdItem: createdItem) {
            // Taken here first: the local exclusive lock keeps a second
            // davgate client from asking upstream too.
            var path: ItemPath = []
            do {
                path = try await index.path(of: item.id)
                if let upstreamToken = try await upstream({ try await mirror.lock(path, exclusive: exclusive, timeout: timeout) }) {
                    do {
                        try await index.setUpstreamToken(upstreamToken, of: lock.token)
                    } catch {
                        // Not recorded, so never released later: release it now.
                        try? await mirror.unlock(path, token: upstreamToken)
                        throw error
                    }
                    lock.upstreamToken = upstreamToken
                }
            } catch ProviderError.upstream(.locked) {
                try await index.removeLock(token: lock.token)
                throw ProviderError.upstream(.locked)
            } catch {
                // Offline work goes on: the lock holds here, as it would without mirroring.
                logger.warning("lock held here only, not mirrored upstream", metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
            }
        }
        return lock
    }

    /// A lock not granted yet, with a fresh unguessable token.
    func newLock(on itemID: Int64, isFolder: Bool, depthInfinity: Bool, exclusive: Bool, ownerXML: String?, principal: String,
                 timeout: Int?, createdItem: Bool, now: Date = Date()) -> Lock {
        Lock(token: "urn:uuid:\(UUID().uuidString.lowercased())", itemID: itemID,
             depthInfinity: depthInfinity && isFolder, exclusive: exclusive, ownerXML: ownerXML,
             principal: principal, timeout: timeout, expires: timeout.map { now.addingTimeInterval(TimeInterval($0)) },
             createdItem: createdItem)
    }

    /// Mirrored: exclusive locks on files the upstream has. Not shared
    /// locks (several holders here would share one upstream lock, and the
    /// first UNLOCK would release it for all), not folders (a depth-infinity
    /// lock upstream would hold back every upload beneath it), and not a
    /// file a LOCK just created or one never uploaded (a LOCK upstream would
    /// create an empty file there).
    static func mirrors(_ item: Item, exclusive: Bool, createdItem: Bool) -> Bool {
        exclusive && !item.isFolder && !createdItem && item.upstreamVersion != nil
    }

    public func refreshLock(token: String, timeout: Int?) async throws -> Lock? {
        let refreshed = try await index.refreshLock(token: token, timeout: timeout)
        if let refreshed {
            try await onMirror(of: refreshed, failing: "could not refresh the mirrored lock upstream") { mirror, path, upstreamToken in
                try await mirror.refreshLock(path, token: upstreamToken, timeout: timeout)
            }
        }
        return refreshed
    }

    /// Releases a lock; its mirror upstream goes first, so an upload the
    /// lock held back never meets our own lock there.
    @discardableResult
    public func unlock(token: String) async throws -> Bool {
        if let lock = try await index.lock(token: token) {
            // On failure it expires upstream by itself; the store no longer sends it.
            try await onMirror(of: lock, failing: "could not release the mirrored lock upstream") { mirror, path, upstreamToken in
                try await mirror.unlock(path, token: upstreamToken)
            }
        }
        return try await index.removeLock(token: token)
    }

    /// Does `body` to the upstream's side of a mirrored lock; a failure is
    /// logged, not thrown: the lock here stands either way.
    private func onMirror(of lock: Lock, failing message: Logger.Message,
                          _ body: (any LockMirror, ItemPath, String) async throws -> Void) async throws {
        guard let upstreamToken = lock.upstreamToken, let mirror = lockMirror else { return }
        let path = try await index.path(of: lock.itemID)
        do {
            try await upstream { try await body(mirror, path, upstreamToken) }
        } catch {
            logger.warning(message, metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
        }
    }

    /// At start: the store sends the upstream tokens of locks held before
    /// the restart with its writes again.
    public func adoptMirroredLocks() async throws {
        guard let mirror = lockMirror else { return }
        for lock in try await index.mirroredLocks(domain: domain) {
            guard let upstreamToken = lock.upstreamToken else { continue }
            mirror.adoptLock(try await index.path(of: lock.itemID), token: upstreamToken)
        }
    }
}

extension Provider {
    /// Whether the item is the empty resource a LOCK on an unmapped URL made
    /// and nobody has written yet (RFC 4918 section 7.3).
    public func isLockCreatedPlaceholder(_ item: Item) async throws -> Bool {
        guard !item.isFolder, item.size == 0 else { return false }
        return try await locks(covering: item).contains { $0.createdItem && $0.itemID == item.id }
    }
}
