import DAVXML

/// Property elements as they appear inside `<D:prop>` of a multistatus
/// (RFC 4918 section 14.18) or a LOCK response.
///
/// The enclosing document declares only `xmlns:D="DAV:"`. A property in any
/// other namespace declares it on itself with the prefix `x`, and a property in
/// no namespace (litmus `propnullns`) resets the default namespace with
/// `xmlns=""`, so every element is self-contained.
public enum PropertyXML {
    /// A property element around already rendered XML content.
    /// - Parameters:
    ///   - name: the property name.
    ///   - valueXML: well-formed XML content (escaped text and/or elements); the
    ///     element is written empty (`<D:name/>`) when this is empty. Content in
    ///     the `DAV:` namespace may use the `D:` prefix.
    public static func element(_ name: XMLName, valueXML: String) -> String {
        let (open, close) = tags(name)
        if valueXML.isEmpty { return "<\(open)/>" }
        return "<\(open)>\(valueXML)</\(close)>"
    }

    /// A property whose value is text, escaped.
    public static func text(_ name: XMLName, _ value: String) -> String {
        element(name, valueXML: XMLEscaping.text(value))
    }

    /// An empty property element, as in `propname` answers and in `404` propstats.
    public static func empty(_ name: XMLName) -> String {
        element(name, valueXML: "")
    }

    /// The opening tag's name with namespace declaration, and the closing tag's name.
    static func tags(_ name: XMLName) -> (open: String, close: String) {
        switch name.namespace {
        case "DAV:":
            let q = "D:\(name.local)"
            return (q, q)
        case "":
            return ("\(name.local) xmlns=\"\"", name.local)
        default:
            let q = "x:\(name.local)"
            return ("\(q) xmlns:x=\"\(XMLEscaping.attribute(name.namespace))\"", q)
        }
    }
}

/// A property's three tags, rendered once: a PROPFIND of a large folder
/// writes the same few properties thousands of times, and building each
/// tag anew was a tenth of its time. A class, so that taking a property's
/// tags from their table costs one retain and not one per string: as a
/// struct of three strings, copying tags out of the table was a twelfth
/// of a PROPFIND Depth 1 of 10,000 files (issue 14's profile).
public final class PropertyTags: Sendable {
    /// `<D:getetag>`, with its namespace declared when it is not DAV:.
    public let open: String
    /// `</D:getetag>`.
    public let close: String
    /// `<D:getetag/>`.
    public let empty: String

    public init(_ name: XMLName) {
        let (open, close) = PropertyXML.tags(name)
        self.open = "<\(open)>"
        self.close = "</\(close)>"
        self.empty = "<\(open)/>"
    }

    /// Appends the element around `valueXML` (well-formed XML content), or
    /// the empty element when there is none, as ``PropertyXML/element(_:valueXML:)``.
    public func append(valueXML: String, to out: inout XMLBytes) {
        if valueXML.isEmpty {
            out.append(empty)
        } else {
            out.append(open)
            out.append(valueXML)
            out.append(close)
        }
    }

    /// Appends the element around `value` escaped, as ``PropertyXML/text(_:_:)``.
    public func append(text value: String, to out: inout XMLBytes) {
        append(valueXML: XMLEscaping.text(value), to: &out)
    }

    /// Appends the element around a value the server formatted itself
    /// (digits, dates, ETags, media types), which has nothing to escape:
    /// skipping the scan saves five of a PROPFIND member's seven.
    public func append(formatted value: String, to out: inout XMLBytes) {
        append(valueXML: value, to: &out)
    }
}
