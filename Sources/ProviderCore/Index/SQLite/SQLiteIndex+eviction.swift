import Foundation
import GRDB

/// What eviction must know from the index: which items are kept (eager, or
/// under an eager folder; locked, or under a depth-infinity lock) and how to
/// turn a materialized item back into a placeholder.
extension SQLiteIndex {
    /// Ids of the domain's items that must keep their content: those whose
    /// content policy is `eager`, set or inherited (a member that sets
    /// another policy, and what is below it, is not kept for it), those
    /// covered by a live lock, and those local in a state the state machine
    /// does not evict (not uploaded yet, a conflict copy).
    func keptItems(domain: String, now: Date) async throws -> Set<Int64> {
        try await read { db in
            let ids = try Int64.fetchAll(db.cachedStatement(sql: """
                WITH RECURSIVE eager(id) AS (
                    SELECT id FROM item WHERE domain = ? AND content_policy = 'eager'
                    UNION SELECT item.id FROM item JOIN eager ON item.parent_id = eager.id
                        WHERE item.content_policy IS NULL OR item.content_policy = 'eager'
                ),
                locked(id) AS (
                    SELECT lock.item_id FROM lock JOIN item ON item.id = lock.item_id
                        WHERE item.domain = ? AND (lock.expires IS NULL OR lock.expires > ?)
                    UNION SELECT item.id FROM item JOIN locked ON item.parent_id = locked.id
                )
                SELECT id FROM eager UNION SELECT id FROM locked
                UNION SELECT id FROM item WHERE domain = ? AND state IN (\(Self.unevictable))
                """), arguments: [domain, domain, now.timeIntervalSince1970, domain])
            return Set(ids)
        }
    }

    /// Makes a materialized file a placeholder again (a placeholder's
    /// sparse ranges go without a change of state), unless its content
    /// changed since eviction chose it (`cachedVersion` then differs: a
    /// write landed, a newer version was fetched) or its state is one the
    /// machine does not evict. Returns whether it did; a file whose item is
    /// gone may always go.
    func markEvicted(id: Int64, cachedVersion: String?) async throws -> Bool {
        try await smallWrite { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT state, cached_version FROM item WHERE id = ?"), arguments: [id]) else { return true }
            let decision = EvictionDecision(state: row[0], cachedVersion: row[1], expected: cachedVersion)
            guard decision != .keep else { return false }
            if decision == .evict { try Self.advance(db, id: id, on: .evicted) }
            try db.cachedStatement(sql: "UPDATE item SET cached_version = NULL WHERE id = ?").execute(arguments: [id])
            return true
        }
    }

    /// Local states the machine refuses to evict, as an SQL list.
    static let unevictable = StoredState.unevictable
        .map { "'\($0.rawValue)'" }.joined(separator: ", ")

    /// The cached version recorded for each of these items the index still
    /// holds (a nil value: not cached); an id it no longer holds has no key.
    func cachedVersions(of ids: [Int64]) async throws -> [Int64: String?] {
        guard !ids.isEmpty else { return [:] }
        return try await read { db in
            var result: [Int64: String?] = [:]
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                for row in try Row.fetchAll(db, sql: "SELECT id, cached_version FROM item WHERE id IN (\(marks))",
                                            arguments: StatementArguments(chunk)) {
                    result[row[0]] = .some(row[1])
                }
            }
            return result
        }
    }
}
