import Foundation

/// Where a domain's trash lives upstream, beside the data it keeps: a
/// folder below davgate's reserved folder at the domain's root, holding
/// each deleted item under its entry name and, beside it, a small JSON
/// sidecar saying where it was and when it went. The reserved folder's
/// name is refused to clients: listings never show it and no client may
/// create, move or copy anything there.
public enum TrashLayout {
    /// davgate's own folder at a domain's root upstream (trash, versions).
    public static let reservedName = ".davgate"
    /// What a davgate domain adds to its OPTIONS `DAV` header (an RFC 4918
    /// section 10.1 Coded-URL): `.davgate/` is reserved there and trash and
    /// versions are kept there, so a davgate in front leaves them to it.
    public static let capability = "<https://davgate.dev/ns>"
    static let folder: ItemPath = [reservedName, "trash"]
    static let sidecarSuffix = ".info"

    /// Nextcloud's shape, `NAME.dTIMESTAMP` (in milliseconds here, so two
    /// deletions of one name in a second do not collide), with the name cut
    /// to fit a 255-byte name at any store.
    static func entryName(for name: String, at date: Date, maxNameBytes: Int) -> String {
        let suffix = ".d\(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))"
        let room = max(1, maxNameBytes - suffix.utf8.count - sidecarSuffix.utf8.count)
        var kept = name
        while kept.utf8.count > room { kept.removeLast() }
        return kept + suffix
    }

    static func sidecarName(of entry: String) -> String { entry + sidecarSuffix }

    /// Whether a name in the trash folder is a sidecar, and of which entry.
    static func entry(ofSidecar name: String) -> String? {
        guard name.hasSuffix(sidecarSuffix) else { return nil }
        let entry = String(name.dropLast(sidecarSuffix.count))
        return isEntryName(entry) ? entry : nil
    }

    /// Entry names end in `.d` and digits; nothing else in the folder is one.
    static func isEntryName(_ name: String) -> Bool {
        guard let marker = name.range(of: ".d", options: .backwards) else { return false }
        let digits = name[marker.upperBound...]
        return !digits.isEmpty && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
    }

    /// The deletion time an entry's name carries, for an entry found
    /// upstream without its sidecar.
    static func deletionDate(of entry: String) -> Date? {
        guard isEntryName(entry), let marker = entry.range(of: ".d", options: .backwards),
              let millis = Int64(entry[marker.upperBound...]) else { return nil }
        return Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// The name an entry found without a sidecar had: its entry name
    /// without the timestamp.
    static func originalName(of entry: String) -> String {
        guard let marker = entry.range(of: ".d", options: .backwards) else { return entry }
        let name = String(entry[..<marker.lowerBound])
        return name.isEmpty ? entry : name
    }
}
