import Foundation
import PostgresNIO

/// Rows of the shared index as the provider's values, over the same column
/// lists as SQLite's (`Item.columns`, `Lock.columns`, `JournalEntry.columns`).
extension Item {
    init(postgres row: PostgresRow) throws {
        let (id, domain, parentID, name, isFolder, size, modified, created, contentVersion, upstreamVersion, cachedVersion,
             executable, listedAt, checksum, checksumVersion, state, treeVersion) =
            try row.decode((Int64, String, Int64?, String, Bool, Int64, Double, Double, Int64, String?, String?,
                            Bool, Double?, String?, Int64?, String, Int64).self)
        self.init(
            id: id, domain: domain, parentID: parentID, name: name,
            kind: isFolder ? .folder : .file,
            size: size,
            modified: Date(timeIntervalSince1970: modified),
            created: Date(timeIntervalSince1970: created),
            contentVersion: contentVersion, upstreamVersion: upstreamVersion, cachedVersion: cachedVersion,
            executable: executable,
            listedAt: listedAt.map { Date(timeIntervalSince1970: $0) },
            // Valid only for the content version it was computed for.
            checksum: checksumVersion == contentVersion ? checksum : nil,
            state: StoredState(rawValue: state) ?? .placeholder,
            treeVersion: treeVersion
        )
    }
}

extension Lock {
    init(postgres row: PostgresRow) throws {
        let (token, itemID, depthInfinity, exclusive, ownerXML, principal, timeout, expires, createdItem, upstreamToken) =
            try row.decode((String, Int64, Bool, Bool, String?, String, Int32?, Double?, Bool, String?).self)
        self.init(token: token, itemID: itemID, depthInfinity: depthInfinity, exclusive: exclusive, ownerXML: ownerXML,
                  principal: principal, timeout: timeout.map(Int.init), expires: expires.map { Date(timeIntervalSince1970: $0) },
                  createdItem: createdItem, upstreamToken: upstreamToken)
    }
}

extension JournalEntry {
    init(postgres row: PostgresRow) throws {
        let (seq, itemID, file, size, basis, created, attempts, lastError, failed) =
            try row.decode((Int64, Int64, String, Int64, String?, Double, Int32, String?, Bool).self)
        self.init(seq: seq, itemID: itemID, file: file, size: size, basis: basis, created: Date(timeIntervalSince1970: created),
                  attempts: Int(attempts), lastError: lastError, failed: failed)
    }
}

/// Statements several of the index's operations share, inside their transaction.
extension PostgresTransaction {
    /// An item row as this instance sees it: every item read from the
    /// shared index is decoded here, through this cache's holdings.
    func decode(_ row: PostgresRow) throws -> Item {
        holdings.overlay(try Item(postgres: row))
    }

    func item(id: Int64) async throws -> Item? {
        try await rows("SELECT \(unescaped: Item.columns) FROM item WHERE id = \(id)").first.map(decode)
    }

    /// An item the transaction has just written, read back: SQLite's
    /// `SQLiteIndex.item(_:id:)`, which force-unwraps; here a missing row
    /// throws instead of crashing the server.
    func existingItem(id: Int64) async throws -> Item {
        guard let item = try await item(id: id) else { throw ProviderError.notFound }
        return item
    }

    /// The id an `INSERT … RETURNING id` made: SQLite's `lastInsertedRowID`.
    func insertedID(_ query: PostgresQuery) async throws -> Int64 {
        guard let id = try await first(query, as: Int64.self) else {
            throw ProviderError.local("the index's insert returned no id")
        }
        return id
    }

    func items(_ query: PostgresQuery) async throws -> [Item] {
        try await rows(query).map(decode)
    }

    func child(of parent: Int64, named name: String) async throws -> Item? {
        try await rows("SELECT \(unescaped: Item.columns) FROM item WHERE parent_id = \(parent) AND name = \(name)").first.map(decode)
    }

    /// Moves an item's stored state by `event` through the state machine,
    /// in the caller's transaction (the row locked until it ends); an event
    /// the machine refuses throws, and the transaction rolls back.
    ///
    /// The shared row keeps only what is true on every instance: a clean
    /// file is `placeholder` there, whether or not a cache holds it (each
    /// instance's holdings say that, `LocalHoldings.overlay`), so the
    /// machine's `materialized` is stored as `placeholder`. Rows written
    /// before holdings existed may still say `materialized`, which the
    /// machine starts from as it is.
    @discardableResult
    func advance(id: Int64, on event: ItemStateMachine.Event) async throws -> ItemStateMachine.Action {
        guard let raw = try await first("SELECT state FROM item WHERE id = \(id) FOR UPDATE", as: String.self) else { return .none }
        var machine = ItemStateMachine(stored: StoredState(rawValue: raw) ?? .placeholder)
        let action = try machine.handle(event)
        let shared = machine.state.stored == .materialized ? StoredState.placeholder : machine.state.stored
        if shared.rawValue != raw {
            try await execute("UPDATE item SET state = \(shared.rawValue) WHERE id = \(id)")
        }
        return action
    }

    /// Records the checksum of an item's current content version (nil: none known).
    func recordChecksum(_ checksum: String?, of id: Int64) async throws {
        guard let checksum else { return }
        try await execute("UPDATE item SET checksum = \(checksum), checksum_version = content_version WHERE id = \(id)")
    }

    /// Deletes an item and everything below it (properties, locks and
    /// journal go by cascade); returns the ids whose cache files must go.
    func deleteSubtree(id: Int64) async throws -> [Int64] {
        let ids = try await rows("""
            WITH RECURSIVE sub(id) AS (SELECT \(id)::bigint UNION ALL SELECT item.id FROM item JOIN sub ON item.parent_id = sub.id)
            SELECT id FROM sub
            """).map { try $0.decode(Int64.self) }
        try await execute("DELETE FROM item WHERE id = \(id)")
        return ids
    }

    /// The names from the domain's root down to `id`.
    func path(of id: Int64) async throws -> ItemPath {
        try await rows("""
            WITH RECURSIVE up(id, parent_id, name, depth) AS (
                SELECT id, parent_id, name, 0 FROM item WHERE id = \(id)
                UNION ALL SELECT item.id, item.parent_id, item.name, up.depth + 1 FROM item JOIN up ON item.id = up.parent_id)
            SELECT name FROM up WHERE parent_id IS NOT NULL ORDER BY depth DESC
            """).map { try $0.decode(String.self) }
    }
}
