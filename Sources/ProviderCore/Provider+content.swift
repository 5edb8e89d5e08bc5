import Logging
import Foundation

/// Content: lazy materialization on read (`startProvidingItem`) and durable
/// writes (`itemChanged`).
extension Provider {
    /// Returns the local file holding the item's current content, fetching it
    /// from the upstream first when the item is a placeholder or its cached
    /// copy is stale. Concurrent callers for one item share one fetch.
    /// The returned item carries the version of the bytes in the file.
    public func contents(of item: Item, at path: ItemPath) async throws -> (item: Item, file: URL) {
        guard item.kind == .file else { throw ProviderError.wrongKind }
        if item.isMaterialized, cache.hasFile(for: item.id) {
            return (item, cache.file(for: item.id))
        }
        let fetched = try await fetches.run(item.id) { [self] in
            let temporary = cache.temporaryFile("fetch")
            do {
                let entry = try await upstream { try await store.fetch(path, into: temporary) }
                try cache.install(temporary, for: item.id)
                if entry.version != item.upstreamVersion {
                    // Newer than the listing said: record it, new ETag.
                    return try await index.updateContent(id: item.id, entry: entry, cachedVersion: entry.version)
                }
                _ = try await index.markCached(id: item.id, version: entry.version)
                var updated = item
                updated.cachedVersion = entry.version
                return updated
            } catch {
                cache.discard(temporary)
                logger.warning("fetch failed; the item stays a placeholder", metadata: ["path": "/\(path.joined(separator: "/"))", "error": "\(error)"])
                throw error
            }
        }
        return (fetched, cache.file(for: item.id))
    }

    /// A fresh file for the body of a PUT; the caller writes and fsyncs it,
    /// then hands it to `commitWrite` or `discardWrite`.
    public func newWriteFile() -> URL {
        cache.temporaryFile("put")
    }

    public func discardWrite(_ file: URL) {
        cache.discard(file)
    }

    /// Makes a completely written, fsynced file the content at `path`: the
    /// upstream takes it first, then the cache and the index (one
    /// transaction) follow. Returns the item and whether it was created.
    public func commitWrite(_ file: URL, at path: ItemPath) async throws -> (item: Item, created: Bool) {
        guard let name = path.last else { throw ProviderError.wrongKind }
        return try await mutate {
            defer { cache.discard(file) }
            guard let parent = try await item(at: Array(path.dropLast())), parent.isFolder else {
                throw ProviderError.parentMissing
            }
            let existing = try await index.child(of: parent.id, named: name)
            if existing?.isFolder == true { throw ProviderError.wrongKind }
            let entry = try await upstream { try await store.upload(file, to: path) }
            if let existing {
                try cache.install(file, for: existing.id)
                return (try await index.updateContent(id: existing.id, entry: entry, cachedVersion: entry.version), false)
            }
            let created = try await index.insert(entry, parent: parent.id, domain: domain, cachedVersion: entry.version)
            try cache.install(file, for: created.id)
            return (created, true)
        }
    }

    /// Creates an empty file (LOCK on an unmapped URL, RFC 4918 section 7.3).
    public func createEmptyFile(at path: ItemPath) async throws -> Item {
        let file = newWriteFile()
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw ProviderError.local("cannot create a file in the cache folder")
        }
        return try await commitWrite(file, at: path).item
    }
}
