import Foundation
import GRDB
import NIOConcurrencyHelpers

extension Lock {
    static let columns = "token, item_id, depth_infinity, exclusive, owner_xml, principal, timeout, expires, created_item, upstream_token"

    init(row: Row) {
        self.init(token: row[0], itemID: row[1], depthInfinity: row[2], exclusive: row[3], ownerXML: row[4],
                  principal: row[5], timeout: row[6], expires: (row[7] as Double?).map { Date(timeIntervalSince1970: $0) },
                  createdItem: row[8], upstreamToken: row[9])
    }
}

extension SQLiteIndex {
    private static let live = "(expires IS NULL OR expires > ?)"

    /// Locks that cover the item: its own, and depth-infinity locks of its
    /// ancestors (`ancestry` is root first, the item last).
    func locksCovering(ancestry: [Int64], now: Date) async throws -> [Lock] {
        guard let item = ancestry.last else { return [] }
        let ancestors = ancestry.dropLast()
        return try lookup { db in
            var locks = try Row.fetchAll(db.cachedStatement(sql: "SELECT \(Lock.columns) FROM lock WHERE item_id = ? AND \(Self.live)"),
                                         arguments: [item, now.timeIntervalSince1970]).map(Lock.init(row:))
            if !ancestors.isEmpty {
                let marks = Array(repeating: "?", count: ancestors.count).joined(separator: ",")
                var args = StatementArguments(Array(ancestors))
                args += [now.timeIntervalSince1970]
                locks += try Row.fetchAll(db.makeStatement(sql: "SELECT \(Lock.columns) FROM lock WHERE depth_infinity = 1 AND item_id IN (\(marks)) AND \(Self.live)"),
                                          arguments: args).map(Lock.init(row:))
            }
            return locks
        }
    }

