import NIOPosix

/// The threads blocking file system calls (fsync, rename, copies, directory
/// scans) run on, so they never stall an event loop, which is also Swift
/// concurrency's executor. Not Dispatch's global queue: it runs about one
/// work item per core at a time, so on two cores two uploads' fsyncs held
/// back every PUT's body writes and the journal's group commit behind them
/// (issue 14: 10,000 small PUTs ran at a third of their rate while the
/// uploads drained). fsync waits for the disk, not a core: 16 threads let
/// those waits overlap.
let blockingPool: NIOThreadPool = {
    let pool = NIOThreadPool(numberOfThreads: 16)
    pool.start()
    return pool
}()

/// Runs `body` on `blockingPool` and returns its result.
public func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await blockingPool.runIfActive(body)
}

/// Runs `body` on `blockingPool` without waiting for it: clean-up that
/// nothing waits for and that may be lost to a stop (`ContentCache.removeLater`).
func blockingLater(_ body: @escaping @Sendable () -> Void) {
    blockingPool.submit { _ in body() }
}
