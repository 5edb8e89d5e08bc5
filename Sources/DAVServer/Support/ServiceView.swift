import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ProviderCore

/// What the trash and version views under `/.davgate/` share: finding the
/// domain a user may see, OPTIONS, a finished multistatus, a Destination.
enum ServiceView {
    /// The domain the segments start with, when the user may use it (404
    /// otherwise: a domain the user may not see does not exist for them).
    static func domain(_ segments: [String], settings: DAVServerSettings, user: String,
                       usage: String) throws -> (name: String, provider: Provider, permission: DomainPermission) {
        guard let name = segments.first, let provider = settings.domains[name],
              let permission = settings.permission(of: user, in: name) else {
            throw DAVError(.notFound, "no domain named \((segments.first ?? "").debugDescription); use \(usage)")
        }
        return (name, provider, permission)
    }

    static func options(allowing allowed: String) -> Response {
        var fields = HTTPFields()
        fields[.init("DAV")!] = "1"
        fields[.allow] = allowed
        return DAVExchange.response(.ok, headers: fields)
    }

    /// A 207 whose whole body is at hand (the views are small).
    static func multistatus(_ responses: String) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = "application/xml; charset=utf-8"
        var buffer = ByteBuffer()
        buffer.writeString(Multistatus.header + responses + Multistatus.footer)
        return Response(status: DAVExchange.multiStatus, headers: fields, body: .init(byteBuffer: buffer))
    }

    /// The conditions of a change a view makes at `path` of `domain` (a
    /// restore's destination, a conflict copy removed), judged as for a
    /// write to that path: `If` (its lock tokens submitted), `If-Match`,
    /// `If-None-Match` and `If-Unmodified-Since` (412 when one fails), and
    /// what they were judged against carried to the commit, so a change
    /// landing in between fails the request rather than being replaced.
    static func writeConditions(_ request: Request, context: DAVRequestContext, settings: DAVServerSettings, user: String,
                                at path: ItemPath, in domain: String, provider: Provider) async throws -> WriteConditions {
        let exchange = DAVExchange(request: request, context: context, settings: settings, user: user,
                                   path: DAVPath(segments: [domain] + path), trailingSlash: false, provider: provider,
                                   permission: .readWrite)
        let submitted = try await exchange.evaluateIfHeader()
        let existing = try await provider.item(at: path)
        try exchange.checkWriteConditions(existing)
        return exchange.writeConditions(submitted: submitted, judging: existing)
    }

    /// The request's Destination on this server.
    /// - Parameter usage: what a missing header's answer suggests.
    static func destination(of request: Request, usage: String) throws -> DAVPath {
        guard let raw = request.headers[.init("Destination")!] else { throw DAVError.badRequest("\(request.method.rawValue) needs a Destination: \(usage)") }
        switch try? Destination.parse(raw, requestHost: request.head.authority) {
        case .local(let path, _)?: return path
        case .foreign?: throw DAVError(.badGateway, "Destination \(raw) is on another server")
        case nil: throw DAVError.badRequest("invalid Destination header: \(raw)")
        }
    }
}

extension ServiceView {
    /// The `<D:response>` of a view's own collection.
    static func collection(_ folder: DAVPath, displayName: String) -> String {
        Multistatus.response(href: folder.href(collection: true), propstats: [PropStat(status: 200, properties: [
            PropertyXML.element(.dav("resourcetype"), valueXML: "<D:collection/>"),
            PropertyXML.text(.dav("displayname"), displayName),
        ])])
    }
}
