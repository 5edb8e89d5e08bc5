import Foundation
import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// File versions (`VersionLayout`): before the upstream's content of a file
/// is replaced (an upload over it, write-through or write-back, or a MOVE
/// or COPY onto it), that content is set aside upstream; a restore writes
/// a version back through the ordinary write path, so it is coordinated,
/// journaled and uploaded like any PUT, and what it replaces becomes a
/// version in turn.
///
/// Versions belong to a path and stay there when the file is moved away:
/// Word saves by renaming the document to `~WRL0001.tmp`, writing the new
/// one under the old name and deleting the renamed one, so versions that
/// followed the file would leave the document on every save.
extension Provider {
    /// The versions of the file at `path`, newest first (read from the
    /// upstream: versions made by another gateway are there too), with the
    /// file's conflict copies among them.
    public func versions(of path: ItemPath) async throws -> [FileVersion] {
        var found: [UpstreamEntry] = []
        // A domain keeping none has none stored (and a davgate upstream
        // refuses `.davgate/` to anyone but itself).
        if versionPolicy != nil, try await !upstreamIsDavgate() {
            do {
                found = try await upstream { try await trashStore.list(VersionLayout.folder(of: path)) }
            } catch ProviderError.upstream(.notFound), ProviderError.upstream(.conflict) {}
        }
        let stored = found.compactMap { entry -> FileVersion? in
            guard !entry.isFolder, let id = VersionLayout.id(ofName: entry.name), let millis = Double(id) else { return nil }
            return FileVersion(id: id, size: entry.size, savedAt: Date(timeIntervalSince1970: millis / 1000))
        }
        let copies = try await conflictCopies(of: path).map {
            FileVersion(id: $0.name, size: $0.size, savedAt: $0.modified, isConflictCopy: true)
        }
        return (stored + copies).sorted { $0.savedAt > $1.savedAt }
    }

    /// The conflict copies beside the file at `path`: files in its folder
    /// in the conflict state that `keepBoth` marked as conflicting with its
    /// name (a name that merely looks like one is not). Once edited, a copy
    /// is a file of its own and no longer listed here.
    func conflictCopies(of path: ItemPath) async throws -> [Item] {
        guard let name = path.last, let folder = try await item(at: Array(path.dropLast())), folder.isFolder else { return [] }
        let candidates = try await index.conflictCopies(in: folder.id)
        guard !candidates.isEmpty else { return [] }
        let marker = Self.conflictMarker(of: name)
        let properties = try await index.deadProperties(of: candidates.map(\.id))
        return candidates.filter { candidate in
            properties[candidate.id]?.contains { $0.namespace == Self.namespace && $0.name == Self.conflictProperty && $0.xml == marker } == true
        }
    }

    /// A version's bytes in a new temporary file the caller removes
    /// (`discardWrite`).
    public func versionContents(of path: ItemPath, id: String) async throws -> URL {
        let file = newWriteFile()
        do {
            if let copy = try await conflictCopies(of: path).first(where: { $0.name == id }) {
                let (_, source, lease) = try await contents(of: copy, at: Array(path.dropLast()) + [id])
                try await blocking {
                    let from = try openFile(source.path, O_RDONLY), to = try openFile(file.path, O_WRONLY | O_CREAT | O_EXCL)
                    defer { close(from); close(to) }
                    var st = stat()
                    guard fstat(from, &st) == 0 else { throw ProviderError.local("cannot read a conflict copy") }
                    try copyBytes(from: from, at: 0, to: to, at: 0, count: Int64(st.st_size))
                }
                withExtendedLifetime(lease) {}
            } else {
                _ = try await upstream { try await trashStore.fetch(VersionLayout.path(of: id, for: path), into: file) }
            }
        } catch {
            cache.discard(file)
            throw error
        }
        return file
    }

    /// Writes a version back at `destination` (the file itself unless told)
    /// as a PUT would, under `conditions`.
    public func restoreVersion(of path: ItemPath, id: String, to destination: ItemPath? = nil,
                               conditions: WriteConditions = .unconditional) async throws -> WriteOutcome {
        let file = try await versionContents(of: path, id: id)
        let size: Int64
        do {
            try await blocking { try ContentCache.sync(file) }
            size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        } catch {
            cache.discard(file)
            throw ProviderError.local("could not stage the version: \(error)")
        }
        let outcome = try await write(WriteRequest(path: destination ?? path, file: file, size: size, conditions: conditions))
        logger.info("restored a version", metadata: ["path": "\(Self.display(destination ?? path))", "version": "\(id)"])
        return outcome
    }

