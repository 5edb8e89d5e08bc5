import NIOConcurrencyHelpers

/// Waiting in tests without ever hanging the run: the thing under test may
/// be exactly a wait that never ends.

/// How long a wait that must end promptly may take before the test calls
/// it hung: a wait that ignores cancellation never ends, so the bound only
/// has to stay clear of a loaded two-core machine running every suite at
/// once, where two seconds were not always enough.
let prompt: Duration = .seconds(15)

/// The task's outcome if it ends within `limit`, nil if it does not. Never
/// waits longer, even for a task that ignores cancellation (awaiting
/// `task.value` directly would then hang the test).
func outcome<T: Sendable>(of task: Task<T, any Error>, within limit: Duration) async -> Result<T, any Error>? {
    let settled = NIOLockedValueBox(false)
    return await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>?, Never>) in
        @Sendable func settle(_ outcome: Result<T, any Error>?) {
            let first = settled.withLockedValue { done in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(returning: outcome) }
        }
        Task { settle(await task.result) }
        Task {
            try? await Task.sleep(for: limit)
            settle(nil)
        }
    }
}

/// Polls `condition` until it holds; false when it still does not after `limit`.
func eventually(within limit: Duration = prompt, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// Whether the outcome is a `CancellationError`.
func isCancellation<T>(_ outcome: Result<T, any Error>?) -> Bool {
    guard case .failure(let error) = outcome else { return false }
    return error is CancellationError
}

/// Runs `take` in a task of its own whose body keeps what was taken (a
/// lock, a slot) until the returned gate is finished; returns once it is
/// taken.
func holding(_ take: @escaping @Sendable (_ body: () async -> Void) async throws -> Void) async -> AsyncStream<Void>.Continuation {
    let (gate, open) = AsyncStream.makeStream(of: Void.self)
    let (taken, signal) = AsyncStream.makeStream(of: Void.self)
    Task {
        defer { signal.finish() }
        try await take {
            signal.finish()
            for await _ in gate {}
        }
    }
    for await _ in taken {}
    return open
}
