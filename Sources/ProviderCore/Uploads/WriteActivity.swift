import Synchronization

/// When the domain last took a write-back write, and since when writes
/// have kept coming, so that its uploads make way for a burst of writes:
/// while writes keep arriving, no upload starts (`Provider.runUploads`),
/// for `burstLimit` at most; the journal drains at `upload_parallelism`
/// once they pause.
///
/// Why: the PUTs are what a client waits for, the uploads only what the
/// upstream waits for, and every write is durable in the journal before
/// its answer. On a disk an upload of a small file to a folder upstream is
/// two fsyncs (its bytes, the folder) and costs the server about twice a
/// PUT's CPU. With four uploads beside the burst, 10,000 PUTs of 4 KiB ran
/// at 841-1,017 files/s in `scripts/bench`; with one, 1,487-1,589; with
/// none (the uploads held), 1,447-1,759 against 1,119-1,640 in three pairs
/// of 10,000 on this machine's disk. Why a limit: a domain that never
/// pauses (a backup writing for hours) must still have its journal drained.
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
