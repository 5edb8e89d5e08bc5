import Foundation
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// Keeps files whose names match some patterns (macOS's `._*` AppleDouble
/// files and `.DS_Store`) in a local folder and never sends them upstream,
/// while every other name goes to the wrapped store. Clients see one tree:
/// listings merge both. A wrapper, so the provider core stays unaware.
///
/// Folders live upstream; the local folder mirrors only the paths that hold
/// kept files, made on demand, and follows the folders' moves, copies and
/// deletions.
public struct KeepLocalStore: UpstreamStore {
    public let upstream: any UpstreamStore
    let local: DirectoryStore
    let patterns: [String]

    public init(wrapping upstream: any UpstreamStore, folder: URL, patterns: [String]) throws {
        self.upstream = upstream
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Kept files live in the state folder: the owner's alone.
        local = DirectoryStore(root: folder, fileMode: 0o600, folderMode: 0o700)
        self.patterns = patterns
    }

    public var displayName: String { upstream.displayName }
    /// A kept name must be one the upstream could hold too: it may stop
    /// matching a pattern (a rename) and then go there.
    public var nameRules: NameRules { upstream.nameRules }

    /// Whether `name` is kept local (fnmatch patterns; `*` does not match a
    /// leading dot unless the pattern spells it, as in a shell).
    public func keepsLocal(_ name: String) -> Bool {
        patterns.contains { fnmatch($0, name, FNM_PERIOD) == 0 }
    }

    func isLocal(_ path: ItemPath) -> Bool {
        path.last.map(keepsLocal) ?? false
    }

    public func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        try await listing(folder).entries
    }

    public func listing(_ folder: ItemPath) async throws -> FolderListing {
        var listing = try await upstream.listing(folder)
        listing.entries.removeAll { !$0.isFolder && keepsLocal($0.name) }
        let kept = (try? await local.list(folder)) ?? []
        listing.entries += kept.filter { !$0.isFolder && keepsLocal($0.name) }
        return listing
    }

    public func feedPosition() async throws -> String? {
        try await upstream.feedPosition()
    }

    /// The upstream's changes, without kept names: as in a listing, a kept
    /// file is the local one, whatever the upstream holds under its name.
    public func changes(since position: String, limit: Int) async throws -> UpstreamChanges {
        var changes = try await upstream.changes(since: position, limit: limit)
        changes.present.removeAll { !$0.entry.isFolder && keepsLocal($0.entry.name) }
        changes.removed.removeAll(where: isLocal)
        return changes
    }

    public func keepsOnGateway(_ path: ItemPath) -> Bool { isLocal(path) }

    public func isDavgate() async throws -> Bool {
        try await upstream.isDavgate()
    }

    public func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        isLocal(path) ? try await local.stat(path) : try await upstream.stat(path)
    }

    public func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
                      observer: FetchObserver) async throws -> UpstreamEntry {
        try await (isLocal(path) ? local : upstream).fetch(path, range: range, into: destination, observer: observer)
    }

    public func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        guard isLocal(path) else { return try await upstream.upload(file, to: path, expecting: expecting, progress: progress) }
        try makeLocalParents(of: path)
        return try await local.upload(file, to: path, expecting: expecting, progress: progress)
    }

    public func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        try await upstream.makeFolder(path)
    }

    public func delete(_ path: ItemPath) async throws {
        if isLocal(path) { return try await local.delete(path) }
        try await upstream.delete(path)
        // A folder takes its kept files with it.
        try? await local.delete(path)
    }

    public func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        switch (isLocal(source), isLocal(destination)) {
        case (true, true):
            try makeLocalParents(of: destination)
            return try await local.move(source, to: destination)
        case (false, false):
            let entry = try await upstream.move(source, to: destination)
            if try await local.stat(source) != nil {
                try makeLocalParents(of: destination)
                _ = try await local.move(source, to: destination)
            }
            return entry
        case (true, false), (false, true):
            // Across the two sides: copy over, then remove the source.
            let entry = try await copy(source, to: destination, recursive: true)
            try await delete(source)
            return entry
        }
    }

    public func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        switch (isLocal(source), isLocal(destination)) {
        case (true, true):
            try makeLocalParents(of: destination)
            return try await local.copy(source, to: destination, recursive: recursive)
        case (false, false):
            let entry = try await upstream.copy(source, to: destination, recursive: recursive)
            if recursive, try await local.stat(source) != nil {
                try makeLocalParents(of: destination)
                _ = try await local.copy(source, to: destination, recursive: true)
            }
            return entry
        case (true, false), (false, true):
            // A file crossing sides: through a temporary copy.
            let from: any UpstreamStore = isLocal(source) ? local : upstream
            let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("davgate-keep-\(UUID().uuidString)")
            defer { unlink(temporary.path) }
            _ = try await from.fetch(source, into: temporary)
            return try await upload(temporary, to: destination, expecting: .absent)
        }
    }

    public func quota() async throws -> UpstreamQuota? {
        try await upstream.quota()
    }

    private func makeLocalParents(of path: ItemPath) throws {
        do {
            try local.makeParents(of: path)
        } catch {
            throw UpstreamError.io("cannot make the local folder for kept files: \(error)")
        }
    }
}
