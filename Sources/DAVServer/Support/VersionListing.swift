import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// A file's versions as `VersionsExchange` lists them and as `davgate
/// versions` reads them back.
public enum VersionListing {
    /// - Parameter folder: `/.davgate/versions/DOMAIN/PATH`.
    static func response(_ version: FileVersion, in folder: DAVPath) -> String {
        var properties = [
            PropertyXML.element(.dav("resourcetype"), valueXML: ""),
            PropertyXML.text(.dav("getcontentlength"), String(version.size)),
            PropertyXML.text(.dav("getlastmodified"), HTTPDate.rfc1123(version.savedAt)),
            PropertyXML.text(.dav("displayname"), version.isConflictCopy ? version.id : HTTPDate.iso8601(version.savedAt)),
        ]
        if version.isConflictCopy {
            // The copy itself, in its folder beside the file.
            let copy = DAVPath(segments: Array(folder.segments.dropFirst(2).dropLast()) + [version.id])
            properties.append(PropertyXML.element(XMLName(DAVNamespace.davgate, "conflict-copy"),
                                                  valueXML: "<D:href>\(XMLEscaping.text(copy.href(collection: false)))</D:href>"))
        }
        return Multistatus.response(href: folder.appending(version.id).href(collection: false),
                                    propstats: [PropStat(status: 200, properties: properties)])
    }

    /// The versions in a PROPFIND's multistatus, in its order (newest
    /// first); the collection's own response is left out.
    public static func versions(fromMultistatus body: [UInt8]) throws -> [FileVersion] {
        try XMLDocumentParser.parse(body).elements.filter { $0.name == .dav("response") }.compactMap { response in
            guard let href = response.first(.dav("href"))?.text.trimmingXMLWhitespace, !href.hasSuffix("/"),
                  let prop = response.first(.dav("propstat"))?.first(.dav("prop")),
                  let id = try? DAVPath.parse(requestTarget: href).path.name else { return nil }
            let size = Int64(prop.first(.dav("getcontentlength"))?.text ?? "") ?? 0
            if let millis = Double(id) { return FileVersion(id: id, size: size, savedAt: Date(timeIntervalSince1970: millis / 1000)) }
            let modified = prop.first(.dav("getlastmodified")).flatMap { HTTPDate.parse($0.text) } ?? .distantPast
            return FileVersion(id: id, size: size, savedAt: modified, isConflictCopy: true)
        }
    }
}
