import Foundation
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a request body to a new file: chunks are gathered into about
/// 1 MiB of writes done off the cooperative pool, and the file is fsynced
/// before it counts as written. Memory stays at about 1 MiB however large
/// the body.
struct BodyFileWriter {
    static let bufferSize = 1 << 20

    /// Streams `body` into `url` (created, must not exist); returns the byte
    /// count. On any error the file is removed and the error rethrown.
    static func write<Body: AsyncSequence>(_ body: Body, to url: URL) async throws -> Int64 where Body.Element == ByteBuffer {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileDescriptor.error("cannot create upload file", errno) }
        let file = FileDescriptor(fd)
        do {
            var total: Int64 = 0
            // The request's own buffers, gathered (not copied) until about
            // 1 MiB, then written in one hop: no copy, no big allocation.
            var pending: [ByteBuffer] = []
            var pendingBytes = 0
            for try await chunk in body {
                pending.append(chunk)
                pendingBytes += chunk.readableBytes
                if pendingBytes >= bufferSize {
                    total += try await file.write(pending)
                    pending.removeAll(keepingCapacity: true)
                    pendingBytes = 0
                }
            }
            if pendingBytes > 0 {
                total += try await file.write(pending)
            }
            try await file.sync()
            return total
        } catch {
            unlink(url.path)
            throw error
        }
    }
}
