import Foundation

/// Namespace changes: MKCOL, DELETE, MOVE and COPY, each applied to the
/// upstream first and then to the index, one at a time per domain.
extension Provider {
    public func makeFolder(at path: ItemPath) async throws -> Item {
        guard let name = path.last else { throw ProviderError.exists }
        return try await mutate {
            guard let parent = try await item(at: Array(path.dropLast())), parent.isFolder else {
                throw ProviderError.parentMissing
            }
            if try await index.child(of: parent.id, named: name) != nil { throw ProviderError.exists }
            try admit(path)
            let entry = try await upstream { try await store.makeFolder(path) }
            return try await index.insert(entry, parent: parent.id, domain: domain, listed: true)
        }
    }

    /// Deletes a file, or a folder with everything below it.
    public func delete(at path: ItemPath) async throws {
        try await mutate {
            guard !path.isEmpty, let target = try await item(at: path) else { throw ProviderError.notFound }
            try await removeBoth(target, at: path)
        }
    }

    private func removeBoth(_ target: Item, at path: ItemPath) async throws {
        try await withUploadsHeld(under: target) {
            // A file written here that no upload can have reached (read
            // again: one in flight may have landed meanwhile) is not asked
            // of the upstream, so this works with the upstream down.
            if let current = try await index.item(id: target.id), !current.isFolder, current.dirty, current.upstreamVersion == nil,
               !(try await index.uploadMayHaveReached(target.id)) {
                return
            }
            do {
                try await store.delete(path)
            } catch UpstreamError.notFound {
                // Already gone upstream: the index catches up.
            } catch let error as UpstreamError {
                throw ProviderError.upstream(error)
            }
        }
        cache.remove(try await index.delete(id: target.id))
    }

    /// Moves an item; with `overwrite` an existing destination is deleted
    /// first (RFC 4918 section 9.9.3). Returns the moved item and whether a
    /// destination was replaced.
    public func move(from source: ItemPath, to destination: ItemPath, overwrite: Bool) async throws -> (item: Item, replaced: Bool) {
        try await mutate {
            let (moving, parent, existing) = try await prepareTransfer(from: source, to: destination, overwrite: overwrite)
            // Pending writes reach the upstream under the old name first.
            try await flushUploads(under: moving)
            if let existing { try await removeBoth(existing, at: destination) }
            let entry = try await upstream { try await store.move(source, to: destination) }
            let moved = try await index.move(id: moving.id, to: parent.id, name: destination.last!, entry: entry)
            return (moved, existing != nil)
        }
    }

    /// Copies an item (a folder with its members when `recursive`), dead
    /// properties included (RFC 4918 section 9.8.2).
    public func copy(from source: ItemPath, to destination: ItemPath, recursive: Bool, overwrite: Bool) async throws -> (item: Item, replaced: Bool) {
        try await mutate {
            let (original, parent, existing) = try await prepareTransfer(from: source, to: destination, overwrite: overwrite)
            try await flushUploads(under: original)
            if let existing { try await removeBoth(existing, at: destination) }
            let entry = try await upstream { try await store.copy(source, to: destination, recursive: recursive) }
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
    /// parent is a folder, the two do not overlap, and Overwrite allows it.
    private func prepareTransfer(from source: ItemPath, to destination: ItemPath, overwrite: Bool) async throws -> (source: Item, parent: Item, existing: Item?) {
        guard !source.isEmpty, let item = try await item(at: source) else { throw ProviderError.notFound }
        guard !destination.isEmpty,
              !destination.starts(with: source), !source.starts(with: destination)
        else { throw ProviderError.overlapping }
        guard let parent = try await self.item(at: Array(destination.dropLast())), parent.isFolder else {
            throw ProviderError.parentMissing
        }
        let existing = try await index.child(of: parent.id, named: destination.last!)
        if existing != nil && !overwrite { throw ProviderError.exists }
        if existing == nil { try admit(destination) }
        return (item, parent, existing)
    }
}
