import DAVProtocol
import DAVXML
import Foundation
import ProviderCore

/// The live properties davgate computes from the index (RFC 4918 section
/// 15, RFC 4331 quota, Apache's `executable`). Protected: PROPPATCH may not
/// set or remove them.
enum LiveProperty: CaseIterable {
    case creationdate, displayname, getcontentlength, getcontenttype, getetag, getlastmodified
    case resourcetype, supportedlock, lockdiscovery, quotaAvailableBytes, quotaUsedBytes, executable
    /// ownCloud's `oc:checksums`: the SHA-1 of content davgate received
    /// whole, which rclone compares instead of downloading.
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

    /// RFC 4331 section 3: quota properties are only returned when named;
    /// so are ownCloud's checksums, which only its clients ask for.
    /// davgate's states need the provider, so they too come only when named.
    /// RFC 6578 section 4 keeps `sync-token` out of allprop, and RFC 3253
    /// section 3.1.5 `supported-report-set`.
    var inAllprop: Bool {
        ![.quotaAvailableBytes, .quotaUsedBytes, .checksums, .state, .bytesCached, .syncToken, .supportedReportSet, .contentPolicy].contains(self)
    }

    func applies(to item: Item) -> Bool {
        switch self {
        case .getcontentlength, .getcontenttype, .executable, .checksums, .state, .bytesCached: !item.isFolder
        case .syncToken, .supportedReportSet: item.isFolder
        default: true
        }
    }

    /// The rendered property element, or nil when it does not apply.
    func render(_ item: Item, displayName: String, context: PropertyContext) -> String? {
        guard applies(to: item) else { return nil }
        switch self {
        case .creationdate: return PropertyXML.text(name, HTTPDate.iso8601(item.created))
        case .displayname: return PropertyXML.text(name, displayName)
        case .getcontentlength: return PropertyXML.text(name, String(item.size))
        case .getcontenttype: return PropertyXML.text(name, ContentType.forName(item.name))
        case .getetag: return PropertyXML.text(name, item.etag)
        case .getlastmodified: return PropertyXML.text(name, HTTPDate.rfc1123(item.modified))
        case .resourcetype: return item.isFolder ? PropertyXML.element(name, valueXML: "<D:collection/>") : PropertyXML.empty(name)
        case .supportedlock: return PropertyXML.element(name, valueXML: LockXML.supportedlockValue)
        case .lockdiscovery:
            let locks = context.locks[item.id] ?? []
            return locks.isEmpty ? PropertyXML.empty(name) : PropertyXML.element(name, valueXML: LockXML.lockdiscoveryValue(locks))
        case .quotaAvailableBytes: return context.quota.map { PropertyXML.text(name, String($0.available)) }
        case .quotaUsedBytes: return context.quota.map { PropertyXML.text(name, String($0.used)) }
        case .executable: return PropertyXML.text(name, item.executable ? "T" : "F")
        case .state:
            return context.contents[item.id].map { PropertyXML.text(name, $0.state) }
        case .bytesCached:
            return context.contents[item.id].map { PropertyXML.text(name, String($0.bytesCached)) }
        case .checksums:
            return item.checksum.map { PropertyXML.element(name, valueXML: "<checksum xmlns=\"\(DAVNamespace.ownCloud)\">\(XMLEscaping.text($0))</checksum>") }
        case .syncToken:
            return context.syncToken.map { PropertyXML.text(name, $0) }
        case .supportedReportSet:
            return PropertyXML.element(name, valueXML: "<D:supported-report><D:report><D:sync-collection/></D:report></D:supported-report>")
        case .contentPolicy:
            return context.policies[item.id].map { PropertyXML.text(name, $0.policy.rawValue) }
        }
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
