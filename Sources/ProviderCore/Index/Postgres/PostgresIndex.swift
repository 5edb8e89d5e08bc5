import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOSSL
import PostgresNIO

/// The shared index: the same items, properties, locks, journal and change
/// feed as `SQLiteIndex`, in a PostgreSQL database several davgate
/// instances use at once (docs/scale-out.md).
///
/// SQLite's single writer is what made each read-modify-write of the
/// index safe; here every write transaction takes the one `feed` row
/// first (`write`), which gives the same order across every connection
/// of every instance, and fixes the lock order, so the tree-version
/// trigger's row locks on a path's folders cannot deadlock with another
/// writer. Reads need no lock: each is one statement, or one snapshot
/// (`snapshot`). A commit is durable when it returns
/// (`synchronous_commit` on), so `sync` has nothing left to wait for.
final class PostgresIndex: Sendable {
    let client: PostgresClient
    let logger: Logger
    let location: PostgresLocation
    /// `client.run()`, which owns the connections; cancelled when the index goes.
    private let running: Task<Void, Never>
    /// What this instance's content cache holds: every item read from the
    /// shared rows is seen through it (`LocalHoldings.overlay`).
    let holdings: LocalHoldings
    /// Whether the last wait for a connection ran out or the last work lost
    /// its connection, and the server has not answered since.
    let databaseDown = NIOLockedValueBox(false)

