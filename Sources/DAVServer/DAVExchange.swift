import DAVProtocol
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

import ProviderCore

/// One authenticated request with its path resolved to a domain; the method
/// handlers (`DAVExchange+method.swift`) are extensions of it.
struct DAVExchange: Sendable {
    let request: Request
    let context: DAVRequestContext
    let settings: DAVServerSettings
    /// The authenticated user; the principal of the locks they take.
    let user: String
    /// The full normalised path: the domain's name, then the item path.
    let path: DAVPath
    let trailingSlash: Bool
    /// nil for the server root, which lists the domains.
    let provider: Provider?
    /// The user's permission in this domain (read-write at the root).
    let permission: DomainPermission
    /// The encoded path the request's tree hangs below, prefixed to every
    /// href: empty, or Nextcloud's `/remote.php/dav/files/USER` (`NextcloudPath`).
    var mount: String = ""

    var headers: HTTPFields { request.headers }

    /// The domains this user may see, by name.
    var visibleDomains: [String] {
        settings.domains.keys.filter { settings.permission(of: user, in: $0) != nil }.sorted()
    }

    /// The path below the domain, as the provider core knows it.
    var itemPath: ItemPath { Array(path.segments.dropFirst()) }

    var domainName: String { path.segments.first ?? "" }

    /// The provider, or 403 for methods that make no sense on the server root.
    func requireDomain() throws -> Provider {
        guard let provider else {
            throw DAVError(.forbidden, "the server root only lists domains; use a domain's path such as /\(visibleDomains.first ?? "files")/")
        }
        return provider
    }

    /// The href of an item of this domain (collections end with a slash).
    func href(_ itemPath: ItemPath, isFolder: Bool) -> String {
        mount + DAVPath(segments: [domainName] + itemPath).href(collection: isFolder)
    }

    /// A Destination's path on this server without this request's mount:
    /// a client of Nextcloud's tree names its destinations in that tree.
    func unmounted(_ destination: DAVPath) -> DAVPath {
        NextcloudPath.unmounted(destination, user: user)
    }

    /// Runs `body`, turning a provider's refusal into its DAV error under
    /// this exchange's mount (a lock's root named in the client's tree).
    func mounted<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ProviderError where !mount.isEmpty {
            throw DAVError(error, mount: mount)
        }
    }

    /// The href of a lock's root, as a 423 and `lockdiscovery` name it.
    func lockRootHref(_ lock: Lock, provider: Provider) async throws -> String {
        let root = try await provider.lockRoot(of: lock)
        return href(root.path, isFolder: root.isFolder)
    }

    /// The item at the request path, or 404.
    func requireItem(_ provider: Provider) async throws -> Item {
        guard let item = try await provider.item(at: itemPath) else {
            throw DAVError(.notFound, "no resource at \(path.href(collection: false))")
        }
        return item
    }

    /// Sends `100 Continue` when the client waits for it (curl does for
    /// bodies over 1 MiB, for a second otherwise). Called only after auth,
    /// precondition and lock checks, so a refused upload is never sent.
    func continueIfExpected() {
        Self.sendContinue(request, context)
    }

    static func sendContinue(_ request: Request, _ context: DAVRequestContext) {
        guard let expect = request.headers[.expect], expect.lowercased() == "100-continue" else { return }
        context.channel.writeAndFlush(HTTPResponsePart.head(HTTPResponse(status: .continue)), promise: nil)
    }

    /// A response with a small fixed body.
    static func response(_ status: HTTPResponse.Status, headers: HTTPFields = [:], body: String? = nil, contentType: String = "application/xml; charset=utf-8") -> Response {
        var headers = headers
        guard let body else {
            headers[.contentLength] = "0"
            return Response(status: status, headers: headers)
        }
        return response(status, headers: headers, body: ByteBuffer(string: body), contentType: contentType)
    }

    /// A response with a body already in a buffer.
    static func response(_ status: HTTPResponse.Status, headers: HTTPFields = [:], body: ByteBuffer,
                         contentType: String = "application/xml; charset=utf-8") -> Response {
        var headers = headers
        headers[.contentType] = contentType
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }

    static let multiStatus = HTTPResponse.Status(code: 207, reasonPhrase: "Multi-Status")
}
