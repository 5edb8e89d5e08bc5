import NIOConcurrencyHelpers

/// Waiting on state under a mutex, cancellably. Every wait of the core
/// (a lock, an upload slot, a reader of a download) goes through here, so
/// a cancelled task never stays parked: a client gone, a stop, a deadline.
extension NIOLockedValueBox where Value: WaitingState {
    /// Returns at once when `want` is granted now; otherwise parks the task
    /// until `updateAndWake` grants it.
    ///
    /// Cancellation while parked takes exactly this waiter out and throws
    /// `CancellationError`. Both races are closed by the mutex: a
    /// cancellation that comes before the waiter is parked is seen before it
    /// parks (it throws instead), and one that comes after the waiter was
    /// granted finds it gone from the queue and changes nothing; the wait
    /// returns normally and the caller owns what it was granted (a lock is
    /// released or handed on by the caller as always). A want granted at
    /// once is no wait and never throws: a cancelled task can still take a
    /// free lock for the clean-up it must do.
    func wait(for want: Value.Want) async throws {
        let id = withLockedValue { state -> UInt64? in state.grant(want) ? nil : state.waiters.nextID() }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now = withLockedValue { state -> Result<Void, any Error>? in
                    // Granted meanwhile (the holder let go between the two looks).
                    if state.grant(want) { return .success(()) }
                    // The cancellation handler ran already and found nothing to take out.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters.append(id, wanting: want, continuation)
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let (cancelled, granted) = withLockedValue { state in
                guard let cancelled = state.waiters.remove(id) else {
                    return (CheckedContinuation<Void, any Error>?.none, [CheckedContinuation<Void, any Error>]())
                }
                // Its leaving may let others go (an upload no longer waits
                // behind a DELETE that gave up).
                return (cancelled, state.takeGranted())
            }
            cancelled?.resume(throwing: CancellationError())
            granted.forEach { $0.resume() }
        }
    }

    /// Changes the state, then resumes, oldest first, every waiter whose want
    /// it grants, outside the mutex (NIO's discipline: no continuation runs
    /// under a lock).
    func updateAndWake(_ change: (inout Value) -> Void) {
        let granted = withLockedValue { state in
            change(&state)
            return state.waiters.isEmpty ? [] : state.takeGranted()
        }
        granted.forEach { $0.resume() }
    }
}
