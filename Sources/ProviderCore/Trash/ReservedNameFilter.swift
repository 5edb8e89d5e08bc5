import Foundation

/// The store as every part of the provider but the trash sees it: the
/// trash folder at the root is not there. Filtering here, where upstream
/// entries enter the provider, keeps it out of listings, PROPFIND, the
/// change feed and eager walks at once; a write that names it is refused by
/// `Provider.admit` before it gets this far, and refused here again.
struct ReservedNameFilter: UpstreamStore {
    let base: any UpstreamStore

    var displayName: String { base.displayName }
    var nameRules: NameRules { base.nameRules }

    static func isReserved(_ path: ItemPath) -> Bool { path.first == TrashLayout.reservedName }

    private static func visible(_ entries: [UpstreamEntry], in folder: ItemPath) -> [UpstreamEntry] {
        folder.isEmpty ? entries.filter { $0.name != TrashLayout.reservedName } : entries
    }

    private func refuse(_ path: ItemPath) throws {
        if Self.isReserved(path) { throw UpstreamError.forbidden("\(TrashLayout.reservedName) is davgate's own folder") }
    }

    func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        try refuse(folder)
        return Self.visible(try await base.list(folder), in: folder)
    }

    func listing(_ folder: ItemPath) async throws -> FolderListing {
        try refuse(folder)
        var listing = try await base.listing(folder)
        listing.entries = Self.visible(listing.entries, in: folder)
        return listing
    }

    func listPages(_ folder: ItemPath, _ page: ([UpstreamEntry]) async throws -> Void) async throws -> String? {
        try refuse(folder)
        return try await base.listPages(folder) { try await page(Self.visible($0, in: folder)) }
    }

    func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        Self.isReserved(path) ? nil : try await base.stat(path)
    }

    func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL, observer: FetchObserver) async throws -> UpstreamEntry {
        try refuse(path)
        return try await base.fetch(path, range: range, into: destination, observer: observer)
    }

    func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        try refuse(path)
        return try await base.upload(file, to: path, expecting: expecting, progress: progress)
    }

    func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        try refuse(path)
        return try await base.makeFolder(path)
    }

    func delete(_ path: ItemPath) async throws {
        try refuse(path)
        try await base.delete(path)
    }

    func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        try refuse(source)
        try refuse(destination)
        return try await base.move(source, to: destination)
    }

    func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        try refuse(source)
        try refuse(destination)
        return try await base.copy(source, to: destination, recursive: recursive)
    }

    func quota() async throws -> UpstreamQuota? { try await base.quota() }

    func feedPosition() async throws -> String? { try await base.feedPosition() }

    func changes(since position: String, limit: Int) async throws -> UpstreamChanges {
        var changes = try await base.changes(since: position, limit: limit)
        changes.present.removeAll { Self.isReserved($0.path) }
        changes.removed.removeAll(where: Self.isReserved)
        return changes
    }

    func isDavgate() async throws -> Bool { try await base.isDavgate() }
}
