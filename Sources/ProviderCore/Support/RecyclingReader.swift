import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file in large chunks for a stream that sends them on (a GET's
/// body, an upload's request body), each into the buffer the stream sent
/// `reuseAfter` chunks before, which the connection has let go of by then.
///
/// Why: a new buffer per chunk of this size can be a fresh mmap (blocks
/// of 1 MiB and more always are, see `limitAllocatorRetention` in davgate;
/// with its threshold at 128 KiB, as it was, so was every GET's 256 KiB
/// chunk), whose pages the kernel faults in and zeroes while `pread` fills
/// them: a sixth of a large GET's CPU in issue 14's profile, 740,000 page
/// faults in three 1 GiB GETs where 37,000 remained. A buffer still held
/// (the connection is slow to send it) is not overwritten: the read then
/// gets new storage, as every read did before.
public struct RecyclingReader: Sendable {
    /// Reads this small are done on the calling thread: a page-cache read
    /// of a few KiB costs less than the two thread switches of a hop.
    public static let inPlaceLimit = 64 * 1024

    /// The chunks sent, the latest last; the first is read into next once
    /// there are `reuseAfter` of them.
    private var sent: [ByteBuffer] = []
    private let reuseAfter: Int
    /// How many reads went into a recycled buffer (for the tests).
    private(set) var recycled = 0
    /// How many large reads the page cache answered in place (for the tests).
    public private(set) var cachedInPlace = 0

    /// Whether large reads may be copied in place from the page cache.
    private let cachedInPlaceFirst: Bool

    /// - Parameters:
    ///   - cachedInPlaceFirst: whether large reads of cached pages are
    ///     copied on the calling thread. A GET's body does so for a complete
    ///     file and for a download still being written alike: with the
    ///     download's chunks read in place (and written 256 KiB at a time),
    ///     a cold 128 MiB read through the gateway took 10.2 ticks of server
    ///     CPU against 14 (ten interleaved reads each, issue 14). An earlier
    ///     finding the other way came from two 1 GiB reads, and one such
    ///     read swings from 280 to 790 MB/s on this VM.
    ///   - reuseAfter: how many chunks the stream may hold on its way out
    ///     (a GET's body lets two wait for its connection, `WritesInFlight`
    ///     in DAVServer, so it reads into the third before).
    public init(cachedInPlaceFirst: Bool = false, reuseAfter: Int = 2) {
        self.cachedInPlaceFirst = cachedInPlaceFirst
        self.reuseAfter = max(1, reuseAfter)
    }

    /// Up to `count` bytes of `fd` at `offset` (fewer at the end of the
    /// file, or where the page cache holds only the first part), read on
    /// the calling thread when small or (`cachedInPlaceFirst`) already in
    /// the page cache, else on the blocking pool. `failure` makes the error
    /// of a failed `pread` from its errno.
    ///
    /// A large read of cached pages is a copy of a few tens of
    /// microseconds; the hop to the pool and back cost two thread switches
    /// and a wake-up per chunk, a fifth of a warm 1 GiB GET's server CPU
    /// (issue 14). `preadv2` with `RWF_NOWAIT` copies what is cached and
    /// refuses (EAGAIN) rather than wait for the disk, so a cold read still
    /// never blocks the caller's thread on I/O. Only while the connection
    /// keeps up, though (below).
    public mutating func read(_ fd: Int32, at offset: Int64, count: Int,
                              failure: @escaping @Sendable (Int32) -> any Error) async throws -> ByteBuffer {
        var chunk: ByteBuffer
        if count <= Self.inPlaceLimit {
            chunk = try Self.read(fd, at: offset, count: count, failure: failure)
        } else {
            var spare = sent.count < reuseAfter ? nil : sent.removeFirst()
            let storage = spare.map(Self.storage)
            // Cleared, the chunk sent `reuseAfter` reads ago keeps its
            // storage only if the connection has let go of it, encrypted and
            // sent: then the connection keeps up, and this read may be done
            // in place.
            // Otherwise the hop to the pool paces this reader, as it paced
            // every read before: read in place whatever the connection's
            // state, a reader ran ahead of it and two 1 GiB GETs peaked at
            // 26-52 MiB of chunks in flight against 11-14 (issue 14).
            spare?.clear()
            let keepingUp = storage != nil && spare.map(Self.storage) == storage
            if cachedInPlaceFirst, keepingUp, let cached = Self.readCached(fd, at: offset, count: count, into: &spare) {
                chunk = cached
                cachedInPlace += 1
            } else {
                // The buffer goes to the pool thread and back in a box,
                // neither captured nor returned: a copy left in the
                // closure, or in the pool's result until its thread gets
                // round to dropping it, would be a second reference when it
                // is next read into.
                let handoff = BufferHandoff(spare.take())
                try await blocking {
                    handoff.put(try Self.read(fd, at: offset, count: count, into: handoff.take(), failure: failure))
                }
                chunk = handoff.take() ?? ByteBuffer()
            }
            if storage != nil, Self.storage(of: chunk) == storage { recycled += 1 }
            sent.append(chunk)
        }
        return chunk
    }

    /// What the page cache holds of the range, copied on the calling thread
    /// into `spare` (taken; new storage if it is shared): nil when the
    /// first page is not cached, or the kernel cannot read without waiting
    /// for this file, and the caller reads on the pool instead, where an
    /// error is reported. An empty buffer at the end of the file.
    static func readCached(_ fd: Int32, at offset: Int64, count: Int, into spare: inout ByteBuffer?) -> ByteBuffer? {
        #if os(Linux)
        let (buffer, result) = fill(spare.take(), count: count) { raw in
            var vector = iovec(iov_base: raw.baseAddress, iov_len: count)
            return linuxPreadv2(fd, &vector, 1, off_t(offset), rwfNoWait)
        }
        guard result >= 0 else {
            spare = buffer
            return nil
        }
        return buffer
        #else
        return nil
        #endif
    }

    /// One `pread` of up to `count` bytes at `offset` on the calling
    /// thread, into `spare` (cleared first; new storage if it is shared) or
    /// a new buffer of `count` bytes.
    public static func read(_ fd: Int32, at offset: Int64, count: Int, into spare: consuming ByteBuffer? = nil,
                            failure: (Int32) -> any Error) throws -> ByteBuffer {
        let (buffer, result) = fill(spare.take(), count: count) { raw in pread(fd, raw.baseAddress, count, off_t(offset)) }
        guard result >= 0 else { throw failure(errno) }
        return buffer
    }

    /// `spare` (cleared; new storage if it is shared) or a new buffer,
    /// with what `read` put into its first `count` bytes, and `read`'s
    /// result (negative: nothing read, errno set).
    private static func fill(_ spare: consuming ByteBuffer?, count: Int,
                             _ read: (UnsafeMutableRawBufferPointer) -> Int) -> (ByteBuffer, Int) {
        // Taken, not bound: a binding would be a second reference.
        var buffer = spare.take() ?? ByteBufferAllocator().buffer(capacity: count)
        buffer.clear()
        var result = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            result = read(raw)
            return max(result, 0)
        }
        return (buffer, result)
    }

    /// Where a buffer's bytes live: the same after a read into it only
    /// when nothing else held it.
    private static func storage(of buffer: ByteBuffer) -> UInt {
        buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    }
}

/// Hands a buffer to work on another thread and back without a second
/// reference: a buffer captured by a closure, or returned through the
/// thread pool's result, stays referenced until that thread gets round to
/// dropping it, and writing into it again then copies it into new storage.
/// The worker takes it, uses it and puts it back before it returns; the
/// owner takes it once it has awaited the worker. Never touched by two
/// threads at once: the await orders them.
public final class BufferHandoff: @unchecked Sendable {
    private var buffer: ByteBuffer?

    public init(_ buffer: consuming ByteBuffer?) { self.buffer = buffer }

    public func take() -> ByteBuffer? { buffer.take() }

    public func put(_ buffer: consuming ByteBuffer) { self.buffer = buffer }
}

#if os(Linux)
/// preadv2(2), which the Glibc module does not export (it needs
/// `_GNU_SOURCE`), and its flag that refuses to wait for the disk.
@_silgen_name("preadv2")
private func linuxPreadv2(_ fd: Int32, _ vector: UnsafePointer<iovec>, _ count: Int32, _ offset: off_t, _ flags: Int32) -> Int
private let rwfNoWait: Int32 = 0x0000_0008
#endif
