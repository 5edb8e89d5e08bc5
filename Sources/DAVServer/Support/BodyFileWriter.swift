import Crypto
import Foundation
import NIOCore
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a request body to a new file: chunks are gathered into writes of
/// about 1 MiB done off the event loops (hashed there too, when asked),
/// and the file is fsynced before it counts as written, unless the body is
/// small enough for the provider to journal its bytes (then they are
/// returned instead, and no file is made). Memory stays at about 1 MiB
/// however large the body.
struct BodyFileWriter {
    static let bufferSize = 1 << 20

    /// How much written data may wait in the page cache before the disk is
    /// told to start on it. Without this a 1 GiB body sat dirty in memory
    /// until its fsync, which then wrote all of it while the client waited:
    /// 1.5 s of a 5.5 s PUT on this machine. Started as it arrives, the
    /// writing overlaps the receiving and the fsync waits for the tail.
    static let writebackStep: Int64 = 8 << 20

    /// What was written: the byte count and, when asked for, the SHA-1 of
    /// the bytes, as ownCloud clients (rclone) read it back from
    /// `oc:checksums`.
    struct Written {
        var count: Int64
        var sha1: String?
        var checksum: String? { sha1.map { "SHA1:" + $0 } }
        /// The bytes, when at most `inlineLimit`: no file was made.
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
    /// and leaves those bytes in the file. A large body's file is created
    /// in the hop of its first write, not on the event loop; a body within
    /// `inlineLimit` makes none (its bytes are returned). `hashing`: the
    /// SHA-1 is computed (see `OwnCloudPut.hashesBody` for who needs it).
    static func write<Body: AsyncSequence>(_ body: Body, to url: URL, inlineLimit: Int = 0,
                                           keepingPartial: Bool = false, hashing: Bool) async throws -> Written
    where Body.Element == ByteBuffer {
        // Settled: what the writes done so far made.
        var file: FileDescriptor?
        var total: Int64 = 0
        var hash = hashing ? Insecure.SHA1() : nil
        // The request's chunks, copied into one buffer of up to 1 MiB that
        // is hashed and written in one hop: one write(2) a MiB rather than
        // one per chunk, and the connection's read buffers are let go at
        // once rather than held until the hop (a memcpy a byte, cheap beside
        // the TLS that decrypted it). One such write runs while the next MiB
        // gathers, so hashing and writing overlap the receiving: hashed on
        // the event loop, in turn with it, SHA-1 was a fifth of a 1 GiB
        // PUT's time. Two buffers take turns, each reused in place.
        var gathered = ByteBuffer()
        // The buffer goes to the write and back through a handoff: a copy
        // held by the task or the pool thread a moment longer would make
        // the next gather copy it into new storage (a fresh 1 MiB mapping,
        // faulted in page by page).
        var inFlight: (task: Task<Step, any Error>, handoff: BufferHandoff)?
        var handed: Int64 = 0
        var writebackFrom: Int64 = 0
        /// Waits for the write in flight; its buffer becomes the spare.
        func settle() async throws -> ByteBuffer {
            guard let running = inFlight else { return ByteBuffer() }
            inFlight = nil
            let step = try await running.task.value
            file = step.file
            total += step.written
            hash = step.hash
            return running.handoff.take() ?? ByteBuffer()
        }
        func flush() async throws {
            var spare = try await settle()
            let end = handed + Int64(gathered.readableBytes)
            let writeback = end - writebackFrom >= writebackStep ? writebackFrom..<end : nil
            if let writeback { writebackFrom = writeback.upperBound }
            handed = end
            let (handoff, opened, state) = (BufferHandoff(gathered), file, hash)
            // Cleared in place once the write before let go of it (else
            // new storage: a cost, never a corruption).
            spare.clear()
            gathered = spare
            inFlight = (Task { try await append(handoff, hashing: state, to: opened, creating: url, writeback: writeback) }, handoff)
        }
        do {
            for try await var chunk in body {
                // Handed over before it would pass 1 MiB: the buffer never
                // doubles past it.
                if gathered.readableBytes > 0, gathered.readableBytes + chunk.readableBytes > bufferSize { try await flush() }
                gathered.writeBuffer(&chunk)
            }
            // Not an empty body: SQLite stores a blob bound from no bytes
            // as NULL, and a NULL row is not a write kept in the journal.
            if handed == 0, gathered.readableBytes > 0, gathered.readableBytes <= inlineLimit {
                // The whole body, small enough for the journal: no file is
                // made (the provider's write makes none either, see
                // `WriteRequest.content`), only the hash (when asked), in place.
                gathered.withUnsafeReadableBytes { hash?.update(bufferPointer: $0) }
                return Written(count: Int64(gathered.readableBytes), sha1: hash?.finalize().hexEncoded(),
                               content: Data(gathered.readableBytesView))
            }
            // Also for an empty body: the file is made here then.
            if gathered.readableBytes > 0 || handed == 0 { try await flush() }
            _ = try await settle()
            try await file?.sync()
            return Written(count: total, sha1: hash?.finalize().hexEncoded(), content: nil)
        } catch {
            // The write in flight ends before anything else happens to its file.
            _ = try? await settle()
            // A failure of the body, not of the disk: what arrived is kept.
            if keepingPartial, !(error is ProviderError) {
                if gathered.readableBytes > 0, (try? await flush()) != nil { _ = try? await settle() }
                if let file, total > 0, (try? await file.sync()) != nil { throw Cut(received: total, cause: error) }
            }
            // Only a file this call made (another's with the name stays).
            if file != nil { unlink(url.path) }
            throw error
        }
    }

    /// What one hop made: the file (created by the first), the bytes it
    /// wrote, and the hash with them.
    private struct Step: Sendable {
        var file: FileDescriptor
        var written: Int64
        var hash: Insecure.SHA1?
    }

    /// Hashes the handed buffer and writes it at the end of `opened`, or of
    /// `url` made now, off the event loops; then starts the disk on
    /// `writeback`. The buffer is put back for the caller.
    private static func append(_ handoff: BufferHandoff, hashing state: Insecure.SHA1?, to opened: FileDescriptor?, creating url: URL,
                               writeback: Range<Int64>?) async throws -> Step {
        try await blocking {
            let buffer = handoff.take() ?? ByteBuffer()
            defer { handoff.put(buffer) }
            let descriptor = try opened ?? FileDescriptor.create(url)
            do {
                var hash = state
                buffer.withUnsafeReadableBytes { hash?.update(bufferPointer: $0) }
                let written = try descriptor.writeNow(buffer)
                if let writeback { descriptor.startWriteback(from: writeback.lowerBound, count: Int64(writeback.count)) }
                return Step(file: descriptor, written: written, hash: hash)
            } catch {
                if opened == nil { unlink(url.path) }
                throw error
            }
        }
    }
}
