import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

extension S3Store {
    public func fetch(_ path: ItemPath, range: ClosedRange<Int64>?, into destination: URL,
                      observer: FetchObserver) async throws -> UpstreamEntry {
        guard let name = path.last else { throw UpstreamError.conflict }
        var headers: [(name: String, value: String)] = []
        if let range { headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound)")) }
        let response = try await execute(.GET, key: key(path), headers: headers)
        let status = Int(response.status.code)
        let bodyStart: Int64
        let size: Int64?
        let partial = range != nil && (status == 206 || (status == 200 && response.headers.contains(name: "Content-Range")))
        switch status {
        case 200 where !partial:
            bodyStart = 0
            size = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
        case _ where partial:
            // rclone serve s3 answers a range with 200 and a Content-Range.
            guard let range, let parsed = HTTPUpstream.partialContent(response.headers, asked: range),
                  let total = parsed.total else {
                await HTTPUpstream.discard(response.body)
                throw UpstreamError.io("206 Partial Content without a usable Content-Range")
            }
            bodyStart = parsed.start
            size = total
        default:
            try await check(response, operation: .read)
            await HTTPUpstream.discard(response.body)
            throw UpstreamError.io("HTTP \(status) to a GET")
        }
        let entry: UpstreamEntry
        do {
            guard let size else { throw UpstreamError.io("a GET answer without its length") }
            entry = try Self.entry(name: name, headers: response.headers, size: size)
            try await observer.began(entry)
        } catch {
            await HTTPUpstream.discard(response.body)
            throw error
        }
        try await HTTPUpstream.receive(response.body, startingAt: bodyStart, into: destination, range: range,
                                       size: entry.size, progress: observer.progressed)
        return entry
    }

    /// Uploads with one PUT, or in parts from `multipart.threshold` on.
    ///
    /// A conditional upload is checked twice: a HEAD first (the fallback
    /// for servers that ignore conditional writes, such as `rclone serve
    /// s3`), then `If-None-Match: *` or `If-Match` on the PUT or the
    /// multipart completion itself, which AWS (since 2024), MinIO and moto
    /// honour, closing the window between the two.
    public func upload(_ file: URL, to path: ItemPath, expecting: UpstreamExpectation, progress: UploadProgress?) async throws -> UpstreamEntry {
        guard let name = path.last else { throw UpstreamError.conflict }
        let source = try ReadOnlyFile(file.path)
        var st = Glibc.stat()
        guard fstat(source.fd, &st) == 0 else { throw DirectoryStore.error(errno) }
        let length = Int64(st.st_size)
        let key = try key(path)
        guard try await folderTakesUploads(Array(path.dropLast())) else { throw UpstreamError.conflict }
        // The file's own time to the nanosecond, as rclone keeps it.
        let mtime = "\(st.st_mtim.tv_sec).\(String(st.st_mtim.tv_nsec + 1_000_000_000).dropFirst())"
        var headers: [(name: String, value: String)] = [("content-type", "application/octet-stream"), ("x-amz-meta-mtime", mtime)]
        let condition = try await checkedCondition(expecting, key: key)
        var etag: String
        if length >= multipart.threshold {
            etag = try await uploadInParts(source, length: length, key: key, headers: headers, condition: condition, progress: progress)
            // Some servers (rclone serve s3) answer a completion with one
            // ETag and list the object under another: the version is what
            // a HEAD says, when the HEAD still shows our object.
            if let now = try await head(key), now.first(name: "x-amz-meta-mtime") == mtime,
               now.first(name: "Content-Length") == String(length), let tag = now.first(name: "ETag") {
                etag = Self.version(ofETag: tag)
            }
        } else {
            headers += condition
            let answer = try await send(.PUT, key: key, headers: headers, body: .file(source, 0..<length, progress),
                                        operation: .upload, deadline: .distantFuture)
            guard let tag = answer.first(name: "ETag").map(Self.version(ofETag:)) else {
                return try await written(path)
            }
            etag = tag
        }
        sawFolder(Array(path.dropLast()))
        let modified = Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec) + TimeInterval(st.st_mtim.tv_nsec) / 1e9)
        return UpstreamEntry(name: name, isFolder: false, size: length, modified: modified, version: etag)
    }

    /// Checks `expecting` with a HEAD and returns the headers that make the
    /// write itself conditional where the server honours them.
    func checkedCondition(_ expecting: UpstreamExpectation, key: String) async throws -> [(name: String, value: String)] {
        switch expecting {
        case .any:
            return []
        case .absent:
            if try await head(key) != nil { throw UpstreamError.versionMismatch }
            return [("if-none-match", "*")]
        case .version(let version):
            guard let current = try await head(key)?.first(name: "ETag"), Self.version(ofETag: current) == version else {
                throw UpstreamError.versionMismatch
            }
            return [("if-match", "\"\(version)\"")]
        }
    }

    /// The entry of what a write just made; it must be there.
    func written(_ path: ItemPath) async throws -> UpstreamEntry {
        guard let entry = try await stat(path) else { throw UpstreamError.notFound }
        return entry
    }
}
