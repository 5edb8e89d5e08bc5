import Foundation
import Logging
import NIOConcurrencyHelpers

/// The domain's trash (`TrashLayout`): a DELETE moves the item into it
/// upstream, a restore moves it back, and entries older than the
/// retention or past the budget are purged. The index keeps each entry's
/// sidecar so the trash lists from here; a listing older than the TTL is
/// compared with the upstream first, so entries another gateway (or a lost
/// one) made appear, and entries purged elsewhere go.
extension Provider {
    /// Whether deletions go to the trash: the domain keeps one and the
    /// upstream is not another davgate (whose own trash then holds them,
    /// as its configuration says).
    func keepsTrash() async throws -> Bool {
        guard trashPolicy != nil else { return false }
        return try await !upstreamIsDavgate()
    }

    /// Another davgate reserves `.davgate/` in its domains and keeps its own
    /// trash and versions; asked of the store once.
    func upstreamIsDavgate() async throws -> Bool {
        try await upstream { try await trashStore.isDavgate() }
    }

    /// Whether a DELETE of `target` moves it into the trash. A file that
    /// never reached the upstream (written and deleted within the upload
    /// delay, as editors' lock, swap and temporary files are) is deleted
    /// here as before: at once, with the upstream down, and without
    /// filling the trash with them. The trash keeps what the upstream held;
    /// files kept on the gateway (`keep_local`, Finder's `.DS_Store`) are
    /// not sent there by their DELETE either.
    func trashes(_ target: Item, at path: ItemPath) async throws -> Bool {
        guard trashPolicy != nil, !trashStore.keepsOnGateway(path) else { return false }
        if try await neverReachedUpstream(target) { return false }
        return try await keepsTrash()
    }

