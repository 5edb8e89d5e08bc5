import Logging
import Foundation
import NIOConcurrencyHelpers

/// Content: lazy materialization on read (`startProvidingItem`) and durable
/// writes (`itemChanged`).
extension Provider {
    /// Where a reader finds an item's content: a complete local file, or a
    /// download in flight to follow.
    public enum Content: Sendable {
        case file(URL)
        case download(Download)
    }

    /// Opens the item's current content for reading, starting a download
    /// from the upstream when the item is a placeholder or its cached copy
    /// is stale. Concurrent callers for one item share one download, which
    /// they can read while it is being written.
    public func openContents(of item: Item, at path: ItemPath) throws -> Content {
        guard item.kind == .file else { throw ProviderError.wrongKind }
        if item.isMaterialized, cache.hasFile(for: item.id) {
            return .file(cache.file(for: item.id))
        }
        let (download, started) = downloads.withLockedValue { running -> (Download, Bool) in
            if let existing = running[item.id] { return (existing, false) }
            let download = Download(itemID: item.id, expectedSize: item.size, file: cache.temporaryFile("fetch"))
            running[item.id] = download
            return (download, true)
        }
        if started {
            // Unstructured: a reader going away must not cancel the others' download.
            Task { await run(download, item: item, path: path) }
        }
        return .download(download)
    }

    /// Returns the local file holding the item's current content, waiting
    /// for a download to finish when one is needed. The returned item
    /// carries the version of the bytes in the file.
    public func contents(of item: Item, at path: ItemPath) async throws -> (item: Item, file: URL) {
        switch try openContents(of: item, at: path) {
        case .file(let url):
            return (item, url)
        case .download(let download):
            return (try await download.result(), cache.file(for: item.id))
        }
    }

    private func run(_ download: Download, item: Item, path: ItemPath) async {
        let temporary = download.temporaryFile
        let started = ContinuousClock.now
        let outcome: Result<Item, any Error>
        do {
            let entry = try await upstream {
                try await store.fetch(path, range: nil, into: temporary) { download.progressed($0) }
            }
            try download.install { _ in
                try cache.install(temporary, for: item.id)
                return cache.file(for: item.id)
            }
            let fetched: Item
            if entry.version != item.upstreamVersion {
                // Newer than the listing said: record it, new ETag.
                fetched = try await index.updateContent(id: item.id, entry: entry, cachedVersion: entry.version)
            } else {
                _ = try await index.markCached(id: item.id, version: entry.version)
                var updated = item
                updated.cachedVersion = entry.version
                fetched = updated
            }
            logFetch(path, bytes: entry.size, since: started)
            outcome = .success(fetched)
        } catch {
            cache.discard(temporary)
            logger.warning("fetch failed; the item stays a placeholder", metadata: ["path": "/\(path.joined(separator: "/"))", "error": "\(error)"])
            outcome = .failure(error)
        }
        // Leave the table first: a reader arriving now starts afresh
        // (after a failure) or finds the item materialized.
        _ = downloads.withLockedValue { $0.removeValue(forKey: item.id) }
        download.finish(outcome)
    }

    private func logFetch(_ path: ItemPath, bytes: Int64, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let level: Logger.Level = bytes > 1 << 20 ? .info : .debug
        logger.log(level: level, "fetched /\(path.joined(separator: "/")) from \(store.displayName): \(bytes) bytes in \(String(format: "%.2f", seconds)) s")
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
