import Foundation
import PostgresNIO

/// WebDAV locks in the shared index: SQLite's operations
/// (`SQLiteIndex+locks.swift`), with the ancestors as one array parameter
/// instead of a list of placeholders. A lock is live while `expires` is
/// NULL or after `now`, the caller's clock, as in SQLite.
extension PostgresIndex {
    /// Locks that cover the item: its own, and depth-infinity locks of its
    /// ancestors (`ancestry` is root first, the item last). One statement,
    /// in the order of SQLite's two reads: the item's own locks, then the
    /// ancestors' by item id (SQLite reads them through `lock_by_item`).
    func locksCovering(ancestry: [Int64], now: Date) async throws -> [Lock] {
        guard let item = ancestry.last else { return [] }
        let ancestors = Array(ancestry.dropLast())
        let t = now.timeIntervalSince1970
        return try await read { transaction in
            try await transaction.rows("""
                SELECT \(unescaped: Lock.columns) FROM lock
                WHERE (item_id = \(item) OR (depth_infinity AND item_id = ANY(\(ancestors))))
                  AND (expires IS NULL OR expires > \(t))
                ORDER BY item_id <> \(item), item_id
                """).map(Lock.init(postgres:))
        }
    }

    /// Locks rooted strictly below the item (a depth-infinity LOCK, DELETE or
    /// MOVE of a folder must respect them).
    func locksBelow(_ id: Int64, now: Date) async throws -> [Lock] {
        let t = now.timeIntervalSince1970
        return try await read { transaction in
            try await transaction.rows("""
                WITH RECURSIVE sub(id) AS (SELECT id FROM item WHERE parent_id = \(id) UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                SELECT \(unescaped: Lock.columns) FROM lock WHERE item_id IN (SELECT id FROM sub) AND (expires IS NULL OR expires > \(t))
                """).map(Lock.init(postgres:))
        }
    }

    func lock(token: String, now: Date) async throws -> Lock? {
        let t = now.timeIntervalSince1970
        return try await read { transaction in
            try await transaction.rows("SELECT \(unescaped: Lock.columns) FROM lock WHERE token = \(token) AND (expires IS NULL OR expires > \(t))")
                .first.map(Lock.init(postgres:))
        }
    }

    /// Inserts a lock after checking for conflicts in the same transaction,
    /// so two clients racing for an exclusive lock cannot both win: `write`
    /// holds the `feed` row, so no other instance's grant runs between this
    /// check and this insert (no advisory lock needed while every writer
    /// takes that row). The candidates come in SQLite's order (the item's
    /// own locks, its ancestors' depth-infinity locks, then those below a
    /// depth-infinity lock's item; each group by item id, as SQLite reads
    /// them through `lock_by_item`), so the same clash is reported.
    func insertLock(_ lock: Lock, ancestry: [Int64], now: Date) async throws {
        let t = now.timeIntervalSince1970
        let ancestors = Array(ancestry.dropLast())
        try await write { transaction in
            try await transaction.execute("DELETE FROM lock WHERE expires IS NOT NULL AND expires <= \(t)")
            let candidates = try await transaction.rows("""
                WITH RECURSIVE sub(id) AS (
                    SELECT id FROM item WHERE parent_id = \(lock.itemID) AND \(lock.depthInfinity)
                    UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                SELECT \(unescaped: Lock.columns) FROM lock
                WHERE item_id = \(lock.itemID) OR (depth_infinity AND item_id = ANY(\(ancestors))) OR item_id IN (SELECT id FROM sub)
                ORDER BY CASE WHEN item_id = \(lock.itemID) THEN 0 WHEN item_id = ANY(\(ancestors)) THEN 1 ELSE 2 END, item_id
                """).map(Lock.init(postgres:))
            if let clash = candidates.first(where: { $0.conflicts(exclusive: lock.exclusive) }) {
                throw LockError.conflict(clash)
            }
            try await transaction.execute("""
                INSERT INTO lock (\(unescaped: Lock.columns)) VALUES (
                    \(lock.token), \(lock.itemID), \(lock.depthInfinity), \(lock.exclusive), \(lock.ownerXML),
                    \(lock.principal), \(lock.timeout.map(Self.seconds)), \(lock.expires?.timeIntervalSince1970), \(lock.createdItem),
                    \(lock.upstreamToken))
                """)
        }
    }

    /// `lock.timeout` is an `integer` column; SQLite's holds any Int. The
    /// longest lock granted is a setting, so clamp rather than trap: 2^31
    /// seconds is 68 years.
    private static func seconds(_ timeout: Int) -> Int32 { Int32(clamping: timeout) }

    /// A new timeout for a live lock; nil when the token names none (or
    /// only an expired one).
    func refreshLock(token: String, timeout: Int?, now: Date) async throws -> Lock? {
        let t = now.timeIntervalSince1970
        let expires = timeout.map { t + Double($0) }
        return try await write { transaction in
            try await transaction.rows("""
                UPDATE lock SET timeout = \(timeout.map(Self.seconds)), expires = \(expires)
                WHERE token = \(token) AND (expires IS NULL OR expires > \(t))
                RETURNING \(unescaped: Lock.columns)
                """).first.map(Lock.init(postgres:))
        }
    }

    /// Records the upstream's token of a mirrored lock.
    func setUpstreamToken(_ upstreamToken: String, of token: String) async throws {
        try await write { transaction in
            try await transaction.execute("UPDATE lock SET upstream_token = \(upstreamToken) WHERE token = \(token)")
        }
    }

    /// The live mirrored locks of a domain, to hand their upstream tokens
    /// back to the store after a restart.
    func mirroredLocks(domain: String, now: Date) async throws -> [Lock] {
        let t = now.timeIntervalSince1970
        return try await read { transaction in
            try await transaction.rows("""
                SELECT \(unescaped: Lock.columns) FROM lock
                WHERE item_id IN (SELECT id FROM item WHERE domain = \(domain)) AND upstream_token IS NOT NULL
                  AND (expires IS NULL OR expires > \(t))
                """).map(Lock.init(postgres:))
        }
    }

    /// Whether a lock went (false: the token named none).
    @discardableResult
    func removeLock(token: String) async throws -> Bool {
        try await write { transaction in
            let removed = try await transaction.rows("DELETE FROM lock WHERE token = \(token) RETURNING token")
            return !removed.isEmpty
        }
    }

    /// Whether any unexpired lock exists at all: PROPFIND skips the per-item
    /// lock lookups of `lockdiscovery` in the common case of none.
    ///
    /// Always asked of the database: SQLite remembers "none" until its own
    /// next `insertLock`, but here another instance may insert a lock at any
    /// moment, and a remembered "none" would let a write skip the lock check
    /// (docs/scale-out.md §2.6).
    func hasLiveLocks(now: Date) async throws -> Bool {
        let t = now.timeIntervalSince1970
        return try await read { transaction in
            try await transaction.first("SELECT EXISTS (SELECT 1 FROM lock WHERE expires IS NULL OR expires > \(t))", as: Bool.self) ?? false
        }
    }
}
