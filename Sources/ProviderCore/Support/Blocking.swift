import Dispatch

/// Runs blocking system calls (fsync, rename, directory scans, copies) on
/// Dispatch's thread pool so they never stall Swift's cooperative executor,
/// which has only as many threads as cores (two here).
public func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}
