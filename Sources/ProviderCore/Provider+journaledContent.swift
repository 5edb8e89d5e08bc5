import Foundation
import Logging

/// The cache file of an item written back and not uploaded yet. A small
/// write's bytes live in its journal row alone (`WriteRequest.content`):
/// no outbox file is made and none is linked into the cache before the
/// answer, which was a quarter of a small PUT's CPU (issue 14). The file
/// is made when it is first needed: by a read (`materializeJournaled`) or
/// by the upload (`Provider.upload`, `keepUploaded`); a small write over a
/// file the item has replaces it. Every install of a dirty item's cache
/// file runs under `contentInstalls` and installs what the newest journal
/// row holds, read under it: a read that found older bytes cannot put them
/// back after a newer write replaced them.
extension Provider {
    /// Makes the write's bytes the item's content once its journal row has
    /// committed: a large write's outbox file is linked in. A small write
    /// to a new item makes no file (the first read does); one to an item
    /// that has a file replaces it with a new one, by a rename, so that a
    /// reader opening the file meanwhile finds the old bytes or the new,
    /// never no file.
    func installWritten(_ request: WriteRequest, outbox name: String, item id: Int64, new: Bool) async throws {
        if request.content != nil, new { return }
        try await contentInstalls.withLock {
            if let content = request.content {
                guard cache.hasFile(for: id) else { return }
                try await committedFirst()
                try cache.installJournaled(content, modified: request.modified ?? Date(), for: id)
            } else {
                try await committedFirst()
                try cache.installFromOutbox(name, for: id, new: new)
            }
        }
    }

    /// Commits the write-back commits' shared transaction holding the
    /// caller's write (`SQLiteIndex+batch`) before its file is installed:
    /// were that transaction lost, the index would describe the older bytes
    /// (or hand the new item's id to the next one) while the cache held the
    /// lost write's. A write to a new item's name that makes no file stays
    /// in the transaction; whoever installs after it commits it first.
    private func committedFirst() async throws {
        try await index.settleBatch()
        if let failure = DurabilityScope.current?.batchFailure { throw failure }
    }

    /// Makes the cache file of an item that has none from its newest
    /// journal row: the bytes of a small write, or a large write's outbox
    /// file. False when the item has no journal row (it is clean, or its
    /// upload finished meanwhile: the upstream has the bytes) or, for a
    /// large write, no outbox file.
    func materializeJournaled(_ item: Item) async throws -> Bool {
        try await installingContent {
            if cache.hasFile(for: item.id) { return true }
            guard let newest = try await index.latestEntries(of: [item.id]).first else { return false }
            if let write = try await index.journaledContent(seq: newest.seq) {
                try cache.installJournaled(write.content, modified: write.modified, for: item.id)
                return true
            }
            guard cache.outboxHas(newest.file) else { return false }
            try cache.installFromOutbox(newest.file, for: item.id)
            return true
        }
    }

    /// Makes the outbox file of a small write for its upload, from the
    /// bytes its journal row holds, unless it is there already.
    func outboxFileForUpload(_ entry: JournalEntry) async throws -> URL {
        let file = cache.outboxFile(entry.file)
        if !cache.outboxHas(entry.file), let write = try await index.journaledContent(seq: entry.seq) {
            try cache.writeOutbox(entry.file, content: write.content, modified: write.modified)
        }
        return file
    }

    /// After the upload of `entry`, before its rows go: unless a newer
    /// write came, its outbox file becomes the item's content, so that the
    /// item stays materialized rather than being fetched back, and its
    /// cache file is the inode the upload had (a folder upstream fsyncs
    /// it), not one a read made from the journal, never fsynced, which a
    /// power cut after the completion could leave short in a clean item.
    func keepUploaded(_ entry: JournalEntry) async {
        do {
            try await installingContent {
                guard !cache.holds(entry.file, for: entry.itemID), cache.outboxHas(entry.file),
                      try await index.latestEntries(of: [entry.itemID]).first?.seq == entry.seq else { return }
                try cache.installFromOutbox(entry.file, for: entry.itemID, new: !cache.hasFile(for: entry.itemID))
            }
        } catch {
            // The upload stands; the item is fetched back when read.
            logger.warning("cannot keep an uploaded file as the item's content: \(error)", metadata: ["item": "\(entry.itemID)"])
            cache.remove([entry.itemID])
        }
    }
}
