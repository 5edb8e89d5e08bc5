import AsyncHTTPClient
import DAVProtocol
import DAVXML
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

extension S3Store {
    public func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        // By name: a later page's entry (the folder `a/` after the key `a`) wins.
        var entries: [String: UpstreamEntry] = [:]
        _ = try await listPages(folder) { page in
            for entry in page { entries[entry.name] = entry }
        }
        return Array(entries.values)
    }

    /// Each ListObjectsV2 page (1,000 keys and common prefixes) as it
    /// arrives: the folder's direct members, a key `a` beside keys below
    /// `a/` shown as the folder. S3 folders have no version.
    public func listPages(_ folder: ItemPath, _ body: ([UpstreamEntry]) async throws -> Void) async throws -> String? {
        let prefix = try folderPrefix(folder)
        var first = true
        try await forEachPage(prefix: prefix, delimited: true) { page in
            if first, !folder.isEmpty, page.objects.isEmpty, page.prefixes.isEmpty {
                // Nothing below: a file of that name, or nothing at all.
                if try await head(key(folder)) != nil { throw UpstreamError.conflict }
                throw UpstreamError.notFound
            }
            first = false
            var entries: [String: UpstreamEntry] = [:]
            for object in page.objects {
                let name = String(object.key.dropFirst(prefix.count))
                // The folder's own marker, hidden or not.
                if name.isEmpty || name == Self.hiddenMarker { continue }
                guard Self.usableName(name) else { continue }
                entries[name] = Self.entry(name: name, object)
            }
            for common in page.prefixes {
                let name = String(common.dropFirst(prefix.count).dropLast())
                guard Self.usableName(name) else { continue }
                entries[name] = Self.folderEntry(name)
            }
            try await body(Array(entries.values))
        }
        return nil
    }

    public func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        guard let name = path.last else { return Self.folderEntry("") }
        if let headers = try await head(key(path)) {
            return try Self.entry(name: name, headers: headers)
        }
        return try await holdsKeys(below: path) ? Self.folderEntry(name) : nil
    }

    /// Whether any key lies below a folder: it exists.
    func holdsKeys(below folder: ItemPath) async throws -> Bool {
        if folder.isEmpty { return true }
        let buffer = try await document(.GET, key: nil, query: listQuery(prefix: folderPrefix(folder), delimited: false, maxKeys: 1),
                                        operation: .list)
        let page = try S3Listing.parse(buffer)
        return !page.objects.isEmpty || !page.prefixes.isEmpty
    }

    /// The headers of a HEAD of `key`, nil when there is no such object.
    func head(_ key: String) async throws -> HTTPHeaders? {
        let response = try await execute(.HEAD, key: key)
        if response.status.code == 404 {
            await HTTPUpstream.discard(response.body)
            return nil
        }
        try await check(response, operation: .read)
        await HTTPUpstream.discard(response.body)
        return response.headers
    }

    /// Calls `body` with every page of a listing below `prefix`, one at a
    /// time (never more than one page in memory): with the delimiter, a
    /// folder's direct members; without, every key below it.
    func forEachPage(prefix: String, delimited: Bool, _ body: (S3Listing) async throws -> Void) async throws {
        var token: String?
        repeat {
            var query = listQuery(prefix: prefix, delimited: delimited, maxKeys: listPageSize)
            if let token { query.append(("continuation-token", token)) }
            let page = try S3Listing.parse(try await document(.GET, key: nil, query: query, operation: .list))
            try await body(page)
            token = page.nextToken
        } while token != nil
    }

    func listQuery(prefix: String, delimited: Bool, maxKeys: Int?) -> [(name: String, value: String?)] {
        var query: [(name: String, value: String?)] = [("list-type", "2"), ("prefix", prefix)]
        if delimited { query.append(("delimiter", "/")) }
        if let maxKeys { query.append(("max-keys", String(maxKeys))) }
        return query
    }

    /// A name a folder can show: S3 keys may hold empty, `.` and `..`
    /// segments that no file system path can.
    static func usableName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/")
    }

    static func entry(name: String, _ object: S3Listing.Object) -> UpstreamEntry {
        UpstreamEntry(name: name, isFolder: false, size: object.size, modified: object.modified, version: object.etag)
    }

    /// Folders have no version or time of their own in S3.
    static func folderEntry(_ name: String) -> UpstreamEntry {
        UpstreamEntry(name: name, isFolder: true, size: 0, modified: Date(timeIntervalSince1970: 0), version: "")
    }

    /// An object's entry from the headers of a HEAD or a GET: its ETag is
    /// the version; the modification time is the one davgate (and rclone)
    /// store as `x-amz-meta-mtime` when there is one, else Last-Modified.
    static func entry(name: String, headers: HTTPHeaders, size: Int64? = nil) throws -> UpstreamEntry {
        guard let etag = headers.first(name: "ETag").map(version(ofETag:)), !etag.isEmpty else {
            throw UpstreamError.io("an S3 answer without an ETag for \(name)")
        }
        let length = size ?? headers.first(name: "Content-Length").flatMap { Int64($0) } ?? 0
        return UpstreamEntry(name: name, isFolder: false, size: length, modified: modified(headers), version: etag)
    }

    /// An object's version: its ETag without quotes (or `W/`). Servers
    /// differ in quoting: rclone serve s3 lists ETags bare but quotes them
    /// in HEAD, GET and PUT answers, and one file must have one version.
    static func version(ofETag etag: String) -> String {
        var tag = Substring(etag.trimmingXMLWhitespace)
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = tag.dropFirst().dropLast() }
        return String(tag)
    }

    static func modified(_ headers: HTTPHeaders) -> Date {
        if let mtime = headers.first(name: "x-amz-meta-mtime").flatMap(Double.init) {
            return Date(timeIntervalSince1970: mtime)
        }
        return headers.first(name: "Last-Modified").flatMap(HTTPDate.parse) ?? Date(timeIntervalSince1970: 0)
    }
}

extension S3Store {
    /// Asks for one key of the prefix: at start, a bucket that does not
    /// exist is a configuration mistake to refuse
    /// (``S3StoreConfigurationError/noSuchBucket(bucket:endpoint:)``); any
    /// other failure is the upstream's state, thrown as `UpstreamError`,
    /// which the server reports and starts anyway (it serves what it has).
    public func checkBucket() async throws {
        let response = try await execute(.GET, key: nil, query: listQuery(prefix: prefix, delimited: true, maxKeys: 1))
        if response.status.code == 404, let document = await S3ErrorDocument.read(response.body), document.code == "NoSuchBucket" {
            throw S3StoreConfigurationError.noSuchBucket(bucket: bucket, endpoint: origin)
        }
        try await check(response, operation: .list)
        await HTTPUpstream.discard(response.body)
    }
}
