import Foundation
import NIOCore
@testable import ProviderCore
import Testing

/// Large reads for a stream go into the buffer it sent two (or
/// `reuseAfter`) chunks before, once nothing else holds it; a buffer still
/// held keeps its bytes.
@Suite("recycled read buffers")
struct RecyclingReaderTests {
    /// A file of `count` bytes, each its offset modulo 251 (no chunk
    /// repeats another at a multiple of the chunk size).
    func makeFile(_ count: Int) throws -> (URL, Int32, [UInt8]) {
        let bytes = (0..<count).map { UInt8($0 % 251) }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("recycle-\(UUID().uuidString)")
        try Data(bytes).write(to: url)
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        return (url, fd, bytes)
    }

    func address(_ buffer: ByteBuffer) -> UInt? {
        buffer.withUnsafeReadableBytes { $0.baseAddress.map { UInt(bitPattern: $0) } }
    }

    struct Failed: Error { var code: Int32 }

    @Test("a file read in chunks comes back whole and in order, the last chunk short, then empty; chunks let go of are read into again")
    func readsAndReuses() async throws {
        let chunk = 256 * 1024
        let (url, fd, bytes) = try makeFile(5 * chunk + 1000)
        defer { close(fd); try? FileManager.default.removeItem(at: url) }
        var reader = RecyclingReader()
        var received: [UInt8] = []
        var addresses: [UInt?] = []
        var offset = 0
        while true {
            let piece = try await reader.read(fd, at: Int64(offset), count: chunk) { Failed(code: $0) }
            if piece.readableBytes == 0 { break }
            received += piece.readableBytesView
            addresses.append(address(piece))
            offset += piece.readableBytes
        }
        #expect(received == bytes)
        #expect(addresses.count == 6)
        // Chunks 2 to 5 and the empty read at the end went into the storage
        // of the chunk two before: nothing held it.
        #expect(reader.recycled == 5)
        for n in 0..<(addresses.count - 2) {
            #expect(addresses[n + 2] == addresses[n], "chunk \(n + 2) has storage of its own")
        }
    }

    @Test("reuseAfter 3, as a GET's body reads with two chunks waiting for the connection: each read goes into the chunk three before, never into one of the last two")
    func reusesThirdBefore() async throws {
        let chunk = 256 * 1024
        let (url, fd, bytes) = try makeFile(7 * chunk)
        defer { close(fd); try? FileManager.default.removeItem(at: url) }
        var reader = RecyclingReader(cachedInPlaceFirst: true, reuseAfter: 3)
        var received: [UInt8] = []
        var addresses: [UInt?] = []
        // The last two chunks are still held (queued for the connection)
        // when the next is read.
        var held: [ByteBuffer] = []
        for n in 0..<7 {
            let piece = try await reader.read(fd, at: Int64(n * chunk), count: chunk) { Failed(code: $0) }
            received += piece.readableBytesView
            addresses.append(address(piece))
            held.append(piece)
            if held.count > 2 { held.removeFirst() }
        }
        #expect(received == bytes)
        #expect(reader.recycled == 4, "chunks 3 to 6 went into the storage of the chunk three before")
        #expect(reader.cachedInPlace == 4, "and were read in place: the stream kept up")
        for n in 0..<4 {
            #expect(addresses[n + 3] == addresses[n])
            #expect(addresses[n + 3] != addresses[n + 1] && addresses[n + 3] != addresses[n + 2])
        }
    }

    @Test("a chunk the connection still holds is never overwritten: the read two chunks later gets new storage")
    func heldChunkKeepsItsBytes() async throws {
        let chunk = 128 * 1024
        let (url, fd, bytes) = try makeFile(4 * chunk)
        defer { close(fd); try? FileManager.default.removeItem(at: url) }
        var reader = RecyclingReader()
        let first = try await reader.read(fd, at: 0, count: chunk) { Failed(code: $0) }
        _ = try await reader.read(fd, at: Int64(chunk), count: chunk) { Failed(code: $0) }
        let third = try await reader.read(fd, at: Int64(2 * chunk), count: chunk) { Failed(code: $0) }
        #expect(Array(first.readableBytesView) == Array(bytes[0..<chunk]), "the held chunk was overwritten")
        #expect(Array(third.readableBytesView) == Array(bytes[(2 * chunk)..<(3 * chunk)]))
        #expect(address(third) != address(first))
        #expect(reader.recycled == 0)
    }

