import AsyncHTTPClient
import DAVProtocol
import DAVXML
import Foundation
import NIOCore
import NIOHTTP1
import ProviderCore

/// The upstream's change feed, when it offers one (another davgate does;
/// Apache and nginx do not): RFC 6578 `sync-collection` on the base
/// collection, `infinite`, so one REPORT tells what changed anywhere below
/// instead of a PROPFIND per folder.
extension WebDAVStore {
    /// The base collection's `DAV:sync-token`; nil when the server names
    /// none (a 404 propstat: it has no feed).
    public func feedPosition() async throws -> String? {
        try await propfind([], depth: "0", properties: [.dav("sync-token")]).first?.syncToken
    }

    public func changes(since position: String, limit: Int) async throws -> UpstreamChanges {
        try await changes(since: position, limit: limit, infinite: true)
    }

    /// What changed below the base collection since `position` ("" for
    /// every member), everywhere below (`infinite`) or among its members;
    /// `davgate watch` reads a server's feed through this too.
    public func changes(since position: String, limit: Int, infinite: Bool) async throws -> UpstreamChanges {
        var request = try self.request("REPORT", [], collection: true)
        request.headers.add(name: "Depth", value: "0")
        request.headers.add(name: "Content-Type", value: "application/xml; charset=utf-8")
        request.body = .bytes(ByteBuffer(string: Self.syncCollectionBody(since: position, limit: limit, infinite: infinite)))
        let response = try await execute(request, deadline: headDeadline)
        let status = Int(response.status.code)
        guard status == 207 else {
            let body = String(buffer: (try? await response.body.collect(upTo: 64 << 10)) ?? ByteBuffer())
            // RFC 6578 section 3.2: a token the server no longer knows.
            if status == 403, body.contains("valid-sync-token") { throw UpstreamFeedError.positionRefused }
            // No such report here (RFC 3253 section 3.6), or no REPORT at all.
            if (status == 403 && body.contains("supported-report")) || [400, 405, 501].contains(status) {
                throw UpstreamFeedError.unsupported
            }
            throw Self.error(status: status, operation: .read, credentials: credentialsSource)
        }
        let root = try await Self.multistatus(response.body, of: "REPORT")
        guard root.name == .dav("multistatus"), let token = root.first(.dav("sync-token"))?.text, !token.isEmpty else {
            throw UpstreamError.io("the REPORT answer is not a sync-collection multistatus with a sync-token")
        }
        let base = DAVPath(segments: basePath)
        var changes = UpstreamChanges(present: [], removed: [], position: token, more: false)
        for response in root.elements where response.name == .dav("response") {
            let status = response.first(.dav("status")).flatMap { PropfindAnswer.statusCode($0.text.trimmingXMLWhitespace) }
            if status == 507 {
                changes.more = true
                continue
            }
            let answer = PropfindAnswer.answer(response)
            guard let path = answer.path, path.hasPrefix(base), path != base else { continue }
            let relative = path.dropFirst(basePath.count).segments
            if status == 404 {
                changes.removed.append(relative)
            } else if let entry = answer.entry() {
                changes.present.append((relative, entry))
            }
        }
        return changes
    }

    static func syncCollectionBody(since position: String, limit: Int, infinite: Bool) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:sync-collection xmlns:D=\"DAV:\">"
            + "<D:sync-token>\(XMLEscaping.text(position))</D:sync-token><D:sync-level>\(infinite ? "infinite" : "1")</D:sync-level>"
            + "<D:limit><D:nresults>\(limit)</D:nresults></D:limit>"
            + "<D:prop>" + PropfindAnswer.entryProperties.map(PropertyXML.empty).joined() + "</D:prop></D:sync-collection>"
    }
}