    /// Connects, and creates or checks the schema.
    /// - Parameters:
    ///   - readingOnly: open it only to read (`davgate status --offline`):
    ///     nothing is created, and a schema of another version is an error.
    ///   - holdingsFile: this instance's `LocalHoldings` file; only read
    ///     when `readingOnly`, and then it may be nil or missing.
    init(location: PostgresLocation, readingOnly: Bool = false, holdingsFile: URL?, logger: Logger) async throws {
        self.location = location
        self.logger = logger
        if readingOnly {
            holdings = LocalHoldings(readingOnly: holdingsFile)
        } else if let holdingsFile {
            holdings = try LocalHoldings(file: holdingsFile)
        } else {
            preconditionFailure("a shared index opened to write needs this instance's holdings file")
        }
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: try Self.tls(location))
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 32
        configuration.options.connectionIdleTimeout = .seconds(30)
        configuration.options.connectTimeout = .seconds(5)
        var parameters = [("application_name", "davgate"), ("lock_timeout", "10s"), ("idle_in_transaction_session_timeout", "60s")]
        if readingOnly { parameters.append(("default_transaction_read_only", "on")) }
        configuration.options.additionalStartupParameters = parameters
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
        do {
            if readingOnly { try await checkSchema() } else {
                try await migrate()
                try await adoptHoldings()
            }
        } catch {
            running.cancel()
            throw error
        }
    }

    deinit {
        running.cancel()
    }

    private static func tls(_ location: PostgresLocation) throws -> PostgresClient.Configuration.TLS {
        var context = TLSConfiguration.makeClientConfiguration()
        if let ca = location.caFile {
            context.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca))
        }
        return switch location.tls {
        case .disable: .disable
        case .prefer: .prefer(context)
        case .require: .require(context)
        }
    }

    /// Commits are durable when they return: nothing to wait for.
    func sync(expected: Bool) async throws {}
    func expectSync() {}
    func expectedSyncDropped() {}
    func settleBatch() async throws {}

    // MARK: Transactions

    /// One statement's rows, or a few statements that need not agree.
    func read<T: Sendable>(_ body: @Sendable @escaping (PostgresTransaction) async throws -> T) async throws -> T {
        try await withConnection { connection in
            try await body(PostgresTransaction(connection: connection, logger: self.logger, holdings: self.holdings))
        }
    }

    /// Several statements that must see one state of the index.
    func snapshot<T: Sendable>(_ body: @Sendable @escaping (PostgresTransaction) async throws -> T) async throws -> T {
        try await withConnection { connection in
            let transaction = PostgresTransaction(connection: connection, logger: self.logger, holdings: self.holdings)
            try await transaction.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            do {
                let result = try await body(transaction)
                try await transaction.execute("COMMIT")
                return result
            } catch {
                await transaction.rollBack()
                throw error
            }
        }
    }

    /// Every change to the index: one transaction that first takes the
    /// `feed` row, so writers of every instance follow one another as
    /// SQLite's did. A deadlock or serialization failure (which the row
    /// should make impossible, but a server may still report) runs the
    /// body again: bodies are database work only.
    func write<T: Sendable>(_ body: @Sendable @escaping (PostgresTransaction) async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await withConnection { connection in
                    let transaction = PostgresTransaction(connection: connection, logger: self.logger, holdings: self.holdings)
                    try await transaction.execute("BEGIN")
                    let result: T
                    do {
                        try await transaction.execute("SELECT last_seq FROM feed WHERE id = 1 FOR UPDATE")
                        result = try await body(transaction)
                    } catch {
                        await transaction.rollBack()
                        throw error
                    }
                    do {
                        try await transaction.execute("COMMIT")
                    } catch {
                        // The commit may or may not have happened: nothing
                        // built on it may be acknowledged.
                        throw ProviderError.indexUnavailable("the index's commit did not answer (\(Self.describe(error))); it may or may not have been made")
                    }
                    return result
                }
            } catch let error as TransactionConflict {
                guard attempt < 5 else { throw ProviderError.indexUnavailable("a transaction was in conflict five times: \(error.message)") }
                logger.debug("index transaction retried", metadata: ["error": "\(error.message)"])
            }
        }
    }

    /// Leases a connection; a server that cannot be reached is a 503
    /// (`ProviderError.indexUnavailable`), and a unique violation is an
    /// item that exists already (another instance made it first).
    ///
    /// The pool waits for a connection as long as it takes, and with the
    /// server down that is forever: a request would hang until its client
    /// gave up. So a lease not had within `leaseTimeout` is given up (the
    /// wait is cancelled) and answered as the index being unavailable; a
    /// leased connection's work is never cut short.
    ///
    /// Once a wait ran out, or work lost its connection (the server went
    /// away under it), the next waits last only `outageLeaseTimeout` until
    /// the server answers again: requests queued behind one another (a
    /// domain's writes) would otherwise each wait the full time in turn,
    /// and the last of them minutes for its 503. A lost connection counts
    /// because a crash shows first there: the pool then hands out the other
    /// connections it still held, dead too, and with the flag cleared by
    /// such a lease, the next wait lasted the full 15 s while the domain's
    /// writers queued behind it (ClusterTests' PostgreSQL crash: a PUT
    /// answered 503 only after 21 s, once the server was back).
    func withConnection<T: Sendable>(_ body: @Sendable @escaping (PostgresConnection) async throws -> T) async throws -> T {
        let timeout = databaseDown.withLockedValue { $0 } ? Self.outageLeaseTimeout : Self.leaseTimeout
        do {
            return try await ConnectionLease.run(client, timeout: timeout, timedOut: LeaseTimedOut()) { [databaseDown] connection in
                do {
                    let result = try await body(connection)
                    databaseDown.withLockedValue { $0 = false }
                    return result
                } catch {
                    // The server answered (a refusal, a conflict) unless it
                    // went away under the work; inside it, `indexUnavailable`
                    // is only ever a lost connection or an unanswered statement.
                    let lost = connection.isClosed || Self.serverWentAway(error) || Self.isUnavailable(error)
                    databaseDown.withLockedValue { $0 = lost }
                    throw error
                }
            }
        } catch is LeaseTimedOut {
            databaseDown.withLockedValue { $0 = true }
            throw ProviderError.indexUnavailable(
                "no connection to \(location) within \(timeout); is the server up, and do the URL's user and database exist?")
        }
    }

    private struct LeaseTimedOut: Error {}

    /// How long a wait for a connection lasts while the last one ran out.
    static let outageLeaseTimeout = Duration.seconds(1)

    /// Longer than the server's `lock_timeout` (10 s), so writers queued
    /// on the `feed` row hold their connections without others timing out
    /// on a busy pool.
    static let leaseTimeout = Duration.seconds(15)

    /// Whether `error` says the connection or the server itself is gone
    /// (57P01-03: the server is shutting down, crashed or restarting; 08:
    /// the connection failed), not that the server refused one statement.
    static func serverWentAway(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("57P") || state.hasPrefix("08")
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return true
        default:
            return false
        }
    }

    /// Whether `error` is the index being unavailable (`ProviderError.indexUnavailable`).
    static func isUnavailable(_ error: any Error) -> Bool {
        guard let error = error as? ProviderError, case .indexUnavailable = error else { return false }
        return true
    }

    static func translate(_ error: PSQLError) -> any Error {
        if serverWentAway(error) { return ProviderError.indexUnavailable(describe(error)) }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            // Two instances made the same name at once: the second finds it there.
            if state == "23505", ["item_by_parent_name", "item_root"].contains(error.serverInfo?[.constraintName] ?? "") {
                return ProviderError.exists
            }
            // 53300: too many connections; 55P03: a row lock not had within
            // lock_timeout.
            if state == "53300" || state == "55P03" { return ProviderError.indexUnavailable(describe(error)) }
            if state == "40001" || state == "40P01" { return TransactionConflict(message: describe(error)) }
            return IndexDatabaseError(message: describe(error))
        case .poolClosed, .sslUnsupported, .failedToAddSSLHandler:
            return ProviderError.indexUnavailable(describe(error))
        default:
            return IndexDatabaseError(message: describe(error))
        }
    }

    /// The server's message, not postgres-nio's (which hides it by default).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let message = error.serverInfo?[.message] {
            return "\(message) (\(error.serverInfo?[.sqlState] ?? "?"))"
        }
        return String(reflecting: error)
    }
}

