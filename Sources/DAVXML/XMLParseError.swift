/// Why a request body was refused.
///
/// Callers map `.malformed` and `.empty` to 400 Bad Request, `.tooLarge` to
/// 413, `.unsupportedEncoding` to 415, and `.doctypeForbidden`, `.tooDeep`, `.tooManyNodes` to 400 or 403
/// depending on the method.
public enum XMLParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not well-formed XML 1.0 or not namespace-well-formed (for example an
    /// undeclared prefix); carries libxml2's message with line and column.
    case malformed(String)
    /// The body contains a document type declaration. Any DTD is refused,
    /// with or without an internal subset, because entity declarations are
    /// the vehicle of both entity expansion ("billion laughs") and external
    /// entity (XXE) attacks (RFC 4918 section 20.6).
    case doctypeForbidden
    /// More than `XMLLimits.maxBytes` bytes were fed.
    case tooLarge
    /// Elements nested deeper than `XMLLimits.maxDepth`.
    case tooDeep
    /// More than `XMLLimits.maxNodes` elements, attributes and text nodes.
    case tooManyNodes
    /// No root element: an empty body, or only whitespace (or a byte order mark).
    case empty
    /// The body declares a character encoding that libxml2 would decode
    /// through iconv (anything but UTF-8, UTF-16 and ISO-8859-1/ASCII).
    /// libxml2 2.9's push parser converts such input chunk by chunk and can
    /// drop or refuse a character split by a chunk boundary, so the same body
    /// could parse differently depending on how TCP delivered it: a byte of a
    /// property value silently lost. Carries the encoding's name.
    case unsupportedEncoding(String)

    public var description: String {
        switch self {
        case .malformed(let message): "malformed XML: \(message)"
        case .doctypeForbidden: "a DOCTYPE is not allowed in a request body"
        case .tooLarge: "XML body too large"
        case .tooDeep: "XML elements nested too deeply"
        case .tooManyNodes: "XML body has too many nodes"
        case .empty: "XML body has no root element"
        case .unsupportedEncoding(let name):
            "the XML body is in the encoding \(name), which davgate does not read; send UTF-8 (or UTF-16, ISO-8859-1)"
        }
    }
}
