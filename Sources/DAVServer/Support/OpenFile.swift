import Foundation
import Hummingbird
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// A content file opened before the response headers are written, so the
/// bytes served are those of the inode whose size was announced, even if the
/// cache replaces the file meanwhile. Closed when the last reference goes.
final class OpenFile: Sendable {
    let descriptor: Int32
    let size: Int64

    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProviderError.local("cannot open cached content: \(String(cString: strerror(errno)))") }
        var st = stat()
        fstat(fd, &st)
        descriptor = fd
        size = Int64(st.st_size)
    }

    deinit { close(descriptor) }

    /// Streams a byte range in 256 KiB reads off the cooperative pool; the
    /// writer applies back pressure, so memory stays at one chunk in flight.
    func body(range: ClosedRange<Int64>) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            var offset = range.lowerBound
            let end = range.upperBound + 1
            while offset < end {
                let count = Int(min(Int64(256 * 1024), end - offset))
                let at = offset
                let chunk: ByteBuffer = try await blocking {
                    var buffer = ByteBufferAllocator().buffer(capacity: count)
                    var result = 0
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                        result = pread(self.descriptor, raw.baseAddress, count, off_t(at))
                        return max(result, 0)
                    }
                    guard result > 0 else { throw ProviderError.local("cached content ended early or cannot be read") }
                    return buffer
                }
                offset += Int64(chunk.readableBytes)
                try await writer.write(chunk)
            }
            try await writer.finish(nil)
        }
    }
}
