import DAVXML

/// The body of a PROPFIND (RFC 4918 sections 9.1 and 14.20):
/// `<!ELEMENT propfind ( propname | (allprop, include?) | prop ) >`.
public enum PropfindRequest: Sendable, Equatable {
    /// All dead properties and the live ones defined by RFC 4918, plus the
    /// properties named in `DAV:include` (section 14.8).
    case allprop(include: [XMLName])
    /// The names of all properties, without values.
    case propname
    /// Exactly these properties, in request order.
    case prop([XMLName])

    /// Interprets a parsed body.
    /// - Parameter root: the document element, or `nil` for an empty body, which
    ///   "MUST be treated as if it were an 'allprop' request" (section 9.1).
    /// - Throws: ``DAVRequestError/unexpectedRoot(_:)`` unless the root is
    ///   `DAV:propfind`; ``DAVRequestError/missing(_:)`` when it holds none of
    ///   `allprop`, `propname`, `prop`; ``DAVRequestError/invalid(_:)`` when it
    ///   holds more than one of them.
    public static func parse(_ root: XMLElement?) throws(DAVRequestError) -> PropfindRequest {
        guard let root else { return .allprop(include: []) }
        guard root.name == .dav("propfind") else { throw .unexpectedRoot(root.name) }
        var result: PropfindRequest?
        for child in root.elements {
            let found: PropfindRequest
            switch child.name {
            case .dav("allprop"):
                let include = root.first(.dav("include"))?.elements.map(\.name) ?? []
                found = .allprop(include: include)
            case .dav("propname"):
                found = .propname
            case .dav("prop"):
                found = .prop(child.elements.map(\.name))
            default:
                continue  // DAV:include and unknown extension elements (section 17)
            }
            if result != nil { throw .invalid("propfind holds more than one of allprop, propname, prop") }
            result = found
        }
        guard let result else { throw .missing("allprop, propname or prop") }
        return result
    }
}
