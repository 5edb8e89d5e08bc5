import ServiceLifecycle

/// Gives memory back once the server has gone quiet after work. What a
/// burst leaves behind is kept on purpose while requests come (the index's
/// page caches, glibc's free heap top, which `limitAllocatorRetention`
/// keeps to spare small PUTs the faulting in), but stayed resident for
/// good after it: 22.7 MiB of heap after 5,000 PUTs and five listings of
/// them, 5.8 MiB at start (issue 14). `release` runs once per quiet
/// spell, `period` after the last request began; the next requests refill
/// what they need.
public struct QuietMemoryRelease: Service, CustomStringConvertible {
    public let period: Duration
    public let activity: @Sendable () -> Int
    public let release: @Sendable () async -> Void

    public init(period: Duration = .seconds(2), activity: @escaping @Sendable () -> Int,
                release: @escaping @Sendable () async -> Void) {
        self.period = period
        self.activity = activity
        self.release = release
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            var watch = QuietWatch(count: activity())
            while (try? await Task.sleep(for: period)) != nil {
                if watch.quietAfterWork(count: activity()) { await release() }
            }
        }
    }

    /// How much free memory the heap keeps at its top for the next requests:
    /// the executable sets glibc's trim threshold to it (davgate's
    /// `limitAllocatorRetention`), and a trim while requests keep coming
    /// (`HeapSlackRelease`) keeps it too.
    public static let keptFreeTop = 4 << 20

    /// glibc's `malloc_trim`: the free memory of every arena, at its top
    /// (but `keepingTop` bytes) and in whole free pages within, back to the
    /// kernel.
    public static func trimHeap(keepingTop: Int = 0) {
        #if os(Linux)
        _ = glibcMallocTrim(keepingTop)
        #endif
    }

    public var description: String { "QuietMemoryRelease" }
}

#if os(Linux)
/// glibc's `malloc_trim`, which the Glibc module does not export (malloc.h).
@_silgen_name("malloc_trim")
private func glibcMallocTrim(_ pad: Int) -> Int32
#endif
