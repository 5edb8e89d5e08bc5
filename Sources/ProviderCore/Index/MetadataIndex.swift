import Foundation

/// The index, as the server and the offline commands open it: every
/// domain's items, dead properties, locks, write-back journal and change
/// feed.
///
/// Items form a tree of ids (domain, parent id, NFC name), like the File
/// Provider's item identifiers: a MOVE of a folder is one row update however
/// many items it holds.
///
/// Only opening it is public: the server hands it to each domain's
/// `Provider`, and the offline commands to `DomainStatus.read` and
/// `Provider.reset`. What it holds is read and changed through the provider
/// alone (`IndexStore`), which keeps it in step with the cache and the
/// upstream; which database holds it is this type's business only.
public struct MetadataIndex: Sendable {
    let store: any IndexStore

    /// Opens (and migrates) the SQLite database at `file`: the embedded
    /// default, one process.
    public init(file: URL) throws {
        store = try SQLiteIndex(file: file)
    }

    /// Opens an index only to read it, changing nothing (no migration), as
    /// `davgate status --offline` does beside a running server.
    /// - Throws: `IndexVersionError` when its schema is not this davgate's.
    public init(readingOnly file: URL) throws {
        store = try SQLiteIndex(readingOnly: file)
    }

    /// Gives back what the index holds only to be faster (page caches,
    /// prepared statements, recent answers); called when the server has
    /// been quiet for a while.
    public func releaseMemory() {
        store.releaseMemory()
    }

    public struct IndexVersionError: Error, CustomStringConvertible {
        /// The database: a file's path.
        public let location: String
        public var description: String {
            "\(location) was written by another davgate version; start this davgate's server once to bring it up to date"
        }
    }

    public struct IndexTooNewError: Error, CustomStringConvertible {
        /// The database: a file's path.
        public let location: String
        public var description: String {
            "\(location) was brought up to date by a newer davgate, whose index this version cannot keep right; run that version, or move the state folder aside to start afresh (the upstream keeps every uploaded file)"
        }
    }
}
