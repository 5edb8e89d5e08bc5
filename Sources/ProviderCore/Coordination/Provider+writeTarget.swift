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
    /// and a second of the folder when the name is free there. Whatever else
    /// (a folder never listed or not known, a name deleted upstream or of
    /// another kind there) is resolved as a read resolves it. Throws
    /// `parentMissing` when there is no folder.
    /// - Parameter checkingUpstream: false for a PUT's checks before its
    ///   body: they change nothing (the commit checks again anyway), since
    ///   outside the coordination a stat's answer could be older than what a
    ///   concurrent commit or upload records meanwhile.
    public func writeTarget(_ path: ItemPath, checkingUpstream: Bool = true) async throws -> WriteTarget {
        guard let name = path.last else { throw ProviderError.wrongKind }
        try refuseReserved(path)
        let folderPath = Array(path.dropLast())
        let chain = try await index.writeChain(domain: domain, path: folderPath)
        // Every folder on the way fresh: what `item(at:)` would answer from
        // the same chain, without reading it a second time (a small PUT
        // resolves its target twice, before its body and at its commit).
        if chain.count == path.count, chain.allSatisfy({ $0.isFolder && isFresh($0) }), let folder = chain.last {
            return try await indexed(name, in: folder)
        }
        if chain.count == path.count, let folder = chain.last, folder.isFolder, folder.listedAt != nil, !isFresh(folder) {
            guard checkingUpstream else {
                return try await indexed(name, in: folder)
            }
            if let target = try await checkedTarget(name, in: folder, at: folderPath) { return target }
        }
        // The folder's own listing too, as resolving the target's path would
        // (a folder never listed knows none of its members yet).
        guard let folder = try await item(at: folderPath), folder.isFolder, try await refreshIfStale(folder) else {
            throw ProviderError.parentMissing
        }
        return try await indexed(name, in: folder)
    }

    /// The target as the index knows it, asking the upstream nothing.
    private func indexed(_ name: String, in folder: Item) async throws -> WriteTarget {
        WriteTarget(folder: folder, existing: try await index.child(of: folder.id, named: name))
    }

    /// The target in a stale folder after one or two stats; nil when the
    /// folder needs a read's resolution. Under the domain's coordination, so
    /// no local namespace change runs meanwhile; an upload finishing does
    /// (it marks the generation), and then the stats may predate what it
    /// recorded: they are not applied, as a listing's page would not be,
    /// and the index's view stands (the upload is conditional anyway).
    private func checkedTarget(_ name: String, in folder: Item, at folderPath: ItemPath) async throws -> WriteTarget? {
        let before = namespaceClock.read()
        let entry: UpstreamEntry?
        do {
            entry = try await upstream { try await store.stat(folderPath + [name]) }
            if entry == nil, try await upstream({ try await store.stat(folderPath) })?.isFolder != true { return nil }
        } catch ProviderError.upstream(let error) {
            // As a refresh that fails: the last known listing stands.
            logger.warning("cannot check the target of a write upstream; using the last known listing",
                           metadata: ["path": "\(Self.display(folderPath + [name]))", "error": "\(error)"])
            return try await indexed(name, in: folder)
        }
        // Under the listings' lock: the generation check, and no page of
        // this folder applied between it and the change below.
        let (target, stale): (WriteTarget?, [Int64]) = try await listingApplication.withLock {
            let existing = try await index.child(of: folder.id, named: name)
            guard namespaceClock.unchanged(since: before) else {
                return (WriteTarget(folder: folder, existing: existing), [])
            }
            switch (existing, entry) {
            case (nil, nil):
                return (WriteTarget(folder: folder, existing: nil), [])
            case (nil, let entry?):
                return (WriteTarget(folder: folder, existing: try await index.insert(entry, parent: folder.id, domain: domain)), [])
            case (let existing?, _) where existing.dirty:
                // Ours, waiting for upload: the upload is conditional on
                // what the write was based on.
                return (WriteTarget(folder: folder, existing: existing), [])
            case (let existing?, let entry?) where existing.isFolder == entry.isFolder:
                guard !entry.isFolder, entry.version != existing.upstreamVersion || entry.size != existing.size else {
                    return (WriteTarget(folder: folder, existing: existing), [])
                }
                let updated = try await index.updateContent(id: existing.id, entry: entry, event: .upstreamChanged)
                return (WriteTarget(folder: folder, existing: updated), [existing.id])
            default:
                return (nil, [])
            }
        }
        cache.remove(stale)
        return target
    }
}
