import Foundation

/// Namespace changes: MKCOL, DELETE, MOVE and COPY, each applied to the
/// upstream first and then to the index, one at a time per domain.
extension Provider {
    /// Every change takes the writer's `conditions`, checked under the
    /// coordination where the change commits (see `WriteConditions`): a
    /// LOCK granted after the server's early check still stops it.
    public func makeFolder(at path: ItemPath, conditions: WriteConditions = .unconditional) async throws -> Item {
        guard let name = path.last else { throw ProviderError.exists }
        try refuseReserved(path)
        return try await mutate {
            guard let parent = try await item(at: Array(path.dropLast())), parent.isFolder else {
                throw ProviderError.parentMissing
            }
            if try await index.child(of: parent.id, named: name) != nil { throw ProviderError.exists }
            try await check(conditions.locksOnly, target: nil, parent: parent)
            try admit(path)
            // A new name in the parent, and a folder no listing can be
            // reading yet: listings of other folders stay valid.
            namespaceClock.confine(to: .folder(parent.id))
            let entry = try await upstream { try await store.makeFolder(path) }
            return try await index.insert(entry, parent: parent.id, domain: domain, listed: true)
        }
    }

    /// Deletes a file, or a folder with everything below it: into the
    /// trash when the domain keeps one (`Provider+trash`).
    /// - Parameter user: who deleted it, for the trash's entry.
    public func delete(at path: ItemPath, conditions: WriteConditions = .unconditional, by user: String? = nil) async throws {
        try await mutate {
            guard !path.isEmpty, let target = try await item(at: path) else { throw ProviderError.notFound }
            try await checkRemoval(conditions, of: target, judged: true)
            if try await trashes(target, at: path), try await moveToTrash(target, at: path, by: user) { return }
            try await removeBoth(target, at: path)
        }
    }

    private func removeBoth(_ target: Item, at path: ItemPath) async throws {
        try await replace(target, at: path, keepingVersion: false) {}
    }

    /// Removes `target` upstream, then runs `replacement` (the MOVE or COPY
    /// taking its place), and forgets `target` here only once both went
    /// through. A target that no upload can have reached is not asked of
    /// the upstream at all (read again: one in flight may have landed
    /// meanwhile), so a DELETE of it works with the upstream down; and if
    /// the replacement then fails, its index row, journal and content are
    /// all still here: an acknowledged write is never lost to a failed
    /// MOVE onto it (found by scripts/soak with Apache restarting).
    ///
    /// With `keepingVersion` (a MOVE or COPY over a file), the file the
    /// upstream held is moved among its versions rather than deleted, its
    /// pending edit uploaded first so the version is what the client last
    /// wrote.
    private func replace<T>(_ target: Item, at path: ItemPath, keepingVersion: Bool = true,
                            with replacement: () async throws -> T) async throws -> T {
        var result: T?
        let versioned = keepingVersion && versionPolicy != nil && !target.isFolder && !trashStore.keepsOnGateway(path)
        if versioned, !(try await neverReachedUpstream(target)) { try await flushUploads(under: target) }
        try await withUploadsHeld(under: target) {
            let localOnly = try await neverReachedUpstream(target)
            if !localOnly {
                do {
                    let kept = versioned ? try await moveToVersions(path) : false
                    if !kept { try await store.delete(path) }
                } catch UpstreamError.notFound, ProviderError.upstream(.notFound) {
                    // Already gone upstream: the index catches up.
                } catch let error as UpstreamError {
                    throw ProviderError.upstream(error)
                }
            }
            result = try await replacement()
        }
        cache.removeLater(items: try await index.delete(id: target.id))
        return result!
    }

    /// Whether `item` is a file only here: written, never uploaded, and no
    /// upload of it can have reached the upstream (read again: one in
    /// flight may have landed meanwhile).
    func neverReachedUpstream(_ item: Item) async throws -> Bool {
        guard let current = try await index.item(id: item.id), !current.isFolder, current.dirty, current.upstreamVersion == nil else {
            return false
        }
        return !(try await index.uploadMayHaveReached(item.id))
    }

