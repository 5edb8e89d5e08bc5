import Foundation
import Logging
import NIOConcurrencyHelpers

/// Where a write lands: its folder and what is at its name now.
extension Provider {
    public struct WriteTarget: Sendable {
        public var folder: Item
        public var existing: Item?
    }

    /// The folder and the current item of a write's path.
    ///
    /// A write does not relist a folder whose listing is stale, as a read
    /// does. Relisting on every write made a burst of small PUTs quadratic:
    /// each PUT's refresh of the growing folder was cut short by the next
    /// PUT or by an upload finishing, so the next PUT listed it again (issue
    /// 14). What the index knows of a stale folder is used instead, and the
    /// commit (`checkingUpstream`, under the domain's coordination) first
    /// brings the index up to date for the one name with an upstream stat,
    /// and a second of the folder when the name is free there: the answers
    /// of `look`, asked before the coordination, while they still hold.
    /// Whatever else (a folder never listed or not known, a name deleted
    /// upstream or of another kind there) is resolved as a read resolves
    /// it. Throws `parentMissing` when there is no folder.
    /// - Parameter checkingUpstream: false for a PUT's checks before its
    ///   body: they change nothing (the commit checks again anyway), since
    ///   outside the coordination a stat's answer could be older than what a
    ///   concurrent commit or upload records meanwhile.
    public func writeTarget(_ path: ItemPath, checkingUpstream: Bool = true) async throws -> WriteTarget {
        try await resolveTarget(path, checkingUpstream: checkingUpstream, look: nil)
    }

    /// A commit's target (`checkingUpstream`), with what `lookAtTarget`
    /// asked before the coordination, in a change that started confined to
    /// the folder `startedIn` (`lookAtTarget`'s).
    func writeTarget(_ path: ItemPath, look: TargetLook?, startedIn: Int64?) async throws -> WriteTarget {
        try await resolveTarget(path, checkingUpstream: true, look: look, startedIn: startedIn)
    }

    private func resolveTarget(_ path: ItemPath, checkingUpstream: Bool, look: TargetLook?, startedIn: Int64? = nil) async throws -> WriteTarget {
        guard let name = path.last else { throw ProviderError.wrongKind }
        try refuseReserved(path)
        let folderPath = Array(path.dropLast())
        let chain = try await index.writeChain(domain: domain, path: folderPath)
        // The path's folder is another than the change started confined to
        // (a MOVE or DELETE came between): what is resolved next may touch
        // any folder's rows, so the change counts as everything until the
        // commit confines it again.
        if let startedIn, chain.count != path.count || chain.last?.id != startedIn { namespaceClock.confine(to: .everything) }
        // Every folder on the way fresh: what `item(at:)` would answer from
        // the same chain, without reading it a second time (a small PUT
        // resolves its target twice, before its body and at its commit).
        if chain.count == path.count, chain.allSatisfy({ $0.isFolder && isFresh($0) }), let folder = chain.last {
            return try await indexed(name, in: folder)
        }
        if let folder = staleListedFolder(chain, of: path) {
            guard checkingUpstream else {
                return try await indexed(name, in: folder)
            }
            if let target = try await checkedTarget(name, in: folder, at: folderPath, look: look) { return target }
        }
        // The folder's own listing too, as resolving the target's path would
        // (a folder never listed knows none of its members yet).
        guard let folder = try await item(at: folderPath), folder.isFolder, try await refreshIfStale(folder) else {
            throw ProviderError.parentMissing
        }
        return try await indexed(name, in: folder)
    }

    /// What a write learns before its commit, outside the domain's
    /// coordination: the id of the folder the index knows at its path (its
    /// change starts confined to it, see `NamespaceClock`), and the
    /// upstream's answer about its name when the commit would ask: the
    /// folder known, listed once, and stale (nil otherwise: the commit
    /// resolves the rest itself).
    func lookAtTarget(_ path: ItemPath) async throws -> (folder: Int64?, look: TargetLook?) {
        guard let name = path.last, (try? refuseReserved(path)) != nil else { return (nil, nil) }
        let folderPath = Array(path.dropLast())
        let chain = try await index.writeChain(domain: domain, path: folderPath)
        guard let folder = staleListedFolder(chain, of: path) else {
            let known = chain.count == path.count && chain.last?.isFolder == true ? chain.last?.id : nil
            return (known, nil)
        }
        let indexed = try await index.child(of: folder.id, named: name)
        return (folder.id, TargetLook(folderID: folder.id, name: name, indexed: indexed,
                                      answer: try await askUpstream(about: name, in: folder, at: folderPath)))
    }

    /// The folder of `path` from its chain, when it is known, was listed
    /// once and that listing is stale: where a write asks about its name.
    private func staleListedFolder(_ chain: [Item], of path: ItemPath) -> Item? {
        guard chain.count == path.count, let folder = chain.last, folder.isFolder, folder.listedAt != nil, !isFresh(folder) else { return nil }
        return folder
    }

