import Synchronization

/// When the domain last took a write-back write, and since when writes
/// have kept coming, so that its uploads make way for a burst of writes:
/// while writes keep arriving, one upload runs at a time rather than
/// `upload_parallelism` (`Provider.runUploads`), for `burstLimit` at most.
///
/// Why: on a disk an upload of a small file to a folder upstream is two
/// fsyncs (its bytes, the folder), and the PUTs of the burst wait for
/// fsyncs of their own. With four uploads beside them, 10,000 PUTs of
/// 4 KiB ran at 841-1,017 files/s in `scripts/bench`. Why a limit: a
/// domain that never pauses (a backup writing for hours) must not have
/// its journal drained at a quarter of its width all that time.
final class WriteActivity: Sendable {
    /// Nanoseconds on the continuous clock since `origin`; 0: none yet.
    private let last = Atomic<Int64>(0)
    /// When the writes going on now began (the first write after a pause
    /// of a window or more).
    private let burstBegan = Atomic<Int64>(0)
    private let origin = ContinuousClock.now

    /// A write came; `window` is the pause that ends a burst.
    func noteWrite(window: Duration) {
        let now = Self.nanoseconds(ContinuousClock.now - origin)
        let previous = last.exchange(now, ordering: .relaxed)
        if previous == 0 || now - previous >= Self.nanoseconds(window) {
            burstBegan.store(now, ordering: .relaxed)
        }
    }

    /// Whether uploads should make way: a write came within `window`, and
    /// the writes going on began less than `limit` ago.
    func burstGoesOn(window: Duration, limit: Duration) -> Bool {
        let written = last.load(ordering: .relaxed)
        guard written != 0 else { return false }
        let now = Self.nanoseconds(ContinuousClock.now - origin)
        return now - written < Self.nanoseconds(window) && now - burstBegan.load(ordering: .relaxed) < Self.nanoseconds(limit)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
