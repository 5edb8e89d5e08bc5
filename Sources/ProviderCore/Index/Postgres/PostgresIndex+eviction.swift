import Foundation
import PostgresNIO

/// What eviction must know from the shared index: which items are kept
/// (eager, or under an eager folder; locked, or under a depth-infinity
/// lock) and how to turn a materialized item back into a placeholder
/// (`SQLiteIndex+eviction.swift`).
///
/// Which content this instance's cache holds is its own holdings' to say
/// (`LocalHoldings`, docs/scale-out.md §2 row 8), not the shared row's:
/// one instance evicting its copy changes nothing for another. What is
/// kept is shared (a policy, a lock, a write waiting for its upload).
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
    ///
    /// Decided as SQLite decides it (`EvictionDecision`), from this
    /// instance's view: the holdings' entry as the cached version and the
    /// overlaid state. Evicting changes only the holdings; the shared row
    /// stays as it is for every other instance. A file whose entry no
    /// longer equals the row's version (another instance wrote or fetched
    /// a newer one) is a placeholder here, so it can go (`forget`) and
    /// never pins stale bytes in the budget.
    func markEvicted(id: Int64, cachedVersion: String?) async throws -> Bool {
        let row = try await read { transaction in
            try await transaction.rows("SELECT state, upstream_version FROM item WHERE id = \(id)").first
                .map { try $0.decode((String, String?).self) }
        }
        guard let (stored, upstreamVersion) = row else { return true }
        // Looked at and forgotten in one step of the holdings' writer: a
        // fetch or a write of this instance recording a new version between
        // the two would otherwise lose its entry.
        return try await holdings.forget(id) { held in
            // A state this davgate does not know stays as stored, and is kept.
            let seen = StoredState(rawValue: stored).map {
                LocalHoldings.state(stored: $0, upstreamVersion: upstreamVersion, held: held).rawValue
            } ?? stored
            return EvictionDecision(state: seen, cachedVersion: held, expected: cachedVersion) != .keep
        }
    }

    /// The version this instance's cache holds of each of these items the
    /// index still holds (a nil value: none known, or a file it cannot
    /// vouch for); an id it no longer holds has no key.
    func cachedVersions(of ids: [Int64]) async throws -> [Int64: String?] {
        guard !ids.isEmpty else { return [:] }
        let present = try await read { transaction in
            try await transaction.rows("SELECT id FROM item WHERE id = ANY(\(ids))").map { try $0.decode(Int64.self) }
        }
        var result: [Int64: String?] = [:]
        for id in present { result[id] = .some(holdings.version(of: id)) }
        return result
    }
}