    @Test("a buffer handed to a pool thread and back through a BufferHandoff is its only reference again: writing into it keeps its storage")
    func handoffComesBackUnshared() async throws {
        var buffer = ByteBufferAllocator().buffer(capacity: 1 << 20)
        buffer.writeRepeatingByte(1, count: 1000)
        let storage = buffer.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let handoff = BufferHandoff(buffer)
        buffer = ByteBuffer()
        for round in 0..<50 {
            let seen = try await blocking {
                let worked = handoff.take() ?? ByteBuffer()
                defer { handoff.put(worked) }
                return worked.readableBytes
            }
            #expect(seen == 1000)
            var back = try #require(handoff.take())
            back.clear()
            back.writeRepeatingByte(UInt8(round), count: 1000)
            #expect(back.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) } == storage, "round \(round) copied the buffer")
            handoff.put(back)
        }
    }

    @Test("a large read of cached pages is copied in place only while the stream has let go of the chunk sent two reads before; otherwise, for pages not cached, and for a reader not asked to, on the pool")
    func cachedPagesReadInPlaceWhileKeptUp() async throws {
        let chunk = 256 * 1024
        let (url, fd, bytes) = try makeFile(6 * chunk)
        defer { close(fd); try? FileManager.default.removeItem(at: url) }
        // Every chunk let go of at once, the file just written (in the page
        // cache): the first two go through the pool (nothing sent two reads
        // before yet), the other four are read in place.
        var reader = RecyclingReader(cachedInPlaceFirst: true)
        var pooled = RecyclingReader()
        var received: [UInt8] = [], receivedThroughPool: [UInt8] = []
        for n in 0..<6 {
            received += try await reader.read(fd, at: Int64(n * chunk), count: chunk) { Failed(code: $0) }.readableBytesView
            receivedThroughPool += try await pooled.read(fd, at: Int64(n * chunk), count: chunk) { Failed(code: $0) }.readableBytesView
        }
        #expect(received == bytes && receivedThroughPool == bytes)
        #expect(reader.cachedInPlace == 4)
        #expect(reader.recycled == 4 && pooled.recycled == 4)
        // A reader not asked to read in place (an upload's) never does.
        #expect(pooled.cachedInPlace == 0)
        // A stream that holds every chunk (a connection falling behind):
        // every read goes through the pool, into storage of its own.
        var lagging = RecyclingReader(cachedInPlaceFirst: true)
        var held: [ByteBuffer] = []
        for n in 0..<6 {
            held.append(try await lagging.read(fd, at: Int64(n * chunk), count: chunk) { Failed(code: $0) })
        }
        #expect(held.flatMap { Array($0.readableBytesView) } == bytes)
        #expect(lagging.cachedInPlace == 0)
        #expect(Set(held.map(address)).count == 6)
        // Pages the page cache lost: the read that would wait for the disk
        // goes to the pool, though the stream keeps up.
        var cold = RecyclingReader(cachedInPlaceFirst: true)
        for n in 0..<2 { _ = try await cold.read(fd, at: Int64(n * chunk), count: chunk) { Failed(code: $0) } }
        try #require(fsync(fd) == 0)
        try #require(posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED)) == 0)
        let far = try await cold.read(fd, at: Int64(5 * chunk), count: chunk) { Failed(code: $0) }
        #expect(Array(far.readableBytesView) == Array(bytes[(5 * chunk)...]))
        #expect(cold.cachedInPlace == 0)
    }

    @Test("a failed read throws the caller's error with its errno")
    func failure() async throws {
        var reader = RecyclingReader()
        await #expect(throws: Failed(code: EBADF)) {
            _ = try await reader.read(-1, at: 0, count: 256 * 1024) { Failed(code: $0) }
        }
        #expect(throws: Failed(code: EBADF)) {
            _ = try RecyclingReader.read(-1, at: 0, count: 100) { Failed(code: $0) }
        }
    }
}

extension RecyclingReaderTests.Failed: Equatable {}
