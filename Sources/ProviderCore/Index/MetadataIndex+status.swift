import Foundation
import GRDB

/// Counts for the status page, answered by the index in one read each.
extension MetadataIndex {
    public struct ItemCounts: Sendable, Codable, Equatable {
        public var files: Int
        public var folders: Int
        /// Files whose current version is in the cache.
        public var materialized: Int
        public var bytesListed: Int64
    }

    func counts(domain: String) async throws -> ItemCounts {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COALESCE(SUM(is_folder = 0), 0), COALESCE(SUM(is_folder = 1 AND parent_id IS NOT NULL), 0),
                       COALESCE(SUM(is_folder = 0 AND cached_version IS NOT NULL AND cached_version = upstream_version), 0),
                       COALESCE(SUM(CASE WHEN is_folder = 0 THEN size ELSE 0 END), 0)
                FROM item WHERE domain = ?
                """, arguments: [domain])!
            return ItemCounts(files: row[0], folders: row[1], materialized: row[2], bytesListed: row[3])
        }
    }

    /// Ids of the items carrying the property `namespace`/`name` (at most `limit`).
    func items(withProperty namespace: String, _ name: String, domain: String, limit: Int = 200) async throws -> [Int64] {
        try await pool.read { db in
            try Int64.fetchAll(db, sql: """
                SELECT item.id FROM dead_property JOIN item ON item.id = dead_property.item_id
                WHERE item.domain = ? AND dead_property.namespace = ? AND dead_property.name = ? ORDER BY item.id LIMIT ?
                """, arguments: [domain, namespace, name, limit])
        }
    }
}
