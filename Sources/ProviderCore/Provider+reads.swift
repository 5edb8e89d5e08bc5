import CoreMetrics
import Foundation
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Content reads: lazy materialization (`startProvidingItem`), one download
/// per item however many readers, and partial content fetching for ranges.
extension Provider {
    /// Where a reader finds an item's content: a complete local file, or a
    /// download to follow (in flight, or a range fetched before).
    public enum Content: Sendable {
        /// The path of the cache file (a path, not a URL: cheaper on the hot path).
        case file(path: String)
        case download(Download)
    }

    /// The downloads and sparse files of a provider's items, by item id.
    struct Fetches {
        var whole: [Int64: Download] = [:]
        var sparse: [Int64: SparseContent] = [:]
    }

    private enum Plan {
        case follow(Download)
        case whole(Download, adopting: SparseContent?)
        /// `span` covers the gaps of the wanted range; the bytes after it,
        /// up to `through`, are in the file already.
        case range(Download, SparseContent, span: ClosedRange<Int64>, through: Int64)
    }

    /// Opens the item's current content for reading. A dirty item's first
    /// read makes its file from the journal (`materializeJournaled`). A
    /// placeholder (or a stale copy) starts a download from the upstream
    /// that concurrent callers share and can read while it is written.
    /// With a `range` that is not the whole file, only the bytes missing in
    /// that range are fetched, into a sparse file that a later whole read
    /// completes.
    public func openContents(of item: Item, at path: ItemPath, range: ClosedRange<Int64>? = nil) async throws -> Content {
        guard item.kind == .file else { throw ProviderError.wrongKind }
        if item.isMaterialized {
            // Also when this item read clean: a small write may have landed
            // since, removed the file, and left its bytes in the journal.
            var present = cache.hasFile(for: item.id)
            if !present { present = try await materializeJournaled(item) }
            if present {
                metrics.cacheHits.increment()
                return .file(path: cache.path(for: item.id))
            }
        }
        let plan = try fetches.withLockedValue { table -> Plan in
            if let running = table.whole[item.id] { return .follow(running) }
            let sparse = table.sparse[item.id]
            if let range, range.count < item.size, let version = item.upstreamVersion {
                let content: SparseContent
                if let sparse, sparse.holds(item) {
                    content = sparse
                } else {
                    sparse?.retire()
                    content = try SparseContent(file: cache.temporaryFile("sparse"), version: version, size: item.size)
                    table.sparse[item.id] = content
                }
                let descriptor = try content.open()
                let gaps = content.startFetch(for: range)
                guard let first = gaps.first, let last = gaps.last else {
                    return .follow(Download.complete(item, descriptor: descriptor, path: content.file))
                }
                let download = Download(itemID: item.id, file: content.file, descriptor: descriptor, available: first.lowerBound)
                return .range(download, content, span: first.lowerBound...last.upperBound, through: range.upperBound)
            }
            // A whole read takes over what ranges fetched so far.
            table.sparse[item.id] = nil
            let download = Download(itemID: item.id, file: cache.temporaryFile("fetch"))
            table.whole[item.id] = download
            return .whole(download, adopting: sparse)
        }
        // Unstructured: a reader going away must not cancel the others' download.
        switch plan {
        case .follow(let download):
            // Joining a running fetch or reading fetched ranges: no new traffic.
            metrics.cacheHits.increment()
            return .download(download)
        case .whole(let download, let sparse):
            metrics.cacheMisses.increment()
            Task { await fetchWhole(download, adopting: sparse, item: item, path: path) }
            return .download(download)
        case .range(let download, let sparse, let span, let through):
            metrics.cacheMisses.increment()
            Task { await fetchRange(span, through: through, into: sparse, for: download, item: item, path: path) }
            return .download(download)
        }
    }

