import Foundation

extension Provider {
    /// Whether the upstream's file at `path` (`entry`, as a stat found it)
    /// is byte for byte `file`: then a write-through whose condition failed
    /// is the retry of a write the upstream took before the index recorded
    /// it (its instance was killed in between, and the client, never
    /// answered, sent it again, perhaps through another instance). The
    /// client heard of no first write, so the retry is that write, not a
    /// conflict with it; a conflict copy of its own bytes would be noise.
    /// Costs a fetch of a file of the same size, on this rare path only.
    func upstreamHolds(_ file: URL, size: Int64, at path: ItemPath, entry: UpstreamEntry) async throws -> Bool {
        guard !entry.isFolder, entry.size == size else { return false }
        let copy = cache.temporaryFile("compare")
        defer { try? FileManager.default.removeItem(at: copy) }
        let fetched = try await upstream { try await store.fetch(path, into: copy) }
        guard fetched.version == entry.version else { return false }
        return try await blocking { try sameContents(copy, file) }
    }
}
