import Foundation
import PostgresNIO

/// What eviction must know from the shared index: which items are kept
/// (eager, or under an eager folder; locked, or under a depth-infinity
/// lock) and how to turn a materialized item back into a placeholder
/// (`SQLiteIndex+eviction.swift`).
///
/// Still the row's `cached_version` and `materialized` state, as in SQLite:
/// with several instances they are facts of one instance's cache and move
/// to its own store (docs/scale-out.md §2.8), which these operations will
/// then read and write instead.
extension PostgresIndex {
    /// Ids of the domain's items that must keep their content: those whose
    /// content policy is `eager`, set or inherited (a member that sets
    /// another policy, and what is below it, is not kept for it), those
    /// covered by a live lock, and those local in a state the state machine
    /// does not evict (not uploaded yet, a conflict copy).
    func keptItems(domain: String, now: Date) async throws -> Set<Int64> {
        let unevictable = StoredState.unevictable.map(\.rawValue)
        return try await read { transaction in
            Set(try await transaction.rows("""
                WITH RECURSIVE eager(id) AS (
                    SELECT id FROM item WHERE domain = \(domain) AND content_policy = 'eager'
                    UNION SELECT item.id FROM item JOIN eager ON item.parent_id = eager.id
                        WHERE item.content_policy IS NULL OR item.content_policy = 'eager'
                ),
                locked(id) AS (
                    SELECT lock.item_id FROM lock JOIN item ON item.id = lock.item_id
                        WHERE item.domain = \(domain) AND (lock.expires IS NULL OR lock.expires > \(now.timeIntervalSince1970))
                    UNION SELECT item.id FROM item JOIN locked ON item.parent_id = locked.id
                )
                SELECT id FROM eager UNION SELECT id FROM locked
                UNION SELECT id FROM item WHERE domain = \(domain) AND state = ANY(\(unevictable))
                """).map { try $0.decode(Int64.self) })
        }
    }

    /// Makes a materialized file a placeholder again (a placeholder's
    /// sparse ranges go without a change of state), unless its content
    /// changed since eviction chose it (`cachedVersion` then differs: a
    /// write landed, a newer version was fetched) or its state is one the
    /// machine does not evict. Returns whether it did; a file whose item is
    /// gone may always go.
    func markEvicted(id: Int64, cachedVersion: String?) async throws -> Bool {
        try await write { transaction in
            let rows = try await transaction.rows("SELECT state, cached_version FROM item WHERE id = \(id) FOR UPDATE")
            guard let row = rows.first else { return true }
            let (state, current) = try row.decode((String, String?).self)
            let decision = EvictionDecision(state: state, cachedVersion: current, expected: cachedVersion)
            guard decision != .keep else { return false }
            if decision == .evict { try await transaction.advance(id: id, on: .evicted) }
            try await transaction.execute("UPDATE item SET cached_version = NULL WHERE id = \(id)")
            return true
        }
    }

    /// The cached version recorded for each of these items the index still
    /// holds (a nil value: not cached); an id it no longer holds has no key.
    func cachedVersions(of ids: [Int64]) async throws -> [Int64: String?] {
        guard !ids.isEmpty else { return [:] }
        return try await read { transaction in
            var result: [Int64: String?] = [:]
            for row in try await transaction.rows("SELECT id, cached_version FROM item WHERE id = ANY(\(ids))") {
                let (id, version) = try row.decode((Int64, String?).self)
                result[id] = .some(version)
            }
            return result
        }
    }
}