    /// Locks rooted strictly below the item (a depth-infinity LOCK, DELETE or
    /// MOVE of a folder must respect them).
    func locksBelow(_ id: Int64, now: Date) async throws -> [Lock] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                WITH RECURSIVE sub(id) AS (SELECT id FROM item WHERE parent_id = ? UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                SELECT \(Lock.columns) FROM lock WHERE item_id IN (SELECT id FROM sub) AND \(Self.live)
                """), arguments: [id, now.timeIntervalSince1970]).map(Lock.init(row:))
        }
    }

    func lock(token: String, now: Date) async throws -> Lock? {
        try lookupStatement { db in
            try Row.fetchOne(try db.cachedStatement(sql: "SELECT \(Lock.columns) FROM lock WHERE token = ? AND \(Self.live)"), arguments: [token, now.timeIntervalSince1970]).map(Lock.init(row:))
        }
    }

    /// Inserts a lock after checking for conflicts in the same transaction,
    /// so two clients racing for an exclusive lock cannot both win.
    func insertLock(_ lock: Lock, ancestry: [Int64], now: Date) async throws {
        // Before the write and again after it: a `hasLiveLocks` that read
        // the table while this insert was on its way must not remember
        // "none" past the commit (lock checks rely on it).
        let joining = !lock.depthInfinity && DurabilityScope.current?.joinsBatch == true
        let marked = { self.lockState.withLockedValue { state in
            state.lockMayExist()
            if joining { state.inOpenBatch = true }
        } }
        marked()
        defer { marked() }
        try await write(small: !lock.depthInfinity) { db in
            let t = now.timeIntervalSince1970
            try db.cachedStatement(sql: "DELETE FROM lock WHERE expires IS NOT NULL AND expires <= ?").execute(arguments: [t])
            let ancestors = Array(ancestry.dropLast())
            var conflicting = try Row.fetchAll(try db.cachedStatement(sql: "SELECT \(Lock.columns) FROM lock WHERE item_id = ?"), arguments: [lock.itemID]).map(Lock.init(row:))
            if !ancestors.isEmpty {
                let marks = Array(repeating: "?", count: ancestors.count).joined(separator: ",")
                conflicting += try Row.fetchAll(db, sql: "SELECT \(Lock.columns) FROM lock WHERE depth_infinity = 1 AND item_id IN (\(marks))",
                                                arguments: StatementArguments(ancestors)).map(Lock.init(row:))
            }
            if lock.depthInfinity {
                conflicting += try Row.fetchAll(db.cachedStatement(sql: """
                    WITH RECURSIVE sub(id) AS (SELECT id FROM item WHERE parent_id = ? UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
                    SELECT \(Lock.columns) FROM lock WHERE item_id IN (SELECT id FROM sub)
                    """), arguments: [lock.itemID]).map(Lock.init(row:))
            }
            if let clash = conflicting.first(where: { $0.conflicts(exclusive: lock.exclusive) }) {
                throw LockError.conflict(clash)
            }
            try db.cachedStatement(sql: "INSERT INTO lock (\(Lock.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").execute(arguments: [lock.token, lock.itemID, lock.depthInfinity, lock.exclusive, lock.ownerXML,
                                       lock.principal, lock.timeout, lock.expires?.timeIntervalSince1970, lock.createdItem,
                                       lock.upstreamToken])
        }
    }

    func refreshLock(token: String, timeout: Int?, now: Date) async throws -> Lock? {
        try await smallWrite { db in
            let expires = timeout.map { now.timeIntervalSince1970 + Double($0) }
            try db.cachedStatement(sql: "UPDATE lock SET timeout = ?, expires = ? WHERE token = ? AND \(Self.live)").execute(arguments: [timeout, expires, token, now.timeIntervalSince1970])
            guard db.changesCount > 0 else { return nil }
            return try Row.fetchOne(try db.cachedStatement(sql: "SELECT \(Lock.columns) FROM lock WHERE token = ?"), arguments: [token]).map(Lock.init(row:))
        }
    }

    /// Records the upstream's token of a mirrored lock.
    func setUpstreamToken(_ upstreamToken: String, of token: String) async throws {
        try await smallWrite { db in
            try db.cachedStatement(sql: "UPDATE lock SET upstream_token = ? WHERE token = ?").execute(arguments: [upstreamToken, token])
        }
    }

    /// The live mirrored locks of a domain, to hand their upstream tokens
    /// back to the store after a restart.
    func mirroredLocks(domain: String, now: Date) async throws -> [Lock] {
        try await read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT \(Lock.columns) FROM lock
                WHERE item_id IN (SELECT id FROM item WHERE domain = ?) AND upstream_token IS NOT NULL AND \(Self.live)
                """), arguments: [domain, now.timeIntervalSince1970]).map(Lock.init(row:))
        }
    }

    @discardableResult
    func removeLock(token: String) async throws -> Bool {
        try await smallWrite { db in
            try db.cachedStatement(sql: "DELETE FROM lock WHERE token = ?").execute(arguments: [token])
            return db.changesCount > 0
        }
    }
}

extension SQLiteIndex {
    /// Whether any unexpired lock exists at all: PROPFIND skips the per-item
    /// lock lookups of `lockdiscovery` in the common case of none.
    ///
    /// Once no live lock was seen, none can appear but through `insertLock`
    /// (expiry and deletion only remove), so the answer is remembered until
    /// then PROPFIND's `lockdiscovery`, the uploader's holding back of
    /// locked files and a write's lock check skip their reads too. A lock
    /// inserted while one of them looked is the same race as one inserted
    /// just after; for enforcement there is none, since a write's commit
    /// and a lock's grant both run under the domain's coordination, and
    /// `insertLock` clears the answer before it writes and again once it
    /// committed (a read that overlapped the insert cannot leave "none"
    /// behind). (Valid while one process writes the index; a shared index
    /// will need its own signal.)
    func hasLiveLocks(now: Date) async throws -> Bool {
        let before = lockState.withLockedValue { $0 }
        if before.none, !before.inOpenBatch { return false }
        let any = try lookupStatement { db in
            try Bool.fetchOne(try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM lock WHERE \(Self.live))"), arguments: [now.timeIntervalSince1970]) ?? false
        }
        if !any {
            lockState.withLockedValue { state in
                // Not if a lock was inserted while we were reading, nor
                // while one waits uncommitted, which this read did not see.
                if state.insertions == before.insertions, !state.inOpenBatch { state.none = true }
            }
        }
        return any
    }
}
