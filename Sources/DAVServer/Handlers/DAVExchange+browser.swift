import DAVProtocol
import DAVXML
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ProviderCore

/// What a browser sees: GET on a collection is an HTML listing with each
/// item's size, date and content state (cloud, local, partial, fetching,
/// conflict), streamed page by page, and a davmount link (RFC 4709) that
/// hands the folder to the desktop's WebDAV client.
extension DAVExchange {
    func folderListing(_ folder: Item?, includeBody: Bool) async throws -> Response {
        if request.uri.query == "davmount" {
            return davmount()
        }
        var fields = HTTPFields()
        fields[.contentType] = "text/html; charset=utf-8"
        fields[.cacheControl] = "no-cache"
        guard includeBody else { return Response(status: .ok, headers: fields) }
        let title = path.href(collection: true).removingPercentEncoding ?? "/"
        let exchange = self
        let body = ResponseBody { writer in
            var out = ByteBuffer()
            out.writeString(BrowserPage.header(title: title, breadcrumbs: exchange.breadcrumbs(), mountable: folder != nil))
            var count = 0
            if let provider = exchange.provider, let folder {
                try await provider.refreshIfStale(folder)
                var after: String?
                while true {
                    let page = try await provider.children(of: folder, after: after)
                    guard let last = page.last else { break }
                    after = last.name
                    let policies = try await provider.contentPolicies(of: page)
                    for child in page {
                        let state = provider.state(of: child).name.rawValue
                        out.writeString(BrowserPage.row(name: child.name, href: exchange.href(exchange.itemPath + [child.name], isFolder: child.isFolder),
                                                        isFolder: child.isFolder, size: child.size, modified: child.modified, state: state,
                                                        policy: policies[child.id], otherSide: exchange.otherSide(of: child, state: state)))
                        count += 1
                    }
                    try await writer.write(out)
                    out = ByteBuffer()
                }
            } else {
                for name in exchange.visibleDomains {
                    out.writeString(BrowserPage.row(name: name, href: DAVPath(segments: [name]).href(collection: true),
                                                    isFolder: true, size: 0, modified: nil, state: "folder"))
                    count += 1
                }
            }
            out.writeString(BrowserPage.footer(count: count))
            try await writer.write(out)
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: fields, body: body)
    }

    /// For a conflict copy, the versions view of the file it conflicts
    /// with, where the copy is listed with that file's history.
    func otherSide(of child: Item, state: String) -> String? {
        guard state == ItemState.Name.conflict.rawValue, !child.isFolder,
              let original = Provider.conflictOriginal(ofName: child.name) else { return nil }
        return mount + DAVPath(segments: [ServiceExchange.folder, VersionsExchange.page, domainName] + itemPath + [original]).href(collection: false)
    }

    /// RFC 4709: a small XML document a desktop opens with its WebDAV client.
    private func davmount() -> Response {
        let scheme = settings.certificate != nil ? "https" : "http"
        let host = request.head.authority ?? "localhost"
        let url = "\(scheme)://\(host)\(path.href(collection: true))"
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <dm:mount xmlns:dm="http://purl.org/NET/webdav/mount">
              <dm:url>\(XMLEscaping.text(url))</dm:url>
              <dm:username>\(XMLEscaping.text(user))</dm:username>
            </dm:mount>

            """
        var response = Self.response(.ok, body: body, contentType: "application/davmount+xml")
        let name = (path.segments.last ?? "davgate").replacingOccurrences(of: "\"", with: "")
        response.headers[.contentDisposition] = "attachment; filename=\"\(name).davmount\""
        return response
    }

    /// The links of the path's ancestors, from the server root.
    private func breadcrumbs() -> [(name: String, href: String)] {
        var result = [(name: "davgate", href: "/")]
        for end in path.segments.indices {
            let segments = Array(path.segments[...end])
            result.append((segments.last!, DAVPath(segments: segments).href(collection: true)))
        }
        return result
    }
}
