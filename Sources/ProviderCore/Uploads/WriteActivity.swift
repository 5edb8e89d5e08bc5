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

    /// When a write was last refused for the domain's `dirty_budget`: the
    /// journal must drain then, burst or not.
    private let refused = Atomic<Int64>(0)

    /// A write came; `window` is the pause that ends a burst. The burst's
    /// beginning is stored before the write's time, so that a reader that
    /// sees this write sees the burst it began too.
    func noteWrite(window: Duration) {
        let now = elapsed()
        let previous = last.load(ordering: .relaxed)
        if previous == 0 || now - previous >= window.nanoseconds {
            burstBegan.store(now, ordering: .relaxed)
        }
        last.store(now, ordering: .releasing)
    }

    /// A write was refused because the journal holds `dirty_budget`.
    func noteBudgetRefusal() {
        refused.store(elapsed(), ordering: .relaxed)
    }

    /// Whether uploads should make way: a write came within `window`, the
    /// writes going on began less than `limit` ago, and no write was
    /// refused for the budget within `limit`.
    func burstGoesOn(window: Duration, limit: Duration) -> Bool {
        let written = last.load(ordering: .acquiring)
        guard written != 0 else { return false }
        let now = elapsed()
        let refusal = refused.load(ordering: .relaxed)
        if refusal != 0, now - refusal < limit.nanoseconds { return false }
        return now - written < window.nanoseconds && now - burstBegan.load(ordering: .relaxed) < limit.nanoseconds
    }

    /// Nanoseconds since `origin`, at least 1 (0 means never).
    private func elapsed() -> Int64 {
        max(1, (ContinuousClock.now - origin).nanoseconds)
    }
}
