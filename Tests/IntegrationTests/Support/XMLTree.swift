import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A namespace-resolved XML element tree, so the tests can assert on a 207
/// body, a lock response or an error body element by element instead of by
/// substring.
final class XMLTree: @unchecked Sendable, CustomStringConvertible {
    let namespace: String
    let name: String
    var attributes: [String: String] = [:]
    var children: [XMLTree] = []
    var text = ""

    init(namespace: String, name: String) {
        self.namespace = namespace
        self.name = name
    }

    /// Parses a document; nil when it is not well-formed.
    static func parse(_ data: Data) -> XMLTree? {
        let delegate = Builder()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.delegate = delegate
        guard parser.parse() else { return nil }
        return delegate.root
    }

    static func parse(_ text: String) -> XMLTree? { parse(Data(text.utf8)) }

    /// The first child named `name` in `namespace` (DAV: unless said).
    func child(_ name: String, _ namespace: String = "DAV:") -> XMLTree? {
        children.first { $0.name == name && $0.namespace == namespace }
    }

    func all(_ name: String, _ namespace: String = "DAV:") -> [XMLTree] {
        children.filter { $0.name == name && $0.namespace == namespace }
    }

    /// Follows a path of DAV: element names.
    func at(_ path: String...) -> XMLTree? {
        var node: XMLTree? = self
        for step in path { node = node?.child(step) }
        return node
    }

    /// Every descendant (depth first, self included) with this name.
    func descendants(_ name: String, _ namespace: String = "DAV:") -> [XMLTree] {
        var out: [XMLTree] = []
        if self.name == name && self.namespace == namespace { out.append(self) }
        for c in children { out += c.descendants(name, namespace) }
        return out
    }

    var trimmedText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) }

    var description: String {
        "<{\(namespace)}\(name)>" + (trimmedText.isEmpty ? "" : trimmedText) + children.map(\.description).joined() + "</\(name)>"
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLTree?
        var stack: [XMLTree] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            let node = XMLTree(namespace: namespaceURI ?? "", name: elementName)
            node.attributes = attributeDict
            if let parent = stack.last { parent.children.append(node) } else { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }
}

/// A parsed 207 Multi-Status body (RFC 4918 section 13).
struct Multistatus: CustomStringConvertible {
    struct Property {
        let node: XMLTree
        let status: Int
        var value: String { node.trimmedText }
    }

    struct Response {
        let href: String
        /// The response-level status, for responses without propstat.
        let status: Int?
        let properties: [Property]
        let node: XMLTree

        func property(_ name: String, _ namespace: String = "DAV:") -> Property? {
            properties.first { $0.node.name == name && $0.node.namespace == namespace }
        }

        /// The value of a property found with 200, nil when absent or not 200.
        func value(_ name: String, _ namespace: String = "DAV:") -> String? {
            guard let p = property(name, namespace), p.status == 200 else { return nil }
            return p.value
        }

        var isCollection: Bool { property("resourcetype")?.node.child("collection") != nil }
    }

    let responses: [Response]
    let raw: String

    init?(_ reply: DAVClient.Reply) {
        self.init(reply.body)
    }

    init?(_ data: Data) {
        raw = String(decoding: data, as: UTF8.self)
        guard let root = XMLTree.parse(data), root.name == "multistatus", root.namespace == "DAV:" else { return nil }
        responses = root.all("response").map { node in
            let href = node.child("href")?.trimmedText ?? ""
            let status = node.child("status").flatMap { Self.statusCode($0.trimmedText) }
            var properties: [Property] = []
            for propstat in node.all("propstat") {
                let code = propstat.child("status").flatMap { Self.statusCode($0.trimmedText) } ?? 0
                for p in propstat.child("prop")?.children ?? [] { properties.append(Property(node: p, status: code)) }
            }
            return Response(href: href, status: status, properties: properties, node: node)
        }
    }

    func response(_ href: String) -> Response? { responses.first { $0.href == href } }
    var hrefs: [String] { responses.map(\.href) }
    var description: String { raw }

    /// "HTTP/1.1 200 OK" -> 200.
    static func statusCode(_ line: String) -> Int? {
        let parts = line.split(separator: " ")
        guard parts.count >= 2 else { return nil }
        return Int(parts[1])
    }
}

/// The parts of a LOCK response body (RFC 4918 section 9.10.1) the tests check.
struct ActiveLock {
    let scope: String
    let depth: String
    let timeout: String
    let token: String
    let root: String
    let owner: XMLTree?

    /// Every activelock in a body or a lockdiscovery element.
    static func all(in node: XMLTree) -> [ActiveLock] {
        node.descendants("activelock").map { a in
            ActiveLock(scope: a.child("lockscope")?.children.first?.name ?? "",
                       depth: a.child("depth")?.trimmedText ?? "",
                       timeout: a.child("timeout")?.trimmedText ?? "",
                       token: a.at("locktoken", "href")?.trimmedText ?? "",
                       root: a.at("lockroot", "href")?.trimmedText ?? "",
                       owner: a.child("owner"))
        }
    }

    static func all(in reply: DAVClient.Reply) -> [ActiveLock] {
        XMLTree.parse(reply.body).map { all(in: $0) } ?? []
    }
}

/// Percent-encodes one path segment the way davgate's hrefs must: RFC 3986
/// unreserved plus `!$&'()*+,=:@` literal, everything else `%XX` upper-case.
func hrefSegment(_ name: String, lowerCase: Bool = false) -> String {
    let literal = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,=:@".utf8)
    var out = ""
    for b in name.utf8 {
        if literal.contains(b) {
            out.append(Character(UnicodeScalar(b)))
        } else {
            let hex = String(format: lowerCase ? "%%%02x" : "%%%02X", b)
            out += hex
        }
    }
    return out
}
