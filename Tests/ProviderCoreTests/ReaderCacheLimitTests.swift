import Foundation
import GRDB
@testable import ProviderCore
import Testing

/// The index's page caches stay small between requests: reading
/// connections keep `SQLiteIndex.readerCacheKiB`, not SQLite's 2 MiB, and
/// the writer's is trimmed to its hottest pages after a commit that leaves
/// more than `writerCacheKeptKiB`. The kernel holds the index file's pages
/// anyway, and what large listings, DELETEs and bursts of PUTs left in
/// these caches was most of the heap before the bench's 1 GiB transfers
/// (issue 14's peak RSS).
@Suite("the index's page caches between requests")
struct ReaderCacheLimitTests {
    /// 4,000 files with long names under `parent`: a table of about 1.6
    /// MiB and an index of as much, far past a reader's limit and past the
    /// writer's kept size.
    static func insertFiles(_ db: Database, under parent: Int64) throws {
        let padding = String(repeating: "n", count: 400)
        for i in 0..<4_000 {
            try db.execute(sql: """
                INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, state)
                VALUES ('d', ?, ?, 0, 0, 0, 0, ?)
                """, arguments: [parent, "\(padding)-\(i).txt", StoredState.placeholder.rawValue])
        }
    }

    /// Every row of the item table read, then what the cache holds.
    static func scanAll(_ db: Database) throws -> (rows: Int, cached: Int) {
        let rows = try Row.fetchAll(db, sql: "SELECT * FROM item").count
        return (rows, SQLiteIndex.pageCacheBytes(db))
    }

    @Test("after reading a 4,000-file folder's rows whole, a reader and a lookup connection hold at most their limit; the writer is not limited")
    func readersStayWithinTheirLimit() async throws {
        let t = try await TemporarySQLiteIndex.open()
        defer { t.cleanUp() }
        let index = t.index
        try await index.pool.write { db in try Self.insertFiles(db, under: t.root.id) }
        let limit = SQLiteIndex.readerCacheKiB * 1024
        // SQLite's cache counts each page's header beside its 4 KiB.
        let slack = 64 * 1024

        let reader = try await index.pool.read { db in try Self.scanAll(db) }
        #expect(reader.rows > 4_000)
        #expect(reader.cached <= limit + slack, "a pool reader caches \(reader.cached) bytes")
        let lookup = try index.lookups.read { db in try Self.scanAll(db) }
        #expect(lookup.cached <= limit + slack, "a lookup connection caches \(lookup.cached) bytes")
        let writer = try await index.pool.write { db in try Self.scanAll(db) }
        #expect(writer.cached > 4 * limit, "the writer keeps SQLite's default cache: \(writer.cached) bytes")
    }

    @Test("a write of thousands of rows leaves the writer's cache at most its kept size once committed")
    func writerTrimmedAfterALargeCommit() async throws {
        let t = try await TemporarySQLiteIndex.open()
        defer { t.cleanUp() }
        try await t.index.write(small: false) { db in try Self.insertFiles(db, under: t.root.id) }
        let cached = try await t.index.pool.write { db in SQLiteIndex.pageCacheBytes(db) }
        // Trimmed to half its kept size, the coldest pages first.
        #expect(cached <= SQLiteIndex.writerCacheKeptKiB / 2 * 1024 + 64 * 1024, "the writer caches \(cached) bytes after the commit")
        #expect(cached > 0, "the hottest pages stay")
        // And small writes after it still land.
        _ = try await t.index.smallWrite { db in try db.execute(sql: "UPDATE item SET size = 1 WHERE parent_id = ?", arguments: [t.root.id]) }
        #expect(try await t.index.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE size = 1") } == 4_000)
    }
}
