import Dispatch

/// Runs blocking work (a child process read to its end) on a Dispatch
/// thread. The test runner's cooperative threads, two on a two-core
/// machine, must stay free for the tests running beside: a litmus run
/// blocking one for a minute once pushed another test's 500 ms timeouts
/// past 45 s.
func onDispatch<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try work() })
        }
    }
}
