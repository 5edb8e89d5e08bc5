import Foundation
import GRDB
import GRDBSQLite
@testable import ProviderCore
import Testing

/// Reading connections keep a page cache of `SQLiteIndex.readerCacheKiB`,
/// not SQLite's 2 MiB: the kernel holds the index file's pages anyway, and
/// thirteen full reader caches were most of the heap a few large listings
/// left behind (issue 14's peak RSS).
@Suite("the page cache of the index's reading connections")
struct ReaderCacheLimitTests {
    /// The bytes of `db`'s page cache in use.
    static func cacheUsed(_ db: Database) -> Int {
        var current: Int32 = 0, highest: Int32 = 0
        sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return Int(current)
    }

    /// Every row of the item table read, then what the cache holds.
    static func scanAll(_ db: Database) throws -> (rows: Int, cached: Int) {
        let rows = try Row.fetchAll(db, sql: "SELECT * FROM item").count
        return (rows, cacheUsed(db))
    }

    @Test("after reading a 4,000-file folder's rows whole, a reader and a lookup connection hold at most their limit; the writer is not limited")
    func readersStayWithinTheirLimit() async throws {
        let t = try await TemporarySQLiteIndex.open()
        defer { t.cleanUp() }
        let index = t.index
        // Long names make a table of several MiB, far past the limit.
        let padding = String(repeating: "n", count: 200)
        try await index.pool.write { db in
            for i in 0..<4_000 {
                try db.execute(sql: """
                    INSERT INTO item (domain, parent_id, name, is_folder, size, modified, created, state)
                    VALUES ('d', ?, ?, 0, 0, 0, 0, ?)
                    """, arguments: [t.root.id, "\(padding)-\(i).txt", StoredState.placeholder.rawValue])
            }
        }
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
}
