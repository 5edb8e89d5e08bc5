import AsyncHTTPClient
import DAVProtocol
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

extension WebDAVStore {
    public func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
                      observer: FetchObserver) async throws -> UpstreamEntry {
        var request = try self.request("GET", path)
        request.headers.add(name: "Accept-Encoding", value: "identity")
        if let range {
            request.headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound)")
        }
        let response = try await execute(request, deadline: headDeadline)
        let status = Int(response.status.code)
        // Where the first body byte belongs in the file.
        let bodyStart: Int64
        switch status {
        case 200:
            // A server may ignore Range (RFC 9110 section 14.2); the bytes
            // before and after the range are then read past.
            bodyStart = 0
        case 206 where range != nil:
            guard let start = response.headers.first(name: "Content-Range").flatMap(Self.contentRange)?.start else {
                await Self.discard(response.body)
                throw UpstreamError.io("206 Partial Content without a usable Content-Range")
            }
            bodyStart = start
        case 416 where range != nil:
            await Self.discard(response.body)
            throw UpstreamError.io("file ended before the requested range")
        default:
            await Self.discard(response.body)
            throw Self.error(status: status, operation: .read, credentials: credentialsSource)
        }
        let entry: UpstreamEntry
        do {
            entry = try await self.entry(path, answer: response.headers, status: status)
            try await observer.began(entry)
        } catch {
            await Self.discard(response.body)
            throw error
        }

        let whole = range == nil
        let fd = open(destination.path, O_WRONLY | O_CREAT | O_CLOEXEC | (whole ? O_EXCL : 0), 0o600)
        guard fd >= 0 else { throw DirectoryStore.error(errno) }
        var complete = false
        defer {
            close(fd)
            // A new file that did not fill is no content at all.
            if whole && !complete { unlink(destination.path) }
        }
        let first = range?.lowerBound ?? 0
        let last = range?.upperBound ?? Int64.max
        var position = bodyStart
        var written: Int64 = 0
        do {
            for try await chunk in response.body {
                let count = Int64(chunk.readableBytes)
                let from = max(position, first), to = min(position + count - 1, last)
                if from <= to {
                    // One network chunk (at most some 64 KiB) into the page cache
                    // costs microseconds; a hop to another thread would cost more.
                    try chunk.withUnsafeReadableBytes { bytes in
                        let slice = UnsafeRawBufferPointer(rebasing: bytes[Int(from - position)...Int(to - position)])
                        try Self.writeAll(fd, slice, at: from)
                    }
                    written += to - from + 1
                    observer.progressed(written)
                }
                position += count
                if position > last { break }
            }
        } catch {
            throw Self.transportError(error)
        }
        if let range, written != Int64(range.count) {
            throw UpstreamError.io("file ended before the requested range")
        }
        if whole {
            // Like the directory store's copies: durable before it counts as content.
            try await blocking { if fsync(fd) != 0 { throw DirectoryStore.error(errno) } }
        }
        if whole && written != entry.size {
            throw UpstreamError.io("the upstream sent \(written) of \(entry.size) bytes")
        }
        complete = true
        return entry
    }

    public func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        let source = try ReadOnlyFile(file.path)
        var st = Glibc.stat()
        guard fstat(source.fd, &st) == 0 else { throw DirectoryStore.error(errno) }
        let length = Int64(st.st_size)

        var request = try self.request("PUT", path)
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        // The file's own mtime, for upstreams that keep it (ownCloud,
        // Nextcloud, davgate); others ignore the header and use their clock.
        request.headers.add(name: "X-OC-Mtime", value: String(Int64(st.st_mtim.tv_sec)))
        var version: String?
        switch expecting {
        case .any:
            break
        case .absent:
            request.headers.add(name: "If-None-Match", value: "*")
        case .version(let expected):
            // The WebDAV If header (RFC 4918 section 10.4) rather than
            // If-Match: Apache marks an ETag weak during the second after a
            // change, and If-Match compares strongly (RFC 9110 section 13.1.1),
            // so a PUT right after a PUT would always fail. The If header's
            // ETag comparison is weak; the tag still names one size and mtime.
            version = expected
        }
        if let condition = try ifHeader(for: path, version: version) {
            request.headers.add(name: "If", value: condition)
        }
        request.body = .stream(FileChunks(file: source, length: length, progress: progress), length: .known(length))
        // The answer comes after the whole body: no deadline, the idle
        // read and write timeouts bound a stalled transfer.
        let answer = try await send(request, operation: .upload, deadline: .distantFuture)
        var entry = try await written(path)
        // Someone may have written again between our PUT and our PROPFIND:
        // then our bytes have the version the PUT answered with, not theirs.
        if let tag = answer.headers.first(name: "ETag").map(Self.version(ofETag:)), tag != entry.version {
            entry.version = tag
            entry.size = length
        }
        return entry
    }

    /// The entry for the bytes a GET is about to deliver, from its headers;
    /// a PROPFIND fills in when they do not tell the size or the version.
    func entry(_ path: ItemPath, answer headers: HTTPHeaders, status: Int) async throws -> UpstreamEntry {
        let size: Int64? = status == 206
            ? headers.first(name: "Content-Range").flatMap(Self.contentRange)?.total
            : headers.first(name: "Content-Length").flatMap { Int64($0) }
        let modified = headers.first(name: "Last-Modified").flatMap(HTTPDate.parse)
        let etag = headers.first(name: "ETag").map(Self.version(ofETag:))
        guard let size, let version = etag ?? modified.map({ PropfindAnswer.fallbackVersion(size: size, modified: $0) })
        else { return try await written(path) }
        return UpstreamEntry(name: path.last ?? "", isFolder: false, size: size,
                             modified: modified ?? Date(timeIntervalSince1970: 0), version: version)
    }

    /// A version from an ETag: the opaque tag without `W/`. Apache calls a
    /// tag weak for the second after a change and strong afterwards; the
    /// tag is the same, and so must the version be, or every fresh file would
    /// look changed upstream one listing later.
    static func version(ofETag etag: String) -> String {
        let trimmed = etag.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    /// A version as an entity-tag for a condition: versions made from ETags
    /// are quoted already; a fallback version never matches an ETag anyway.
    static func quotedTag(_ version: String) -> String {
        version.hasPrefix("\"") ? version : "\"\(version)\""
    }

    /// `bytes 4-9/16` (RFC 9110 section 14.4); total nil for `*`.
    static func contentRange(_ value: String) -> (start: Int64, end: Int64, total: Int64?)? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let rangeAndTotal = parts[1].split(separator: "/", maxSplits: 1)
        let bounds = rangeAndTotal[0].split(separator: "-", maxSplits: 1)
        guard rangeAndTotal.count == 2, bounds.count == 2,
              let start = Int64(bounds[0]), let end = Int64(bounds[1]), start <= end
        else { return nil }
        return (start, end, Int64(rangeAndTotal[1]))
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw DirectoryStore.error(errno)
            }
            done += n
        }
    }
}

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

/// A file's bytes as request body chunks, read with `pread` on Dispatch's
/// pool one MiB at a time as the connection asks for more, so an upload
/// never holds more than a chunk or two in memory.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let file: ReadOnlyFile
    let length: Int64
    /// Counts each chunk as the connection takes it.
    let progress: UploadProgress?
    static let chunkSize = 1 << 20

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: ReadOnlyFile
        let length: Int64
        let progress: UploadProgress?
        var offset: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard offset < length else { return nil }
            let want = Int(Swift.min(Int64(FileChunks.chunkSize), length - offset))
            let (file, at) = (file, offset)
            let buffer = try await blocking {
                var buffer = ByteBuffer()
                buffer.reserveCapacity(want)
                let read = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                    let n = pread(file.fd, raw.baseAddress, want, off_t(at))
                    if n < 0 { throw DirectoryStore.error(errno) }
                    return n
                }
                if read == 0 { throw UpstreamError.io("the local file shrank during the upload") }
                return buffer
            }
            offset += Int64(buffer.readableBytes)
            progress?.add(Int64(buffer.readableBytes))
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(file: file, length: length, progress: progress) }
}
