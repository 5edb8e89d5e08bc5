import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// A file's versions as `VersionsExchange` lists them and as `davgate
/// versions` reads them back.
public enum VersionListing {
    static func response(_ version: FileVersion, in folder: DAVPath) -> String {
        Multistatus.response(href: folder.appending(version.id).href(collection: false), propstats: [PropStat(status: 200, properties: [
            PropertyXML.element(.dav("resourcetype"), valueXML: ""),
            PropertyXML.text(.dav("getcontentlength"), String(version.size)),
            PropertyXML.text(.dav("getlastmodified"), HTTPDate.rfc1123(version.savedAt)),
            PropertyXML.text(.dav("displayname"), HTTPDate.iso8601(version.savedAt)),
        ])])
    }

    /// The versions in a PROPFIND's multistatus, in its order (newest
    /// first); the collection's own response is left out.
    public static func versions(fromMultistatus body: [UInt8]) throws -> [FileVersion] {
        try XMLDocumentParser.parse(body).elements.filter { $0.name == .dav("response") }.compactMap { response in
            guard let href = response.first(.dav("href"))?.text.trimmingCharacters(in: .whitespaces), !href.hasSuffix("/"),
                  let prop = response.first(.dav("propstat"))?.first(.dav("prop")),
                  let id = try? DAVPath.parse(requestTarget: href).path.name, let millis = Double(id) else { return nil }
            return FileVersion(id: id, size: Int64(prop.first(.dav("getcontentlength"))?.text ?? "") ?? 0,
                               savedAt: Date(timeIntervalSince1970: millis / 1000))
        }
    }
}
