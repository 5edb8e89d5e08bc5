import ProviderCore

/// Locks on files kept local are not mirrored (the upstream has no such
/// file, and a LOCK there would make an empty one); the others go to the
/// wrapped store when it mirrors locks.
extension KeepLocalStore: LockMirror {
    private var mirror: (any LockMirror)? { upstream as? any LockMirror }

    public func lock(_ path: ItemPath, exclusive: Bool, timeout: Int?) async throws -> String? {
        guard !isLocal(path), let mirror else { return nil }
        return try await mirror.lock(path, exclusive: exclusive, timeout: timeout)
    }

    public func refreshLock(_ path: ItemPath, token: String, timeout: Int?) async throws {
        guard !isLocal(path), let mirror else { return }
        try await mirror.refreshLock(path, token: token, timeout: timeout)
    }

    public func unlock(_ path: ItemPath, token: String) async throws {
        guard !isLocal(path), let mirror else { return }
        try await mirror.unlock(path, token: token)
    }

    public func adoptLock(_ path: ItemPath, token: String) {
        guard !isLocal(path), let mirror else { return }
        mirror.adoptLock(path, token: token)
    }
}
