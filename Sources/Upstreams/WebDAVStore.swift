import AsyncHTTPClient
import DAVProtocol
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL
import ProviderCore

/// An upstream that is another WebDAV server: Apache mod_dav, Nextcloud,
/// another davgate.
///
/// Every operation is one request (two when the answer must describe the
/// result: a write is followed by a PROPFIND Depth 0 of what it made). Bodies
/// stream both ways: a fetch writes the response into the destination file
/// chunk by chunk as it arrives, an upload sends the local file in chunks, and
/// a PROPFIND answer is fed to the XML push parser as it arrives. Listings name
/// the properties they need (RFC 4918 section 9.1), never `allprop`.
///
/// The store never follows redirects (a redirect to another host would carry
/// the credentials along) and never writes its credentials into a message,
/// an error or its `displayName`.
public struct WebDAVStore: UpstreamStore, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The collection every item path is relative to, with a trailing slash.
    public let baseURL: URL
    public var displayName: String { "webdav:\(baseURL.absoluteString)" }
    public var description: String { displayName }
    public var debugDescription: String { "WebDAVStore(\(displayName))" }
    /// Reflection (`dump`, `print` of a containing value) shows the name only,
    /// never the authorization header.
    public var customMirror: Mirror { Mirror(self, children: ["displayName": displayName]) }

    let client: HTTPClient
    /// Set when the store made its client: shuts it down when the last copy
    /// of the store goes away, if `shutdown()` did not.
    let ownClient: ClientOwner?
    /// `https://host:port`, the part of every request URL before the path.
    let origin: String
    /// The decoded segments of the base collection's path.
    let basePath: [String]
    let authorization: Authorization?
    /// Where the credentials came from, for the message of a refusal.
    let credentialsSource: String?
    /// Set on every request when an extra trust root is configured, so that a
    /// shared client (whose own TLS configuration we cannot change) trusts it too.
    let tlsConfiguration: TLSConfiguration?
    let timeouts: (connect: Duration, read: Duration)
    /// Our upstream lock tokens by path (`mirror_locks`), sent with our writes.
    let heldLocks = NIOLockedValueBox<[ItemPath: String]>([:])
    /// What names the server holds: 255 bytes a name (the file systems
    /// servers store on) until it refuses a shorter one with 414, then
    /// less than that one (`WebDAVStore+names.swift`).
    let learnedNames = NIOLockedValueBox(NameRules.common)
    /// Whether the server is another davgate, once asked (`isDavgate`).
    let serverIsDavgate = NIOLockedValueBox<Bool?>(nil)
    public var nameRules: NameRules { learnedNames.withLockedValue { $0 } }

    /// Creates a store for one WebDAV collection.
    ///
    /// - Parameters:
    ///   - baseURL: the collection, `https://host/path/` (or `http`); a
    ///     missing trailing slash is added. It may not carry credentials.
    ///   - credentials: sent as Basic authorization on every request.
    ///   - extraTrustRoot: a PEM file with an extra CA or the server's own
    ///     self-signed certificate, trusted besides the system's roots.
    ///   - httpClient: a shared client (its pool, timeouts and connection retry
    ///     settings apply); when nil the store makes its own, which
    ///     `shutdown()` closes (or, failing that, the last copy of the store).
    ///   - timeouts: connect timeout, and the longest wait for the next bytes of
    ///     an answer (idle read), for the store's own client.
    /// - Throws: ``WebDAVStoreConfigurationError`` for an unusable URL or trust root.
    /// `credentialsSource` says where the credentials came from (a vault
    /// entry), so a refusal can tell the operator what to check.
    public init(baseURL: URL, credentials: (user: String, password: String)?, credentialsSource: String? = nil, extraTrustRoot: URL?,
                httpClient: HTTPClient? = nil,
                timeouts: (connect: Duration, read: Duration) = (.seconds(10), .seconds(60))) throws {
        let parts = try Self.parse(baseURL)
        self.baseURL = parts.url
        self.origin = parts.origin
        self.basePath = parts.path
        self.authorization = credentials.map { Authorization(user: $0.user, password: $0.password) }
        self.credentialsSource = credentialsSource
        self.timeouts = timeouts
        (client, ownClient, tlsConfiguration) = try HTTPUpstream.client(httpClient, trusting: extraTrustRoot, timeouts: timeouts)
    }

    /// Shuts the store's own HTTP client down; does nothing for a shared one.
    public func shutdown() async throws {
        if ownClient != nil { try await client.shutdown() }
    }

    public func list(_ folder: ItemPath) async throws -> [UpstreamEntry] {
        try await listing(folder).entries
    }

    public func listing(_ folder: ItemPath) async throws -> FolderListing {
        let target = DAVPath(segments: basePath + folder)
        let found: [PropfindAnswer]
        do {
            found = try await propfind(folder, depth: "1", properties: PropfindAnswer.entryProperties)
        } catch let error as UpstreamError where !folder.isEmpty && Self.mayNameAFile(error) {
            // A collection's URL ends in a slash; for a file, servers say
            // 404, 409 or (Apache) 400. Ask for the name itself to tell a
            // file from nothing.
            guard let entry = try await stat(folder) else { throw UpstreamError.notFound }
            if !entry.isFolder { throw UpstreamError.conflict }
            throw error
        }
        var entries: [UpstreamEntry] = []
        var sawSelf = false
        var version: String?
        for response in found {
            guard let path = response.path else { continue }
            if path == target {
                sawSelf = true
                if !response.isFolder { throw UpstreamError.conflict }
                version = response.etag
                continue
            }
            // Only direct members; a server answering deeper is ignored.
            guard path.parent == target, let entry = response.entry() else { continue }
            entries.append(entry)
        }
        if !sawSelf, found.count == 1, !found[0].isFolder {
            // The only answer is a file under another spelling of its href.
            throw UpstreamError.conflict
        }
        return FolderListing(entries: entries, version: version)
    }

    public func stat(_ path: ItemPath) async throws -> UpstreamEntry? {
        do {
            let found = try await propfind(path, depth: "0", properties: PropfindAnswer.entryProperties)
            let target = DAVPath(segments: basePath + path)
            let response = found.first { $0.path == target } ?? found.first
            // Named as asked for: the root has no name, and a server may spell it differently.
            return response?.entry(name: path.last ?? "")
        } catch UpstreamError.notFound {
            return nil
        } catch UpstreamError.conflict {
            // A file where a folder was expected on the way (some servers say 409).
            return nil
        }
    }

    public func makeFolder(_ path: ItemPath) async throws -> UpstreamEntry {
        var request = try self.request("MKCOL", path, collection: true)
        request.headers.add(name: "Content-Length", value: "0")
        try await send(request, operation: .makeFolder)
        return try await written(path)
    }

    public func delete(_ path: ItemPath) async throws {
        var request = try self.request("DELETE", path)
        if let condition = try ifHeader(for: path, version: nil) { request.headers.add(name: "If", value: condition) }
        try await send(request, operation: .delete)
        forgetLocks(under: path)
    }

    public func move(_ source: ItemPath, to destination: ItemPath) async throws -> UpstreamEntry {
        var request = try self.request("MOVE", source)
        request.headers.add(name: "Destination", value: try url(destination))
        request.headers.add(name: "Overwrite", value: "F")
        request.headers.add(name: "Depth", value: "infinity")
        if let condition = try ifHeader(for: source, version: nil) { request.headers.add(name: "If", value: condition) }
        try await send(request, operation: .moveOrCopy)
        forgetLocks(under: source)
        return try await written(destination)
    }

    public func copy(_ source: ItemPath, to destination: ItemPath, recursive: Bool) async throws -> UpstreamEntry {
        var request = try self.request("COPY", source)
        request.headers.add(name: "Destination", value: try url(destination))
        request.headers.add(name: "Overwrite", value: "F")
        request.headers.add(name: "Depth", value: recursive ? "infinity" : "0")
        try await send(request, operation: .moveOrCopy)
        return try await written(destination)
    }

    public func quota() async throws -> UpstreamQuota? {
        let found = try await propfind([], depth: "0", properties: PropfindAnswer.quotaProperties)
        let target = DAVPath(segments: basePath)
        return (found.first { $0.path == target } ?? found.first)?.quota
    }

    /// Errors a listing gets when the folder is a file or is missing.
    static func mayNameAFile(_ error: UpstreamError) -> Bool {
        switch error {
        case .notFound, .conflict, .io: true
        default: false
        }
    }

    /// The entry of what a write just made; it must be there.
    func written(_ path: ItemPath) async throws -> UpstreamEntry {
        guard let entry = try await stat(path) else { throw UpstreamError.notFound }
        return entry
    }
}
