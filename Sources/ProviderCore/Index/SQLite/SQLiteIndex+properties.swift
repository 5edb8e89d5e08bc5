import Foundation
import GRDB

extension SQLiteIndex {
    func deadProperties(of id: Int64) async throws -> [DeadProperty] {
        try await deadProperties(of: [id])[id] ?? []
    }

    /// Dead properties of many items at once (one query per PROPFIND page
    /// for those not cached); every id asked for has an answer.
    ///
    /// A batch larger than a few dozen is a listing's page: read past the
    /// cache, which it would only churn (a folder of 10,000 overran the
    /// cache's 4,096 entries every eighth page, and keeping each answer cost
    /// more than reading it).
    func deadProperties(of ids: [Int64]) async throws -> [Int64: [DeadProperty]] {
        guard !ids.isEmpty else { return [:] }
        func read(_ ids: [Int64]) throws -> [Int64: [DeadProperty]] {
            var found = try lookupStatement { db in try Self.deadProperties(db, of: ids) }
            for id in ids where found[id] == nil { found[id] = [] }
            return found
        }
        // A joiner of the open batch reads it, which nobody else may see.
        guard ids.count <= 64, !seesBatch else { return try read(ids) }
        return try properties.values(for: ids, read: read)
    }

    /// The items among `ids` that have dead properties, with them, in the
    /// order they were set.
    static func deadProperties(_ db: Database, of ids: [Int64]) throws -> [Int64: [DeadProperty]] {
        var found: [Int64: [DeadProperty]] = [:]
        let statement = try db.cachedStatement(sql: """
            SELECT item_id, namespace, name, xml FROM dead_property
            WHERE item_id IN (SELECT value FROM json_each(?)) ORDER BY rowid
            """)
        let rows = try Row.fetchCursor(statement, arguments: [jsonArray(ids)])
        while let row = try rows.next() {
            found[row[0], default: []].append(DeadProperty(namespace: row[1], name: row[2], xml: row[3]))
        }
        return found
    }

    /// Applies all changes in one transaction: PROPPATCH is atomic
    /// (RFC 4918 section 9.2), either every instruction takes effect or none.
    func applyPropertyChanges(_ changes: [PropertyChange], to id: Int64) async throws {
        try await smallWrite { db in
            for change in changes {
                switch change {
                case .set(let p):
                    try db.cachedStatement(sql: """
                        INSERT INTO dead_property (item_id, namespace, name, xml) VALUES (?, ?, ?, ?)
                        ON CONFLICT (item_id, namespace, name) DO UPDATE SET xml = excluded.xml
                        """).execute(arguments: [id, p.namespace, p.name, p.xml])
                case .remove(let namespace, let name):
                    try db.cachedStatement(sql: "DELETE FROM dead_property WHERE item_id = ? AND namespace = ? AND name = ?").execute(arguments: [id, namespace, name])
                case .contentPolicy(let policy):
                    try Self.setContentPolicy(db, policy, of: id)
                }
            }
        }
    }

    /// COPY carries dead properties to the copy (RFC 4918 section 9.8.2).
    func copyDeadProperties(from source: Int64, to destination: Int64) async throws {
        try await write { db in
            try db.cachedStatement(sql: "DELETE FROM dead_property WHERE item_id = ?").execute(arguments: [destination])
            try db.cachedStatement(sql: "INSERT INTO dead_property (item_id, namespace, name, xml) SELECT ?, namespace, name, xml FROM dead_property WHERE item_id = ?").execute(arguments: [destination, source])
        }
    }
}
