import CoreMetrics
import Logging
import Foundation
import NIOConcurrencyHelpers

/// Content writes: durable, conditional uploads (`itemChanged`), with
/// keep-both conflict handling.
extension Provider {
    /// The largest body a write may hand over as bytes, without a file
    /// (`WriteRequest.content`): write-back journals them, and one grouped
    /// fsync of the journal replaces an fsync of each small file. Zero in
    /// write-through, where the upstream takes the bytes before the answer.
    public var inlineWriteLimit: Int { writeMode == .back ? 64 * 1024 : 0 }

    /// A fresh file for the body of a PUT; the caller writes and fsyncs it,
    /// then hands it to `write` or `discardWrite`. In write-back it is
    /// made in the outbox, where `write` would move it.
    public func newWriteFile() -> URL {
        writeMode == .back ? cache.outboxWriteFile() : cache.temporaryFile("put")
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
        /// The lock granted with the write (`createLockedEmptyFile`).
        public var lock: Lock? = nil
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
        var stamped = request
        do {
            stamped.modified = try request.stampModificationTime()
            if writeMode == .back {
                // Before the coordination: the outbox folder's sync is then
                // grouped with other writers', not waited for by all of them.
                stamped.outbox = try await cache.adoptInOutbox(request.file, durable: request.content == nil)
            } else if let content = request.content, let modified = stamped.modified {
                // Taken without a file while the domain wrote back (a reload
                // switched it since): the upstream takes a file, synced.
                stamped.content = nil
                try await blocking {
                    unlink(request.file.path)
                    try createFile(request.file.path, holding: content, modified: modified, synced: true)
                }
            }
            // Asked now, in parallel with other writers, not under the
            // coordination: see `TargetLook`.
            let (folder, look) = try await lookAtTarget(stamped.path)
            outcome = try await commit(stamped, look: look, in: folder)
        } catch {
            if let name = stamped.outbox {
                // Not when a journal row names it: the commit went through
                // and what failed came after (the grouped fsync). Left in
                // doubt (the index cannot say), the file stays; the next
                // start removes it if no row names it.
                if (try? await index.journalNames(file: name)) == false { cache.removeOutbox([name]) }
            } else {
                cache.discard(request.file)
            }
            throw error
        }
        contentAdded(outcome.item.id)
        return outcome
    }

    /// `folder`: the id of the folder the index knew at the path before
    /// the coordination, which the change starts confined to.
    private func commit(_ request: WriteRequest, look: TargetLook?, in folder: Int64?) async throws -> WriteOutcome {
        try await mutate(confinedTo: .members(of: folder), expectingSync: request.outbox != nil) {
            // An outbox file is the journal's to remove.
            defer { if request.outbox == nil { cache.discard(request.file) } }
            var outcome = try await commitCoordinated(request, look: look, startedIn: folder)
            if var lock = request.lock, outcome.conflictCopy == nil {
                lock.itemID = outcome.item.id
                try await index.insertLock(lock, ancestry: try await index.ancestry(of: lock.itemID))
                outcome.lock = lock
            }
            return outcome
        }
    }

