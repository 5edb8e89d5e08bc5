import NIOConcurrencyHelpers
import PostgresNIO

/// Several servers on one shared index are not built yet: what the
/// provider keeps in memory (the domain's coordination, the namespace
/// clock, the uploader's claims, the cache's facts in the shared rows;
/// docs/scale-out.md section 2) would let a second instance serve stale
/// bytes or grant a lock a write then ignores. So the serving instance
/// holds a session advisory lock for as long as it runs, and a second
/// refuses to start instead of running unsafely.
///
/// The lock lives as long as its connection: a database restart or a cut
/// connection frees it. The holder checks its connection every few
/// seconds and, once it is gone, takes the lock again on a new one; if
/// another server was faster, that is logged as the error it is.
extension PostgresIndex {
    static let soleServerLock: Int32 = 8

    /// Takes the lock and keeps it until the index goes; false when
    /// another server holds it.
    func claimSoleServer() async throws -> Bool {
        let (claimed, continuation) = AsyncStream.makeStream(of: Result<Bool, any Error>.self)
        let holder = Task { [client, logger, location] in
            var first = true
            var pause = Duration.seconds(1)
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        var held = false
                        for try await row in try await connection.query("SELECT pg_try_advisory_lock(\(Self.soleServerLock), 0)", logger: logger) {
                            held = try row.decode(Bool.self)
                        }
                        if first {
                            first = false
                            continuation.yield(.success(held))
                            continuation.finish()
                            // Refused: this server will not start.
                            guard held else { throw CancellationError() }
                        } else if held {
                            logger.notice("the shared index's server lock is held again", metadata: ["index": "\(location)"])
                        } else {
                            pause = .seconds(10)
                            logger.error("another davgate server took the shared index \(location) while this one lost its connection; stop one of them (several servers on one index are not built yet)")
                            return
                        }
                        pause = .seconds(1)
                        // Held while this connection lives; ask it now and then whether it does.
                        while !Task.isCancelled {
                            try await Task.sleep(for: .seconds(2))
                            _ = try await connection.query("SELECT 1", logger: logger).collect()
                        }
                    }
                } catch is CancellationError {
                    return
                } catch {
                    if first {
                        first = false
                        continuation.yield(.failure(error))
                        continuation.finish()
                        return
                    }
                    logger.warning("the shared index's server lock was lost with its connection (\(Self.describe(error))); taking it again")
                }
                try? await Task.sleep(for: pause)
            }
        }
        soleServerHolder.withLockedValue { $0 = holder }
        for await result in claimed { return try result.get() }
        return false
    }
}
