import DAVXML

/// One `<D:propstat>` (RFC 4918 section 14.22): properties that share a status.
public struct PropStat: Sendable, Equatable {
    public var status: Int
    /// Rendered property elements (``PropertyXML``).
    public var properties: [String]
    /// An optional precondition or postcondition code (section 16), rendered in
    /// `<D:error>`.
    public var error: XMLName?
    /// Why, for a person reading it, in `<D:responsedescription>` (14.22).
    public var description: String?

    public init(status: Int, properties: [String], error: XMLName? = nil, description: String? = nil) {
        self.status = status
        self.properties = properties
        self.error = error
        self.description = description
    }
}

/// A `207 Multi-Status` body (RFC 4918 sections 13 and 14.16), written as a
/// stream: ``header``, then one ``response(href:propstats:)`` or
/// ``response(href:status:error:description:)`` chunk per resource, then
/// ``footer``. Memory does not grow with the number of responses.
public enum Multistatus {
    /// The XML declaration and the opening `<D:multistatus>`.
    public static let header = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus xmlns:D=\"DAV:\">"

    /// The closing tag.
    public static let footer = "</D:multistatus>\n"

    /// A `<D:response>` with propstats (PROPFIND, PROPPATCH).
    /// - Parameter href: the already percent-encoded href (``DAVPath/href(collection:)``);
    ///   it is XML-escaped here.
    public static func response(href: String, propstats: [PropStat]) -> String {
        var out = "<D:response><D:href>\(XMLEscaping.text(href))</D:href>"
        for propstat in propstats {
            out += "<D:propstat><D:prop>"
            for property in propstat.properties { out += property }
            out += "</D:prop><D:status>\(StatusLine.line(propstat.status))</D:status>"
            if let error = propstat.error { out += errorElement(error) }
            if let description = propstat.description { out += responseDescription(description) }
            out += "</D:propstat>"
        }
        out += closeResponse
        return out
    }

    /// The parts of ``response(href:propstats:)`` for writing a response in
    /// place (a PROPFIND's thousands of members, without an array of
    /// strings each): `<D:response><D:href>…</D:href>`, then propstats
    /// (``openPropstat(into:)``, properties, ``closePropstat(status:into:)``),
    /// then ``closeResponse``.
    public static func openResponse(href: String, into out: inout XMLBytes) {
        out.append("<D:response><D:href>")
        out.append(escaping: href)
        out.append("</D:href>")
    }

    /// Opens a `<D:propstat>`: its properties follow, then ``closePropstat(status:into:)``.
    public static func openPropstat(into out: inout XMLBytes) {
        out.append("<D:propstat><D:prop>")
    }

    /// Closes a `<D:propstat>` opened by ``openPropstat(into:)`` with its status.
    public static func closePropstat(status: Int, into out: inout XMLBytes) {
        out.append("</D:prop><D:status>")
        out.append(StatusLine.line(status))
        out.append("</D:status></D:propstat>")
    }

    public static let closeResponse = "</D:response>"

    /// A `<D:response>` with a status only (DELETE, COPY, MOVE, LOCK failures
    /// on members: section 9.6.1, 9.8.5, 9.10.6).
    /// - Parameters:
    ///   - error: a condition code such as `DAV:lock-token-submitted`, in `<D:error>`.
    ///   - description: human-readable text, in `<D:responsedescription>` (section 14.25).
    public static func response(href: String, status: Int, error: XMLName? = nil, description: String? = nil) -> String {
        var out = "<D:response><D:href>\(XMLEscaping.text(href))</D:href><D:status>\(StatusLine.line(status))</D:status>"
        if let error { out += errorElement(error) }
        if let description { out += responseDescription(description) }
        out += "</D:response>"
        return out
    }

    static func responseDescription(_ text: String) -> String {
        "<D:responsedescription>\(XMLEscaping.text(text))</D:responsedescription>"
    }

    /// `<D:error><condition/></D:error>` (section 14.5).
    static func errorElement(_ condition: XMLName) -> String {
        "<D:error>\(PropertyXML.empty(condition))</D:error>"
    }
}