    /// The commit of a write, under the domain's coordination (`commit`),
    /// in a change that started confined to `startedIn`.
    private func commitCoordinated(_ request: WriteRequest, look: TargetLook?, startedIn: Int64?) async throws -> WriteOutcome {
        let path = request.path
        let target = try await writeTarget(path, look: look, startedIn: startedIn)
        let parent = target.folder
        // Nothing changed yet (the target's resolution only read, or
        // brought the index up to the upstream, as a listing does): from
        // here on, the write alters only its folder's members, and listings
        // of other folders running meanwhile stay valid.
        namespaceClock.confine(to: .folder(parent.id))
        var existing = target.existing
        if existing?.isFolder == true { throw ProviderError.wrongKind }
        if existing == nil { try admit(path) }
        try await check(request.conditions, target: existing, parent: parent)
        if let outbox = request.outbox {
            return try await recordWrite(request, outbox: outbox, parent: parent, existing: existing)
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
        uploadsThrough.withLockedValue { $0 += 1 }
        defer {
            metrics.uploadsInFlight.decrement()
            uploadsThrough.withLockedValue { $0 -= 1 }
        }
        do {
            if case .version(let based) = basis { try await keepVersion(of: path, basis: based) }
            entry = try await upstream { try await store.upload(request.file, to: path, expecting: basis) }
            metrics.uploads.increment()
            metrics.uploadedBytes.increment(by: entry.size)
        } catch ProviderError.upstream(.versionMismatch) {
            let current = try await upstream { try await store.stat(path) }
            if existing != nil, current == nil {
                logger.warning("deleted upstream while edited here; created again", metadata: ["path": "\(Self.display(path))"])
                entry = try await upstream { try await store.upload(request.file, to: path, expecting: .absent) }
            } else if let current, try await upstreamHolds(request.file, size: request.size, at: path, entry: current) {
                logger.notice("the upstream holds this write's bytes already (a retried write); recorded, no conflict",
                              metadata: ["path": "\(Self.display(path))"])
                entry = current
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

    /// Stores our bytes as a conflict copy beside the upstream's newer file,
    /// marks it with a davgate property naming what it conflicts with, and
    /// makes the folder's listing stale so the upstream's version is seen.
    func keepBoth(_ file: URL, at path: ItemPath, parent: Item, checksum: String? = nil) async throws -> WriteOutcome {
        let copyPath = Array(path.dropLast()) + [Self.conflictName(for: path.last!, at: Date(), maxBytes: store.nameRules.maxNameBytes)]
        let entry = try await upstream { try await store.upload(file, to: copyPath, expecting: .absent) }
        await upstreamChanged(in: parent.id)
        metrics.uploads.increment()
        metrics.uploadedBytes.increment(by: entry.size)
        metrics.conflicts.increment()
        let copy = try await index.insert(entry, parent: parent.id, domain: domain, cachedVersion: entry.version, checksum: checksum,
                                          conflictCopy: true)
        try cache.install(file, for: copy.id)
        try await index.applyPropertyChanges([.set(DeadProperty(namespace: Self.namespace, name: Self.conflictProperty,
                                                                xml: Self.conflictMarker(of: path.last!)))], to: copy.id)
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

    /// The dead property that marks a conflict copy with the name of the
    /// file it conflicts with (in the same folder).
    static let conflictProperty = "conflict-of"

    static func conflictMarker(of name: String) -> String {
        "<g:conflict-of xmlns:g=\"\(namespace)\">\(escaped(name))</g:conflict-of>"
    }

    /// The name of the file a conflict copy's name was made from
    /// (`conflictName`), nil for a name not made that way. A stem shortened
    /// to fit the upstream's limit gives the shortened name.
    public static func conflictOriginal(ofName name: String) -> String? {
        guard let open = name.range(of: " (conflicted copy ", options: .backwards),
              let close = name[open.upperBound...].firstIndex(of: ")"),
              name[open.upperBound..<close].count == 17 else { return nil }
        return String(name[..<open.lowerBound] + name[name.index(after: close)...])
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// LOCK of an unmapped URL (RFC 4918 section 7.3): creates an empty
    /// file and grants the lock on it in one coordination, so that of
    /// several LOCKs racing for a new name the one that creates the file is
    /// the one that holds it. Nil when the name was taken meanwhile (the
    /// caller locks what is there); a condition of the request's own that
    /// fails is thrown as usual.
    public func createLockedEmptyFile(at path: ItemPath, conditions: WriteConditions, depthInfinity: Bool, exclusive: Bool,
                                      ownerXML: String?, principal: String, timeout: Int?) async throws -> (item: Item, lock: Lock)? {
        let file = newWriteFile()
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw ProviderError.local("cannot create a file in the cache folder")
        }
        var required = conditions
        required.judgedAgainst = conditions.judgedAgainst ?? WriteConditions.judged(nil)
        var request = WriteRequest(path: path, file: file, size: 0, conditions: required)
        request.lock = newLock(on: -1, isFolder: false, depthInfinity: depthInfinity, exclusive: exclusive, ownerXML: ownerXML,
                               principal: principal, timeout: timeout, createdItem: true)
        do {
            let outcome = try await write(request)
            guard let lock = outcome.lock else { return nil }
            return (outcome.item, lock)
        } catch ProviderError.conditionChanged where conditions.judgedAgainst == nil {
            return nil
        }
    }
}
