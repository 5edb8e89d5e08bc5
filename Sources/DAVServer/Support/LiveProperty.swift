import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// The live properties davgate computes from the index (RFC 4918 section
/// 15, RFC 4331 quota, Apache's `executable`). Protected: PROPPATCH may not
/// set or remove them.
enum LiveProperty: Int, CaseIterable {
    case creationdate, displayname, getcontentlength, getcontenttype, getetag, getlastmodified
    case resourcetype, supportedlock, lockdiscovery, quotaAvailableBytes, quotaUsedBytes, executable
    /// ownCloud's `oc:checksums`: the SHA-1 of content an ownCloud client
    /// PUT whole or in Nextcloud's chunks (`OwnCloudPut.hashesBody`), which
    /// rclone compares instead of downloading.
    case checksums
    /// davgate's own: where the content is (`placeholder`, `fetching`,
    /// `partial`, `materialized`, or `conflict` for a kept-both copy) and
    /// how many of its bytes are local.
    case state, bytesCached
    /// RFC 6578: a collection's position in the change feed, and the
    /// report (`sync-collection`) that reads the feed from it.
    case syncToken, supportedReportSet
    /// davgate's content policy (`lazy`, `eager`, `evict-on-change`), the
    /// item's own or inherited. The one live property PROPPATCH may set:
    /// setting it stores the item's own, removing it inherits again.
    case contentPolicy

    var name: XMLName {
        switch self {
        case .creationdate: .dav("creationdate")
        case .displayname: .dav("displayname")
        case .getcontentlength: .dav("getcontentlength")
        case .getcontenttype: .dav("getcontenttype")
        case .getetag: .dav("getetag")
        case .getlastmodified: .dav("getlastmodified")
        case .resourcetype: .dav("resourcetype")
        case .supportedlock: .dav("supportedlock")
        case .lockdiscovery: .dav("lockdiscovery")
        case .quotaAvailableBytes: .dav("quota-available-bytes")
        case .quotaUsedBytes: .dav("quota-used-bytes")
        case .executable: XMLName(DAVNamespace.apache, "executable")
        case .checksums: XMLName(DAVNamespace.ownCloud, "checksums")
        case .state: XMLName(DAVNamespace.davgate, "state")
        case .bytesCached: XMLName(DAVNamespace.davgate, "bytes-cached")
        case .syncToken: .dav("sync-token")
        case .supportedReportSet: .dav("supported-report-set")
        case .contentPolicy: XMLName(DAVNamespace.davgate, "content-policy")
        }
    }

    static let byName: [XMLName: LiveProperty] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// Each property's tags, by its raw value.
    private static let tagTable = allCases.map { PropertyTags($0.name) }
    var tags: PropertyTags { Self.tagTable[rawValue] }

    /// The properties allprop returns, in the order it renders them,
    /// listed once: `allCases` builds a new array on every use, and
    /// allprop asks for every member of a listing.
    static let allprop = allCases.filter(\.inAllprop)

    /// RFC 4331 section 3: quota properties are only returned when named;
    /// so are ownCloud's checksums, which only its clients ask for.
    /// davgate's states need the provider, so they too come only when named.
    /// RFC 6578 section 4 keeps `sync-token` out of allprop, and RFC 3253
    /// section 3.1.5 `supported-report-set`.
    var inAllprop: Bool {
        switch self {
        case .quotaAvailableBytes, .quotaUsedBytes, .checksums, .state, .bytesCached, .syncToken, .supportedReportSet, .contentPolicy: false
        default: true
        }
    }

    func applies(to item: Item) -> Bool {
        switch self {
        case .getcontentlength, .getcontenttype, .executable, .checksums, .state, .bytesCached: !item.isFolder
        case .syncToken, .supportedReportSet: item.isFolder
        default: true
        }
    }

    /// Appends the rendered property element to `out`; false, with nothing
    /// appended, when it does not apply or has no value here.
    func render(_ item: Item, displayName: String, context: PropertyContext, into out: inout XMLBytes) -> Bool {
        guard applies(to: item) else { return false }
        let tags = self.tags
        switch self {
        case .creationdate: tags.append(formatted: HTTPDate.iso8601(item.created), to: &out)
        case .displayname: tags.append(text: displayName, to: &out)
        case .getcontentlength: tags.append(formatted: String(item.size), to: &out)
        case .getcontenttype: tags.append(formatted: ContentType.forName(item.name), to: &out)
        case .getetag: tags.append(formatted: item.etag, to: &out)
        case .getlastmodified: tags.append(formatted: HTTPDate.rfc1123(item.modified), to: &out)
        case .resourcetype: tags.append(valueXML: item.isFolder ? "<D:collection/>" : "", to: &out)
        case .supportedlock: tags.append(valueXML: LockXML.supportedlockValue, to: &out)
        case .lockdiscovery:
            let locks = context.locks[item.id] ?? []
            tags.append(valueXML: locks.isEmpty ? "" : LockXML.lockdiscoveryValue(locks), to: &out)
        case .quotaAvailableBytes:
            guard let quota = context.quota else { return false }
            tags.append(formatted: String(quota.available), to: &out)
        case .quotaUsedBytes:
            guard let quota = context.quota else { return false }
            tags.append(formatted: String(quota.used), to: &out)
        case .executable: tags.append(formatted: item.executable ? "T" : "F", to: &out)
        case .state:
            guard let content = context.contents[item.id] else { return false }
            tags.append(text: content.state, to: &out)
        case .bytesCached:
            guard let content = context.contents[item.id] else { return false }
            tags.append(formatted: String(content.bytesCached), to: &out)
        case .checksums:
            guard let checksum = item.checksum else { return false }
            tags.append(valueXML: "<checksum xmlns=\"\(DAVNamespace.ownCloud)\">\(XMLEscaping.text(checksum))</checksum>", to: &out)
        case .syncToken:
            guard let token = context.syncToken else { return false }
            tags.append(text: token, to: &out)
        case .supportedReportSet:
            tags.append(valueXML: "<D:supported-report><D:report><D:sync-collection/></D:report></D:supported-report>", to: &out)
        case .contentPolicy:
            guard let policy = context.policies[item.id] else { return false }
            tags.append(text: policy.policy.rawValue, to: &out)
        }
        return true
    }
}

/// What rendering needs beyond the item, fetched once per request or page.
struct PropertyContext: Sendable {
    var quota: UpstreamQuota?
    var locks: [Int64: [ActiveLockInfo]] = [:]
    /// davgate's content state and local bytes, when asked for.
    var contents: [Int64: (state: String, bytesCached: Int64)] = [:]
    /// The domain's `DAV:sync-token`, when asked for.
    var syncToken: String?
    /// Content policies as they apply, when asked for.
    var policies: [Int64: EffectivePolicy] = [:]
}
