import Foundation
@testable import ProviderCore

/// A SQLite index of its own in a fresh temporary folder, with domain "d"'s
/// root, for the tests of the SQLite index itself.
struct TemporarySQLiteIndex {
    let index: SQLiteIndex
    let root: Item
    let folder: URL
    var file: URL { folder.appendingPathComponent("index.sqlite") }

    /// - Parameter readCacheLifetime: as `SQLiteIndex.init(file:readCacheLifetime:)`.
    static func open(readCacheLifetime: Duration = .seconds(2)) async throws -> TemporarySQLiteIndex {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("index-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let index = try SQLiteIndex(file: folder.appendingPathComponent("index.sqlite"), readCacheLifetime: readCacheLifetime)
        return TemporarySQLiteIndex(index: index, root: try await index.root(domain: "d"), folder: folder)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: folder) }
}
