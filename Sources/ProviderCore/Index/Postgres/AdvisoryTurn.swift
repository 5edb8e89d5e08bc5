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
                        let milliseconds = Int(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
                        try await t.execute("SELECT set_config('lock_timeout', \("\(milliseconds)ms"), false)")
                        do {
                            try await t.execute("SELECT pg_advisory_lock(\(kind.rawValue), hashtext(\(key)))",
                                                limit: wait + PostgresTransaction.statementLimit)
                        } catch {
                            try? await t.execute("RESET lock_timeout")
                            throw error
                        }
                        try await t.execute("RESET lock_timeout")
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

    /// Lets the next holder in.
    func end() { release.finish() }

    private struct TurnLost: Error {}
}