/// An error of the shared index's database that is not the client's to
/// retry: a bug or a schema out of step. Its message is the server's, since
/// postgres-nio hides that by default.
struct IndexDatabaseError: Error, CustomStringConvertible {
    let message: String
    var description: String { "the index database refused a statement: \(message)" }
}

/// A serialization failure or deadlock: the transaction is run again.
struct TransactionConflict: Error {
    let message: String
}

/// A connection inside one of `PostgresIndex`'s transactions (or a plain
/// read): runs statements and collects their rows.
struct PostgresTransaction: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    /// This instance's cache, which every item decoded here is seen through.
    let holdings: LocalHoldings

    /// How long one statement may take before it is answered as the index
    /// being unavailable and its connection is closed: the server's own
    /// lock waits end sooner (`lock_timeout`, 10 s); the limit is for a
    /// connection the server dropped without postgres-nio answering the
    /// statement on it (`StatementDeadline`).
    static let statementLimit = Duration.seconds(12)

    /// `limit`: longer for a statement that waits on purpose (an advisory lock).
    /// On a connection already closed (a statement before it ran out of
    /// time, the server dropped it) nothing more is sent: a `ROLLBACK` after
    /// a lost connection is answered at once instead of waiting its limit.
    func rows(_ query: PostgresQuery, limit: Duration = statementLimit) async throws -> [PostgresRow] {
        guard !connection.isClosed else {
            throw ProviderError.indexUnavailable("the connection to the index database was lost")
        }
        return try await StatementDeadline.run(limit: limit, timedOut: {
            ProviderError.indexUnavailable("the index database did not answer a statement within \(limit)")
        }, expired: { [connection, logger] in
            logger.warning("an index statement had no answer within \(limit); its connection is closed")
            try? await connection.close()
        }) { [connection, logger] in
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// How long a statement that only cleans up after a failure may take:
    /// the failure was often the connection's loss.
    static let cleanUpLimit = Duration.seconds(3)

    /// Ends the transaction after a failure; a failure of its own changes nothing.
    func rollBack() async {
        try? await execute("ROLLBACK", limit: Self.cleanUpLimit)
    }

    func execute(_ query: PostgresQuery, limit: Duration = statementLimit) async throws {
        _ = try await rows(query, limit: limit)
    }

    func first<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type, limit: Duration = statementLimit) async throws -> T? {
        try await rows(query, limit: limit).first.map { try $0.decode(T.self) }
    }
}
