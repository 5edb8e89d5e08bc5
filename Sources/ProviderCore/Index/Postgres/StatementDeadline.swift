import NIOConcurrencyHelpers

/// A statement answered by its end or by its deadline, whichever comes
/// first, and never awaited past the deadline.
///
/// After a database crash postgres-nio was seen to leave a statement on
/// the dropped connection unanswered for good, even after the connection
/// was closed under it (ClusterTests' PostgreSQL crash: a `RESET` and a
/// `pg_advisory_unlock` sent after the crash never returned, and the
/// request holding its domain's turn, with every write queued behind it on
/// its instance, waited with them). Closing the connection is still done,
/// so the pool drops it, but the caller is answered without waiting for
/// the statement to notice.
///
/// The caller's cancellation does not cut a statement short: it runs in a
/// task of its own, as an awaited statement did before.
enum StatementDeadline {
    /// Runs `statement`, answering `timedOut` once `limit` passed without
    /// its end; `expired` then runs (closing the connection).
    static func run<T: Sendable>(limit: Duration, timedOut: @escaping @Sendable () -> any Error,
                                 expired: @escaping @Sendable () async -> Void,
                                 _ statement: @escaping @Sendable () async throws -> T) async throws -> T {
        let pending = NIOLockedValueBox<CheckedContinuation<T, any Error>?>(nil)
        @Sendable func take() -> CheckedContinuation<T, any Error>? {
            pending.withLockedValue { continuation in
                defer { continuation = nil }
                return continuation
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLockedValue { $0 = continuation }
            let timer = Task {
                guard (try? await Task.sleep(for: limit)) != nil, let waiting = take() else { return }
                waiting.resume(throwing: timedOut())
                await expired()
            }
            Task {
                let result: Result<T, any Error>
                do { result = .success(try await statement()) } catch { result = .failure(error) }
                timer.cancel()
                take()?.resume(with: result)
            }
        }
    }
}
