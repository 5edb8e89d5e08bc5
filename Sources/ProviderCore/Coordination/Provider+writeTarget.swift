import Foundation
import Logging

/// Where a write lands: its folder and what is at its name now.
extension Provider {
    public struct WriteTarget: Sendable {
        public var folder: Item
        public var existing: Item?
    }

    /// The folder and the current item of a write's path: PUT's checks
    /// before the body, and the commit under the domain's coordination.
    ///
    /// A write does not relist a folder whose listing is stale, as a read
    /// does. Relisting on every write made a burst of small PUTs quadratic:
    /// each PUT's refresh of the growing folder was cut short by the next
    /// PUT or by an upload finishing, so the next PUT listed it again (issue
    /// 14). One upstream stat of the name brings the index up to date for
    /// it instead, and when nothing is there, a second shows the folder
    /// still is. Whatever else (a folder never listed or not known, a name
    /// deleted upstream or of another kind there) is resolved as a read
    /// resolves it. Throws `parentMissing` when there is no folder.
    /// - Parameter checked: when this path was checked so before (a PUT's
    ///   checks before its body): within the listing TTL of that, the index
    ///   is trusted for it, as a read trusts a listing.
    public func writeTarget(_ path: ItemPath, checked: ContinuousClock.Instant? = nil) async throws -> WriteTarget {
        guard let name = path.last else { throw ProviderError.wrongKind }
        let folderPath = Array(path.dropLast())
        let chain = try await index.chain(domain: domain, path: folderPath)
        if chain.count == path.count, let folder = chain.last, folder.isFolder, folder.listedAt != nil, !isFresh(folder) {
            if let checked, ContinuousClock.now - checked < .seconds(listingTTL) {
                return WriteTarget(folder: folder, existing: try await index.child(of: folder.id, named: name))
            }
            if let target = try await checkedTarget(name, in: folder, at: folderPath) { return target }
        }
        // The folder's own listing too, as resolving the target's path would
        // (a folder never listed knows none of its members yet).
        guard let folder = try await item(at: folderPath), folder.isFolder, try await refreshIfStale(folder) else {
            throw ProviderError.parentMissing
        }
        return WriteTarget(folder: folder, existing: try await index.child(of: folder.id, named: name))
    }

    /// The target in a stale folder after one or two stats; nil when the
    /// folder needs a read's resolution.
    private func checkedTarget(_ name: String, in folder: Item, at folderPath: ItemPath) async throws -> WriteTarget? {
        let entry: UpstreamEntry?
        do {
            entry = try await upstream { try await store.stat(folderPath + [name]) }
            if entry == nil, try await upstream({ try await store.stat(folderPath) })?.isFolder != true { return nil }
        } catch ProviderError.upstream(let error) {
            // As a refresh that fails: the last known listing stands.
            logger.warning("cannot check the target of a write upstream; using the last known listing",
                           metadata: ["path": "\(Self.display(folderPath + [name]))", "error": "\(error)"])
            return WriteTarget(folder: folder, existing: try await index.child(of: folder.id, named: name))
        }
        // Under the listings' lock: a refresh applying a page of this
        // folder meanwhile would otherwise race the insert below.
        let (target, stale): (WriteTarget?, [Int64]) = try await listingApplication.withLock {
            let existing = try await index.child(of: folder.id, named: name)
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
