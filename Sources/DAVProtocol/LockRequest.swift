import DAVXML

/// The body of a LOCK that creates a lock (RFC 4918 sections 9.10 and 14.11):
/// `<!ELEMENT lockinfo (lockscope, locktype, owner?) >`. A refresh has no body.
public struct LockRequest: Sendable, Equatable {
    /// `DAV:lockscope` (section 14.13).
    public enum Scope: String, Sendable {
        case exclusive, shared
    }

    public var scope: Scope
    /// The `DAV:owner` element exactly as sent (section 14.17), returned in
    /// `lockdiscovery`; litmus compares it.
    public var owner: XMLElement?

    public init(scope: Scope, owner: XMLElement?) {
        self.scope = scope
        self.owner = owner
    }

    /// Interprets a parsed body.
    /// - Throws: ``DAVRequestError/unexpectedRoot(_:)`` unless the root is
    ///   `DAV:lockinfo`; ``DAVRequestError/missing(_:)`` without `lockscope` or
    ///   `locktype`; ``DAVRequestError/invalid(_:)`` when the scope is neither
    ///   exclusive nor shared or the type is not `write` (the only type, section 14.15).
    public static func parse(_ root: XMLElement) throws(DAVRequestError) -> LockRequest {
        guard root.name == .dav("lockinfo") else { throw .unexpectedRoot(root.name) }
        guard let scopeElement = root.first(.dav("lockscope")) else { throw .missing("lockscope") }
        let scope: Scope
        if scopeElement.first(.dav("exclusive")) != nil {
            scope = .exclusive
        } else if scopeElement.first(.dav("shared")) != nil {
            scope = .shared
        } else {
            throw .invalid("lockscope")
        }
        guard let type = root.first(.dav("locktype")) else { throw .missing("locktype") }
        guard type.first(.dav("write")) != nil else { throw .invalid("locktype") }
        return LockRequest(scope: scope, owner: root.first(.dav("owner")))
    }
}
