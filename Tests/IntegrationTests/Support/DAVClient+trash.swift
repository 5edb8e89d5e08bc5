import Foundation
import Testing

extension DAVClient {
    /// The entries of a domain's trash as `/.davgate/trash/DOMAIN/` lists
    /// them: each entry's name (the last segment of its href) and
    /// Nextcloud's `trashbin-original-location`, newest first.
    func trashEntries(_ domain: String = "files") async throws -> [(name: String, location: String)] {
        let reply = try await send("PROPFIND", "/.davgate/trash/\(domain)/", headers: [("Depth", "1")])
        #expect(reply.status == 207, "\(reply.text)")
        let tree = try #require(XMLTree.parse(reply.text))
        return tree.all("response").compactMap { response in
            guard let prop = response.child("propstat")?.child("prop"),
                  let location = prop.child("trashbin-original-location", "http://nextcloud.org/ns") else { return nil }
            let href = response.child("href")?.text ?? ""
            let name = href.split(separator: "/").last.map(String.init)?.removingPercentEncoding ?? ""
            return (name, location.text)
        }
    }
}
