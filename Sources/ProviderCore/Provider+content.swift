import CoreMetrics
import Logging
import Foundation
import NIOConcurrencyHelpers

/// Content writes: durable, conditional uploads (`itemChanged`), with
/// keep-both conflict handling.
extension Provider {
    /// A fresh file for the body of a PUT; the caller writes and fsyncs it,
    /// then hands it to `write` or `discardWrite`.
    public func newWriteFile() -> URL {
        cache.temporaryFile("put")
    }

    public func discardWrite(_ file: URL) {
        cache.discard(file)
    }

    /// What a write did.
    public struct WriteOutcome: Sendable {
        /// The item now holding the bytes: the target, or the conflict copy.
        public var item: Item
        public var created: Bool
        /// Set when the upstream had moved on since the version the write
        /// was based on: both were kept, and ours is this copy's.
        public var conflictCopy: ItemPath?
    }

    /// Makes a completely written, fsynced file the content at its path: the
    /// whole write is this one call, checked and committed under the
    /// domain's coordination, so a LOCK granted while the body arrived, or a
    /// change the request's conditions did not see, refuses it (423, 412)
    /// and nothing is stored.
    ///
    /// Write-through: the upstream takes it first (conditional on the
    /// version the index knows, so a change made upstream meanwhile is never
    /// overwritten), then the cache and the index (one transaction, with the
    /// checksum). Write-back: the journal and the item commit together and
    /// the upload follows. When the upstream moved on, both are kept: the
    /// upstream file keeps its name and ours is stored beside it as `NAME
    /// (conflicted copy DATE).EXT` (the File Provider's conflict handling);
    /// when it was deleted upstream meanwhile, ours is created again.
    public func write(_ request: WriteRequest) async throws -> WriteOutcome {
        let outcome: WriteOutcome
        do {
            var stamped = request
            stamped.modified = try request.stampModificationTime()
            outcome = try await commit(stamped)
        } catch {
            cache.discard(request.file)
            throw error
        }
        contentAdded(outcome.item.id)
        return outcome
    }

    private func commit(_ request: WriteRequest) async throws -> WriteOutcome {
        let path = request.path
        guard let name = path.last else { throw ProviderError.wrongKind }
        return try await mutate {
            defer { cache.discard(request.file) }
            guard let parent = try await item(at: Array(path.dropLast())), parent.isFolder else {
                throw ProviderError.parentMissing
            }
            var existing = try await index.child(of: parent.id, named: name)
            if existing?.isFolder == true { throw ProviderError.wrongKind }
            if existing == nil { try admit(path) }
            try await check(request.conditions, target: existing, parent: parent)
            if writeMode == .back {
                return try await recordWrite(request, parent: parent, existing: existing)
            }
            // Switched from write-back with this file's older bytes still in
            // the journal: they go first, so these can never be overtaken.
            if let dirty = existing, dirty.dirty {
                try await flushUploads(under: dirty)
                existing = try await index.item(id: dirty.id)
            }
            let basis: UpstreamExpectation = existing?.upstreamVersion.map { .version($0) } ?? .absent
            let entry: UpstreamEntry
            metrics.uploadsInFlight.increment()
            defer { metrics.uploadsInFlight.decrement() }
            do {
                entry = try await upstream { try await store.upload(request.file, to: path, expecting: basis) }
                metrics.uploads.increment()
                metrics.uploadedBytes.increment(by: entry.size)
            } catch ProviderError.upstream(.versionMismatch) {
                if existing != nil, try await upstream({ try await store.stat(path) }) == nil {
                    logger.warning("deleted upstream while edited here; created again", metadata: ["path": "\(Self.display(path))"])
                    entry = try await upstream { try await store.upload(request.file, to: path, expecting: .absent) }
                } else {
                    return try await keepBoth(request.file, at: path, parent: parent, checksum: request.checksum)
                }
            }
            if let existing {
                try cache.install(request.file, for: existing.id)
                let updated = try await index.updateContent(id: existing.id, entry: entry, event: .written(through: true),
                                                            checksum: request.checksum)
                return WriteOutcome(item: updated, created: false)
            }
            let created = try await index.insert(entry, parent: parent.id, domain: domain, cachedVersion: entry.version,
                                                 checksum: request.checksum)
            try cache.install(request.file, for: created.id)
            return WriteOutcome(item: created, created: true)
        }
    }

    /// Stores our bytes as a conflict copy beside the upstream's newer file,
    /// marks it with a davgate property naming what it conflicts with, and
    /// makes the folder's listing stale so the upstream's version is seen.
    func keepBoth(_ file: URL, at path: ItemPath, parent: Item, checksum: String? = nil) async throws -> WriteOutcome {
        let copyPath = Array(path.dropLast()) + [Self.conflictName(for: path.last!, at: Date(), maxBytes: store.nameRules.maxNameBytes)]
        let entry = try await upstream { try await store.upload(file, to: copyPath, expecting: .absent) }
        await upstreamChanged()
        metrics.uploads.increment()
        metrics.uploadedBytes.increment(by: entry.size)
        metrics.conflicts.increment()
        let copy = try await index.insert(entry, parent: parent.id, domain: domain, cachedVersion: entry.version, checksum: checksum,
                                          conflictCopy: true)
        try cache.install(file, for: copy.id)
        let marker = "<g:conflict-of xmlns:g=\"\(Self.namespace)\">\(Self.escaped(path.last!))</g:conflict-of>"
        try await index.applyPropertyChanges([.set(DeadProperty(namespace: Self.namespace, name: "conflict-of", xml: marker))], to: copy.id)
        try await index.markListed(id: parent.id, at: .distantPast)
        logger.warning("conflict: the upstream changed since this edit was based on it; kept both",
                       metadata: ["path": "\(Self.display(path))", "ours": "\(Self.display(copyPath))"])
        return WriteOutcome(item: copy, created: true, conflictCopy: copyPath)
    }

    /// davgate's XML namespace, for the properties it sets itself.
    public static let namespace = "https://davgate.dev/ns"

    /// `report.pdf` -> `report (conflicted copy 2026-11-22 093015).pdf`,
    /// the part before the extension shortened (never mid-character) when
    /// the whole would not fit in `maxBytes`: a conflict copy the upstream
    /// cannot hold would lose the very edit it exists to keep.
    public static func conflictName(for name: String, at date: Date, maxBytes: Int = .max) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { String(format: "%02d", n ?? 0) }
        let stamp = "\(c.year ?? 0)-\(two(c.month))-\(two(c.day)) \(two(c.hour))\(two(c.minute))\(two(c.second))"
        var stem = Substring(name), ext = Substring("")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            stem = name[..<dot]
            ext = name[dot...]
        }
        let suffix = " (conflicted copy \(stamp))" + ext
        while !stem.isEmpty, stem.utf8.count + suffix.utf8.count > maxBytes {
            stem = stem.dropLast()
        }
        return stem + suffix
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Creates an empty file (LOCK on an unmapped URL, RFC 4918 section 7.3).
    public func createEmptyFile(at path: ItemPath, conditions: WriteConditions) async throws -> Item {
        let file = newWriteFile()
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw ProviderError.local("cannot create a file in the cache folder")
        }
        return try await write(WriteRequest(path: path, file: file, size: 0, conditions: conditions)).item
    }
}
