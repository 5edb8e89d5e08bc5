import Dispatch
import ServiceLifecycle

/// Gives the allocator's free memory back while the server stays busy, once
/// it has grown `limit` beyond what it was (`HeapSlack`). Only the heap:
/// the index's caches, which requests in flight use, stay until the server
/// goes quiet (`QuietMemoryRelease`). The trim keeps the free top the heap
/// keeps on purpose for small PUTs (`QuietMemoryRelease.keptFreeTop`), so
/// a steady load is not trimmed again and again.
///
/// Looked at every `period`, off the event loops (which are Swift's
/// executor here): `mallinfo2` walks the free chunks under the arenas'
/// locks, and a trim's `madvise` calls take a millisecond or so for a few
/// MiB.
public struct HeapSlackRelease: Service, CustomStringConvertible {
    public let period: Duration
    public let limit: Int
    public let slack: @Sendable () -> Int?
    public let trim: @Sendable () -> Void

    /// 6 MiB: above the 4 MiB kept at the top (`keptFreeTop`), so what a
    /// trim leaves there refilling does not call for the next.
    public init(period: Duration = .milliseconds(500), limit: Int = 6 << 20,
                slack: @escaping @Sendable () -> Int? = HeapSlack.measure,
                trim: @escaping @Sendable () -> Void = { QuietMemoryRelease.trimHeap(keepingTop: QuietMemoryRelease.keptFreeTop) }) {
        self.period = period
        self.limit = limit
        self.slack = slack
        self.trim = trim
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            var watch: HeapSlack?
            while (try? await Task.sleep(for: period)) != nil {
                let look = await offTheLoops { [slack, limit, trim, watch] () -> HeapSlack? in
                    guard let now = slack() else { return watch }
                    guard var current = watch else { return HeapSlack(slack: now, limit: limit) }
                    if current.worthTrimming(slack: now) {
                        trim()
                        if let after = slack() { current.trimmed(leaving: after) }
                    }
                    return current
                }
                watch = look
            }
        }
    }

    /// Runs `body` on a Dispatch thread.
    private func offTheLoops<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }

    public var description: String { "HeapSlackRelease" }
}