    /// Moves `target` into the trash, its pending writes uploaded first so
    /// what the trash holds is what the client last wrote. Runs under the
    /// coordination (a DELETE's `mutate`).
    ///
    /// The trash is a safety net under a DELETE, not a condition of it: when
    /// the upstream refuses it for good (no space for the sidecar, a root
    /// the credentials cannot write, an S3 object over CopyObject's 5 GiB),
    /// the log says so and this returns false, and the caller deletes for
    /// good as the client asked. An upstream down fails the DELETE (503).
    /// - Returns: whether the item is gone (into the trash, or it was
    ///   already gone upstream).
    func moveToTrash(_ target: Item, at path: ItemPath, by user: String?) async throws -> Bool {
        do {
            try await flushUploads(under: target)
        } catch ProviderError.upstream(let error) where !error.isTransient {
            logger.warning("a pending edit could not be uploaded; the trash keeps what the upstream holds",
                           metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
        }
        let size = target.isFolder ? try await index.bytesBelow(target.id) : target.size
        var entry = TrashEntry(name: "", originalPath: path, isFolder: target.isFolder, size: size, deletedAt: Date(), deletedBy: user)
        var trashed = false
        do {
            try await withUploadsHeld(under: target) {
                for attempt in 0..<5 {
                    entry.name = try await freeEntryName(for: target.name, at: entry.deletedAt + Double(attempt) / 1000)
                    do {
                        trashed = try await moveIntoTrash(path, as: entry)
                        return
                    } catch ProviderError.upstream(.conflict) {
                        // A folder of the trash was removed upstream behind davgate's back.
                        reservedFoldersMade.withLockedValue { $0.removeAll() }
                    } catch is TrashNameTaken {
                        // Another gateway on this upstream took the name.
                    }
                }
                throw ProviderError.upstream(.exists)
            }
        } catch ProviderError.upstream(let error) where !error.isTransient {
            logger.warning("the trash could not take it; deleted for good as asked",
                           metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
            return false
        }
        cache.removeLater(items: try await index.delete(id: target.id))
        guard trashed else { return true }
        try await index.insertTrashEntry(entry, domain: domain)
        logger.info("moved to the trash", metadata: ["path": "\(Self.display(path))", "entry": "\(entry.name)", "bytes": "\(size)"])
        if trashPolicy?.budget != nil {
            runSoon(trashExpiryQueued, "trash expiry after a DELETE") { [self] in _ = try await self.expireTrash() }
        }
        return true
    }

    /// The sidecar first (never over another's), then the item, so an
    /// entry never exists without knowing where it came from. A move whose
    /// answer was lost after it happened (a timeout, the stat after a
    /// WebDAV MOVE, an S3 copy whose delete failed) is judged by what is
    /// there: the entry there and the item gone is a move done; the entry
    /// there beside the item is a half copy, removed with the sidecar; when
    /// the stats fail too, nothing is touched (the sidecar of an entry that
    /// never arrived is removed by a later comparison of the trash).
    /// - Returns: false when the item was already gone upstream.
    /// - Throws: `TrashNameTaken` when another gateway has the name.
    private func moveIntoTrash(_ path: ItemPath, as entry: TrashEntry) async throws -> Bool {
        try await makeReservedFolders(TrashLayout.folder)
        let place = TrashLayout.folder + [entry.name]
        let sidecar = TrashLayout.folder + [TrashLayout.sidecarName(of: entry.name)]
        do {
            try await uploadSidecar(of: entry)
        } catch ProviderError.upstream(.exists), ProviderError.upstream(.versionMismatch) {
            throw TrashNameTaken()
        }
        do {
            _ = try await upstream { try await trashStore.move(path, to: place) }
            return true
        } catch {
            if case ProviderError.upstream(.exists) = error {
                try? await trashStore.delete(sidecar)
                throw TrashNameTaken()
            }
            let arrived = await presence(place)
            let left = await presence(path).map { !$0 }
            if arrived == true, left == true { return true }
            if arrived == true, left == false { try? await trashStore.delete(place) }
            if arrived != nil, left != nil { try? await trashStore.delete(sidecar) }
            if case ProviderError.upstream(.notFound) = error, left == true { return false }
            throw error
        }
    }

    /// The trash's entries, newest first.
    public func trashEntries() async throws -> [TrashEntry] {
        if !trashIsFresh(), try await keepsTrash() { try await coordinated { try await reconcileTrashIfStale() } }
        return try await index.trashEntries(domain: domain)
    }

    public func trashEntry(named name: String) async throws -> TrashEntry? {
        if !trashIsFresh(), try await keepsTrash() { try await coordinated { try await reconcileTrashIfStale() } }
        return try await index.trashEntry(domain: domain, name: name)
    }

    /// Moves an entry back: to where it was (recreating the folders on the
    /// way that are gone), or to `destination`. Never over anything: an
    /// occupied place answers `.exists`.
    public func restoreFromTrash(_ name: String, to destination: ItemPath? = nil,
                                 conditions: WriteConditions = .unconditional) async throws -> Item {
        try await mutate {
            try await reconcileTrashIfStale()
            guard let entry = try await index.trashEntry(domain: domain, name: name) else { throw ProviderError.notFound }
            let target = destination ?? entry.originalPath
            guard let newName = target.last else { throw ProviderError.exists }
            try admit(target)
            let parent: Item
            if destination == nil {
                parent = try await makeFolders(Array(target.dropLast()), conditions: conditions)
            } else {
                guard let found = try await item(at: Array(target.dropLast())), found.isFolder else { throw ProviderError.parentMissing }
                parent = found
            }
            if try await index.child(of: parent.id, named: newName) != nil { throw ProviderError.exists }
            try await check(conditions.locksOnly, target: nil, parent: parent)
            let restored = try await upstream { try await trashStore.move(TrashLayout.folder + [name], to: target) }
            try? await upstream { try await trashStore.delete(TrashLayout.folder + [TrashLayout.sidecarName(of: name)]) }
            try await index.deleteTrashEntries([name], domain: domain)
            logger.info("restored from the trash", metadata: ["entry": "\(name)", "path": "\(Self.display(target))"])
            return try await index.insert(restored, parent: parent.id, domain: domain, listed: false)
        }
    }

    /// Destroys entries for good (all of them when `names` is nil).
    /// - Returns: the entries purged.
    /// - Parameter requireAll: throw `.notFound` when one of `names` is
    ///   not in the trash (an expiry tolerates one purged meanwhile).
    @discardableResult
    public func purgeTrash(_ names: [String]? = nil, requireAll: Bool = true) async throws -> [String] {
        try await coordinated {
            try await reconcileTrashIfStale()
            let known = try await index.trashEntries(domain: domain).map(\.name)
            let purging = names.map { wanted in known.filter(wanted.contains) } ?? known
            if let names, requireAll, purging.count < names.count { throw ProviderError.notFound }
            for name in purging {
                for path in [TrashLayout.folder + [name], TrashLayout.folder + [TrashLayout.sidecarName(of: name)]] {
                    do {
                        try await upstream { try await trashStore.delete(path) }
                    } catch ProviderError.upstream(.notFound) {}
                }
                try await index.deleteTrashEntries([name], domain: domain)
            }
            if !purging.isEmpty { logger.info("purged from the trash", metadata: ["entries": "\(purging.count)"]) }
            return purging
        }
    }

    /// Purges what is older than the retention, then the oldest entries
    /// while the trash holds more than its budget (the newest always stays).
    @discardableResult
    public func expireTrash(now: Date = Date()) async throws -> [String] {
        guard let policy = trashPolicy, try await keepsTrash() else { return [] }
        let entries = try await trashEntries()
        var expired: [String] = []
        var held: Int64 = 0
        for (position, entry) in entries.enumerated() {
            held += entry.size
            let tooOld = now.timeIntervalSince(entry.deletedAt) > policy.retention
            let overBudget = position > 0 && policy.budget.map { held > $0 } == true
            if tooOld || overBudget { expired.append(entry.name) }
        }
        return expired.isEmpty ? [] : try await purgeTrash(expired, requireAll: false)
    }

    private func trashIsFresh() -> Bool {
        trashListedAt.withLockedValue { $0.map { Date().timeIntervalSince($0) < listingTTL } ?? false }
    }

    /// Brings the index's entries in line with the trash folder upstream
    /// when they were last compared longer ago than the listing TTL. Runs
    /// under the coordination, so no DELETE or restore is half done.
    private func reconcileTrashIfStale() async throws {
        guard !trashIsFresh() else { return }
        let found: [UpstreamEntry]
        do {
            found = try await upstream { try await trashStore.list(TrashLayout.folder) }
        } catch ProviderError.upstream(.notFound) {
            found = []
        }
        let sidecars = Set(found.filter { !$0.isFolder }.compactMap { TrashLayout.entry(ofSidecar: $0.name) })
        let present = found.filter { TrashLayout.isEntryName($0.name) }
        let known = Set(try await index.trashEntries(domain: domain).map(\.name))
        for item in present where !known.contains(item.name) {
            var entry = sidecars.contains(item.name) ? try? await readSidecar(of: item.name) : nil
            if entry == nil {
                entry = TrashEntry(name: item.name, originalPath: [TrashLayout.originalName(of: item.name)], isFolder: item.isFolder,
                                   size: item.size, deletedAt: TrashLayout.deletionDate(of: item.name) ?? item.modified, deletedBy: nil)
            }
            entry!.name = item.name
            entry!.isFolder = item.isFolder
            try await index.insertTrashEntry(entry!, domain: domain)
        }
        let names = Set(present.map(\.name))
        try await index.deleteTrashEntries(known.filter { !names.contains($0) }.sorted(), domain: domain)
        // A sidecar whose entry never arrived (a DELETE cut short), once
        // old enough that no DELETE can still be under way.
        for orphan in found where !orphan.isFolder && Date().timeIntervalSince(orphan.modified) > 3600 {
            if let entry = TrashLayout.entry(ofSidecar: orphan.name), !names.contains(entry) {
                try? await upstream { try await trashStore.delete(TrashLayout.folder + [orphan.name]) }
            }
        }
        trashListedAt.withLockedValue { $0 = Date() }
    }

    /// An entry name no entry here has (a collision needs two deletions of
    /// one name in the same millisecond).
    private func freeEntryName(for name: String, at date: Date) async throws -> String {
        var moment = date
        while true {
            let candidate = TrashLayout.entryName(for: name, at: moment, maxNameBytes: trashStore.nameRules.maxNameBytes)
            if try await index.trashEntry(domain: domain, name: candidate) == nil { return candidate }
            moment += 0.001
        }
    }

    /// Whether something is at `path` upstream; nil when the store could not say.
    private func presence(_ path: ItemPath) async -> Bool? {
        do {
            return try await trashStore.stat(path) != nil
        } catch {
            return nil
        }
    }

    private func uploadSidecar(of entry: TrashEntry) async throws {
        let file = cache.temporaryFile("trash")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try entry.encoded().write(to: file)
        } catch {
            throw ProviderError.local("could not write a trash sidecar: \(error)")
        }
        _ = try await upstream {
            try await trashStore.upload(file, to: TrashLayout.folder + [TrashLayout.sidecarName(of: entry.name)], expecting: .absent)
        }
    }

    private func readSidecar(of name: String) async throws -> TrashEntry {
        let file = cache.temporaryFile("trash")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = try await upstream { try await trashStore.fetch(TrashLayout.folder + [TrashLayout.sidecarName(of: name)], into: file) }
        return try TrashEntry.decoded(try Data(contentsOf: file))
    }

    /// The folder at `path`, with the folders on the way that are missing
    /// made upstream and here (a restore into a deleted folder).
    private func makeFolders(_ path: ItemPath, conditions: WriteConditions) async throws -> Item {
        var current = try await root()
        for (depth, name) in path.enumerated() {
            if try await refreshIfStale(current), let child = try await index.child(of: current.id, named: name) {
                guard child.isFolder else { throw ProviderError.parentMissing }
                current = child
                continue
            }
            let folderPath = Array(path.prefix(depth + 1))
            try admit(folderPath)
            try await check(conditions.locksOnly, target: nil, parent: current)
            let entry = try await upstream { try await store.makeFolder(folderPath) }
            current = try await index.insert(entry, parent: current.id, domain: domain, listed: true)
        }
        return current
    }
}

/// A trash entry's name is taken upstream (by another gateway on it).
struct TrashNameTaken: Error {}
