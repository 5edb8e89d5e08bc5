import AsyncHTTPClient
import DAVProtocol
import DAVXML
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
            guard let start = HTTPUpstream.partialContent(response.headers, asked: range!)?.start else {
                await HTTPUpstream.discard(response.body)
                throw UpstreamError.io("206 Partial Content without a usable Content-Range")
            }
            bodyStart = start
        case 416 where range != nil:
            await HTTPUpstream.discard(response.body)
            throw UpstreamError.io("file ended before the requested range")
        default:
            await HTTPUpstream.discard(response.body)
            throw Self.error(status: status, operation: .read, credentials: credentialsSource)
        }
        let entry: UpstreamEntry
        do {
            entry = try await self.entry(path, answer: response.headers, status: status)
            try await observer.began(entry)
        } catch {
            await HTTPUpstream.discard(response.body)
            throw error
        }

        try await HTTPUpstream.receive(response.body, startingAt: bodyStart, into: destination, range: range,
                                       size: entry.size, progress: observer.progressed)
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
        request.body = .stream(FileChunks(file: source, range: 0..<length, progress: progress), length: .known(length))
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
            ? headers.first(name: "Content-Range").flatMap(HTTPUpstream.contentRange)?.total
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
        let trimmed = etag.trimmingXMLWhitespace
        return trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed
    }

    /// A version as an entity-tag for a condition: versions made from ETags
    /// are quoted already; a fallback version never matches an ETag anyway.
    static func quotedTag(_ version: String) -> String {
        version.hasPrefix("\"") ? version : "\"\(version)\""
    }
}
