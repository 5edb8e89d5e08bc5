import Foundation
import PostgresNIO

/// The trash entries the domain knows of, in the shared index: each row is
/// the entry's sidecar as read or written upstream, so the trash lists
/// without reading them all again (`SQLiteIndex+trash.swift`).
extension PostgresIndex {
    /// Newest first; entries deleted at the same moment by name, byte by
    /// byte (`name` is `COLLATE "C"`), as SQLite orders them.
    func trashEntries(domain: String) async throws -> [TrashEntry] {
        try await read { transaction in
            try await transaction.rows("SELECT sidecar FROM trash_entry WHERE domain = \(domain) ORDER BY deleted_at DESC, name")
                .map { try TrashEntry.decoded($0.decode(Data.self)) }
        }
    }

    func trashEntry(domain: String, name: String) async throws -> TrashEntry? {
        try await read { transaction in
            try await transaction.first("SELECT sidecar FROM trash_entry WHERE domain = \(domain) AND name = \(name)", as: Data.self)
                .map(TrashEntry.decoded)
        }
    }

    /// Adds the entry, or replaces the one of the same name (SQLite's
    /// `INSERT OR REPLACE`).
    func insertTrashEntry(_ entry: TrashEntry, domain: String) async throws {
        let sidecar = try entry.encoded()
        try await write { transaction in
            try await transaction.execute("""
                INSERT INTO trash_entry (domain, name, deleted_at, size, sidecar)
                VALUES (\(domain), \(entry.name), \(entry.deletedAt.timeIntervalSince1970), \(entry.size), \(sidecar))
                ON CONFLICT (domain, name) DO UPDATE SET
                    deleted_at = EXCLUDED.deleted_at, size = EXCLUDED.size, sidecar = EXCLUDED.sidecar
                """)
        }
    }

    func deleteTrashEntries(_ names: [String], domain: String) async throws {
        guard !names.isEmpty else { return }
        try await write { transaction in
            try await transaction.execute("DELETE FROM trash_entry WHERE domain = \(domain) AND name = ANY(\(names))")
        }
    }

    /// Bytes of the files below a folder the index knows (a DELETE's
    /// entry size: folders never listed count nothing). (`sum` of a bigint
    /// is a numeric in PostgreSQL: cast back.)
    func bytesBelow(_ id: Int64) async throws -> Int64 {
        try await read { transaction in
            try await transaction.first("""
                WITH RECURSIVE sub(id) AS (SELECT \(id)::bigint UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                SELECT COALESCE(sum(size), 0)::bigint FROM item WHERE id IN (SELECT id FROM sub) AND NOT is_folder
                """, as: Int64.self) ?? 0
        }
    }
}
