import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads a file in large chunks for a stream that sends them on (a GET's
/// body, an upload's request body), each into the buffer the stream sent
/// two chunks before, which the connection has let go of by then.
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

    private var sentLast: ByteBuffer?
    private var sentBefore: ByteBuffer?
    /// How many reads went into a recycled buffer (for the tests).
    private(set) var recycled = 0

    public init() {}

    /// Up to `count` bytes of `fd` at `offset` (fewer at the end of the
    /// file), read on the blocking pool unless small. `failure` makes the
    /// error of a failed `pread` from its errno.
    public mutating func read(_ fd: Int32, at offset: Int64, count: Int,
                              failure: @escaping @Sendable (Int32) -> any Error) async throws -> ByteBuffer {
        let chunk: ByteBuffer
        if count <= Self.inPlaceLimit {
            chunk = try Self.read(fd, at: offset, count: count, failure: failure)
        } else {
            // The buffer goes to the pool thread and back in a box, neither
            // captured nor returned: a copy left in the closure, or in the
            // pool's result until its thread gets round to dropping it,
            // would be a second reference when it is next read into.
            let handoff = BufferHandoff(sentBefore.take())
            let reused = try await blocking {
                var spare = handoff.take()
                let storage = spare.map(Self.storage)
                let read = try Self.read(fd, at: offset, count: count, into: spare.take(), failure: failure)
                let reused = storage != nil && Self.storage(of: read) == storage
                handoff.put(read)
                return reused
            }
            chunk = handoff.take() ?? ByteBuffer()
            if reused { recycled += 1 }
        }
        (sentBefore, sentLast) = (sentLast, chunk)
        return chunk
    }

    /// One `pread` of up to `count` bytes at `offset` on the calling
    /// thread, into `spare` (cleared first; new storage if it is shared) or
    /// a new buffer of `count` bytes.
    public static func read(_ fd: Int32, at offset: Int64, count: Int, into spare: consuming ByteBuffer? = nil,
                            failure: (Int32) -> any Error) throws -> ByteBuffer {
        // Taken, not bound: a binding would be a second reference.
        var buffer = spare.take() ?? ByteBufferAllocator().buffer(capacity: count)
        buffer.clear()
        var result = 0
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
            result = pread(fd, raw.baseAddress, count, off_t(offset))
            return max(result, 0)
        }
        guard result >= 0 else { throw failure(errno) }
        return buffer
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
