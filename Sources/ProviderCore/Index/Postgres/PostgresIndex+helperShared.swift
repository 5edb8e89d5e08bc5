import PostgresNIO

/// Statements of the index's operations not yet in `PostgresRows.swift`,
/// for every file of `PostgresIndex` to share.
extension PostgresTransaction {
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
}
