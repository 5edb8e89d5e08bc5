import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// The trash view's entries as `TrashExchange` renders them and as
/// `davgate trash` reads them back: one place knows the properties.
public enum TrashListing {
    public static let nextcloud = "http://nextcloud.org/ns"

    static func response(_ entry: TrashEntry, in folder: DAVPath) -> String {
        var properties = [
            PropertyXML.element(.dav("resourcetype"), valueXML: entry.isFolder ? "<D:collection/>" : ""),
            PropertyXML.text(.dav("displayname"), entry.originalName),
            PropertyXML.text(.dav("getlastmodified"), HTTPDate.rfc1123(entry.deletedAt)),
            PropertyXML.text(XMLName(nextcloud, "trashbin-filename"), entry.originalName),
            PropertyXML.text(XMLName(nextcloud, "trashbin-original-location"), entry.originalPath.joined(separator: "/")),
            PropertyXML.text(XMLName(nextcloud, "trashbin-deletion-time"), String(Int64(entry.deletedAt.timeIntervalSince1970))),
            PropertyXML.text(XMLName(DAVNamespace.davgate, "trash-size"), String(entry.size)),
        ]
        if !entry.isFolder { properties.append(PropertyXML.text(.dav("getcontentlength"), String(entry.size))) }
        if let by = entry.deletedBy { properties.append(PropertyXML.text(XMLName(DAVNamespace.davgate, "deleted-by"), by)) }
        return Multistatus.response(href: folder.appending(entry.name).href(collection: entry.isFolder),
                                    propstats: [PropStat(status: 200, properties: properties)])
    }

    /// The entries of a trash PROPFIND's multistatus (the trash's own
    /// response, which has no original location, left out).
    public static func entries(fromMultistatus body: [UInt8]) throws -> [TrashEntry] {
        let root = try XMLDocumentParser.parse(body)
        var entries: [TrashEntry] = []
        for response in root.elements where response.name == .dav("response") {
            guard let href = response.first(.dav("href"))?.text,
                  let prop = response.first(.dav("propstat"))?.first(.dav("prop")),
                  let location = prop.first(XMLName(nextcloud, "trashbin-original-location"))?.text,
                  let name = try? DAVPath.parse(requestTarget: href.trimmingXMLWhitespace).path.name else { continue }
            let seconds = Double(prop.first(XMLName(nextcloud, "trashbin-deletion-time"))?.text ?? "") ?? 0
            entries.append(TrashEntry(
                name: name, originalPath: location.split(separator: "/").map(String.init),
                isFolder: prop.first(.dav("resourcetype"))?.first(.dav("collection")) != nil,
                size: Int64(prop.first(XMLName(DAVNamespace.davgate, "trash-size"))?.text ?? "") ?? 0,
                deletedAt: Date(timeIntervalSince1970: seconds),
                deletedBy: prop.first(XMLName(DAVNamespace.davgate, "deleted-by"))?.text))
        }
        return entries
    }
}
