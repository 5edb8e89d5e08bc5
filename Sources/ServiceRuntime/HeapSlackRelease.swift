import ServiceLifecycle

/// Gives the allocator's free memory back while the server stays busy, once
/// it has grown `limit` beyond what it was (`HeapSlack`). Only the heap:
/// the index's caches, which requests in flight use, stay until the server
/// goes quiet (`QuietMemoryRelease`).
///
/// Looked at every `period`: the slack is a read of /proc/self/statm and a
/// `mallinfo2`, some microseconds; a trim, when one is due, a millisecond
/// or so for a few MiB.
public struct HeapSlackRelease: Service, CustomStringConvertible {
    public let period: Duration
    public let limit: Int
    public let slack: @Sendable () -> Int
    public let trim: @Sendable () -> Void

    /// 6 MiB: above what glibc keeps free at the heap's top on purpose (4
    /// MiB, `limitAllocatorRetention` in davgate), so a steady load of
    /// small requests is not trimmed again and again.
    public init(period: Duration = .milliseconds(500), limit: Int = 6 << 20,
                slack: @escaping @Sendable () -> Int = HeapSlack.measure,
                trim: @escaping @Sendable () -> Void = QuietMemoryRelease.trimHeap) {
        self.period = period
        self.limit = limit
        self.slack = slack
        self.trim = trim
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            var watch = HeapSlack(slack: slack(), limit: limit)
            while (try? await Task.sleep(for: period)) != nil {
                guard watch.worthTrimming(slack: slack()) else { continue }
                trim()
                watch.trimmed(leaving: slack())
            }
        }
    }

    public var description: String { "HeapSlackRelease" }
}
