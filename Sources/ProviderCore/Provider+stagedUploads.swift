import Foundation
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Writes that arrive in pieces: `Content-Range` PUTs (Apache's and
/// lighttpd's partial PUT), the rest of a PUT whose connection was cut, and
/// SabreDAV's `PATCH`. Pieces are staged (`UploadStaging`) until they cover
/// the file; the commit is then one ordinary `write`, so everything a write
/// promises holds: locks checked at commit, journaled, uploaded once,
/// the old content kept as a version.
extension Provider {
    /// What a piece did.
    public enum PieceOutcome: Sendable {
        /// Staged: the path keeps its old content until the rest arrives.
        case staged(StagedUpload)
        /// The last piece: the whole upload was written as one write.
        case written(WriteOutcome)
    }

    /// Where a `PATCH` writes (SabreDAV's `X-Update-Range`).
    public enum PatchPosition: Sendable, Equatable {
        /// At this offset (`bytes=A-B`, `bytes=A-`).
        case at(Int64)
        /// After the last byte (`append`).
        case append
        /// This many bytes before the end (`bytes=-N`).
        case fromEnd(Int64)
    }

    /// Stages bytes `offset ..< offset + count` of the `total`-byte content
    /// the path is to hold (`Content-Range: bytes A-B/N`), from `piece` (a
    /// file from `newWriteFile()`, synced; the call owns it); the piece that
    /// completes the upload commits it.
    ///
    /// A piece at byte 0 begins an upload of new content (dropping any
    /// earlier one of the same user and path): the path keeps what it holds
    /// until the pieces cover all `total` bytes, and is written once. A
    /// first piece past byte 0 over an existing file, sent with an ETag
    /// condition naming it, patches or appends to it as Apache's partial
    /// PUT does: the upload starts from that file's bytes (up to `total`).
    /// Without the condition it is refused (`patchNeedsCondition`), and
    /// over nothing too (`stagedUploadMissing`): its upload expired or
    /// never began, and applying it would commit a file the client never
    /// sent, or wait for bytes it believes it sent.
    ///
    /// - Throws: `stagedUploadStale` when the path changed since the first
    ///   piece (the pieces are dropped), `stagedUploadMissing`,
    ///   `patchNeedsCondition`, or what the commit throws.
    public func writePiece(_ piece: URL, count: Int64, at offset: Int64, total: Int64, path: ItemPath,
                           conditions: WriteConditions) async throws -> PieceOutcome {
        defer { cache.discard(piece) }
        guard count > 0, offset >= 0, offset + count <= total else {
            throw ProviderError.local("a piece of \(count) bytes at \(offset) does not lie inside \(total) bytes")
        }
        if index.isShared, offset != 0 || count != total { throw ProviderError.piecesNeedOneInstance }
        let key = UploadStaging.key(path: path, principal: conditions.principal)
        return try await stagingLock(key).withLock {
            let current = try await currentFile(at: path)
            var upload = staging.load(key)
            if let staged = upload, offset == 0 || staged.total != total || staged.path != path {
                // Byte 0 again, or another declared length: another upload,
                // whose bytes must not mix with the abandoned one's.
                staging.remove(key)
                upload = nil
            }
            if let staged = upload, staged.basis != current?.etag {
                staging.remove(key)
                logger.notice("staged upload dropped: the file changed since its first piece",
                              metadata: ["path": "\(Self.display(path))", "received": "\(staged.received.byteCount)"])
                throw ProviderError.stagedUploadStale
            }
            var staged: StagedUpload
            if let upload {
                staged = upload
            } else {
                if offset > 0 && current == nil { throw ProviderError.stagedUploadMissing }
                // Patching the file as it is: only when the client names it,
                // or a resume whose upload was lost would commit the old
                // file's head with the new tail.
                if offset > 0 && conditions.judgedAgainst == nil { throw ProviderError.patchNeedsCondition }
                if let free = cache.freeBytes(), total > free { throw ProviderError.localNoSpace }
                staged = try await beginStaging(key, path: path, principal: conditions.principal, total: total,
                                                over: offset > 0 ? current : nil, basis: current?.etag)
            }
            let part = staging.partFile(key)
            try await blocking {
                let source = try openFile(piece.path, O_RDONLY), target = try openFile(part.path, O_WRONLY)
                defer { close(source); close(target) }
                try copyBytes(from: source, at: 0, to: target, at: offset, count: count)
                guard fsync(target) == 0 else { throw ProviderError.local("cannot sync a staged upload: \(String(cString: strerror(errno)))") }
            }
            staged.add(offset...(offset + count - 1))
            try await staging.save(staged, key: key)
            guard staged.isComplete else { return .staged(staged) }
            return .written(try await commitStaged(staged, key: key, conditions: conditions))
        }
    }

    /// Keeps the first `count` bytes of a PUT whose body was cut before its
    /// `total` (Content-Length) arrived, so the client can send the rest
    /// with `Content-Range` instead of everything again. `file` is synced
    /// and owned by the call; below 1 MiB resending is cheaper than keeping.
    /// Returns whether the bytes were kept.
    @discardableResult
    public func stageCutWrite(_ file: URL, count: Int64, total: Int64, path: ItemPath, conditions: WriteConditions) async -> Bool {
        defer { cache.discard(file) }
        // With a shared index the resuming request may reach another instance.
        guard count >= 1 << 20, count < total, !index.isShared else { return false }
        let key = UploadStaging.key(path: path, principal: conditions.principal)
        do {
            try await stagingLock(key).withLock {
                let current = try await currentFile(at: path)
                staging.remove(key)
                var staged = StagedUpload(path: path, principal: conditions.principal, total: total, basis: current?.etag)
                guard rename(file.path, staging.partFile(key).path) == 0 else {
                    throw ProviderError.local("cannot stage: \(String(cString: strerror(errno)))")
                }
                staged.add(0...(count - 1))
                try await staging.save(staged, key: key)
            }
            return true
        } catch {
            logger.warning("could not keep a cut PUT's bytes: \(error)", metadata: ["path": "\(Self.display(path))"])
            return false
        }
    }

    /// The upload `principal` has staged for `path`, if any (a client that
    /// resumes asks how far it got). Free when nothing is staged.
    public func stagedUpload(at path: ItemPath, principal: String) -> StagedUpload? {
        guard !staging.isEmpty else { return nil }
        return staging.load(UploadStaging.key(path: path, principal: principal))
    }

    /// Drops what `principal` staged for `path`: their whole PUT of it made
    /// the pieces moot. Free when nothing is staged.
    public func dropStagedUpload(at path: ItemPath, principal: String) async {
        guard !staging.isEmpty else { return }
        let key = UploadStaging.key(path: path, principal: principal)
        guard staging.contains(key) else { return }
        _ = try? await stagingLock(key).withLock { staging.remove(key) }
    }

    /// Removes staged uploads nobody added to for `uploadExpiry`, each
    /// under its upload's mutex, so a piece arriving at that moment either
    /// lands before (and the upload is kept) or starts a new upload after.
    public func expireStagedUploads(now: Date = Date()) async {
        let cutoff = now.addingTimeInterval(-uploadExpiry)
        var removed = 0
        for (key, upload) in staging.all() where upload.updated < cutoff {
            let gone = try? await stagingLock(key).withLock { () -> Bool in
                guard let current = staging.load(key), current.updated < cutoff else { return false }
                staging.remove(key)
                return true
            }
            if gone == true { removed += 1 }
        }
        staging.removeOrphanParts(before: cutoff)
        if removed > 0 { logger.info("removed \(removed) staged upload(s) idle for over \(Int(uploadExpiry)) s") }
    }

    /// SabreDAV's partial update: `count` bytes of `piece` written into the
    /// file at `position`, extending it when they run past its end, and
    /// committed at once as a write of the whole new content.
    public func patch(_ piece: URL, count: Int64, at position: PatchPosition, path: ItemPath,
                      conditions: WriteConditions) async throws -> WriteOutcome {
        defer { cache.discard(piece) }
        guard let found = try await currentFile(at: path) else { throw ProviderError.notFound }
        let (current, source, lease) = try await contents(of: found, at: path)
        let size = current.size
        let offset: Int64 = switch position {
        case .at(let start): start
        case .append: size
        case .fromEnd(let back): size - back
        }
        guard offset >= 0, offset <= size else { throw ProviderError.rangeNotSatisfiable(size: size) }
        let file = newWriteFile()
        do {
            try await blocking {
                let base = try openFile(source.path, O_RDONLY), added = try openFile(piece.path, O_RDONLY)
                let target = try openFile(file.path, O_WRONLY | O_CREAT | O_EXCL)
                defer { close(base); close(added); close(target) }
                try copyBytes(from: base, at: 0, to: target, at: 0, count: size)
                try copyBytes(from: added, at: 0, to: target, at: offset, count: count)
                guard fsync(target) == 0 else { throw ProviderError.local("cannot sync a patched file: \(String(cString: strerror(errno)))") }
            }
            withExtendedLifetime(lease) {}
        } catch {
            cache.discard(file)
            throw error
        }
        var conditions = conditions
        if conditions.judgedAgainst == nil { conditions.judgedAgainst = .etag(current.etag) }
        return try await write(WriteRequest(path: path, file: file, size: max(size, offset + count), conditions: conditions))
    }

    /// The file at `path`, nil for nothing; a folder cannot take pieces.
    private func currentFile(at path: ItemPath) async throws -> Item? {
        let current = try await item(at: path)
        if current?.isFolder == true { throw ProviderError.wrongKind }
        return current
    }

    /// A new staged upload: an empty part file, or, over a file it
    /// patches, that file's first `total` bytes (fetched first when not
    /// cached), counted as received.
    private func beginStaging(_ key: String, path: ItemPath, principal: String, total: Int64, over patched: Item?,
                              basis: String?) async throws -> StagedUpload {
        var staged = StagedUpload(path: path, principal: principal, total: total, basis: basis)
        let part = staging.partFile(key)
        var base: (item: Item, file: URL, lease: ReadLease)?
        if let patched, patched.size > 0 { base = try await contents(of: patched, at: path) }
        let length = min(base?.item.size ?? 0, total)
        try await blocking { [base] in
            let target = try openFile(part.path, O_WRONLY | O_CREAT | O_TRUNC)
            defer { close(target) }
            if let base, length > 0 {
                let source = try openFile(base.file.path, O_RDONLY)
                defer { close(source) }
                try copyBytes(from: source, at: 0, to: target, at: 0, count: length)
            }
        }
        withExtendedLifetime(base?.lease) {}
        if length > 0 { staged.add(0...(length - 1)) }
        return staged
    }

    /// Commits a complete staged upload as one write, conditional on the
    /// path still holding what the upload began over; removes it once
    /// written, or when the path moved on (it can never commit then).
    private func commitStaged(_ staged: StagedUpload, key: String, conditions: WriteConditions) async throws -> WriteOutcome {
        let part = staging.partFile(key), file = newWriteFile()
        try await blocking {
            guard truncate(part.path, off_t(staged.total)) == 0, link(part.path, file.path) == 0 else {
                throw ProviderError.local("cannot commit a staged upload: \(String(cString: strerror(errno)))")
            }
        }
        var conditions = conditions
        if conditions.judgedAgainst == nil { conditions.judgedAgainst = staged.basis.map { .etag($0) } ?? .absent }
        do {
            let outcome = try await write(WriteRequest(path: staged.path, file: file, size: staged.total, conditions: conditions))
            staging.remove(key)
            return outcome
        } catch ProviderError.conditionChanged {
            staging.remove(key)
            throw ProviderError.stagedUploadStale
        }
    }

    /// One staged upload's pieces at a time: the mutex of the upload's
    /// stripe (a fixed set, so uploads that come and go leave nothing).
    private func stagingLock(_ key: String) -> AsyncMutex {
        stagingLocks[Int(UInt8(key.prefix(2), radix: 16) ?? 0) % stagingLocks.count]
    }
}
