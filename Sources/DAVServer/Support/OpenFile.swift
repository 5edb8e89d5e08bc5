import CoreMetrics
import Foundation
import Hummingbird
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// A content file opened before the response headers are written, so the
/// bytes served are those of the inode whose size was announced, even if the
/// cache replaces the file meanwhile.
struct OpenFile: Sendable {
    let descriptor: FileDescriptor
    let size: Int64

    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProviderError.local("cannot open cached content: \(String(cString: strerror(errno)))") }
        descriptor = FileDescriptor(fd)
        // The size of this inode (reads use pread, so the offset is free).
        size = Int64(lseek(fd, 0, SEEK_END))
    }

    /// Up to this many bytes are read before the response is written and
    /// sent with its head: one TLS record and one write(2) for a small
    /// file, where a streamed body took two of each (the head flushed on
    /// its own); issue 14's 4 KiB GET profile.
    static let wholeBodyLimit: Int64 = 64 * 1024

    /// `lease` (a reader's hold on the content) lives as long as the body
    /// reads the file: until its last byte, or, for a small body read
    /// whole here, until it is read. `connection`: the event loop of the
    /// client's channel, which paces a streamed body.
    func body(range: ClosedRange<Int64>, holding lease: ReadLease? = nil, connection: any EventLoop) throws -> ResponseBody {
        let descriptor = self.descriptor, size = self.size
        if range.count <= Self.wholeBodyLimit {
            let bytes = try withExtendedLifetime(lease) { try descriptor.readNow(at: range.lowerBound, count: Int(range.count)) }
            guard bytes.readableBytes == range.count else { throw ProviderError.local("cached content ended early") }
            ServerMetrics.bytesSent.increment(by: bytes.readableBytes)
            return ResponseBody(byteBuffer: bytes)
        }
        return FileDescriptor.body(range: range, connection: connection, open: { descriptor },
                                   available: { _ in withExtendedLifetime(lease) { size } })
    }
}
