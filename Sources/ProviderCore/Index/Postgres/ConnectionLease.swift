import NIOConcurrencyHelpers
import PostgresNIO

/// One wait for a pooled connection and the work done on it, answered once:
/// by the work's end, or, while no connection was leased yet, by the wait
/// running out (`PostgresIndex.leaseTimeout`) or the caller's cancellation.
///
/// Who decides first (the pool with a lease, the timer, the caller) is
/// decided under one lock, so a lease granted as the wait ends is either
/// used, never cut short, or given back unused. A wait given up is
/// answered at once and not awaited: after a database crash the pool was
/// seen not to end a cancelled wait, and a request awaiting it held its
/// domain's coordination for good (ClusterTests' PostgreSQL crash).
final class ConnectionLease<T: Sendable>: Sendable {
    private enum Phase { case waiting, leased, givenUp, answered }
    private struct State {
        var phase = Phase.waiting
        var continuation: CheckedContinuation<T, any Error>?
        var tasks: [Task<Void, Never>] = []
    }
    private let state = NIOLockedValueBox(State())

    /// Runs `body` on a connection of `client`'s, waiting at most `timeout`
    /// for one; `timedOut` is the error a wait that ran out answers.
    static func run(_ client: PostgresClient, timeout: Duration, timedOut: any Error,
                    _ body: @Sendable @escaping (PostgresConnection) async throws -> T) async throws -> T {
        let lease = ConnectionLease()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lease.start(continuation, client: client, timeout: timeout, timedOut: timedOut, body)
            }
        } onCancel: {
            lease.giveUp(CancellationError())
        }
    }

    private func start(_ continuation: CheckedContinuation<T, any Error>, client: PostgresClient, timeout: Duration, timedOut: any Error,
                       _ body: @Sendable @escaping (PostgresConnection) async throws -> T) {
        // Stored before the work starts: work that ends at once must find it.
        let cancelled = state.withLockedValue { state in
            state.continuation = continuation
            // Cancelled before this: answered below.
            return state.phase == .givenUp
        }
        if cancelled {
            answer(.failure(CancellationError()), force: true)
            return
        }
        let work = Task {
            do {
                let result = try await client.withConnection { connection in
                    guard self.state.withLockedValue({ state in
                        guard state.phase == .waiting else { return false }
                        state.phase = .leased
                        return true
                    }) else { throw CancellationError() }
                    return try await body(connection)
                }
                self.answer(.success(result))
            } catch let error as PSQLError {
                self.answer(.failure(PostgresIndex.translate(error)))
            } catch {
                self.answer(.failure(error))
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.giveUp(timedOut)
        }
        let answered = state.withLockedValue { state in
            state.tasks = [work, timer]
            return state.phase == .answered
        }
        // Answered before the tasks were stored: the timer is not needed.
        if answered { timer.cancel() }
    }

    /// Ends the wait for a connection, if it still is one.
    private func giveUp(_ error: any Error) {
        let given = state.withLockedValue { state in
            guard state.phase == .waiting else { return false }
            state.phase = .givenUp
            return true
        }
        if given { answer(.failure(error), force: true) }
    }

    /// Answers the caller once; the work's own answer comes only while
    /// nobody gave up (`force`: the one giving up).
    private func answer(_ result: Result<T, any Error>, force: Bool = false) {
        let (continuation, tasks) = state.withLockedValue { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard force || state.phase != .givenUp, state.phase != .answered, let continuation = state.continuation else { return (nil, []) }
            state.phase = .answered
            state.continuation = nil
            return (continuation, state.tasks)
        }
        guard let continuation else { return }
        for task in tasks { task.cancel() }
        continuation.resume(with: result)
    }
}
