import Foundation
import PostgresNIO

/// Counts for the status page, answered by the shared index in one read
/// each (`SQLiteIndex+status.swift`).
extension PostgresIndex {
    /// How many items of the domain are in each stored state, the root aside.
    func storedStateCounts(domain: String) async throws -> [ItemState.Name: Int] {
        let rows = try await read { transaction in
            try await transaction.rows("SELECT state, count(*) FROM item WHERE domain = \(domain) AND parent_id IS NOT NULL GROUP BY state")
                .map { row in
                    let (state, count) = try row.decode((String, Int).self)
                    return (state: state, count: count)
                }
        }
        return StoredState.countsByName(rows)
    }

    /// (`sum` of a bigint is a numeric in PostgreSQL: cast back.)
    func bytesListed(domain: String) async throws -> Int64 {
        try await read { transaction in
            try await transaction.first("SELECT COALESCE(sum(size), 0)::bigint FROM item WHERE domain = \(domain) AND NOT is_folder",
                                        as: Int64.self) ?? 0
        }
    }

    /// Ids of the domain's items in a stored state (at most `limit`).
    func items(in state: StoredState, domain: String, limit: Int) async throws -> [Int64] {
        try await read { transaction in
            try await transaction.rows("SELECT id FROM item WHERE domain = \(domain) AND state = \(state.rawValue) ORDER BY id LIMIT \(limit)")
                .map { try $0.decode(Int64.self) }
        }
    }
}
