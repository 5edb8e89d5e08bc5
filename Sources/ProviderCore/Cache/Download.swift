import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A fetch from the upstream in flight, which readers follow as the file
/// grows: the first GET of a placeholder streams to its client while the
/// bytes are written to the cache, and later GETs join the same download
/// (the File Provider's `startProvidingItem`, called once per item).
public final class Download: Sendable {
    public let itemID: Int64
    /// The size the listing announced: what a reader answers with.
    public let expectedSize: Int64

    private struct State {
        /// Where the bytes are now: the temporary file, then the cache file.
        var path: URL
        var available: Int64 = 0
        var outcome: Result<Item, any Error>?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    init(itemID: Int64, expectedSize: Int64, file: URL) {
        self.itemID = itemID
        self.expectedSize = expectedSize
        state = NIOLockedValueBox(State(path: file))
    }

    var temporaryFile: URL { state.withLockedValue { $0.path } }

    /// The store reports `count` bytes durable in the file.
    func progressed(_ count: Int64) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            s.available = max(s.available, count)
            defer { s.waiters = [] }
            return s.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Moves the finished bytes to their final name while no reader is
    /// opening them, so an open never races the rename.
    func install(_ move: (URL) throws -> URL) throws {
        try state.withLockedValue { s in s.path = try move(s.path) }
    }

    func finish(_ outcome: Result<Item, any Error>) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            s.outcome = outcome
            if case .success(let item) = outcome { s.available = max(s.available, item.size) }
            defer { s.waiters = [] }
            return s.waiters
        }
        waiters.forEach { $0.resume() }
    }

    /// Waits until more than `offset` bytes are there, or the download is
    /// over. Returns how many bytes are there; throws the fetch's error.
    public func bytes(beyond offset: Int64) async throws -> Int64 {
        while true {
            let (available, outcome) = state.withLockedValue { ($0.available, $0.outcome) }
            if available > offset { return available }
            if let outcome {
                _ = try outcome.get()
                return available
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLockedValue { s -> Bool in
                    if s.available > offset || s.outcome != nil { return true }
                    s.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// The finished item (with the version actually fetched).
    public func result() async throws -> Item {
        _ = try await bytes(beyond: .max)
        return try state.withLockedValue { s in
            guard let outcome = s.outcome else { throw ProviderError.local("download ended without an outcome") }
            return try outcome.get()
        }
    }

    /// Opens the bytes for reading, under whichever name they have now.
    public func openForReading() throws -> Int32 {
        try state.withLockedValue { s in
            let fd = open(s.path.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ProviderError.local("cannot open the download: \(String(cString: strerror(errno)))") }
            return fd
        }
    }
}
