import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// What a journaled upload does when the upstream is not at the version
/// the edit was based on.
extension Provider {
    /// Settles a version mismatch of `entry`'s upload. Returns the entry
    /// the upstream now holds when ours went there after all (over a cut
    /// upload of our own, or again after a deletion upstream), nil when our
    /// bytes were kept as a conflict copy beside the upstream's version.
    /// `folder`: the id of the folder at `path` (nil: not known).
    func afterMismatch(of entry: JournalEntry, file: URL, at path: ItemPath, in folder: Int64?,
                       progress: UploadProgress) async throws -> UpstreamEntry? {
        let now = try await upstream { try await store.stat(path) }
        if let now, try await holdsCutUpload(now, upTo: entry) {
            logger.info("the upstream holds an upload of ours cut off before it was recorded; sending the newest over it",
                        metadata: ["path": "\(Self.display(path))"])
            let uploaded = try await upstream { try await store.upload(file, to: path, expecting: .version(now.version), progress: progress) }
            await upstreamChanged(in: folder)
            return uploaded
        }
        // Gone upstream, and this edit was of what was there. (A new file's
        // name with nothing visible there is taken by what the store hides:
        // a conflict like any other.)
        if now == nil, entry.basis != nil {
            logger.warning("deleted upstream while edited here; created again", metadata: ["path": "\(Self.display(path))"])
            let uploaded = try await upstream { try await store.upload(file, to: path, expecting: .absent) }
            await upstreamChanged(in: folder)
            return uploaded
        }
        guard let parentID = try await index.item(id: entry.itemID)?.parentID, let parent = try await index.item(id: parentID) else { return nil }
        // keepBoth renames what it is handed into the cache: a link, so the
        // outbox file stays until `abandonUpload` has dropped the row naming
        // it. Handing it the outbox file itself left, on a kill -9 between
        // the two, a row without its file, and a davgate that would not start
        // (found by WriteBackTests.crashLoop).
        let copy = URL(fileURLWithPath: try cache.outboxLink(entry.file), isDirectory: false)
        do {
            _ = try await keepBoth(copy, at: path, parent: parent)
        } catch {
            cache.discard(copy)
            throw error
        }
        let (files, stillDirty) = try await index.abandonUpload(entry, upstream: now)
        // The item reads as the upstream's version now, unless a newer
        // write of ours is still on its way.
        if !stillDirty { cache.remove([entry.itemID]) }
        cache.removeOutbox(files)
        return nil
    }

    /// Whether the upstream's `current` file is one of the item's journaled
    /// writes up to `entry`, which the upstream took just before davgate
    /// stopped (kill -9, power, the stop's grace running out) so that the
    /// journal never recorded it. Then the newest write's upload, conditional
    /// on the version before, fails; without this it became a conflict copy
    /// of davgate's own upload, the acknowledged bytes no longer at their
    /// name (found by `WriteBackTests`' crash loop and by scripts/soak).
    ///
    /// Recognised by the same size and the same modification time to the
    /// microsecond, which a write stamps on its file and a store that keeps
    /// times keeps (the directory store links the very inode). A store that
    /// sets its own times never matches, and a real conflict stays one.
    func holdsCutUpload(_ current: UpstreamEntry, upTo entry: JournalEntry) async throws -> Bool {
        let ours = try await index.journal(domain: domain).filter { $0.itemID == entry.itemID && $0.seq <= entry.seq }
        return ours.contains { written in
            var st = stat()
            guard written.size == current.size, lstat(cache.outboxFile(written.file).path, &st) == 0 else { return false }
            let stamped = TimeInterval(st.st_mtim.tv_sec) + TimeInterval(st.st_mtim.tv_nsec) / 1e9
            return abs(stamped - current.modified.timeIntervalSince1970) < 2e-6
        }
    }
}
