import Foundation
import PostgresNIO

/// Counts for the status page, answered by the shared index in one read
/// each (`SQLiteIndex+status.swift`).
extension PostgresIndex {
    /// How many items of the domain are in each stored state, the root
    /// aside, as this instance sees them: `materialized` counts the clean
    /// files whose current version this instance's cache holds (its
    /// holdings), `placeholder` the other clean files; another instance's
    /// counts of the same index differ in these two.
    func storedStateCounts(domain: String) async throws -> [ItemState.Name: Int] {
        let held = holdings.all()
        let clean = [StoredState.placeholder.rawValue, StoredState.materialized.rawValue]
        let (rows, local) = try await snapshot { transaction in
            let rows = try await transaction.rows("SELECT state, count(*) FROM item WHERE domain = \(domain) AND parent_id IS NOT NULL GROUP BY state")
                .map { row in
                    let (state, count) = try row.decode((String, Int).self)
                    return (state: state, count: count)
                }
            let local = held.isEmpty ? 0 : try await transaction.first("""
                SELECT count(*) FROM item JOIN unnest(\(Array(held.keys)), \(Array(held.values))) AS held(id, version)
                    ON item.id = held.id AND item.upstream_version = held.version
                WHERE item.domain = \(domain) AND item.parent_id IS NOT NULL AND item.state = ANY(\(clean))
                """, as: Int.self) ?? 0
            return (rows, local)
        }
        var counts = StoredState.countsByName(rows.filter { !clean.contains($0.state) })
        let files = rows.filter { clean.contains($0.state) }.reduce(0) { $0 + $1.count }
        // As the rows grouped by state give them: no state with no item.
        if local > 0 { counts[.materialized] = local }
        if files > local { counts[.placeholder] = files - local }
        return counts
    }

    /// (`sum` of a bigint is a numeric in PostgreSQL: cast back.)
    func bytesListed(domain: String) async throws -> Int64 {
        try await read { transaction in
            try await transaction.first("SELECT COALESCE(sum(size), 0)::bigint FROM item WHERE domain = \(domain) AND NOT is_folder",
                                        as: Int64.self) ?? 0
        }
    }

    /// Ids of the domain's items in a stored state (at most `limit`), as
    /// the shared row has it (clean files are all `placeholder` there):
    /// the provider asks it for conflict copies only.
    func items(in state: StoredState, domain: String, limit: Int) async throws -> [Int64] {
        try await read { transaction in
            try await transaction.rows("SELECT id FROM item WHERE domain = \(domain) AND state = \(state.rawValue) ORDER BY id LIMIT \(limit)")
                .map { try $0.decode(Int64.self) }
        }
    }
}
