/// A dead property as stored: its qualified name and the self-contained XML
/// of the whole property element (namespaces declared inside), so PROPFIND
/// returns it exactly as PROPPATCH set it.
public struct DeadProperty: Sendable, Equatable {
    public var namespace: String
    public var name: String
    public var xml: String
    public init(namespace: String, name: String, xml: String) {
        self.namespace = namespace
        self.name = name
        self.xml = xml
    }
}

/// One PROPPATCH instruction, applied in document order.
public enum PropertyChange: Sendable, Equatable {
    case set(DeadProperty)
    case remove(namespace: String, name: String)
    /// `g:content-policy` set, or removed (nil: inherit again).
    case contentPolicy(ContentPolicy?)
}
