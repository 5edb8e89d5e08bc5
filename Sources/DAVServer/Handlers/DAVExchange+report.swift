import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

import ProviderCore

extension DAVExchange {
    /// REPORT (RFC 3253 section 3.6). The one report davgate offers is
    /// `sync-collection` (RFC 6578): what changed below a collection since
    /// the client's token, from the index's change feed, instead of the
    /// PROPFIND of every folder a sync client otherwise repeats.
    func report() async throws -> Response {
        guard let root = try await readXMLBody() else { throw DAVError.badRequest("REPORT needs a body naming the report") }
        guard root.name == .dav("sync-collection") else {
            throw DAVError(.forbidden, "report \(root.name) is not supported here; sync-collection is",
                           condition: .dav("supported-report"))
        }
        let query: SyncCollectionRequest
        do {
            query = try SyncCollectionRequest.parse(root)
        } catch {
            throw DAVError.badRequest("invalid sync-collection body: \(error)")
        }
        guard let provider else {
            throw DAVError(.forbidden, "sync-collection works on a domain's folders, not on the server root", condition: .dav("supported-report"))
        }
        let target = try await requireItem(provider)
        guard target.isFolder else {
            throw DAVError(.forbidden, "sync-collection works on collections; \(path.href(collection: false)) is a file",
                           condition: .dav("supported-report"))
        }
        let changes: Provider.ChangeSet
        do {
            changes = try await provider.changes(below: target, at: itemPath, since: query.token, infinite: query.infinite, limit: query.limit)
        } catch let invalid as Provider.InvalidSyncToken {
            throw DAVError(.forbidden, invalid.description, condition: .dav("valid-sync-token"))
        }
        let properties = PropfindRequest.prop(query.properties)
        let hasLocks = try await provider.hasLiveLocks()
        var body = XMLBytes(capacity: 4096)
        body.append(Multistatus.header)
        var start = changes.present.startIndex
        while start < changes.present.endIndex {
            let end = min(start + 500, changes.present.endIndex)
            try await renderPage(Array(changes.present[start..<end]), provider: provider, query: properties, quota: nil, hasLocks: hasLocks, into: &body)
            start = end
        }
        for removed in changes.removed {
            body.append(Multistatus.response(href: href(removed, isFolder: false), status: 404))
        }
        if changes.truncated {
            // RFC 6578 section 3.6: more changes wait; the client asks again
            // with the token below.
            body.append(Multistatus.response(href: path.href(collection: true), status: 507,
                                             error: .dav("number-of-matches-within-limits")))
        }
        body.append("<D:sync-token>\(XMLEscaping.text(changes.token.description))</D:sync-token>")
        body.append(Multistatus.footer)
        return Self.response(Self.multiStatus, body: ByteBuffer(xml: body))
    }
}
