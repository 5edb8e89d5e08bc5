import Foundation
import GRDB

/// Counts for the status page, answered by the index in one read each.
extension SQLiteIndex {
    /// How many items of the domain are in each stored state, the root aside.
    func storedStateCounts(domain: String) async throws -> [ItemState.Name: Int] {
        try await read { db in
            let rows = try Row.fetchAll(db.cachedStatement(sql: "SELECT state, COUNT(*) FROM item WHERE domain = ? AND parent_id IS NOT NULL GROUP BY state"), arguments: [domain])
            return StoredState.countsByName(rows.map { (state: $0[0], count: $0[1]) })
        }
    }

    func bytesListed(domain: String) async throws -> Int64 {
        try await read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(SUM(size), 0) FROM item WHERE domain = ? AND is_folder = 0"), arguments: [domain]) ?? 0
        }
    }

    /// Ids of the domain's items in a stored state (at most `limit`).
    func items(in state: StoredState, domain: String, limit: Int) async throws -> [Int64] {
        try await read { db in
            try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM item WHERE domain = ? AND state = ? ORDER BY id LIMIT ?"), arguments: [domain, state.rawValue, limit])
        }
    }
}
