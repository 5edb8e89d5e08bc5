import NIOConcurrencyHelpers
import PostgresNIO

/// Several servers on one shared index are not built yet: what the
/// provider keeps in memory (the domain's coordination, the namespace
/// clock, the uploader's claims, the cache's facts in the shared rows;
/// docs/scale-out.md section 2) would let a second instance serve stale
/// bytes or grant a lock a write then ignores. So the serving instance
/// holds a session advisory lock for as long as it runs, and a second
/// refuses to start instead of running unsafely.
extension PostgresIndex {
    static let soleServerLock: Int32 = 8

    /// Takes the lock on a connection of its own, kept until the index
    /// goes; false when another server holds it.
    func claimSoleServer() async throws -> Bool {
        let (claimed, continuation) = AsyncStream.makeStream(of: Result<Bool, any Error>.self)
        let holder = Task { [client, logger] in
            do {
                try await client.withConnection { connection in
                    let rows = try await connection.query("SELECT pg_try_advisory_lock(\(Self.soleServerLock), 0)", logger: logger)
                    var held = false
                    for try await row in rows { held = try row.decode(Bool.self) }
                    continuation.yield(.success(held))
                    guard held else { return }
                    // Held while this connection lives: until the index goes.
                    while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
                }
            } catch is CancellationError {
            } catch {
                continuation.yield(.failure(error))
                logger.error("the shared index's server lock was lost: \(Self.describe(error))")
            }
            continuation.finish()
        }
        soleServerHolder.withLockedValue { $0 = holder }
        for await result in claimed { return try result.get() }
        return false
    }
}