    /// Moves an item; with `overwrite` an existing destination is deleted
    /// first (RFC 4918 section 9.9.3). Returns the moved item and whether a
    /// destination was replaced.
    public func move(from source: ItemPath, to destination: ItemPath, overwrite: Bool,
                     conditions: WriteConditions = .unconditional) async throws -> (item: Item, replaced: Bool) {
        try await mutate {
            let (moving, parent, existing) = try await prepareTransfer(from: source, to: destination, overwrite: overwrite,
                                                                       conditions: conditions, moving: true)
            // Pending writes reach the upstream under the old name first.
            try await flushUploads(under: moving)
            let move = { try await self.upstream { try await self.store.move(source, to: destination) } }
            let entry = if let existing { try await replace(existing, at: destination, with: move) } else { try await move() }
            let moved = try await index.move(id: moving.id, to: parent.id, name: destination.last!, entry: entry)
            return (moved, existing != nil)
        }
    }

    /// Copies an item (a folder with its members when `recursive`), dead
    /// properties included (RFC 4918 section 9.8.2).
    public func copy(from source: ItemPath, to destination: ItemPath, recursive: Bool, overwrite: Bool,
                     conditions: WriteConditions = .unconditional) async throws -> (item: Item, replaced: Bool) {
        try await mutate {
            let (original, parent, existing) = try await prepareTransfer(from: source, to: destination, overwrite: overwrite,
                                                                         conditions: conditions, moving: false)
            try await flushUploads(under: original)
            let copying = { try await self.upstream { try await self.store.copy(source, to: destination, recursive: recursive) } }
            let entry = if let existing { try await replace(existing, at: destination, with: copying) } else { try await copying() }
            let copy = try await index.insert(entry, parent: parent.id, domain: domain, listed: original.isFolder && !recursive)
            try await index.copyDeadProperties(from: original.id, to: copy.id)
            if recursive && original.isFolder {
                let sourceDepth = try await index.path(of: original.id).count
                for id in try await index.descendantsWithDeadProperties(of: original.id) {
                    let relative = try await index.path(of: id).dropFirst(sourceDepth)
                    if let counterpart = try await item(at: destination + relative) {
                        try await index.copyDeadProperties(from: id, to: counterpart.id)
                    }
                }
            }
            return (copy, existing != nil)
        }
    }

    /// Common checks of MOVE and COPY: the source exists, the destination's
    /// parent is a folder, the two do not overlap, Overwrite allows it, and
    /// the writer holds the locks: a MOVE's source (and what is below it),
    /// a replaced destination, and the parents whose members change. COPY
    /// judges the source's content but changes nothing there.
    private func prepareTransfer(from source: ItemPath, to destination: ItemPath, overwrite: Bool,
                                 conditions: WriteConditions, moving: Bool) async throws -> (source: Item, parent: Item, existing: Item?) {
        guard !source.isEmpty, let item = try await item(at: source) else { throw ProviderError.notFound }
        if moving {
            try await checkRemoval(conditions, of: item, judged: true)
        } else {
            try await check(conditions, target: item, parent: nil, descendants: false, locks: false)
        }
        guard !destination.isEmpty,
              !destination.starts(with: source), !source.starts(with: destination)
        else { throw ProviderError.overlapping }
        try refuseReserved(destination)
        guard let parent = try await self.item(at: Array(destination.dropLast())), parent.isFolder else {
            throw ProviderError.parentMissing
        }
        let existing = try await index.child(of: parent.id, named: destination.last!)
        if existing != nil && !overwrite { throw ProviderError.exists }
        if let existing {
            try await checkRemoval(conditions, of: existing, judged: false)
        } else {
            try await check(conditions.locksOnly, target: nil, parent: parent)
            try admit(destination)
        }
        return (item, parent, existing)
    }
}
