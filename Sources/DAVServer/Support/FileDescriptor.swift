import CoreMetrics
import Foundation
import Hummingbird
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor, closed when the last reference goes, with the
/// chunked reads and writes the body streams need: a read of pages the page
/// cache holds is copied on the calling thread, anything that may wait for
/// the disk runs on the blocking pool.
final class FileDescriptor: Sendable {
    let fd: Int32

    init(_ fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    /// Reads up to `count` bytes at `offset` on the calling thread; an
    /// empty buffer at the end.
    func readNow(at offset: Int64, count: Int) throws -> ByteBuffer {
        try RecyclingReader.read(fd, at: offset, count: count, failure: Self.readFailure)
    }

    @Sendable static func readFailure(_ code: Int32) -> any Error {
        ProviderError.local("cannot read content: \(String(cString: strerror(code)))")
    }

    /// A new file (it must not exist), for writing. Blocking: on a busy
    /// disk the inode allocation alone can take milliseconds.
    static func create(_ url: URL) throws -> FileDescriptor {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw error("cannot create upload file", errno) }
        return FileDescriptor(fd)
    }

    /// Appends the buffer on the calling thread (a blocking one); returns
    /// the byte count.
    func writeNow(_ buffer: ByteBuffer) throws -> Int64 {
        try buffer.withUnsafeReadableBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(self.fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Self.error("cannot write upload file", errno)
                }
                done += n
            }
            return Int64(done)
        }
    }

    /// Starts the disk writing `count` bytes from `offset`, without waiting
    /// for it (sync_file_range(2) with `SYNC_FILE_RANGE_WRITE`). Advisory:
    /// what fails here fails again, and is reported, at the `sync()` that
    /// makes the file durable.
    func startWriteback(from offset: Int64, count: Int64) {
        #if os(Linux)
        _ = linuxSyncFileRange(fd, offset, count, 2 /* SYNC_FILE_RANGE_WRITE */)
        #endif
    }

    func sync() async throws {
        try await blocking {
            guard fsync(self.fd) == 0 else { throw Self.error("cannot sync upload file", errno) }
        }
    }

    static func error(_ what: String, _ code: Int32) -> ProviderError {
        if code == ENOSPC || code == EDQUOT { return .localNoSpace }
        return .local("\(what): \(String(cString: strerror(code)))")
    }

    /// The size of a body's reads.
    static let chunkSize: Int64 = 256 * 1024

    /// Streams `range` of the file; `available(end)` waits until the file is
    /// written up to `end` (it may still grow, for a download in flight),
    /// returns how far it is, and throws when the writer failed. The
    /// connection paces the reads: at most two 256 KiB chunks wait for its
    /// event loop (`WritesInFlight`), beside what its channel holds until the
    /// client takes it. Chunks are read into recycled buffers
    /// (`RecyclingReader`).
    ///
    /// Chunks the page cache holds are read in place, for a whole file and
    /// for a download alike: a download's bytes were written a moment
    /// before, so they are in the page cache, and reading them in place
    /// spares each chunk the hop to the pool and back. `connection`: the
    /// event loop of the client's channel. `readInPlace` (for the tests)
    /// hears how many chunks were, once the body is written.
    static func body(range: ClosedRange<Int64>, connection: any EventLoop,
                     open: @escaping @Sendable () throws -> FileDescriptor,
                     available: @escaping @Sendable (Int64) async throws -> Int64,
                     readInPlace: (@Sendable (Int) -> Void)? = nil) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            let inFlight = WritesInFlight(on: connection)
            var file: FileDescriptor?
            var offset = range.lowerBound
            let end = range.upperBound + 1
            // Two chunks may wait for the connection: the third before is free.
            var reader = RecyclingReader(cachedInPlaceFirst: true, reuseAfter: 3)
            while offset < end {
                let ready = min(try await available(min(offset + chunkSize, end)), end)
                guard ready > offset else {
                    throw ProviderError.upstream(.io("the content ended after \(offset) of \(end) bytes"))
                }
                let descriptor = try file ?? open()
                file = descriptor
                while offset < ready {
                    let chunk = try await reader.read(descriptor.fd, at: offset, count: Int(min(chunkSize, ready - offset)),
                                                      failure: readFailure)
                    guard chunk.readableBytes > 0 else {
                        throw ProviderError.local("cached content ended early")
                    }
                    offset += Int64(chunk.readableBytes)
                    ServerMetrics.bytesSent.increment(by: chunk.readableBytes)
                    try await inFlight.write(chunk, to: &writer)
                }
            }
            readInPlace?(reader.cachedInPlace)
            try await writer.finish(nil)
        }
    }
}

#if os(Linux)
/// sync_file_range(2), which the Glibc module does not export (it needs
/// `_GNU_SOURCE`).
@_silgen_name("sync_file_range")
private func linuxSyncFileRange(_ fd: Int32, _ offset: Int64, _ count: Int64, _ flags: UInt32) -> Int32
#endif
