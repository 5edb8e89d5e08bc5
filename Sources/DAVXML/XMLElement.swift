/// A namespace-qualified XML name. `namespace` is the empty string for names in
/// no namespace (litmus `propnullns`), which is different from the DAV: namespace.
public struct XMLName: Hashable, Sendable, CustomStringConvertible {
    public var namespace: String
    public var local: String

    public init(_ namespace: String, _ local: String) {
        self.namespace = namespace
        self.local = local
    }

    /// `DAV:` names are by far the most common; this keeps call sites short.
    public static func dav(_ local: String) -> XMLName { XMLName("DAV:", local) }

    /// Clark notation, `{namespace}local`, the usual way to print a qualified name.
    public var description: String { "{\(namespace)}\(local)" }
}

/// One node of a parsed request body.
public enum XMLNode: Sendable, Equatable {
    case element(XMLElement)
    case text(String)
}

/// A parsed XML element with fully resolved namespaces.
///
/// Request bodies in WebDAV are small and capped, so a tree is the simplest
/// faithful representation; the parser that builds it is a SAX2 push parser
/// that never loads DTDs or resolves entities.
public struct XMLElement: Sendable, Equatable {
    public var name: XMLName
    /// Attributes by resolved name, in document order.
    public var attributes: [(name: XMLName, value: String)]
    public var children: [XMLNode]

    public init(name: XMLName, attributes: [(name: XMLName, value: String)] = [], children: [XMLNode] = []) {
        self.name = name
        self.attributes = attributes
        self.children = children
    }

    public static func == (lhs: XMLElement, rhs: XMLElement) -> Bool {
        lhs.name == rhs.name
            && lhs.attributes.count == rhs.attributes.count
            && zip(lhs.attributes, rhs.attributes).allSatisfy { $0.name == $1.name && $0.value == $1.value }
            && lhs.children == rhs.children
    }

    /// Child elements only, skipping text (whitespace between elements included).
    public var elements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { e } else { nil } }
    }

    /// The first child element with this name.
    public func first(_ name: XMLName) -> XMLElement? {
        elements.first { $0.name == name }
    }

    /// The concatenated text content of this element and its descendants.
    public var text: String {
        children.map {
            switch $0 {
            case .text(let t): t
            case .element(let e): e.text
            }
        }.joined()
    }
}
