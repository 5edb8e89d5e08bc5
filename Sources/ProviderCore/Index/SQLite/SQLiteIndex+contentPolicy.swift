import Foundation
import GRDB

/// Content policies in the index: a column of the item that sets one, read
/// with inheritance by walking up the ancestor chain.
extension SQLiteIndex {
    /// Index v14: the policy column, what `g:pinned` meant moved into it, and
    /// a policy change recorded in the change feed like any property change.
    static func createContentPolicies(_ db: Database) throws {
        try db.execute(sql: """
            ALTER TABLE item ADD COLUMN content_policy TEXT;
            UPDATE item SET content_policy = 'eager' WHERE id IN (
                SELECT item_id FROM dead_property WHERE namespace = 'https://davgate.dev/ns' AND name = 'pinned');
            DELETE FROM dead_property WHERE namespace = 'https://davgate.dev/ns' AND name = 'pinned';
            CREATE TRIGGER change_item_policy AFTER UPDATE OF content_policy ON item
                WHEN NEW.parent_id IS NOT NULL AND OLD.content_policy IS NOT NEW.content_policy BEGIN
                INSERT INTO change (domain, item_id, parent_id, name, kind) VALUES (NEW.domain, NEW.id, NEW.parent_id, NEW.name, 'changed');
            END;
            """)
    }

    static func setContentPolicy(_ db: Database, _ policy: ContentPolicy?, of id: Int64) throws {
        try db.cachedStatement(sql: "UPDATE item SET content_policy = ? WHERE id = ?").execute(arguments: [policy?.rawValue, id])
    }

    /// The policy that applies to each of these items; items neither setting
    /// nor inheriting one are `lazy` (inherited). One walk up per item,
    /// stopping at the first policy met, so a page of a folder's members
    /// costs a few rows per member.
    func effectivePolicies(of ids: [Int64]) async throws -> [Int64: EffectivePolicy] {
        guard !ids.isEmpty else { return [:] }
        return try await read { db in
            var walk: [(start: Int64, policy: String, depth: Int)] = []
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let rows = try Row.fetchAll(db, sql: """
                    WITH RECURSIVE up(start, parent_id, policy, depth) AS (
                        SELECT id, parent_id, content_policy, 0 FROM item WHERE id IN (\(marks))
                        UNION ALL
                        SELECT up.start, item.parent_id, item.content_policy, up.depth + 1
                            FROM item JOIN up ON item.id = up.parent_id WHERE up.policy IS NULL)
                    SELECT start, policy, depth FROM up WHERE policy IS NOT NULL
                    """, arguments: StatementArguments(chunk))
                walk += rows.map { (start: $0[0], policy: $0[1], depth: $0[2]) }
            }
            return EffectivePolicy.resolved(ids, walk: walk)
        }
    }

    /// The domain's items that set `eager` themselves: the roots the
    /// background refresh walks.
    func eagerRoots(domain: String) async throws -> [Item] {
        try await read { db in
            try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE domain = ? AND content_policy = 'eager' ORDER BY id").items([domain])
        }
    }
}
