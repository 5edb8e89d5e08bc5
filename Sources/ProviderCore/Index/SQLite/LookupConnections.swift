import Foundation
import GRDB
import NIOConcurrencyHelpers

/// The read-only connections of `SQLiteIndex.lookup`, taken in turn.
///
/// They were a read-only `DatabasePool`. Its reader checkout (a barrier
/// queue, a semaphore, a dispatch group and a key-path scan for a free
/// reader, then the same back) and the schema-version query it runs before
/// every read cost as much as the indexed read itself in a small request
/// (issue 14's profile). Plain connections, each behind its own serial
/// queue, do neither. The schema check guards GRDB's cache of table
/// layouts, which these reads never use (their SQL names its columns), and
/// the schema does not change while the server runs (migrations come
/// first). Taken in turn, two event loops seldom meet on one connection;
/// when they do, the second waits for a read of microseconds, as it waited
/// for a free reader before.
final class LookupConnections: Sendable {
    private let connections: [DatabaseQueue]
    private let turn = NIOLockedValueBox(0)

    init(file: URL, count: Int = 8) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try SQLiteIndex.limitReaderCache(db) }
        connections = try (0..<count).map { _ in try DatabaseQueue(path: file.path, configuration: configuration) }
    }

    private func next() -> DatabaseQueue {
        connections[turn.withLockedValue { turn in
            turn = (turn + 1) % connections.count
            return turn
        }]
    }

    /// Several statements that must agree: one read transaction.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try next().read(body)
    }

    /// Each connection's page cache and prepared statements freed, one
    /// connection at a time (a lookup on another goes on meanwhile).
    func releaseMemory() {
        for connection in connections { connection.releaseMemory() }
    }

    /// One statement: SQLite gives it a snapshot of its own.
    func readStatement<T>(_ body: (Database) throws -> T) throws -> T {
        try next().unsafeRead(body)
    }
}
