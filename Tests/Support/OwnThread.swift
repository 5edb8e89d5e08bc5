import Foundation

/// Runs blocking work (a child process read to its end, a socket exchange)
/// on a thread of its own and awaits its result.
///
/// Swift concurrency has one thread per core, two here, shared by every
/// test running at once. A test that blocks one of them (litmus read to its
/// end, a CLI run waited for, a socket read) stops half of all the others:
/// their timers fire but nobody resumes them, and 500 ms timeouts measured
/// 50 s, servers "did not start" within a minute. Dispatch's global queue
/// is no way out: on Linux it is the very pool Swift concurrency runs on.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
