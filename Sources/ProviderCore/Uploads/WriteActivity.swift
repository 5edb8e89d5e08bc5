import Synchronization

/// When the domain last took a write-back write, so that its uploads make
/// way for a burst of writes: while writes keep arriving, one upload runs
/// at a time rather than `upload_parallelism` (`Provider.runUploads`).
///
/// Why: on a disk an upload of a small file to a folder upstream is two
/// fsyncs (its bytes, the folder), and the PUTs of the burst wait for
/// fsyncs of their own. With four uploads beside them, 10,000 PUTs of
/// 4 KiB ran at 841-1,017 files/s in `scripts/bench`.
final class WriteActivity: Sendable {
    /// Nanoseconds on the continuous clock since `origin`; 0: none yet.
    private let last = Atomic<Int64>(0)
    private let origin = ContinuousClock.now

    func noteWrite() {
        last.store(Self.nanoseconds(ContinuousClock.now - origin), ordering: .relaxed)
    }

    /// Whether a write came within `window` (`UploadPolicy.burstWindow`).
    func wroteWithin(_ window: Duration) -> Bool {
        let written = last.load(ordering: .relaxed)
        return written != 0 && Self.nanoseconds(ContinuousClock.now - origin) - written < Self.nanoseconds(window)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
