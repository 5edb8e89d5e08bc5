import Foundation
import GRDB
import GRDBSQLite
@testable import ProviderCore
import Testing

/// The index's writes run in transactions whose `BEGIN` and `COMMIT` come
/// from the writer's statement cache (`SQLiteIndex.transaction`), and a
/// write that fails leaves nothing behind.
@Suite("Index transactions")
struct CachedTransactionTests {
    private struct Refused: Error {}

    /// How many times the writer connection has run its cached `BEGIN` and
    /// `COMMIT` statements.
    private func runs(_ index: SQLiteIndex) throws -> (begin: Int32, commit: Int32) {
        try index.pool.writeWithoutTransaction { db in
            let begin = try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION")
            let commit = try db.cachedStatement(sql: "COMMIT TRANSACTION")
            return (sqlite3_stmt_status(begin.sqliteStatement, SQLITE_STMTSTATUS_RUN, 0),
                    sqlite3_stmt_status(commit.sqliteStatement, SQLITE_STMTSTATUS_RUN, 0))
        }
    }

    private func insertJournalRow(_ db: Database, _ opened: TemporarySQLiteIndex, _ file: String) throws {
        try db.execute(sql: "INSERT INTO journal (domain, item_id, file, size, created, next_attempt) VALUES ('d', ?, ?, 0, 0, 0)",
                       arguments: [opened.root.id, file])
    }

    private func journalFiles(_ index: SQLiteIndex) throws -> [String] {
        try index.pool.read { db in try String.fetchAll(db, sql: "SELECT file FROM journal ORDER BY file") }
    }

    @Test("small writes in place and queued writes begin and commit with the cached statements")
    func beginAndCommitAreCached() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let index = opened.index
        let before = try runs(index)
        for n in 0..<10 {
            _ = try await index.recordLocalWrite(existing: nil, parent: opened.root.id, domain: "d", name: "f\(n)", size: 4,
                                                 modified: Date(), file: "out-\(n)", content: Data("abcd".utf8), checksum: "SHA1:00")
            try await index.write { db in try insertJournalRow(db, opened, "queued-\(n)") }
        }
        let after = try runs(index)
        #expect(after.begin - before.begin == 20)
        #expect(after.commit - before.commit == 20)
        // The checksum goes in with the new row, valid for its first content.
        let item = try #require(try await index.child(of: opened.root.id, named: "f3"))
        let stored = try index.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT checksum, checksum_version, content_version FROM item WHERE id = ?", arguments: [item.id])
        }
        #expect(stored?["checksum"] == "SHA1:00")
        #expect(stored?["checksum_version"] == stored?["content_version"] as Int64?)
    }

    @Test("a write that throws leaves none of its rows, and the next write commits")
    func failedWriteRollsBack() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let index = opened.index
        await #expect(throws: Refused.self) {
            try await index.smallWrite { db in
                try insertJournalRow(db, opened, "in-place")
                throw Refused()
            }
        }
        await #expect(throws: Refused.self) {
            try await index.write { db in
                try insertJournalRow(db, opened, "queued")
                throw Refused()
            }
        }
        // A statement SQLite refuses (a second row for the domain's root).
        await #expect(throws: DatabaseError.self) {
            try await index.write { db in
                try insertJournalRow(db, opened, "before-the-error")
                try db.execute(sql: "INSERT INTO item (domain, parent_id, name, is_folder, modified, created) VALUES ('d', NULL, '', 1, 0, 0)")
            }
        }
        #expect(try journalFiles(index) == [])
        try await index.smallWrite { db in try insertJournalRow(db, opened, "after") }
        #expect(try journalFiles(index) == ["after"])
        let inside = try await index.pool.writeWithoutTransaction { db in db.isInsideTransaction }
        #expect(!inside)
    }
}
