import DAVXML

/// An active lock as reported in `DAV:lockdiscovery` (RFC 4918 section 14.1).
public struct ActiveLockInfo: Sendable, Equatable {
    /// The lock token URI, without angle brackets (`urn:uuid:...`).
    public var token: String
    public var scope: LockRequest.Scope
    /// Depth `infinity` (a collection lock covering members) or `0`.
    public var depthInfinity: Bool
    /// The `DAV:owner` element as the client sent it, serialized
    /// (``XMLElement/serialized()``); `nil` when there was none.
    public var ownerXML: String?
    /// Remaining seconds; `nil` for `Infinite`.
    public var timeoutSeconds: Int?
    /// The href of the lock root (section 14.12), already percent-encoded.
    public var rootHref: String

    public init(token: String, scope: LockRequest.Scope, depthInfinity: Bool, ownerXML: String?,
                timeoutSeconds: Int?, rootHref: String) {
        self.token = token
        self.scope = scope
        self.depthInfinity = depthInfinity
        self.ownerXML = ownerXML
        self.timeoutSeconds = timeoutSeconds
        self.rootHref = rootHref
    }
}

/// Lock-related property values and the LOCK response body.
public enum LockXML {
    /// The content of `DAV:lockdiscovery` (section 15.8): one `D:activelock`
    /// per lock; empty for an unlocked resource (render it with
    /// ``PropertyXML/element(_:valueXML:)``, which then writes `<D:lockdiscovery/>`).
    public static func lockdiscoveryValue(_ locks: [ActiveLockInfo]) -> String {
        locks.map(activelock).joined()
    }

    /// The content of `DAV:supportedlock` (section 15.10): exclusive and shared write locks.
    public static let supportedlockValue =
        "<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"
        + "<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>"

    /// The body of a successful LOCK (section 9.10.1): a `DAV:prop` document
    /// holding `lockdiscovery` with the granted (or refreshed) lock.
    public static func lockResponseBody(_ lock: ActiveLockInfo) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:prop xmlns:D=\"DAV:\"><D:lockdiscovery>"
            + activelock(lock) + "</D:lockdiscovery></D:prop>\n"
    }

    /// `<!ELEMENT activelock (lockscope, locktype, depth, owner?, timeout?,
    /// locktoken?, lockroot)>` (section 14.1).
    static func activelock(_ lock: ActiveLockInfo) -> String {
        var out = "<D:activelock><D:lockscope><D:\(lock.scope.rawValue)/></D:lockscope>"
            + "<D:locktype><D:write/></D:locktype>"
            + "<D:depth>\(lock.depthInfinity ? "infinity" : "0")</D:depth>"
        if let owner = lock.ownerXML { out += owner }
        out += "<D:timeout>\(lock.timeoutSeconds.map { "Second-\(max(0, $0))" } ?? "Infinite")</D:timeout>"
        out += "<D:locktoken><D:href>\(XMLEscaping.text(lock.token))</D:href></D:locktoken>"
        out += "<D:lockroot><D:href>\(XMLEscaping.text(lock.rootHref))</D:href></D:lockroot>"
        out += "</D:activelock>"
        return out
    }
}
