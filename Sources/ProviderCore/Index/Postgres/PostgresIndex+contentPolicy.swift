import Foundation
import PostgresNIO

/// Content policies in the shared index: a column of the item that sets
/// one, read with inheritance by walking up the ancestor chain
/// (`SQLiteIndex+contentPolicy.swift`). The schema's `change_item_policy`
/// trigger records a policy change in the change feed.
extension PostgresIndex {
    static func setContentPolicy(_ transaction: PostgresTransaction, _ policy: ContentPolicy?, of id: Int64) async throws {
        try await transaction.execute("UPDATE item SET content_policy = \(policy?.rawValue) WHERE id = \(id)")
    }

    /// The policy that applies to each of these items; items neither setting
    /// nor inheriting one are `lazy` (inherited). One walk up per item,
    /// stopping at the first policy met, so a page of a folder's members
    /// costs a few rows per member; all the walks in one statement.
    func effectivePolicies(of ids: [Int64]) async throws -> [Int64: EffectivePolicy] {
        guard !ids.isEmpty else { return [:] }
        let walk = try await read { transaction in
            try await transaction.rows("""
                WITH RECURSIVE up(start, parent_id, policy, depth) AS (
                    SELECT id, parent_id, content_policy, 0 FROM item WHERE id = ANY(\(ids))
                    UNION ALL
                    SELECT up.start, item.parent_id, item.content_policy, up.depth + 1
                        FROM item JOIN up ON item.id = up.parent_id WHERE up.policy IS NULL)
                SELECT start, policy, depth FROM up WHERE policy IS NOT NULL
                """).map { row in
                let (start, policy, depth) = try row.decode((Int64, String, Int).self)
                return (start: start, policy: policy, depth: depth)
            }
        }
        return EffectivePolicy.resolved(ids, walk: walk)
    }

    /// The domain's items that set `eager` themselves: the roots the
    /// background refresh walks.
    func eagerRoots(domain: String) async throws -> [Item] {
        try await read { transaction in
            try await transaction.items("SELECT \(unescaped: Item.columns) FROM item WHERE domain = \(domain) AND content_policy = 'eager' ORDER BY id")
        }
    }
}
