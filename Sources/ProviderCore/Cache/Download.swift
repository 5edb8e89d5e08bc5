import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A fetch from the upstream in flight, which readers follow as the file
/// grows: the first GET of a placeholder streams to its client while the
/// bytes are written to the cache, and later GETs join the same download
/// (the File Provider's `startProvidingItem`, called once per item).
///
/// A download covers the whole file, or one byte range of it written into a
/// sparse file (partial content fetching); positions are always offsets in
/// the file, so a reader asks for the same offsets either way.
public final class Download: Sendable {
    public let itemID: Int64

    private struct State: WaitingState {
        /// Where the bytes are now: the temporary file, then the cache file.
        var path: URL
        /// Held open for readers of a sparse file, which a whole download may
        /// take over and rename at any time; readers get a duplicate.
        var descriptor: Int32?
        /// The end of the bytes readers may read: everything before it is there.
        var available: Int64
        /// The item whose version the bytes belong to, once the upstream answered.
        var head: Item?
        var outcome: Result<Item, any Error>?
        /// Readers waiting, each for its own condition: woken only once it
        /// holds, not for every chunk that arrives.
        var waiters = WaitQueue<Condition>()

        /// Whether `condition` holds; a reader takes nothing from the others.
        func grant(_ condition: Condition) -> Bool {
            if outcome != nil { return true }
            switch condition {
            case .head: return head != nil
            case .bytes(let end): return available >= end
            case .finished: return false
            }
        }
    }

    private enum Condition: Sendable {
        case head
        /// Everything before this offset is there.
        case bytes(Int64)
        case finished
    }
    private let state: NIOLockedValueBox<State>

    /// A download into `file`, whose bytes before `available` are there already.
    init(itemID: Int64, file: URL, descriptor: Int32? = nil, available: Int64 = 0) {
        self.itemID = itemID
        state = NIOLockedValueBox(State(path: file, descriptor: descriptor, available: available))
    }

    /// Bytes that are all there already: a reader of a sparse file whose
    /// range was fetched before.
    static func complete(_ item: Item, descriptor: Int32, path: URL) -> Download {
        let download = Download(itemID: item.id, file: path, descriptor: descriptor, available: item.size)
        download.finish(.success(item), head: item)
        return download
    }

    deinit {
        state.withLockedValue { s in
            if let fd = s.descriptor { close(fd) }
        }
    }

    var temporaryFile: URL { state.withLockedValue { $0.path } }

    /// Tasks parked now (tests wait for a waiter to be parked).
    var waiting: Int { state.withLockedValue { $0.waiters.count } }

    /// The upstream answered: readers may now announce the size and ETag.
    func began(_ item: Item) {
        update { $0.head = item }
    }

    /// Everything before `position` is durable in the file.
    func reached(_ position: Int64) {
        update { $0.available = max($0.available, position) }
    }

    /// Moves the finished bytes to their final name while no reader is
    /// opening them, so an open never races the rename.
    func install(_ move: (URL) throws -> URL) throws {
        try state.withLockedValue { s in s.path = try move(s.path) }
    }

    func finish(_ outcome: Result<Item, any Error>, head: Item? = nil) {
        update { s in
            s.outcome = outcome
            if s.head == nil { s.head = head }
        }
    }

    private func update(_ change: (inout State) -> Void) {
        state.updateAndWake(change)
    }

    /// Waits until `condition` holds or the download is over.
    /// - Throws: `CancellationError` when the reader's task is cancelled
    ///   first (a client gone); the download goes on for the others.
    private func wait(until condition: Condition) async throws {
        try await state.wait(for: condition)
    }

    /// The item the bytes belong to, once the upstream has answered: its
    /// size and ETag are what a reader announces. Throws the fetch's error
    /// when it failed before that.
    public func head() async throws -> Item {
        try await wait(until: .head)
        return try state.withLockedValue { s in
            if let head = s.head { return head }
            guard let outcome = s.outcome else { throw ProviderError.local("download ended without an outcome") }
            return try outcome.get()
        }
    }

    /// Waits until every byte before `end` is there, or the download is
    /// over. Returns the end of the bytes there (less than `end` only when
    /// the download is over); throws the fetch's error. Readers ask for a
    /// chunk's worth, so they wake once per chunk, not per network read.
    public func bytes(upTo end: Int64) async throws -> Int64 {
        try await wait(until: .bytes(end))
        return try state.withLockedValue { s in
            if s.available >= end { return s.available }
            guard let outcome = s.outcome else { return s.available }
            _ = try outcome.get()
            return s.available
        }
    }

    /// Waits until the byte at `offset` is there, or the download is over.
    public func bytes(beyond offset: Int64) async throws -> Int64 {
        try await bytes(upTo: offset + 1)
    }

    /// The finished item (with the version actually fetched).
    public func result() async throws -> Item {
        try await wait(until: .finished)
        return try state.withLockedValue { s in
            guard let outcome = s.outcome else { throw ProviderError.local("download ended without an outcome") }
            return try outcome.get()
        }
    }

    /// Opens the bytes for reading, under whichever name they have now.
    public func openForReading() throws -> Int32 {
        try state.withLockedValue { s in
            let fd = s.descriptor.map { dup($0) } ?? open(s.path.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ProviderError.local("cannot open the download: \(String(cString: strerror(errno)))") }
            return fd
        }
    }
}
