import Foundation
import GRDB

extension SQLiteIndex {
    func deadProperties(of id: Int64) async throws -> [DeadProperty] {
        try await deadProperties(of: [id])[id] ?? []
    }

    /// Dead properties of many items at once (one query per PROPFIND page
    /// for those not cached); every id asked for has an answer.
    func deadProperties(of ids: [Int64]) async throws -> [Int64: [DeadProperty]] {
        guard !ids.isEmpty else { return [:] }
        return try properties.values(for: ids) { missing in
            try lookupStatement { db in
                var result = Dictionary(uniqueKeysWithValues: missing.map { ($0, [DeadProperty]()) })
                let marks = Array(repeating: "?", count: missing.count).joined(separator: ",")
                for row in try Row.fetchAll(db, sql: "SELECT item_id, namespace, name, xml FROM dead_property WHERE item_id IN (\(marks)) ORDER BY rowid", arguments: StatementArguments(missing)) {
                    result[row[0], default: []].append(DeadProperty(namespace: row[1], name: row[2], xml: row[3]))
                }
                return result
            }
        }
    }

    /// Applies all changes in one transaction: PROPPATCH is atomic
    /// (RFC 4918 section 9.2), either every instruction takes effect or none.
    func applyPropertyChanges(_ changes: [PropertyChange], to id: Int64) async throws {
        try await write { db in
            for change in changes {
                switch change {
                case .set(let p):
                    try db.execute(sql: """
                        INSERT INTO dead_property (item_id, namespace, name, xml) VALUES (?, ?, ?, ?)
                        ON CONFLICT (item_id, namespace, name) DO UPDATE SET xml = excluded.xml
                        """, arguments: [id, p.namespace, p.name, p.xml])
                case .remove(let namespace, let name):
                    try db.execute(sql: "DELETE FROM dead_property WHERE item_id = ? AND namespace = ? AND name = ?", arguments: [id, namespace, name])
                case .contentPolicy(let policy):
                    try Self.setContentPolicy(db, policy, of: id)
                }
            }
        }
    }

    /// COPY carries dead properties to the copy (RFC 4918 section 9.8.2).
    func copyDeadProperties(from source: Int64, to destination: Int64) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM dead_property WHERE item_id = ?", arguments: [destination])
            try db.execute(sql: "INSERT INTO dead_property (item_id, namespace, name, xml) SELECT ?, namespace, name, xml FROM dead_property WHERE item_id = ?", arguments: [destination, source])
        }
    }
}