    /// The target as the index knows it, asking the upstream nothing.
    private func indexed(_ name: String, in folder: Item) async throws -> WriteTarget {
        WriteTarget(folder: folder, existing: try await index.child(of: folder.id, named: name))
    }

    /// One stat of the name, and one of its folder when the name is free,
    /// unless a stat saw the folder there less than a listing TTL ago.
    private func askUpstream(about name: String, in folder: Item, at folderPath: ItemPath) async throws -> TargetLook.Answer {
        do {
            let entry = try await upstream { try await store.stat(folderPath + [name]) }
            if entry == nil, !folderSightings.seenLately(folder.id, ttl: listingTTL) {
                guard try await upstream({ try await store.stat(folderPath) })?.isFolder == true else {
                    folderSightings.forget(folder.id)
                    return .folderGone
                }
                folderSightings.saw(folder.id, ttl: listingTTL)
            }
            return .seen(entry)
        } catch ProviderError.upstream(let error) {
            return .unreachable("\(error)")
        }
    }

    /// The target in a stale folder after the upstream's answer; nil when
    /// the folder needs a read's resolution. Under the domain's
    /// coordination, so no local namespace change runs meanwhile.
    ///
    /// The answer of `look` stands while it holds (`TargetLook.holds`);
    /// otherwise, or without one, the upstream is asked now. Then an
    /// upload finishing meanwhile (it marks the generation) may have
    /// overtaken the answer: it is not applied, as a listing's page would
    /// not be, and the index's view stands (the upload is conditional anyway).
    private func checkedTarget(_ name: String, in folder: Item, at folderPath: ItemPath, look: TargetLook?) async throws -> WriteTarget? {
        if let look, look.isAbout(name, in: folder) {
            switch try await apply(look.answer, name: name, in: folder, at: folderPath, current: { look.holds(given: $0) }) {
            case .target(let target): return target
            case .needsRead: return nil
            case .outdated: break
            }
        }
        let before = namespaceClock.read()
        let answer = try await askUpstream(about: name, in: folder, at: folderPath)
        switch try await apply(answer, name: name, in: folder, at: folderPath, current: { [namespaceClock] _ in
            namespaceClock.unchanged(since: before)
        }) {
        case .target(let target): return target
        case .needsRead: return nil
        case .outdated: return try await indexed(name, in: folder)
        }
    }

    /// What an answer about a write's target makes of it.
    private enum Applied {
        case target(WriteTarget)
        /// The folder needs a read's resolution.
        case needsRead
        /// The answer no longer holds (`current` said so).
        case outdated
    }

    /// Brings the index up to date for the name from `answer`, when
    /// `current` (given the name's row, under the listings' lock) says the
    /// answer still holds.
    private func apply(_ answer: TargetLook.Answer, name: String, in folder: Item, at folderPath: ItemPath,
                       current: @Sendable (Item?) -> Bool) async throws -> Applied {
        let entry: UpstreamEntry?
        switch answer {
        case .folderGone:
            return .needsRead
        case .unreachable(let error):
            // As a refresh that fails: the last known listing stands.
            logger.warning("cannot check the target of a write upstream; using the last known listing",
                           metadata: ["path": "\(Self.display(folderPath + [name]))", "error": "\(error)"])
            return .target(try await indexed(name, in: folder))
        case .seen(let seen):
            entry = seen
        }
        // Under the listings' lock: the check that the answer holds, and no
        // page of this folder applied between it and the change below.
        let (applied, stale): (Applied, [Int64]) = try await listingApplication.withLock {
            let existing = try await index.child(of: folder.id, named: name)
            guard current(existing) else { return (.outdated, []) }
            switch (existing, entry) {
            case (nil, nil):
                return (.target(WriteTarget(folder: folder, existing: nil)), [])
            case (nil, let entry?):
                return (.target(WriteTarget(folder: folder, existing: try await index.insert(entry, parent: folder.id, domain: domain))), [])
            case (let existing?, _) where existing.dirty:
                // Ours, waiting for upload: the upload is conditional on
                // what the write was based on.
                return (.target(WriteTarget(folder: folder, existing: existing)), [])
            case (let existing?, let entry?) where existing.isFolder == entry.isFolder:
                guard !entry.isFolder, entry.version != existing.upstreamVersion || entry.size != existing.size else {
                    return (.target(WriteTarget(folder: folder, existing: existing)), [])
                }
                let updated = try await index.updateContent(id: existing.id, entry: entry, event: .upstreamChanged)
                return (.target(WriteTarget(folder: folder, existing: updated)), [existing.id])
            default:
                return (.needsRead, [])
            }
        }
        cache.remove(stale)
        return applied
    }
}
