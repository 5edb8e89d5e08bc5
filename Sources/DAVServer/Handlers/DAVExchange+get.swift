import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Logging
import ProviderCore

extension DAVExchange {
    /// GET and HEAD (RFC 9110): the first GET of a placeholder materializes
    /// it; HEAD answers from the index alone. A collection answers with the
    /// browser page (DAVExchange+browser). Always Content-Length,
    /// Accept-Ranges, ETag and Last-Modified; Range, If-Range,
    /// If-None-Match (304), If-Modified-Since, If-Match.
    func get(includeBody: Bool) async throws -> Response {
        guard let provider else {
            return try await folderListing(nil, includeBody: includeBody)
        }
        let listed = try await requireItem(provider)
        if listed.isFolder {
            return try await folderListing(listed, includeBody: includeBody)
        }
        guard var item = try await provider.revalidated(listed, at: itemPath) else {
            throw DAVError(.notFound, "\(path.href(collection: false)) was deleted upstream")
        }
        if let early = try notModifiedOrFailed(item) { return early }
        var size = item.size
        var source: ContentSource?
        // Held while the body reads the file: eviction leaves the item be.
        let lease = provider.beginRead(item)
        if includeBody {
            (item, source, size) = try await openSource(provider, item)
        }
        var fields = HTTPFields()
        fields[.contentType] = ContentType.forName(item.name)
        fields[.eTag] = item.etag
        fields[.lastModified] = HTTPDate.rfc1123(item.modified)
        fields[.acceptRanges] = "bytes"
        // nil for empty content: there is no byte range to serve.
        var range: ClosedRange<Int64>? = size > 0 ? 0...(size - 1) : nil
        var status = HTTPResponse.Status.ok
        if let partial = try requestedRange(item, size: size) {
            range = partial
            status = .partialContent
            fields[.contentRange] = "bytes \(partial.lowerBound)-\(partial.upperBound)/\(size)"
        }
        fields[.contentLength] = String(range?.count ?? 0)
        guard let source, let range else {
            return Response(status: status, headers: fields)
        }
        return Response(status: status, headers: fields, body: try source.body(range: range, holding: lease, connection: context.channel.eventLoop))
    }

    /// Opens the bytes to serve and tells the item and size they belong to:
    /// the cached file's, or, for a placeholder, those the upstream answered
    /// with (a range asks the upstream for that range only). When the
    /// upstream turns out to have moved on, the index has learned the new
    /// version by the time the fetch fails, and the read is tried once more.
    private func openSource(_ provider: Provider, _ listed: Item) async throws -> (Item, ContentSource, Int64) {
        var item = listed
        while true {
            do {
                let wanted = try requestedRange(item, size: item.size)
                switch try await provider.openContents(of: item, at: itemPath, range: wanted) {
                case .file(let path):
                    let file = try OpenFile(path: path)
                    return (item, .file(file), file.size)
                case .download(let download):
                    let head = try await download.head()
                    return (head, .download(download), head.size)
                }
            } catch ProviderError.upstream(.versionMismatch) where item.id == listed.id && item.etag == listed.etag {
                item = try await requireItem(provider)
                guard !item.isFolder else { throw DAVError(.conflict, "\(path.href(collection: false)) became a folder upstream") }
            }
        }
    }

    /// The part of `size` bytes a Range header asks for and may have (nil
    /// for all of it); throws 416 for a range outside the content.
    private func requestedRange(_ item: Item, size: Int64) throws -> ClosedRange<Int64>? {
        guard size > 0, rangeApplies(item) else { return nil }
        switch RangeRequest.evaluate(headers[.range], size: size) {
        case .full:
            return nil
        case .partial(let range):
            return range
        case .unsatisfiable:
            var error = DAVError(.rangeNotSatisfiable, "the requested range is outside the \(size)-byte content")
            error.headers[.contentRange] = "bytes */\(size)"
            throw error
        }
    }

    /// The bytes of a GET: a complete file, or a download being followed
    /// (the first GET of a placeholder streams while the cache fills).
    private enum ContentSource {
        case file(OpenFile)
        case download(Download)

        /// `lease` lives as long as the body reads the file.
        func body(range: ClosedRange<Int64>, holding lease: ReadLease, connection: any EventLoop) throws -> ResponseBody {
            switch self {
            case .file(let file):
                return try file.body(range: range, holding: lease, connection: connection)
            case .download(let download):
                return FileDescriptor.body(range: range, connection: connection,
                                           open: { FileDescriptor(try download.openForReading()) },
                                           available: { _ = lease; return try await download.bytes(upTo: $0) })
            }
        }
    }

    /// 304 for a matching If-None-Match / unmodified If-Modified-Since, 412
    /// for a failing If-Match / If-Unmodified-Since; nil to go on.
    private func notModifiedOrFailed(_ item: Item) throws -> Response? {
        if let ifMatch = EntityTagCondition.parse(headers[.ifMatch]), !ifMatch.matchesStrong(item.etag) {
            throw DAVError.preconditionFailed
        }
        if let since = headers[.ifUnmodifiedSince].flatMap(HTTPDate.parse),
           item.modified.timeIntervalSince1970.rounded(.down) > since.timeIntervalSince1970 {
            throw DAVError.preconditionFailed
        }
        var notModified = false
        if let ifNoneMatch = EntityTagCondition.parse(headers[.ifNoneMatch]) {
            notModified = ifNoneMatch.matchesWeak(item.etag)
        } else if let since = headers[.ifModifiedSince].flatMap(HTTPDate.parse) {
            notModified = item.modified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
        }
        guard notModified else { return nil }
        var fields = HTTPFields()
        fields[.eTag] = item.etag
        fields[.lastModified] = HTTPDate.rfc1123(item.modified)
        return Response(status: .notModified, headers: fields)
    }

    /// If-Range (RFC 9110 section 13.1.5): the range applies only while the
    /// validator still matches; a date validator must be exact.
    private func rangeApplies(_ item: Item) -> Bool {
        guard let ifRange = headers[.ifRange] else { return true }
        if ifRange.hasPrefix("\"") { return ifRange == item.etag }
        guard let date = HTTPDate.parse(ifRange) else { return false }
        return date.timeIntervalSince1970 == item.modified.timeIntervalSince1970.rounded(.down)
    }
}