    /// Removes a stored version, or deletes a conflict copy as a DELETE of
    /// it would (into the trash, when the domain keeps one).
    public func deleteVersion(of path: ItemPath, id: String, conditions: WriteConditions = .unconditional) async throws {
        if try await conflictCopies(of: path).contains(where: { $0.name == id }) {
            return try await delete(at: Array(path.dropLast()) + [id], conditions: conditions, by: conditions.principal.isEmpty ? nil : conditions.principal)
        }
        try await upstream { try await trashStore.delete(VersionLayout.path(of: id, for: path)) }
    }

    /// Copies the upstream's content of `path` aside before an upload
    /// replaces it, when that content is the one the upload was based on
    /// (`basis`): a stale basis means the upload will conflict and replace
    /// nothing, and a retry of an upload whose answer was lost must not keep
    /// our own bytes. Each basis is kept once, however often its upload is
    /// retried. A store that cannot copy it (a permanent refusal) is logged
    /// and the upload goes on: a version is a safety net, not a condition of
    /// the write; a transient failure fails the upload, which is retried.
    func keepVersion(of path: ItemPath, basis: String) async throws {
        let key = VersionKey(path: path, basis: basis)
        guard try await keepsVersions(of: path), !versionsKept.withLockedValue({ $0.contains(key) }) else { return }
        guard let current = try await upstream({ try await trashStore.stat(path) }), !current.isFolder, current.version == basis else { return }
        let earlier: [FileVersion]
        do {
            earlier = try await intoVersions(of: path) { target in
                _ = try await upstream { try await trashStore.copy(path, to: target, recursive: false) }
            }
        } catch ProviderError.upstream(.notFound) {
            return
        } catch ProviderError.upstream(let error) where !error.isTransient {
            logger.warning("could not keep the previous content as a version; writing anyway",
                           metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
            return
        }
        versionsKept.withLockedValue { kept in
            if kept.count > 10_000 { kept.removeAll() }
            kept.insert(key)
        }
        await pruneVersions(of: path, earlier: earlier)
    }

    /// Moves the upstream's file at `path` among its versions (a MOVE or
    /// COPY onto it) instead of deleting it.
    /// - Returns: false when the caller must delete it instead: versions
    ///   are off here, or the upstream refused the move for good (logged).
    func moveToVersions(_ path: ItemPath) async throws -> Bool {
        guard try await keepsVersions(of: path) else { return false }
        let earlier: [FileVersion]
        do {
            earlier = try await intoVersions(of: path) { target in _ = try await upstream { try await trashStore.move(path, to: target) } }
        } catch ProviderError.upstream(let error) where !error.isTransient && error != .notFound {
            logger.warning("could not keep the replaced file as a version; replaced for good",
                           metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
            return false
        }
        await pruneVersions(of: path, earlier: earlier)
        return true
    }

    /// Versions are kept here: the domain keeps them, the file is not one
    /// kept on the gateway only, and the upstream is not another davgate
    /// (which keeps its own, as its configuration says, and refuses
    /// `.davgate/` to anyone else).
    private func keepsVersions(of path: ItemPath) async throws -> Bool {
        guard versionPolicy != nil, !trashStore.keepsOnGateway(path) else { return false }
        return try await !upstreamIsDavgate()
    }

    /// Versions past `versions_keep`, oldest first, removed upstream.
    /// `earlier` are the versions there were before the one just kept (the
    /// listing that chose its name, newest first), so pruning lists nothing.
    /// With a `versions_budget`, the domain's versions are then brought
    /// within it in the background (`runSoon`).
    private func pruneVersions(of path: ItemPath, earlier: [FileVersion]) async {
        guard let keep = versionPolicy?.keep else { return }
        defer {
            if versionPolicy?.budget != nil {
                runSoon(versionsExpiryQueued, "versions expiry after a write") { [self] in _ = try await self.expireVersions() }
            }
        }
        do {
            for version in earlier.dropFirst(max(0, keep - 1)) {
                try await deleteVersion(of: path, id: version.id)
            }
        } catch {
            logger.warning("could not prune old versions", metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
        }
    }

    /// Keeps the domain's versions within `versions_budget`: the oldest
    /// purged first, but never a file's newest, which is the one an
    /// accident most likely needs back (a budget smaller than those stays
    /// exceeded, and says so). Walks `.davgate/versions/` upstream: another
    /// gateway's versions count too.
    /// - Returns: how many were purged.
    @discardableResult
    public func expireVersions() async throws -> Int {
        guard let budget = versionPolicy?.budget, try await !upstreamIsDavgate() else { return 0 }
        let stored = try await storedVersions()
        var held = stored.reduce(Int64(0)) { $0 + $1.version.size }
        guard held > budget else { return 0 }
        var newest: [ItemPath: Date] = [:]
        for (path, version) in stored { newest[path] = max(newest[path] ?? .distantPast, version.savedAt) }
        var purged = 0
        for (path, version) in stored.sorted(by: { $0.version.savedAt < $1.version.savedAt }) where held > budget {
            guard version.savedAt < newest[path]! else { continue }
            do {
                try await upstream { try await trashStore.delete(VersionLayout.path(of: version.id, for: path)) }
            } catch ProviderError.upstream(.notFound) {
                // Purged already (a file's own pruning, another gateway).
            }
            held -= version.size
            purged += 1
        }
        logger.info("versions kept within versions_budget", metadata: [
            "purged": "\(purged)", "bytes": "\(held)", "budget": "\(budget)",
            "within": "\(held <= budget ? "yes" : "no: only files' newest versions are left")",
        ])
        return purged
    }

    /// Every stored version of the domain, with its file's path.
    private func storedVersions() async throws -> [(path: ItemPath, version: FileVersion)] {
        var found: [(path: ItemPath, version: FileVersion)] = []
        var folders = [VersionLayout.folder]
        while let folder = folders.popLast() {
            let entries: [UpstreamEntry]
            do {
                entries = try await upstream { try await trashStore.list(folder) }
            } catch ProviderError.upstream(.notFound), ProviderError.upstream(.conflict) {
                continue
            }
            for entry in entries {
                if entry.isFolder {
                    folders.append(folder + [entry.name])
                } else if let id = VersionLayout.id(ofName: entry.name), let millis = Double(id) {
                    found.append((Array(folder.dropFirst(VersionLayout.folder.count)),
                                  FileVersion(id: id, size: entry.size, savedAt: Date(timeIntervalSince1970: millis / 1000))))
                }
            }
        }
        return found
    }

    /// Runs `operation` with a free name for a new version of `path`, its
    /// folders made; once more, with the folders made again, when one was
    /// removed upstream behind davgate's back (a missing parent answers
    /// `.conflict` or `.notFound`, depending on the store).
    /// - Returns: the versions there were before, newest first.
    private func intoVersions(of path: ItemPath, _ operation: (ItemPath) async throws -> Void) async throws -> [FileVersion] {
        func attempt() async throws -> [FileVersion] {
            let (target, earlier) = try await versionTarget(for: path)
            try await operation(target)
            return earlier
        }
        do {
            return try await attempt()
        } catch ProviderError.upstream(.conflict), ProviderError.upstream(.notFound) {
            reservedFoldersMade.withLockedValue { $0.removeAll() }
            return try await attempt()
        }
    }

    /// A free name for a new version of `path` (its folders made), and the
    /// versions already there.
    private func versionTarget(for path: ItemPath) async throws -> (ItemPath, [FileVersion]) {
        try await makeReservedFolders(VersionLayout.folder(of: path))
        var moment = Date()
        let earlier = try await versions(of: path)
        let taken = Set(earlier.map(\.id))
        while taken.contains(String(VersionLayout.name(at: moment).dropLast(VersionLayout.suffix.count))) { moment += 0.001 }
        return (VersionLayout.folder(of: path) + [VersionLayout.name(at: moment)], earlier)
    }

    /// Makes `folder` and its parents upstream (below davgate's reserved
    /// folder), remembering what it made so the next version or trash
    /// entry asks nothing.
    func makeReservedFolders(_ folder: ItemPath) async throws {
        for depth in 1...folder.count {
            let prefix = Array(folder.prefix(depth))
            if reservedFoldersMade.withLockedValue({ $0.contains(prefix) }) { continue }
            do {
                _ = try await upstream { try await trashStore.makeFolder(prefix) }
            } catch ProviderError.upstream(.exists) {}
            reservedFoldersMade.withLockedValue { _ = $0.insert(prefix) }
        }
    }
}
