import Foundation
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a request body to a new file: chunks are gathered into 1 MiB
/// writes done off the cooperative pool, and the file is fsynced before it
/// counts as written. Memory stays at one buffer however large the body.
struct BodyFileWriter {
    static let bufferSize = 1 << 20

    /// Streams `body` into `url` (created, must not exist); returns the byte
    /// count. On any error the file is removed and the error rethrown.
    static func write<Body: AsyncSequence>(_ body: Body, to url: URL) async throws -> Int64 where Body.Element == ByteBuffer {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw error("cannot create upload file", errno) }
        let file = Descriptor(fd)
        do {
            var total: Int64 = 0
            var pending = ByteBufferAllocator().buffer(capacity: bufferSize)
            for try await chunk in body {
                var chunk = chunk
                pending.writeBuffer(&chunk)
                if pending.readableBytes >= bufferSize {
                    total += try await file.write(pending)
                    pending.clear()
                }
            }
            if pending.readableBytes > 0 {
                total += try await file.write(pending)
            }
            try await blocking {
                guard fsync(file.fd) == 0 else { throw error("cannot sync upload file", errno) }
            }
            return total
        } catch {
            unlink(url.path)
            throw error
        }
    }

    static func error(_ what: String, _ code: Int32) -> ProviderError {
        if code == ENOSPC || code == EDQUOT { return .upstream(.noSpace) }
        return .local("\(what): \(String(cString: strerror(code)))")
    }

    /// Owns the descriptor; closed when the write is over, however it ends.
    final class Descriptor: Sendable {
        let fd: Int32
        init(_ fd: Int32) { self.fd = fd }
        deinit { close(fd) }

        func write(_ buffer: ByteBuffer) async throws -> Int64 {
            try await blocking {
                try buffer.withUnsafeReadableBytes { raw in
                    var done = 0
                    while done < raw.count {
                        let n = Glibc.write(self.fd, raw.baseAddress! + done, raw.count - done)
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw BodyFileWriter.error("cannot write upload file", errno)
                        }
                        done += n
                    }
                    return Int64(done)
                }
            }
        }
    }
}
