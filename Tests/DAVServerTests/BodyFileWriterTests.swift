import Crypto
@testable import DAVServer
import Foundation
import NIOCore
import Testing

/// A request body into a file: gathered into 1 MiB writes, the disk started
/// on every 8 MiB as it arrives, synced at the end. Whatever the chunking,
/// the file holds exactly the body.
@Suite struct BodyFileWriterTests {
    /// `content` cut into chunks of varying sizes, as a connection delivers them.
    static func chunks(of content: [UInt8]) -> AsyncStream<ByteBuffer> {
        AsyncStream { continuation in
            var offset = 0, step = 0
            while offset < content.count {
                let size = min([1, 4_093, 65_536, 131_071, 700_001][step % 5], content.count - offset)
                continuation.yield(ByteBuffer(bytes: content[offset..<(offset + size)]))
                offset += size
                step += 1
            }
            continuation.finish()
        }
    }

    @Test("a body across several writeback steps lands whole, with its size, and its SHA-1 only when asked", arguments: [true, false])
    func largeBody(hashing: Bool) async throws {
        let size = Int(BodyFileWriter.writebackStep) * 2 + 3 * (1 << 20) + 12_345
        let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
        defer { try? random.close() }
        let content = [UInt8](try #require(try random.read(upToCount: size)))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bodywriter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body")

        let written = try await BodyFileWriter.write(Self.chunks(of: content), to: file, inlineLimit: 64 * 1024, hashing: hashing)
        #expect(written.count == Int64(size))
        #expect(written.content == nil, "a large body is in the file, not handed back")
        #expect(written.sha1 == (hashing ? Insecure.SHA1.hash(data: content).map { String(format: "%02x", $0) }.joined() : nil))
        #expect(try Data(contentsOf: file) == Data(content))
    }

    @Test("a small body is handed back for the journal, and no file is made")
    func smallBody() async throws {
        let content = Array("a small body".utf8)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bodywriter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body")

        let written = try await BodyFileWriter.write(Self.chunks(of: content), to: file, inlineLimit: 64 * 1024, hashing: false)
        #expect(written.count == Int64(content.count))
        #expect(written.content == Data(content))
        #expect(written.sha1 == nil, "not asked to hash")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test("the journal's limit: a body of exactly the limit is handed back without a file, one byte more is written; an empty one makes an empty file",
          arguments: [(65_536, 65_536, true), (65_537, 65_536, false), (0, 65_536, false), (0, 0, false)])
    func inlineLimitEdges(size: Int, limit: Int, handedBack: Bool) async throws {
        let content = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bodywriter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body")

        let written = try await BodyFileWriter.write(Self.chunks(of: content), to: file, inlineLimit: limit, hashing: true)
        #expect(written.count == Int64(size))
        #expect(written.content == (handedBack ? Data(content) : nil))
        #expect(written.sha1 == Insecure.SHA1.hash(data: content).map { String(format: "%02x", $0) }.joined())
        if handedBack {
            #expect(!FileManager.default.fileExists(atPath: file.path))
        } else {
            #expect(try Data(contentsOf: file) == Data(content))
        }
    }

    @Test("a small body never touches the file system: a file at its name keeps its bytes; a larger one refuses to overwrite it")
    func bodyOntoExistingFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bodywriter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("body")
        try Data("someone else's".utf8).write(to: file)

        let small = try await BodyFileWriter.write(Self.chunks(of: Array("mine".utf8)), to: file, inlineLimit: 64 * 1024, hashing: false)
        #expect(small.content == Data("mine".utf8))
        #expect(try Data(contentsOf: file) == Data("someone else's".utf8))
        await #expect(throws: (any Error).self) {
            _ = try await BodyFileWriter.write(Self.chunks(of: Array("mine".utf8)), to: file, inlineLimit: 2, hashing: false)
        }
        #expect(try Data(contentsOf: file) == Data("someone else's".utf8))
    }
}
