import Foundation
import NIOCore
import Testing
@testable import Upstreams

#if canImport(Glibc)
import Glibc
#endif

@Suite("Gathered writes: body chunks written together at their offsets")
struct GatheredWritesTests {
    /// Chunks of uneven sizes, empty ones among them, more than one
    /// `pwritev` takes (64 vectors): each byte lands at its offset, and
    /// `add` asks for a write only once the threshold is reached.
    @Test("uneven and empty chunks, over 64 of them, land at their offsets")
    func unevenChunks() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gathered-\(UUID().uuidString)").path
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }

        var expected = [UInt8](repeating: 0, count: 1000)   // the hole before the first offset reads as zeros
        var gathered = GatheredWrites(threshold: 4096, maxDelay: .seconds(3600))
        var offset: Int64 = 1000
        var writes = 0
        for index in 0..<150 {
            let length = index % 7 == 0 ? 0 : (index * 37) % 91 + 1
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) }
            expected += bytes
            let before = gathered.count
            let full = gathered.add(ByteBuffer(bytes: bytes), at: offset)
            if full {
                #expect(gathered.count >= 4096 && before < 4096)
                try gathered.write(to: fd)
                writes += 1
            } else {
                #expect(gathered.count < 4096)
            }
            offset += Int64(length)
        }
        if gathered.count > 0 { try gathered.write(to: fd) }
        #expect(gathered.count == 0)
        #expect(writes >= 1)

        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(written == Data(expected))
    }

    @Test("bytes are held no longer than the delay past the chunk that brought the first of them")
    func heldAtMostTheDelay() throws {
        var gathered = GatheredWrites(threshold: 1 << 20, maxDelay: .milliseconds(50))
        let first = gathered.add(ByteBuffer(bytes: [1]), at: 0)
        #expect(!first, "one byte, at once: held")
        Thread.sleep(forTimeInterval: 0.06)
        let second = gathered.add(ByteBuffer(bytes: [2]), at: 1)
        #expect(second, "the first byte was held 60 ms: write now")
        #expect(gathered.count == 2)
    }

    @Test("a write that fails reports the error and lets go of the chunks")
    func failedWrite() throws {
        var gathered = GatheredWrites(threshold: 1)
        let full = gathered.add(ByteBuffer(bytes: [1, 2, 3]), at: 0)
        #expect(full)
        var failure: (any Error)?
        do { try gathered.write(to: -1) } catch { failure = error }
        #expect(failure != nil)
        #expect(gathered.count == 0)
    }
}
