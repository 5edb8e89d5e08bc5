import CoreMetrics
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// When a PUT is answered: after the upstream took it, or once it is durable
/// here and queued in the journal (the File Provider's `itemChanged` upload).
public enum WriteMode: String, Sendable, CaseIterable {
    case through
    case back
}

/// How the journal uploads: after a quiet delay (bursts coalesce), with
/// retries backing off, and a maximum age after which an upload is marked
/// failed (reported, never dropped).
public struct UploadPolicy: Sendable, Equatable {
    public var quietDelay: TimeInterval
    public var maxAge: TimeInterval
    /// Bytes written here and not uploaded yet that the domain accepts;
    /// beyond it a PUT gets 507 until the journal drains. nil: no limit.
    public var dirtyBudget: Int64?
    /// Uploads of different files that may run at once.
    public var parallelism: Int
    /// How long after a write the domain counts as taking writes, its
    /// uploads waiting (`WriteActivity`), and for how long at most in one
    /// go. Not settings: tests on a busy machine widen them.
    public var burstWindow: Duration
    public var burstLimit: Duration

    public init(quietDelay: TimeInterval = 2, maxAge: TimeInterval = 7 * 86_400, dirtyBudget: Int64? = nil, parallelism: Int = 4,
                burstWindow: Duration = .milliseconds(250), burstLimit: Duration = .seconds(30)) {
        self.quietDelay = quietDelay
        self.maxAge = maxAge
        self.dirtyBudget = dirtyBudget
        self.parallelism = parallelism
        self.burstWindow = burstWindow
        self.burstLimit = burstLimit
    }
}

extension Provider {
    /// Write-back: the fsynced body is in the outbox (`write` moved it
    /// there as `outbox`), or a small body's bytes are in the request; the
    /// item and its journal row (with those bytes) commit in one
    /// transaction, and the cache takes the same inode (a small write's
    /// file is made later, `Provider+journaledContent`). Acknowledged once
    /// the commit is durable; the upload comes later. On failure the caller
    /// removes the outbox file.
    func recordWrite(_ request: WriteRequest, outbox name: String, parent: Item, existing: Item?) async throws -> WriteOutcome {
        if let budget = uploads.dirtyBudget {
            // What an item's newer write replaces no longer counts.
            let pending = try await index.pendingBytes(domain: domain, except: existing?.id)
            guard pending + request.size <= budget else {
                // The uploads must not wait for a burst: they free the budget.
                writeActivity.noteBudgetRefusal()
                throw ProviderError.dirtyBudgetExceeded(pending: pending, budget: budget)
            }
        }
        // Before the commit, so that the uploader never finds the row of a
        // burst's first write without counting the burst.
        writeActivity.noteWrite(window: uploads.burstWindow)
        let item = try await index.recordLocalWrite(existing: existing, parent: parent.id, domain: domain, name: request.path.last!,
                                                    size: request.size, modified: request.modified ?? Date(), file: name,
                                                    content: request.content, checksum: request.checksum)
        // Committed: a crash from here on is repaired by `recoverJournal`.
        try await installWritten(request, outbox: name, item: item.id, new: existing == nil)
        return WriteOutcome(item: item, created: existing == nil)
    }

    /// At start: every dirty item's cache file is its newest outbox file (a
    /// crash may have come between the journal's commit and the link), a
    /// small write's files made from its journal row are whole or gone,
    /// and outbox files no row names (a crash before the commit) go.
    public func recoverJournal() async throws {
        // What the last run committed without an fsync (upload completions,
        // `IndexStore.completeUpload`) is made durable before an outbox
        // file whose row it removed is deleted below: a power cut after
        // the deletion must not bring back that row.
        try await index.sync()
        // A small write's outbox file (made for its upload) and cache file
        // (made by a read, or by the upload) were never fsynced: a crash
        // may have left them short. The journal has the bytes; they are
        // made again when needed. An outbox file that is whole stays: its
        // modification time tells a cut upload of it (`holdsCutUpload`).
        let inline = try await index.inlineWrites(domain: domain)
        for write in inline where cache.outboxHas(write.file) && !cache.outboxHolds(write.file, write.content) {
            cache.removeOutbox([write.file])
        }
        let inlineFiles = Set(inline.map(\.file))
        let entries = try await index.journal(domain: domain)
        var newest: [Int64: JournalEntry] = [:]
        for entry in entries { newest[entry.itemID] = entry }
        for entry in newest.values where !cache.holds(entry.file, for: entry.itemID) {
            if inlineFiles.contains(entry.file) {
                cache.remove([entry.itemID])
                continue
            }
            guard cache.outboxHas(entry.file) else {
                // Nothing davgate does now leaves a large write's row
                // without its file (a small write's has its bytes); a
                // state folder from an older version, or one a person
                // edited, may. Refusing to start would stop every other
                // upload too: the write is reported as failed instead.
                let path = (try? await index.path(of: entry.itemID)).map(Self.display) ?? "item \(entry.itemID)"
                logger.error("journal: the write of \(path) waiting for upload has lost its outbox file \(entry.file); reported as a failed upload, the rest goes on")
                try await index.uploadFailed(entry, error: "its outbox file \(entry.file) is missing; write the file again", next: Date(),
                                             failed: true, reached: false)
                continue
            }
            try cache.installFromOutbox(entry.file, for: entry.itemID)
        }
        cache.removeOutbox(except: Set(entries.map(\.file)))
        if !entries.isEmpty {
            logger.info("journal: \(newest.count) files to upload (\(entries.reduce(0) { $0 + $1.size }) bytes) from before the restart")
        }
    }

