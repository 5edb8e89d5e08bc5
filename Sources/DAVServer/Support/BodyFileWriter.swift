import Crypto
import Foundation
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a request body to a new file: chunks are gathered into writes of
/// about 1 MiB done off the event loops, and the file is fsynced before
/// it counts as written, unless the body is small enough for the provider
/// to journal its bytes (then they are returned instead). Memory stays at
/// about 1 MiB however large the body.
struct BodyFileWriter {
    static let bufferSize = 1 << 20

    /// How much written data may wait in the page cache before the disk is
    /// told to start on it. Without this a 1 GiB body sat dirty in memory
    /// until its fsync, which then wrote all of it while the client waited:
    /// 1.5 s of a 5.5 s PUT on this machine. Started as it arrives, the
    /// writing overlaps the receiving and the fsync waits for the tail.
    static let writebackStep: Int64 = 8 << 20

    /// What was written: the byte count and the SHA-1 of the bytes, as
    /// ownCloud clients (rclone) read it back from `oc:checksums`.
    struct Written {
        var count: Int64
        var sha1: String
        var checksum: String { "SHA1:" + sha1 }
        /// The bytes, when at most `inlineLimit`: the file was not fsynced.
        var content: Data?
    }

    /// The body ended before its end (a cut connection): `received` bytes
    /// are in the file, synced, and the caller owns it.
    struct Cut: Error {
        var received: Int64
        var cause: any Error
    }

    /// Streams `body` into `url` (created, must not exist). On any error the
    /// file is removed and the error rethrown; with `keepingPartial`, a body
    /// that ends early after some bytes were written throws `Cut` instead
    /// and leaves those bytes in the file. The file is created in the
    /// hop of its first write, not on the event loop: on a busy disk the
    /// inode allocation alone can take milliseconds, and a small body's one
    /// hop then does both.
    static func write<Body: AsyncSequence>(_ body: Body, to url: URL, inlineLimit: Int = 0,
                                           keepingPartial: Bool = false) async throws -> Written
    where Body.Element == ByteBuffer {
        var file: FileDescriptor?
        var total: Int64 = 0
        // The request's chunks, copied into one buffer of up to 1 MiB that
        // is written in one hop and then reused: one write(2) a MiB rather
        // than one per chunk, and the connection's read buffers are let go
        // at once rather than held until the hop (a memcpy a byte, cheap
        // beside the TLS that decrypted it).
        var gathered = ByteBuffer()
        var writebackFrom: Int64 = 0
        func flush() async throws {
            let end = total + Int64(gathered.readableBytes)
            let writeback = end - writebackFrom >= writebackStep ? writebackFrom..<end : nil
            let (descriptor, written) = try await append(gathered, to: file, creating: url, writeback: writeback)
            file = descriptor
            total += written
            if let writeback { writebackFrom = writeback.upperBound }
            // Cleared in place when the write has let go of it (else new
            // storage: a cost, never a corruption).
            gathered.clear()
        }
        do {
            var hash = Insecure.SHA1()
            for try await var chunk in body {
                chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                // Written before it would pass 1 MiB: the buffer never
                // doubles past it.
                if gathered.readableBytes > 0, gathered.readableBytes + chunk.readableBytes > bufferSize { try await flush() }
                gathered.writeBuffer(&chunk)
            }
            var content: Data?
            if total == 0 && gathered.readableBytes <= inlineLimit {
                content = Data(gathered.readableBytesView)
            }
            // Also for an empty body: the file is made here then.
            if gathered.readableBytes > 0 || file == nil { try await flush() }
            if content == nil { try await file?.sync() }
            return Written(count: total, sha1: hash.finalize().hexEncoded(), content: content)
        } catch {
            // A failure of the body, not of the disk: what arrived is kept.
            if keepingPartial, !(error is ProviderError) {
                if gathered.readableBytes > 0 { try? await flush() }
                if let file, total > 0, (try? await file.sync()) != nil { throw Cut(received: total, cause: error) }
            }
            // Only a file this call made (another's with the name stays).
            if file != nil { unlink(url.path) }
            throw error
        }
    }

    /// Writes `buffer` at the end of `opened`, or of `url` made now, off
    /// the event loops; then starts the disk on `writeback`.
    private static func append(_ buffer: ByteBuffer, to opened: FileDescriptor?, creating url: URL,
                               writeback: Range<Int64>?) async throws -> (FileDescriptor, Int64) {
        try await blocking {
            let descriptor = try opened ?? FileDescriptor.create(url)
            do {
                let written = try descriptor.writeNow(buffer)
                if let writeback { descriptor.startWriteback(from: writeback.lowerBound, count: Int64(writeback.count)) }
                return (descriptor, written)
            } catch {
                if opened == nil { unlink(url.path) }
                throw error
            }
        }
    }
}
