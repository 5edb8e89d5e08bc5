import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// One version of a placeholder fetched range by range into a sparse file
/// (the File Provider's partial content fetching): a Range GET fetches only
/// its bytes, and a later whole fetch takes the file over and fetches only
/// the gaps. Which ranges are there is kept in memory; the file lives in the
/// cache's `tmp/`, so a restart starts from a placeholder again, never from
/// bytes nobody vouches for.
final class SparseContent: Sendable {
    let file: URL
    let version: String
    let size: Int64

    private struct State {
        var present = ByteRanges()
        var running = 0
        var retired = false
        var idle: [CheckedContinuation<Void, Never>] = []
    }
    private let state = NIOLockedValueBox(State())

    init(file: URL, version: String, size: Int64) throws {
        self.file = file
        self.version = version
        self.size = size
        let fd = Glibc.open(file.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ProviderError.local("cannot create a sparse cache file: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // The full length from the start, so offsets past the end are holes.
        guard ftruncate(fd, off_t(size)) == 0 else { throw ProviderError.local("cannot size a sparse cache file: \(String(cString: strerror(errno)))") }
    }

    /// Is this the content of `item` as the index knows it now?
    func holds(_ item: Item) -> Bool {
        item.upstreamVersion == version && item.size == size
    }

    var present: ByteRanges { state.withLockedValue { $0.present } }

    func open() throws -> Int32 {
        let fd = Glibc.open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProviderError.local("cannot open a sparse cache file: \(String(cString: strerror(errno)))") }
        return fd
    }

    /// The gaps of `range`, and a fetch counted as running when there are any.
    func startFetch(for range: ClosedRange<Int64>) -> [ClosedRange<Int64>] {
        state.withLockedValue { s in
            let gaps = s.present.gaps(in: range)
            if !gaps.isEmpty { s.running += 1 }
            return gaps
        }
    }

    /// A running fetch wrote `range` into the file: readers of those bytes
    /// need no fetch of their own, also before the whole span is in.
    func arrived(_ range: ClosedRange<Int64>) {
        state.withLockedValue { $0.present.insert(range) }
    }

    /// A fetch ended; `fetched` is the range it wrote completely, if it did.
    func endFetch(fetched: ClosedRange<Int64>?) {
        let (idle, unlinkNow) = state.withLockedValue { s -> ([CheckedContinuation<Void, Never>], Bool) in
            if let fetched { s.present.insert(fetched) }
            s.running -= 1
            guard s.running == 0 else { return ([], false) }
            defer { s.idle = [] }
            return (s.idle, s.retired)
        }
        if unlinkNow { unlink(file.path) }
        idle.forEach { $0.resume() }
    }

    /// Waits until no range fetch writes into the file any more.
    func quiesce() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { s -> Bool in
                if s.running == 0 { return true }
                s.idle.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// No longer wanted: the file goes once no fetch writes into it (a fetch
    /// opening it late may create it again; `tmp/` is emptied at start).
    func retire() {
        let unlinkNow = state.withLockedValue { s -> Bool in
            s.retired = true
            return s.running == 0
        }
        if unlinkNow { unlink(file.path) }
    }
}
