import Foundation
import GRDB
import GRDBSQLite

/// Items, or any columns, read straight from a statement's rows (an item's
/// as `Item.columns`, in order, first), stepping the statement with
/// SQLite's own calls.
///
/// GRDB's `Row` fetch allocates a cursor and a row per statement and
/// decodes each column through its generic conversions: in a burst of small
/// PUTs, whose every lookup reads an item or a few (the path's chain, the
/// target), that was a third of a lookup's time (issue 14's profile). These
/// statements are reads whose SQL names its columns, so GRDB's bookkeeping
/// around a step (schema cache, transaction observers) has nothing to do
/// for them. The statement is reset at the end, however the steps ended:
/// that ends the read (a statement left on a row holds its snapshot), and
/// clears a failed step's error, on which GRDB's next binding would trap.
extension Statement {
    /// The item of the first row, if any.
    func item(_ arguments: StatementArguments) throws -> Item? {
        var found: Item?
        try forEachItem(arguments) { item, _ in
            found = item
            return false
        }
        return found
    }

    /// The items of every row.
    func items(_ arguments: StatementArguments) throws -> [Item] {
        var found: [Item] = []
        try forEachItem(arguments) { item, _ in
            found.append(item)
            return true
        }
        return found
    }

    /// Each row's item, with the row's columns after the item's; `body`
    /// returns false to stop.
    func forEachItem(_ arguments: StatementArguments, _ body: (Item, ItemRowRest) throws -> Bool) throws {
        try forEachRow(arguments) { statement in try body(Item(columnsOf: statement), ItemRowRest(statement: statement)) }
    }

    /// Steps through the rows; `body` reads each row's columns from the
    /// statement with SQLite's calls, and returns false to stop.
    func forEachRow(_ arguments: StatementArguments, _ body: (SQLiteStatement) throws -> Bool) throws {
        // Checked against the statement's parameters, as GRDB's fetches do.
        try setArguments(arguments)
        let statement = sqliteStatement
        defer { sqlite3_reset(statement) }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                guard try body(statement) else { return }
            case SQLITE_DONE:
                return
            case let code:
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(statement))),
                                    sql: sql, arguments: arguments)
            }
        }
    }
}

/// The columns of a row after the item's.
struct ItemRowRest {
    fileprivate let statement: SQLiteStatement

    /// The integer in the `offset`-th column after the item's.
    func integer(_ offset: Int) -> Int64 {
        sqlite3_column_int64(statement, Int32(Item.columnCount + offset))
    }
}

extension Item {
    /// The item in a row's first columns (`Item.columns`).
    fileprivate init(columnsOf statement: SQLiteStatement) {
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }
        func text(_ column: Int32) -> String? {
            guard let bytes = sqlite3_column_text(statement, column) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
        }
        let contentVersion = integer(8)
        self.init(
            id: integer(0), domain: text(1) ?? "", parentID: isNull(2) ? nil : integer(2), name: text(3) ?? "",
            kind: integer(4) != 0 ? .folder : .file,
            size: integer(5),
            modified: Date(timeIntervalSince1970: real(6)),
            created: Date(timeIntervalSince1970: real(7)),
            contentVersion: contentVersion, upstreamVersion: text(9), cachedVersion: text(10),
            executable: integer(11) != 0,
            listedAt: isNull(12) ? nil : Date(timeIntervalSince1970: real(12)),
            // Valid only for the content version it was computed for.
            checksum: !isNull(14) && integer(14) == contentVersion ? text(13) : nil,
            state: text(15).flatMap(StoredState.init(rawValue:)) ?? .placeholder,
            treeVersion: integer(16)
        )
    }
}
