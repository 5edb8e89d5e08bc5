import DAVXML

/// A `DAV:error` response body (RFC 4918 section 16) carrying a precondition
/// or postcondition code, e.g. `DAV:propfind-finite-depth` with a 403.
public enum DAVErrorBody {
    /// The namespace of davgate's own elements.
    public static let namespace = "https://davgate.dev/ns"

    /// `<?xml ...?><D:error xmlns:D="DAV:"><D:condition/></D:error>`.
    /// - Parameters:
    ///   - condition: the condition element's name; a non-DAV name declares its
    ///     namespace inline.
    ///   - description: optional human-readable text, in
    ///     `<g:message xmlns:g="https://davgate.dev/ns">` after the condition
    ///     (section 16 allows any extra elements in `DAV:error`).
    public static func render(_ condition: XMLName, description: String? = nil) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\">"
        out += PropertyXML.empty(condition)
        if let description {
            out += "<g:message xmlns:g=\"\(namespace)\">\(XMLEscaping.text(description))</g:message>"
        }
        out += "</D:error>\n"
        return out
    }
}
