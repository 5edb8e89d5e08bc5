import Foundation

/// The item row's columns, in the order both indexes decode them
/// (`ItemColumns.swift` for SQLite, `PostgresRows.swift` for PostgreSQL).
extension Item {
    static let columns = "id, domain, parent_id, name, is_folder, size, modified, created, content_version, upstream_version, cached_version, executable, listed_at, checksum, checksum_version, state, tree_version"

    static let columnCount = columns.split(separator: ",").count

    /// The same columns named as `item.COLUMN`, for joins.
    static let qualifiedColumns = columns.split(separator: ",").map { "item." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
}
