import Foundation
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// How much a domain's cache may hold (the File Provider's
/// `stopProvidingItem` under storage pressure).
public struct CacheBudget: Sendable, Equatable {
    /// Content bytes on disk the domain's cache may hold; nil: no limit.
    public var maxBytes: Int64?
    /// Free bytes to leave on the cache's file system; nil: no limit.
    public var minFreeBytes: Int64?

    public init(maxBytes: Int64? = nil, minFreeBytes: Int64? = nil) {
        self.maxBytes = maxBytes
        self.minFreeBytes = minFreeBytes
    }

    var isLimited: Bool { maxBytes != nil || minFreeBytes != nil }
}

/// A reader's hold on an item's content: while one exists, eviction leaves
/// the item alone. Released when the last reference goes (the response body
/// holds it until the last byte is written, or is dropped unsent).
public final class ReadLease: Sendable {
    private let release: @Sendable () -> Void
    init(release: @escaping @Sendable () -> Void) { self.release = release }
    deinit { release() }
}

/// Reads, leases and the least-recently-used order of the cache.
struct ReadTracking: Sendable {
    var readers: [Int64: Int] = [:]
    var lastRead: [Int64: Date] = [:]
}

extension Provider {
    /// Marks the item as being read until the lease is released.
    public func beginRead(_ item: Item) -> ReadLease {
        let id = item.id
        reads.withLockedValue {
            $0.readers[id, default: 0] += 1
            $0.lastRead[id] = Date()
        }
        return ReadLease { [reads] in
            reads.withLockedValue {
                let left = ($0.readers[id] ?? 1) - 1
                $0.readers[id] = left > 0 ? left : nil
            }
        }
    }

    /// New content counts as just used, whatever its file's mtime says (a
    /// client may set that to any date), and the budget is checked.
    func contentAdded(_ id: Int64) {
        reads.withLockedValue { $0.lastRead[id] = Date() }
        // Unstructured: the read or write that added content must not wait
        // for a pass; passes queue on `evictions` and each ends by itself.
        if budget.isLimited { Task { await enforceBudget() } }
    }

    /// Brings the cache under its budget, evicting the least recently read
    /// clean content back to placeholders; never what is eager (or under an
    /// eager folder), locked, or being read. One pass at a time; a caller
    /// waits for the pass before its own.
    public func enforceBudget() async {
        guard budget.isLimited else { return }
        do {
            try await evictions.withLock { try await evictOnce() }
        } catch {
            logger.warning("eviction failed: \(error)")
        }
    }

    private func evictOnce() async throws {
        let cache = self.cache
        let files = try await blocking { cache.contentFiles() }
        // Everything on disk counts, fetches and writes in progress too.
        let total = try await blocking { cache.usage().bytes }
        var need: Int64 = 0
        if let max = budget.maxBytes { need = Swift.max(need, total - max) }
        if let minFree = budget.minFreeBytes, let free = cache.freeBytes() { need = Swift.max(need, minFree - free) }
        guard need > 0 else { return }

        let kept = try await index.keptItems(domain: domain)
        let cached = try await index.cachedVersions(of: files.map(\.id))
        let lastRead = reads.withLockedValue { $0.lastRead }
        // Files of items the index no longer holds first (a DELETE's, not
        // unlinked yet): they free space and nobody can read them.
        let order = files.sorted {
            let (orphan0, orphan1) = (cached[$0.id] == nil, cached[$1.id] == nil)
            if orphan0 != orphan1 { return orphan0 }
            return (lastRead[$0.id] ?? $0.modified) < (lastRead[$1.id] ?? $1.modified)
        }
        var freed: Int64 = 0, count = 0
        for file in order where freed < need {
            if kept.contains(file.id) { continue }
            guard try await evict(file.id, cachedVersion: cached[file.id] ?? nil) else { continue }
            freed += file.bytes
            count += 1
        }
        let budgetText = budget.maxBytes.map { "budget \($0) bytes" } ?? "minimum free \(budget.minFreeBytes ?? 0) bytes"
        logger.info("cache over its \(budgetText) by \(need) bytes: evicted \(count) files, \(freed) bytes")
    }

    /// Turns one materialized file back into a placeholder unless someone
    /// reads it. The file is moved aside under the readers' lock: a reader
    /// either holds a lease already (and the file stays) or will find no file
    /// and fetch again.
    ///
    /// Under `contentInstalls`: a small write that lands meanwhile replaces
    /// the item's file only if it has one once its row committed; finding
    /// it moved aside it would make none, and putting the file back would
    /// bring the older bytes back under the newer write. So the write's
    /// install waits for this.
    func evict(_ id: Int64, cachedVersion: String?) async throws -> Bool {
        try await installingContent {
            let aside = cache.temporaryFile("evict")
            let moved = reads.withLockedValue { state -> Bool in
                guard state.readers[id] == nil else { return false }
                return rename(cache.file(for: id).path, aside.path) == 0
            }
            guard moved else { return false }
            // Chosen from what the index said before: a write may have landed
            // since (its new content is what was just moved aside), so the
            // index decides, and what it refuses goes back where it was.
            guard try await index.markEvicted(id: id, cachedVersion: cachedVersion) else {
                reads.withLockedValue { _ in cache.restore(aside, for: id) }
                return false
            }
            cache.discard(aside)
            return true
        }
    }

    /// What `evict(at:)` did.
    public struct EvictionReport: Sendable, Codable, Equatable {
        public var evictedFiles: Int
        public var evictedBytes: Int64
        /// Local files left alone: eager, locked or being read.
        public var keptFiles: Int
    }

    /// Evicts the content of a file, or of every file below a folder, back
    /// to placeholders now (`davgate evict`), leaving what is eager,
    /// locked or being read.
    public func evict(at path: ItemPath) async throws -> EvictionReport {
        guard let item = try await item(at: path) else { throw ProviderError.notFound }
        let files = item.isFolder ? try await index.descendants(of: item.id).filter { !$0.isFolder } : [item]
        let local = files.filter(\.isMaterialized)
        let kept = try await index.keptItems(domain: domain)
        var report = EvictionReport(evictedFiles: 0, evictedBytes: 0, keptFiles: 0)
        try await evictions.withLock {
            for file in local {
                if !kept.contains(file.id), try await evict(file.id, cachedVersion: file.cachedVersion) {
                    report.evictedFiles += 1
                    report.evictedBytes += file.size
                } else {
                    report.keptFiles += 1
                }
            }
        }
        logger.info("evicted \(Self.display(path)): \(report.evictedFiles) files, \(report.evictedBytes) bytes; \(report.keptFiles) kept")
        return report
    }
}

extension Provider {
    /// At start: removes content files of items the index no longer holds.
    /// A DELETE unlinks them after its answer (`ContentCache.removeLater`),
    /// so a stop or a crash right after one leaves them behind; nothing
    /// else would, and they would count as cache forever.
    public func removeOrphanedContent() async throws {
        let cache = self.cache
        let files = try await blocking { cache.contentFiles() }
        let held = try await index.cachedVersions(of: files.map(\.id))
        let orphans = files.filter { held[$0.id] == nil }
        guard !orphans.isEmpty else { return }
        try await blocking { cache.remove(orphans.map(\.id)) }
        logger.info("cache: removed \(orphans.count) files (\(orphans.reduce(0) { $0 + $1.bytes }) bytes) of items deleted before the last stop")
    }
}
