import CHeapStatistics

/// The resident memory the allocator holds free, and when it has grown
/// enough to be worth giving back while requests keep coming.
///
/// Why: `QuietMemoryRelease` gives memory back once no request has begun
/// for a while, and a server that is never quiet kept what a burst had
/// freed: a sync client polling every second, or a transfer begun right
/// after a bulk DELETE. issue 14's bench began its 1 GiB transfers with
/// 16.7 MiB of heap that 10,000 PUTs and their DELETE had left, 8 MiB of it
/// free (`malloc_trim` through gdb gave it back), and that heap was what
/// put the peak over 48 MiB.
public struct HeapSlack: Sendable {
    /// The resident anonymous memory that no allocation holds: the free
    /// heap's touched pages, and stacks and the like, which stay. nil where
    /// it cannot be told (not glibc, no /proc), so that a failed reading
    /// never becomes a floor.
    public static func measure() -> Int? {
        let resident = Int(davgate_resident_anonymous()), inUse = Int(davgate_heap_in_use())
        guard resident > 0, inUse > 0 else { return nil }
        return max(0, resident - inUse)
    }

    /// The least slack seen since the last trim: what stays (stacks, pages
    /// of free chunks a trim cannot return) is not counted again.
    private var floor: Int
    /// How far above that floor the slack may grow before a trim.
    public let limit: Int

    /// `slack`: the slack now, the first floor.
    public init(slack: Int, limit: Int) {
        floor = slack
        self.limit = limit
    }

    /// Whether `slack` is more than `limit` above the floor.
    public mutating func worthTrimming(slack: Int) -> Bool {
        floor = min(floor, slack)
        return slack - floor > limit
    }

    /// After a trim, `slack` (what the trim could not return) is the floor.
    public mutating func trimmed(leaving slack: Int) {
        floor = slack
    }
}
