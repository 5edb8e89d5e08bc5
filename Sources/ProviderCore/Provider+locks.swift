import Foundation

/// WebDAV locks (class 2) as the coordination between writers; the index
/// keeps them so a restart keeps every lock.
extension Provider {
    /// Locks that apply to the item: its own and depth-infinity locks above it.
    public func locks(covering item: Item) async throws -> [Lock] {
        try await index.locksCovering(ancestry: try await index.ancestry(of: item.id))
    }

    /// Locks rooted below a folder.
    public func locks(below item: Item) async throws -> [Lock] {
        guard item.isFolder else { return [] }
        return try await index.locksBelow(item.id)
    }

    public func lock(token: String) async throws -> Lock? {
        try await index.lock(token: token)
    }

    /// Takes a new lock with an unguessable `urn:uuid:` token.
    public func createLock(on item: Item, depthInfinity: Bool, exclusive: Bool, ownerXML: String?, principal: String,
                           timeout: Int?, createdItem: Bool = false) async throws -> Lock {
        let now = Date()
        let lock = Lock(token: "urn:uuid:\(UUID().uuidString.lowercased())", itemID: item.id,
                        depthInfinity: depthInfinity && item.isFolder, exclusive: exclusive, ownerXML: ownerXML,
                        principal: principal, timeout: timeout, expires: timeout.map { now.addingTimeInterval(TimeInterval($0)) },
                        createdItem: createdItem)
        try await index.insertLock(lock, ancestry: try await index.ancestry(of: item.id), now: now)
        return lock
    }

    public func refreshLock(token: String, timeout: Int?) async throws -> Lock? {
        try await index.refreshLock(token: token, timeout: timeout)
    }

    @discardableResult
    public func unlock(token: String) async throws -> Bool {
        try await index.removeLock(token: token)
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
