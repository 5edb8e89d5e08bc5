import Foundation
import GRDB

/// The trash entries the domain knows of: each row is the entry's sidecar
/// as read or written upstream, so the trash lists without reading them
/// all again.
extension SQLiteIndex {
    static func createTrash(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE trash_entry (
                domain TEXT NOT NULL,
                name TEXT NOT NULL,
                deleted_at REAL NOT NULL,
                size INTEGER NOT NULL,
                sidecar BLOB NOT NULL,
                PRIMARY KEY (domain, name)
            )
            """)
    }

    func trashEntries(domain: String) async throws -> [TrashEntry] {
        try await read { db in
            try Data.fetchAll(db.cachedStatement(sql: "SELECT sidecar FROM trash_entry WHERE domain = ? ORDER BY deleted_at DESC, name"), arguments: [domain]).map(TrashEntry.decoded)
        }
    }

    func trashEntry(domain: String, name: String) async throws -> TrashEntry? {
        try await read { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT sidecar FROM trash_entry WHERE domain = ? AND name = ?"), arguments: [domain, name])
                .map(TrashEntry.decoded)
        }
    }

    func insertTrashEntry(_ entry: TrashEntry, domain: String) async throws {
        let sidecar = try entry.encoded()
        try await write { db in
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO trash_entry (domain, name, deleted_at, size, sidecar) VALUES (?, ?, ?, ?, ?)").execute(arguments: [domain, entry.name, entry.deletedAt.timeIntervalSince1970, entry.size, sidecar])
        }
    }

    func deleteTrashEntries(_ names: [String], domain: String) async throws {
        guard !names.isEmpty else { return }
        try await write { db in
            for name in names {
                try db.cachedStatement(sql: "DELETE FROM trash_entry WHERE domain = ? AND name = ?").execute(arguments: [domain, name])
            }
        }
    }

    /// Bytes of the files below a folder the index knows (a DELETE's
    /// entry size: folders never listed count nothing).
    func bytesBelow(_ id: Int64) async throws -> Int64 {
        try await read { db in
            try Int64.fetchOne(db.cachedStatement(sql: """
                \(Self.subtree)
                SELECT COALESCE(SUM(size), 0) FROM item WHERE id IN (SELECT id FROM sub) AND is_folder = 0
                """), arguments: [id]) ?? 0
        }
    }
}
