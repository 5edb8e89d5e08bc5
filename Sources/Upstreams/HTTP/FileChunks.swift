import NIOCore
import ProviderCore
#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor, closed when the last holder lets go: the HTTP
/// client may still hold a request body after the answer has arrived, and
/// a descriptor closed under it could be reused for another file.
final class ReadOnlyFile: Sendable {
    let fd: Int32

    init(_ path: String) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DirectoryStore.error(errno) }
    }

    deinit { close(fd) }
}

/// A file's bytes (all of them, or one part of a multipart upload) as
/// request body chunks, read with `pread` on the blocking pool one MiB at a
/// time as the connection asks for more, into recycled buffers
/// (`RecyclingReader`), so an upload never holds more than a few chunks in
/// memory.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let file: ReadOnlyFile
    let range: Range<Int64>
    /// Counts each chunk as the connection takes it.
    let progress: UploadProgress?
    static let chunkSize = 1 << 20

    init(file: ReadOnlyFile, range: Range<Int64>, progress: UploadProgress?) {
        self.file = file
        self.range = range
        self.progress = progress
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: ReadOnlyFile
        let end: Int64
        let progress: UploadProgress?
        var offset: Int64
        var reader = RecyclingReader()

        mutating func next() async throws -> ByteBuffer? {
            guard offset < end else { return nil }
            let want = Int(Swift.min(Int64(FileChunks.chunkSize), end - offset))
            let buffer = try await reader.read(file.fd, at: offset, count: want) { DirectoryStore.error($0) }
            if buffer.readableBytes == 0 { throw UpstreamError.io("the local file shrank during the upload") }
            offset += Int64(buffer.readableBytes)
            progress?.add(Int64(buffer.readableBytes))
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(file: file, end: range.upperBound, progress: progress, offset: range.lowerBound)
    }
}
