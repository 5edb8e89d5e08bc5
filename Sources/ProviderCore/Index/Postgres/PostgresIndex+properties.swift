import Foundation
import PostgresNIO

/// Dead properties in the shared index: SQLite's operations
/// (`SQLiteIndex+properties.swift`). No read cache: SQLite's is coherent
/// because every write is its own, while here another instance's PROPPATCH
/// would stay unseen until the entry expired (docs/scale-out.md §2.7).
extension PostgresIndex {
    func deadProperties(of id: Int64) async throws -> [DeadProperty] {
        try await deadProperties(of: [id])[id] ?? []
    }

    /// Dead properties of many items at once (one query per PROPFIND page);
    /// every id asked for has an answer. In the order they were first set:
    /// `seq`, which an upsert keeps, as SQLite keeps the rowid.
    func deadProperties(of ids: [Int64]) async throws -> [Int64: [DeadProperty]] {
        guard !ids.isEmpty else { return [:] }
        return try await read { transaction in
            var result = Dictionary(ids.map { ($0, [DeadProperty]()) }, uniquingKeysWith: { first, _ in first })
            for row in try await transaction.rows("""
                SELECT item_id, namespace, name, xml FROM dead_property WHERE item_id = ANY(\(ids)) ORDER BY seq
                """) {
                let (itemID, namespace, name, xml) = try row.decode((Int64, String, String, String).self)
                result[itemID, default: []].append(DeadProperty(namespace: namespace, name: name, xml: xml))
            }
            return result
        }
    }

    /// Applies all changes in one transaction: PROPPATCH is atomic
    /// (RFC 4918 section 9.2), either every instruction takes effect or none.
    func applyPropertyChanges(_ changes: [PropertyChange], to id: Int64) async throws {
        try await write { transaction in
            for change in changes {
                switch change {
                case .set(let p):
                    try await transaction.execute("""
                        INSERT INTO dead_property (item_id, namespace, name, xml) VALUES (\(id), \(p.namespace), \(p.name), \(p.xml))
                        ON CONFLICT (item_id, namespace, name) DO UPDATE SET xml = EXCLUDED.xml
                        """)
                case .remove(let namespace, let name):
                    try await transaction.execute("DELETE FROM dead_property WHERE item_id = \(id) AND namespace = \(namespace) AND name = \(name)")
                case .contentPolicy(let policy):
                    try await Self.setContentPolicy(transaction, policy, of: id)
                }
            }
        }
    }

    /// COPY carries dead properties to the copy (RFC 4918 section 9.8.2).
    /// The copies are made in the order SQLite makes them: its
    /// `INSERT … SELECT` reads the source through the primary key, so by
    /// namespace and name, byte by byte (`COLLATE "C"`), and that is the
    /// order the copy's properties are listed in afterwards.
    func copyDeadProperties(from source: Int64, to destination: Int64) async throws {
        try await write { transaction in
            try await transaction.execute("DELETE FROM dead_property WHERE item_id = \(destination)")
            try await transaction.execute("""
                INSERT INTO dead_property (item_id, namespace, name, xml)
                SELECT \(destination), namespace, name, xml FROM dead_property WHERE item_id = \(source)
                ORDER BY namespace COLLATE "C", name COLLATE "C"
                """)
        }
    }
}
