import CSQLiteTuning
import Foundation
import GRDB
@testable import ProviderCore
import Testing

/// The index's commits write their log frames in one write(2) each
/// (wal_write_batching.c), and what they write is what every other
/// connection, and the next opening of the file, reads.
@Suite("Log writes gathered per commit")
struct LogWriteBatchingTests {
    /// The writes to the writer connection's log that SQLite asked for, and
    /// those made.
    private func logWrites(_ index: SQLiteIndex) -> (asked: Int64, made: Int64) {
        index.pool.writeWithoutTransaction { db in
            var asked: Int64 = 0, made: Int64 = 0
            let rc = davgate_sqlite_log_writes(db.sqliteConnection, &asked, &made)
            #expect(rc == 0, "the writer's log is not opened through the batching VFS (SQLite result \(rc))")
            return (asked, made)
        }
    }

    @Test("a PUT's commit asks for two writes a frame and makes one")
    func oneWritePerCommit() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let index = opened.index
        let before = logWrites(index)
        _ = try await index.recordLocalWrite(existing: nil, parent: opened.root.id, domain: "d", name: "a.txt", size: 4096,
                                             modified: Date(), file: "out-a", content: Data(repeating: 7, count: 4096), checksum: nil)
        let after = logWrites(index)
        #expect(after.asked - before.asked >= 10, "a new file and its journal row should be several frames")
        #expect(after.made - before.made == 1)
        // Readers on other connections see it at once.
        #expect(try await index.child(of: opened.root.id, named: "a.txt") != nil)
    }

    @Test("transactions larger than the buffer, small ones after them, and a reopening read back every row intact")
    func largeAndSmallTransactionsReadBack() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let index = opened.index
        let blob = Data((0..<4096).map { UInt8($0 % 251) })
        // About 2 MiB of frames in one transaction: many buffers' worth.
        try await index.write { db in
            for n in 0..<400 {
                try db.execute(sql: "INSERT INTO journal (domain, item_id, file, size, created, next_attempt, content) VALUES ('d', ?, ?, 4096, 0, 0, ?)",
                               arguments: [opened.root.id, "big-\(n)", blob])
            }
        }
        for n in 0..<50 {
            _ = try await index.recordLocalWrite(existing: nil, parent: opened.root.id, domain: "d", name: "f\(n)", size: 4096,
                                                 modified: Date(), file: "out-\(n)", content: blob, checksum: nil)
        }
        #expect(try await index.children(of: opened.root.id, after: nil, limit: 100).count == 50)

        // A connection opened afterwards reads the file and its log intact.
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: opened.file.path, configuration: configuration)
        let (check, copies) = try await reader.read { db in
            (try String.fetchOne(db, sql: "PRAGMA integrity_check"),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM journal WHERE content = ?", arguments: [blob]))
        }
        #expect(check == "ok")
        #expect(copies == 450)
        try reader.close()
    }
}
