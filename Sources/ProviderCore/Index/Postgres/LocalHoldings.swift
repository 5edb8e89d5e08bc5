import Foundation
import GRDB
import NIOConcurrencyHelpers

/// Which upstream version of each item this instance's content cache
/// holds: the per-instance facts a shared index must not keep in its
/// shared rows (docs/scale-out.md §2 row 8). Every instance has its own
/// cache folder, so "the file of item 42 holds version V1" is true on one
/// instance and false on the next; with it in the shared row, B served the
/// V1 bytes it still had after A fetched or wrote V2 and set the row to
/// materialized with `cached_version = V2`.
///
/// The store is a small SQLite file beside the cache (`held(item_id,
/// version)`), mirrored in a locked dictionary: items are decoded with it
/// on every read of the shared index (`overlay`), so a look-up must cost
/// no more than a hash probe. Each change writes the file and the mirror
/// in one step of the file's serial writer, so the two change in the same
/// order.
///
/// What a lost or stale entry costs, and why that is always safe: an item
/// counts as materialized here only while its held version *equals* the
/// shared row's current upstream version, and every change of content in
/// the cluster changes that version. So an entry the file failed to take
/// (or lost to a power cut: the file is synced at the log's checkpoints,
/// not at each change) costs one fetch, and an entry for bytes the row has
/// moved past (a write through another instance, a listing that saw a new
/// version) makes the item a placeholder here, whose next read fetches
/// anew over the old file. Item ids are the shared table's identity
/// values, never reused, so an entry of a deleted item matches nothing;
/// and the file remembers which database it was kept for (`feed.identity`),
/// so pointing the instance at another database starts it empty.
final class LocalHoldings: Sendable {
    /// nil: nothing to keep (opened only to read, and there is no file).
    private let database: DatabasePool?
    private let held: NIOLockedValueBox<[Int64: String]>

