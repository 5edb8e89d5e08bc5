import DAVProtocol
import DAVXML
import Foundation

/// One answer of a `sync-collection` REPORT, as `davgate watch` reads it:
/// the members that changed (with the properties it asked for), those
/// that went, whether more changes wait (RFC 6578's 507 on the request
/// URI), and the token to ask from next.
struct SyncFeedPage {
    struct Change: Equatable {
        enum Kind: String { case changed, removed }
        let kind: Kind
        /// As the server sent it: percent-encoded, a folder's with its slash.
        let href: String
        let etag: String?
        let size: Int64?
        let isFolder: Bool

        /// The href decoded for people to read.
        var path: String { href.removingPercentEncoding ?? href }
    }

    var changes: [Change] = []
    var truncated = false
    var token: String

    /// The REPORT body asking for what changed since `token` ("" for
    /// everything), `limit` members at most.
    static func request(since token: String, infinite: Bool, limit: Int) -> String {
        """
        <?xml version="1.0" encoding="utf-8"?>
        <D:sync-collection xmlns:D="DAV:"><D:sync-token>\(XMLEscaping.text(token))</D:sync-token>\
        <D:sync-level>\(infinite ? "infinite" : "1")</D:sync-level>\
        <D:limit><D:nresults>\(limit)</D:nresults></D:limit>\
        <D:prop><D:resourcetype/><D:getetag/><D:getcontentlength/></D:prop></D:sync-collection>
        """
    }

    /// Reads a 207 answer to a REPORT sent to `requestHref`.
    init(multistatus body: Data, requestHref: String) throws {
        let root = try XMLDocumentParser.parse(Array(body))
        guard root.name == .dav("multistatus"), let token = root.first(.dav("sync-token"))?.text, !token.isEmpty else {
            throw SyncFeedError("the server's answer is not a sync-collection multistatus with a sync-token")
        }
        self.token = token
        for response in root.elements where response.name == .dav("response") {
            guard let href = response.first(.dav("href"))?.text else { continue }
            let status = response.first(.dav("status"))?.text ?? ""
            if status.contains(" 507 "), href == requestHref || response.first(.dav("error")) != nil {
                truncated = true
                continue
            }
            if status.contains(" 404 ") {
                changes.append(Change(kind: .removed, href: href, etag: nil, size: nil, isFolder: href.hasSuffix("/")))
                continue
            }
            let props = response.elements.filter { $0.name == .dav("propstat") }
                .filter { ($0.first(.dav("status"))?.text ?? "").contains(" 200 ") }
                .compactMap { $0.first(.dav("prop")) }.flatMap(\.elements)
            func prop(_ name: String) -> XMLElement? { props.first { $0.name == .dav(name) } }
            let isFolder = prop("resourcetype").map { $0.first(.dav("collection")) != nil } ?? href.hasSuffix("/")
            changes.append(Change(kind: .changed, href: href, etag: prop("getetag")?.text,
                                  size: prop("getcontentlength").flatMap { Int64($0.text) }, isFolder: isFolder))
        }
    }
}

struct SyncFeedError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