    /// Returns the local file holding the item's current content, waiting
    /// for a download to finish when one is needed. The returned item
    /// carries the version of the bytes in the file; the lease keeps the
    /// file from eviction until the caller lets it go (it is taken before
    /// the file is looked up, as a GET's is).
    public func contents(of item: Item, at path: ItemPath) async throws -> (item: Item, file: URL, lease: ReadLease) {
        let lease = beginRead(item)
        switch try await openContents(of: item, at: path) {
        case .file(let path):
            return (item, URL(fileURLWithPath: path, isDirectory: false), lease)
        case .download(let download):
            // Where the bytes are now: the cache file, or, when a write
            // landed meanwhile, the download's own.
            let fetched = try await download.result()
            return (fetched, download.temporaryFile, lease)
        }
    }

    private func fetchWhole(_ download: Download, adopting sparse: SparseContent?, item: Item, path: ItemPath) async {
        let temporary = download.temporaryFile
        let started = ContinuousClock.now
        let outcome: Result<Item, any Error>
        let present = await adopt(sparse, for: item, as: temporary)
        do {
            let (entry, head): (UpstreamEntry, Item)
            if present.isEmpty {
                let accepted = NIOLockedValueBox<Item?>(nil)
                entry = try await upstream {
                    try await store.fetch(path, range: nil, into: temporary, observer: FetchObserver(
                        began: { entry in
                            let head = try await self.accept(entry, for: item)
                            accepted.withLockedValue { $0 = head }
                            download.began(head)
                        },
                        progressed: { download.reached($0) }))
                }
                head = accepted.withLockedValue { $0 } ?? item
            } else {
                download.began(item)
                entry = try await fillGaps(of: present, in: temporary, for: download, item: item, path: path)
                head = item
            }
            let marked = try await installingContent {
                // A write that landed since the fetch began has newer bytes
                // (waiting for their upload, or uploaded as another
                // version): these stay its readers' (they asked for this
                // version; the file stays in tmp/ for them until the next
                // start) and never become the cache's, where they would
                // stand for the write's. Under the lock the write's own
                // install waits.
                guard let now = try await index.item(id: item.id), !now.dirty, now.upstreamVersion == entry.version else { return false }
                try download.install { _ in
                    try cache.install(temporary, for: item.id)
                    return cache.file(for: item.id)
                }
                return try await index.markCached(id: item.id, version: entry.version)
            }
            // Readers had every byte from the fetch's progress already; the
            // file is in the cache a moment after (the install, and its
            // fsync before it in the store, are not waited for by them).
            download.reached(entry.size)
            contentAdded(item.id)
            // As recorded: the state machine's materialized, or the head
            // when the row moved on meanwhile (these bytes stay unused).
            let fetched = marked ? try await index.item(id: item.id) ?? head : head
            logFetch(path, bytes: entry.size, since: started)
            metrics.fetches.increment()
            metrics.fetchedBytes.increment(by: entry.size - present.byteCount)
            outcome = .success(fetched)
        } catch {
            metrics.fetchFailures.increment()
            cache.discard(temporary)
            await noteIfChanged(error, item: item, path: path)
            logger.warning("fetch failed; the item stays a placeholder", metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
            outcome = .failure(error)
        }
        // Leave the table first: a reader arriving now starts afresh
        // (after a failure) or finds the item materialized.
        _ = fetches.withLockedValue { $0.whole.removeValue(forKey: item.id) }
        download.finish(outcome)
    }

    /// Moves the sparse file of earlier range reads to `temporary` when it
    /// holds the version to fetch; returns the ranges it brings.
    private func adopt(_ sparse: SparseContent?, for item: Item, as temporary: URL) async -> ByteRanges {
        guard let sparse else { return ByteRanges() }
        await sparse.quiesce()
        defer { sparse.retire() }
        guard sparse.holds(item), !sparse.present.isEmpty, rename(sparse.file.path, temporary.path) == 0 else {
            return ByteRanges()
        }
        return sparse.present
    }

    /// Completes a sparse file: fetches each gap in order, so readers of the
    /// whole file stream through the ranges already there.
    private func fillGaps(of present: ByteRanges, in file: URL, for download: Download, item: Item, path: ItemPath) async throws -> UpstreamEntry {
        guard let version = item.upstreamVersion else { throw ProviderError.local("a placeholder without an upstream version") }
        for gap in present.gaps(in: 0...(item.size - 1)) {
            download.reached(gap.lowerBound)
            _ = try await upstream {
                try await store.fetch(path, range: gap, into: file, observer: FetchObserver(
                    began: { entry in
                        guard entry.version == version, entry.size == item.size else { throw UpstreamError.versionMismatch }
                    },
                    progressed: { download.reached(gap.lowerBound + $0) }))
            }
        }
        try await blocking {
            let fd = open(file.path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ProviderError.local("cannot open a fetched file: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw ProviderError.local("cannot flush a fetched file: \(String(cString: strerror(errno)))") }
        }
        return UpstreamEntry(name: item.name, isFolder: false, size: item.size, modified: item.modified,
                             version: version, executable: item.executable)
    }

    /// Fetches `span`; once it is in, everything up to `through` is there.
    private func fetchRange(_ span: ClosedRange<Int64>, through: Int64, into sparse: SparseContent, for download: Download,
                            item: Item, path: ItemPath) async {
        do {
            _ = try await upstream {
                try await store.fetch(path, range: span, into: sparse.file, observer: FetchObserver(
                    began: { entry in
                        // Bytes of another version must never join this file.
                        guard entry.version == sparse.version, entry.size == sparse.size else { throw UpstreamError.versionMismatch }
                        download.began(item)
                    },
                    progressed: { written in
                        // The bytes are in the file before readers hear of them.
                        if written > 0 { sparse.arrived(span.lowerBound...(span.lowerBound + written - 1)) }
                        download.reached(span.lowerBound + written)
                    }))
            }
            sparse.endFetch(fetched: span)
            metrics.fetches.increment()
            metrics.fetchedBytes.increment(by: Int64(span.count))
            // The wanted range may end in bytes an earlier fetch brought.
            download.reached(max(span.upperBound, through) + 1)
            logger.debug("fetched bytes \(span.lowerBound)-\(span.upperBound) of \(Self.display(path))")
            download.finish(.success(item))
        } catch {
            metrics.fetchFailures.increment()
            sparse.endFetch(fetched: nil)
            await noteIfChanged(error, item: item, path: path)
            logger.warning("range fetch failed", metadata: ["path": "\(Self.display(path))", "range": "\(span)", "error": "\(error)"])
            download.finish(.failure(error))
        }
    }

    /// The upstream answered a whole fetch with `entry`: when that is a newer
    /// version than the listing said, the index learns it (new ETag) before
    /// a reader announces anything.
    private func accept(_ entry: UpstreamEntry, for item: Item) async throws -> Item {
        guard entry.version != item.upstreamVersion || entry.size != item.size else { return item }
        return try await index.updateContent(id: item.id, entry: entry, event: .upstreamChanged)
    }

    /// After a fetch refused another version's bytes: the index learns the
    /// upstream's current entry, so the reader's retry gets that version.
    private func noteIfChanged(_ error: any Error, item: Item, path: ItemPath) async {
        guard case ProviderError.upstream(.versionMismatch) = error else { return }
        do {
            if let entry = try await store.stat(path) {
                _ = try await accept(entry, for: item)
            } else {
                cache.removeLater(items: try await index.delete(id: item.id))
            }
        } catch {
            logger.warning("cannot learn the upstream's new version", metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
        }
    }

    private func logFetch(_ path: ItemPath, bytes: Int64, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let level: Logger.Level = bytes > 1 << 20 ? .info : .debug
        let rate = seconds > 0 ? String(format: ", %.1f MB/s", Double(bytes) / seconds / 1e6) : ""
        logger.log(level: level, "fetched \(Self.display(path)) from \(store.displayName): \(bytes) bytes in \(String(format: "%.2f", seconds)) s\(rate)")
    }
}
