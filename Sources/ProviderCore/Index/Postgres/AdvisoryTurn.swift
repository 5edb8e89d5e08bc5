import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// A PostgreSQL session advisory lock, held on a connection of its own
/// while the holder's work runs in the holder's task: how instances take
/// turns (a domain's coordination, a folder's listing refresh). A killed
/// instance's session ends and the server frees its turns at once.
///
/// The work does not run on the lock's connection: its index transactions
/// take pooled connections as always. If the lock's connection is cut
/// while the work runs, another instance may take the turn before the work
/// ends; that is logged when the turn ends, and each index transaction
/// stays serial all the same (the `feed` row).
struct AdvisoryTurn: Sendable {
    /// Advisory lock classes (the first of the two keys): docs/scale-out.md.
    enum Kind: Int32, Sendable {
        case domain = 1
        case listing = 3
    }

    private let release: AsyncStream<Void>.Continuation
    /// Whether another instance held the turn when it was asked for.
    let waited: Bool

    /// Takes the turn `key` of `kind`, waiting at most `wait` for another
    /// holder; a wait that runs out throws `ProviderError.indexUnavailable`.
    static func take(_ kind: Kind, key: String, wait: Duration, on index: PostgresIndex) async throws -> AdvisoryTurn {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let (taken, announce) = AsyncStream.makeStream(of: Result<Bool, any Error>.self)
        let logger = index.logger
        Task {
            let held = NIOLockedValueBox(false)
            do {
                try await index.withConnection { connection in
                    let t = PostgresTransaction(connection: connection, logger: logger, holdings: index.holdings)
                    var waited = false
                    if try await t.first("SELECT pg_try_advisory_lock(\(kind.rawValue), hashtext(\(key)))", as: Bool.self, limit: .seconds(5)) != true {
                        waited = true
                        try await waitInSlices(t, kind: kind, key: key, until: .now + wait)
                    }
                    held.withLockedValue { $0 = true }
                    announce.yield(.success(waited))
                    announce.finish()
                    for await _ in released {}
                    guard try await t.first("SELECT pg_advisory_unlock(\(kind.rawValue), hashtext(\(key)))", as: Bool.self) == true else {
                        throw TurnLost()
                    }
                }
            } catch {
                if held.withLockedValue({ $0 }) {
                    logger.error("an instance turn's connection was lost while its work ran; another instance may have taken the turn meanwhile",
                                 metadata: ["turn": "\(kind) \(key)", "error": "\(PostgresIndex.describe(error))"])
                } else {
                    announce.yield(.failure(error))
                    announce.finish()
                }
            }
        }
        for await result in taken {
            return AdvisoryTurn(release: release, waited: try result.get())
        }
        // Cancelled while waiting: a turn the holder takes later ends at once.
        release.finish()
        throw CancellationError()
    }

    /// How long one wait for the lock lasts before it is asked for again.
    /// A wait is a statement the server answers only when the lock comes,
    /// and after a database crash a statement on a dropped connection was
    /// seen never to fail (`PostgresTransaction.statementLimit`): a turn
    /// waited for in one piece held its request, and every request queued
    /// behind it on its instance, for the whole wait (ClusterTests'
    /// PostgreSQL crash). In slices, a lost connection is found within one.
    static let waitSlice = Duration.seconds(2)

    /// Waits for the lock until `deadline`, one `waitSlice` at a time; the
    /// server's `lock_timeout` ends each slice, and a slice without any
    /// answer a little after that has its connection closed.
    private static func waitInSlices(_ t: PostgresTransaction, kind: Kind, key: String, until deadline: ContinuousClock.Instant) async throws {
        while true {
            let slice = min(waitSlice, max(deadline - .now, .milliseconds(1)))
            let milliseconds = max(1, Int(slice.components.seconds * 1000 + slice.components.attoseconds / 1_000_000_000_000_000))
            try await t.execute("SELECT set_config('lock_timeout', \("\(milliseconds)ms"), false)")
            do {
                try await t.execute("SELECT pg_advisory_lock(\(kind.rawValue), hashtext(\(key)))", limit: slice + .seconds(3))
                try await t.execute("RESET lock_timeout")
                return
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" && ContinuousClock.now < deadline {
                continue
            } catch {
                try? await t.execute("RESET lock_timeout", limit: PostgresTransaction.cleanUpLimit)
                throw error
            }
        }
    }

    /// Lets the next holder in.
    func end() { release.finish() }

    private struct TurnLost: Error {}
}