    /// Runs the uploads of the journal until the task is cancelled or shuts
    /// down gracefully (in a `ServiceGroup`, as `Uploader` runs it): every
    /// quarter second, the due entries (quiet for the delay, retry time
    /// come, not under a lock) are uploaded, oldest first; while more are
    /// due than run at once, each finished upload starts the next at once
    /// (a quarter second between batches held a backlog of small files to
    /// about 20 a second, issue 14). While write-back writes keep arriving
    /// none starts, for `burstLimit` at most (`WriteActivity`). It runs in
    /// write-through too: a domain switched from write-back still delivers
    /// what its journal holds.
    ///
    /// A graceful stop starts nothing new and lets the uploads in flight
    /// finish, for `grace` at most: a file half sent is worth finishing, and
    /// the rest waits in the journal anyway. Past the grace they are
    /// cancelled, and their entries stay for the next start as well.
    public func runUploads(grace: Duration = .seconds(30)) async {
        await compactChangeFeed()
        // Items with an upload started: a finished one frees its place at
        // once, so one large upload never holds back the rest.
        let started = NIOLockedValueBox<Set<Int64>>([])
        let (finished, uploadFinished) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        var nextFinished = finished.makeAsyncIterator()
        var gaugeRecorded = ContinuousClock.now - .seconds(1)
        // Due entries read and not started yet: a finished upload's place
        // goes to the next of them, and the journal is read again once they
        // are used up or a quarter second old. Reading it after every
        // finished upload was 3% of a burst of small PUTs (issue 14). An
        // entry that went stale meanwhile (written again, uploaded by a
        // flush, locked) is what `upload` checks for anyway.
        var due: ArraySlice<JournalEntry> = []
        var dueRead = ContinuousClock.now - .seconds(1)
        // The last read stopped at its limit: once its entries are all
        // started, the journal is read again at once, not a quarter second
        // later. That pause after every batch held a backlog of small files
        // to about 140 uploads a second, each of them 5 ms (36 a batch;
        // 2,000 PUTs of 4 KiB through rclone serve s3 took 18 s to drain).
        var dueCut = false
        // Whether a wake-up is due a burst window from now: the loop waits
        // for a finished upload, and with none in flight (the uploads held
        // for a burst) or one slot held by a long upload it would not
        // widen when the writes stop.
        let widenCheck = NIOLockedValueBox(false)
        // Since when due uploads have been held for writes: a burst made
        // of writes just over a window apart begins anew with each of
        // them, and `WriteActivity`'s own limit never comes; this one
        // does.
        var heldSince: ContinuousClock.Instant?
        // A stop asked while the loop waits for a busy slot wakes it too.
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                while !Task.isCancelled, !Task.isShuttingDownGracefully {
                    var backlog = false
                    var startedNow = 0
                    var width = uploads.parallelism
                    do {
                        if due.isEmpty || ContinuousClock.now - dueRead >= .milliseconds(250) {
                            await removeSettledOutbox()
                            // The ones in flight, and enough others to fill
                            // their places past a few held back by locks.
                            let batch = try await dueBatch(limit: uploads.parallelism + 32)
                            (due, dueCut, dueRead) = (batch.entries[...], batch.cut, .now)
                        }
                        // While writes keep coming, no upload starts
                        // (`WriteActivity`), for `burstLimit` at most; at
                        // full width once they stop. Judged after the
                        // journal's read, so that a row committed during
                        // the read was noted as a write before it.
                        if writeActivity.burstGoesOn(window: uploads.burstWindow, limit: uploads.burstLimit) {
                            if !due.isEmpty, heldSince == nil { heldSince = .now }
                            if ContinuousClock.now - (heldSince ?? .now) < uploads.burstLimit { width = 0 }
                        } else {
                            heldSince = nil
                        }
                        while let entry = due.first {
                            let id = entry.itemID
                            // A stop asked while the journal was read starts nothing more.
                            guard !Task.isShuttingDownGracefully else { break }
                            guard started.withLockedValue({ $0.count < width }) else {
                                backlog = true
                                break
                            }
                            due = due.dropFirst()
                            guard started.withLockedValue({ $0.insert(id).inserted }) else { continue }
                            startedNow += 1
                            group.addTask {
                                try? await self.upload(entry, unlessLocked: true)
                                started.withLockedValue { _ = $0.remove(id) }
                                uploadFinished.yield()
                            }
                        }
                        if ContinuousClock.now - gaugeRecorded >= .milliseconds(250) {
                            metrics.uploadsPending.record(try await index.pendingUploads(domain: domain))
                            gaugeRecorded = .now
                        }
                    } catch {
                        // Not known to be more than a read holds: the
                        // quarter-second wait below is the right pace.
                        dueCut = false
                        logger.warning("journal: \(error)")
                    }
                    if backlog {
                        if width < uploads.parallelism, widenCheck.withLockedValue({ armed in defer { armed = true }; return !armed }) {
                            let window = uploads.burstWindow
                            group.addTask {
                                try? await Task.sleep(for: window)
                                widenCheck.withLockedValue { $0 = false }
                                uploadFinished.yield()
                            }
                        }
                        _ = await nextFinished.next()
                    } else if due.isEmpty, dueCut, startedNow > 0 {
                        // More are due than the read held (something was
                        // started, so this is no loop over held-back entries).
                        continue
                    } else {
                        if dueCut { uploadWaitsAfterCutRead.withLockedValue { $0 += 1 } }
                        try? await Task.sleep(for: .milliseconds(250))
                    }
                }
                // Cancelled: the group cancels what is in flight by itself.
                guard !Task.isCancelled else { return }
                await drainUploads(started, within: grace)
                await removeSettledOutbox()
                // Whatever is still running past the grace is cut short.
                group.cancelAll()
            }
        } onGracefulShutdown: {
            uploadFinished.yield()
        }
    }

    /// Deletes the outbox files of the uploads finished since the last call,
    /// once an index sync covers their completions: one sync for all of
    /// them, where each upload had waited for its own (a third of a small
    /// file's upload was that wait and its thread switches, issue 14). A
    /// file whose deletion never comes (a crash first) has no row naming
    /// it, and `recoverJournal` removes it at the next start.
    func removeSettledOutbox() async {
        let names = settledOutbox.take()
        guard !names.isEmpty else { return }
        do {
            try await index.sync()
            cache.removeOutbox(names)
        } catch {
            settledOutbox.add(names)
            logger.warning("journal: cannot sync the index (\(error)); the outbox files of \(names.count) finished uploads stay until it can")
        }
    }

    /// Waits until the uploads in `started` are done, for `grace` at most.
    /// Polled like the journal itself: a stop is no hot path.
    private func drainUploads(_ started: NIOLockedValueBox<Set<Int64>>, within grace: Duration) async {
        let deadline = ContinuousClock.now + grace
        var inFlight = started.withLockedValue { $0.count }
        guard inFlight > 0 else { return }
        logger.info("domain \(domain): stopping; the uploads in flight (\(inFlight)) may finish within \(grace)")
        while inFlight > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
            inFlight = started.withLockedValue { $0.count }
        }
        if inFlight > 0 {
            logger.notice("domain \(domain): the uploads still in flight after \(grace) (\(inFlight)) are cancelled; they go at the next start")
        }
    }

    /// At a clean stop: says what the journal still holds, so that nobody
    /// takes a stopped server for a finished upload.
    public func reportPendingAtStop() async {
        guard let entries = try? await index.newestEntries(domain: domain), !entries.isEmpty else { return }
        let bytes = entries.reduce(Int64(0)) { $0 + $1.size }
        logger.notice("domain \(domain): \(entries.count) files (\(bytes) bytes) not uploaded yet; kept in the journal, they go at the next start")
    }

    /// The entries due now, oldest first: quiet for the delay, retry time
    /// come, and not under a lock.
    func dueUploads(limit: Int) async throws -> [JournalEntry] {
        try await dueBatch(limit: limit).entries
    }

    /// `dueUploads`, and whether the read stopped at `limit` (more may be due).
    private func dueBatch(limit: Int) async throws -> (entries: [JournalEntry], cut: Bool) {
        let due = try await index.uploadsDue(domain: domain, quietSince: Date().addingTimeInterval(-uploads.quietDelay), limit: limit)
        guard !due.isEmpty else { return ([], false) }
        let locked = try await index.lockedItems(domain: domain)
        return (due.filter { !locked.contains($0.itemID) }, due.count == limit)
    }

    /// Uploads every pending write at or below `item` now, before a MOVE or
    /// COPY takes its path elsewhere; throws when one cannot be delivered.
    func flushUploads(under item: Item) async throws {
        let ids = [item.id] + (item.isFolder ? try await index.descendants(of: item.id).map(\.id) : [])
        for entry in try await index.latestEntries(of: ids) {
            try await upload(entry)
        }
        await removeSettledOutbox()
    }

    /// Runs a DELETE of `item` once the uploads at or below it in flight
    /// are done, keeping new ones out; when `delete` succeeds, their
    /// pending writes are forgotten, so none lands after the DELETE, and
    /// when it fails they stay.
    func withUploadsHeld(under item: Item, _ delete: () async throws -> Void) async throws {
        let ids = [item.id] + (item.isFolder ? try await index.descendants(of: item.id).map(\.id) : [])
        try await uploadSlots.withHeld(Set(ids)) {
            try await delete()
            cache.removeLater(outbox: try await index.dropJournal(of: ids))
        }
    }

    /// One upload of an item's newest write, conditional on the version the
    /// edit was based on; a conflict keeps both, as a write-through PUT does.
    /// - Parameter unlessLocked: the background uploader's: a lock taken
    ///   since the entry was found due holds it back (a MOVE's flush goes).
    func upload(_ entry: JournalEntry, unlessLocked: Bool = false) async throws {
        try await uploadSlots.withUpload(of: entry.itemID) {
            // Another upload may have delivered it meanwhile.
            guard let current = try await index.latestEntries(of: [entry.itemID]).first, current.seq == entry.seq else { return }
            if unlessLocked, try await index.lockedItems(domain: domain).contains(entry.itemID) { return }
            let path = try await index.path(of: entry.itemID)
            let folder = try await index.item(id: entry.itemID)?.parentID
            let basis: UpstreamExpectation = entry.basis.map { .version($0) } ?? .absent
            let progress = UploadProgress()
            metrics.uploadsInFlight.increment()
            uploadProgress.withLockedValue { $0[entry.itemID] = progress }
            defer {
                uploadProgress.withLockedValue { $0[entry.itemID] = nil }
                metrics.uploadsInFlight.decrement()
            }
            do {
                let uploaded: UpstreamEntry
                let file = try await outboxFileForUpload(entry)
                do {
                    // What the upstream holds now is what this edit replaces.
                    if case .version(let based) = basis { try await keepVersion(of: path, basis: based) }
                    uploaded = try await upstream { try await store.upload(file, to: path, expecting: basis, progress: progress) }
                    await upstreamChanged(in: folder)
                } catch ProviderError.upstream(.versionMismatch) {
                    guard let settled = try await afterMismatch(of: entry, file: file, at: path, in: folder, progress: progress) else { return }
                    uploaded = settled
                }
                metrics.uploads.increment()
                metrics.uploadedBytes.increment(by: uploaded.size)
                await keepUploaded(entry)
                // The completion's commit need not be durable (see
                // `IndexStore.completeUpload`); its files go after a sync.
                settledOutbox.add(try await index.completeUpload(entry, uploaded: uploaded))
                logger.log(level: uploaded.size > 1 << 20 ? .info : .debug,
                           "uploaded \(Self.display(path)): \(uploaded.size) bytes, \(entry.attempts) earlier attempts")
            } catch let error as CancellationError {
                // A stop, not a failure: the entry is tried again at the next start.
                throw error
            } catch {
                let attempts = entry.attempts + 1
                // 1 s, 2 s, 4 s ... at most 5 minutes, with up to a quarter of jitter.
                let backoff = min(300, pow(2, Double(attempts - 1))) * Double.random(in: 0.75...1.25)
                let failed = Date().timeIntervalSince(entry.created) > uploads.maxAge
                // Only a connection never made proves nothing was sent.
                let reached: Bool
                if case ProviderError.upstream(.unreachable) = error { reached = false } else { reached = true }
                try await index.uploadFailed(entry, error: "\(error)", next: Date().addingTimeInterval(backoff), failed: failed, reached: reached)
                logger.warning(failed ? "upload failed for good; kept here and reported" : "upload failed; will retry",
                               metadata: ["path": "\(Self.display(path))", "error": "\(error)", "attempts": "\(attempts)"])
                throw error
            }
        }
    }
}
