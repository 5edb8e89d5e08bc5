@testable import DAVServer
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A GET's body over a file a download is still writing: each chunk is
/// read once the download says it is there, and, being just written, it is
/// read in place from the page cache rather than on the blocking pool.
@Suite struct DownloadBodyTests {
    /// Takes each chunk on the connection's event loop and keeps a copy,
    /// letting go of the buffer as a connection does once it is sent.
    struct CopyingWriter: ResponseBodyWriter {
        let loop: any EventLoop
        let received: NIOLockedValueBox<[UInt8]>

        mutating func write(_ buffer: ByteBuffer) async throws {
            let received = self.received
            try await loop.submit { received.withLockedValue { $0 += buffer.readableBytesView } }.get()
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    @Test("a download's chunks arrive whole and in order, read in place as the download writes them")
    func downloadReadInPlace() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID().uuidString)").path
        let writeFD = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(writeFD >= 0)
        defer { close(writeFD); unlink(path) }

        let size = 4 * 1024 * 1024 + 100
        let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }
        // The download: bytes are written only when the reader asks for
        // them, so the file is never ahead of what `available` answered.
        let written = NIOLockedValueBox(0)
        let available: @Sendable (Int64) async throws -> Int64 = { wanted in
            written.withLockedValue { done in
                let upTo = min(Int(wanted), size)
                if upTo > done {
                    let n = content[done..<upTo].withUnsafeBytes { pwrite(writeFD, $0.baseAddress, upTo - done, off_t(done)) }
                    precondition(n == upTo - done)
                    done = upTo
                }
                return Int64(done)
            }
        }
        let inPlace = NIOLockedValueBox(-1)
        let body = FileDescriptor.body(range: 0...Int64(size - 1), connection: group.next(),
                                       open: {
                                           let fd = open(path, O_RDONLY)
                                           guard fd >= 0 else { throw POSIXError(.ENOENT) }
                                           return FileDescriptor(fd)
                                       }, available: available,
                                       readInPlace: { count in inPlace.withLockedValue { $0 = count } })
        let received = NIOLockedValueBox<[UInt8]>([])
        let writer = CopyingWriter(loop: group.next(), received: received)
        do {
            try await body.write(writer)
        } catch {
            try await group.shutdownGracefully()
            throw error
        }

        #expect(received.withLockedValue { $0 } == content)
        // 16 chunks of 256 KiB (and the 100-byte tail, read directly, never
        // counted); the first three go to the pool, as no sent buffer has
        // come back to be read into yet.
        let chunks = inPlace.withLockedValue { $0 }
        #expect(chunks >= 1 && chunks <= 13, "\(chunks) of 16 chunks read in place")
        try await group.shutdownGracefully()
    }
}