    /// Opens (and creates) the holdings file of the instance's cache; the
    /// index then calls `adopt(identity:)` before it reads an item.
    /// - Parameter file: `holdings.sqlite` in the state folder.
    init(file: URL) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // A crash of the process loses nothing; a power cut may lose
            // the last changes, which is safe (see the type's comment).
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let database = try DatabasePool(path: file.path, configuration: configuration)
        try Self.migrator.migrate(database)
        self.database = database
        held = NIOLockedValueBox(try database.read(Self.load))
    }

    /// Reads the holdings file without changing it (`davgate status
    /// --offline` beside a running server); no file, or one that cannot be
    /// read, holds nothing.
    init(readingOnly file: URL?) {
        var loaded: [Int64: String] = [:]
        if let file, FileManager.default.fileExists(atPath: file.path) {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(10)
            if let reader = try? DatabaseQueue(path: file.path, configuration: configuration),
               let rows = try? reader.read({ db in try Self.load(db) }) {
                loaded = rows
            }
        }
        database = nil
        held = NIOLockedValueBox(loaded)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE held (item_id INTEGER PRIMARY KEY, version TEXT NOT NULL);
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """)
        }
        return migrator
    }

    private static func load(_ db: Database) throws -> [Int64: String] {
        var rows: [Int64: String] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT item_id, version FROM held")) {
            rows[row[0]] = row[1]
        }
        return rows
    }

    // MARK: Reading

    /// The version the cache holds for the item, nil when none is known.
    func version(of id: Int64) -> String? {
        held.withLockedValue { $0[id] }
    }

    /// Every entry: for counts over many items (the status page).
    func all() -> [Int64: String] {
        held.withLockedValue { $0 }
    }

    /// The item as this instance sees it: the shared row's facts with this
    /// cache's in place of `cachedVersion` and of the clean states.
    ///
    /// - `placeholder`, `materialized` (the shared row keeps clean files as
    ///   `placeholder`; `materialized` only in rows written before holdings
    ///   existed): materialized exactly when the held version equals the
    ///   row's upstream version, else a placeholder, whose next read
    ///   fetches the current version over whatever the file still has.
    /// - `conflict`: kept. Whether a file is a conflict copy is shared (it
    ///   is never evicted, on any instance, until someone resolves it), and
    ///   its bytes cannot change while it is one: it is only ever inserted
    ///   with them, and every change of content (a write, a new version
    ///   upstream) leaves the state; a MOVE may rename its version, not its
    ///   bytes. An instance that does not hold it fetches it on first read
    ///   (`openContents` wants the file too). `cachedVersion` is the held
    ///   one, so a listing that finds it changed drops this cache's file.
    /// - `modified`, `failed`: kept, with the row's `cachedVersion` (none,
    ///   as in SQLite, which clears it on a local write). A write waits in
    ///   the shared journal: every instance must keep it from listings and
    ///   eviction, whichever instance holds its bytes (the writer forgets
    ///   its entry when it writes: `recordLocalWrite`).
    /// - `folder`: no content, nothing to overlay.
    ///
    /// The transient states (`fetching`, `partial`, `uploading`) are never
    /// stored: `Provider.state(of:)` replays this instance's own downloads
    /// and uploads over the state returned here.
    func overlay(_ item: Item) -> Item {
        switch item.state {
        case .placeholder, .materialized, .conflict:
            var seen = item
            seen.cachedVersion = version(of: item.id)
            seen.state = Self.state(stored: item.state, upstreamVersion: item.upstreamVersion, held: seen.cachedVersion)
            return seen
        case .folder, .modified, .failed:
            return item
        }
    }

    /// The stored state of a row whose upstream version is
    /// `upstreamVersion` as an instance holding `held` of it sees it
    /// (`overlay` says why for each state).
    static func state(stored: StoredState, upstreamVersion: String?, held: String?) -> StoredState {
        switch stored {
        case .placeholder, .materialized: held != nil && held == upstreamVersion ? .materialized : .placeholder
        case .folder, .modified, .failed, .conflict: stored
        }
    }

    // MARK: Changing

    /// One step of the file's serial writer, on the threads blocking calls
    /// run on: a caller's cancellation (a client gone, the uploader
    /// stopping) never cuts it short, as it never cuts short the index's
    /// transaction it goes with: it runs in a task of its own, since
    /// `blocking` drops work whose caller was cancelled before it started.
    private func change<T: Sendable>(_ database: DatabasePool, inTransaction: Bool = false,
                                     _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await Task {
            try await blocking {
                inTransaction ? try database.write(body) : try database.writeWithoutTransaction(body)
            }
        }.value
    }

    /// The local database's page cache and statements freed.
    func releaseMemory() {
        database?.releaseMemoryEventually()
    }

    /// The cache now holds `version` of the item.
    func record(_ version: String, for id: Int64) async throws {
        guard let database else { return }
        try await change(database) { [held] db in
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO held (item_id, version) VALUES (?, ?)").execute(arguments: [id, version])
            held.withLockedValue { $0[id] = version }
        }
    }

    /// The cache no longer holds a known version of these items (their
    /// file is about to change, or went). Readers stop trusting the entry
    /// before the file forgets it, and if the file cannot, the error is
    /// thrown: an entry left there would outlive the bytes it names.
    func forget(_ ids: [Int64]) async throws {
        guard let database, !ids.isEmpty else { return }
        try await change(database, inTransaction: true) { [held] db in
            held.withLockedValue { state in for id in ids { state[id] = nil } }
            for id in ids { try db.cachedStatement(sql: "DELETE FROM held WHERE item_id = ?").execute(arguments: [id]) }
        }
    }

    /// Forgets the item's entry if `decide`, given the entry as it is now,
    /// says so: one step of the writer, so no other change of the entry
    /// comes between the look and the change. Returns `decide`'s answer.
    func forget(_ id: Int64, if decide: @escaping @Sendable (String?) -> Bool) async throws -> Bool {
        guard let database else { return decide(version(of: id)) }
        return try await change(database) { [held] db in
            guard decide(held.withLockedValue({ $0[id] })) else { return false }
            held.withLockedValue { $0[id] = nil }
            try db.cachedStatement(sql: "DELETE FROM held WHERE item_id = ?").execute(arguments: [id])
            return true
        }
    }

    /// The entry becomes `new` if it is `old` now, in one step of the
    /// writer; returns whether it did.
    func replace(_ old: String, with new: String, for id: Int64) async throws -> Bool {
        guard let database else { return false }
        return try await change(database) { [held] db in
            guard held.withLockedValue({ $0[id] }) == old else { return false }
            try db.cachedStatement(sql: "UPDATE held SET version = ? WHERE item_id = ?").execute(arguments: [new, id])
            held.withLockedValue { $0[id] = new }
            return true
        }
    }

    /// Keeps the holdings for the shared index whose `feed.identity` this
    /// is: those kept for another database name other items, and go.
    func adopt(identity: String) async throws {
        guard let database else { return }
        try await change(database, inTransaction: true) { [held] db in
            guard try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'identity'")) != identity else { return }
            held.withLockedValue { $0 = [:] }
            try db.cachedStatement(sql: "DELETE FROM held").execute()
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('identity', ?)").execute(arguments: [identity])
        }
    }

    /// Drops the entries of items the index no longer has (`exists` answers
    /// which of the given ids it still has), at start: nothing else removes
    /// the entries of items another instance deleted.
    func prune(keeping exists: ([Int64]) async throws -> Set<Int64>) async throws {
        let ids = Array(all().keys)
        var gone: [Int64] = []
        for start in stride(from: 0, to: ids.count, by: 10_000) {
            let chunk = Array(ids[start..<min(start + 10_000, ids.count)])
            let present = try await exists(chunk)
            gone += chunk.filter { !present.contains($0) }
        }
        try await forget(gone)
    }
}
