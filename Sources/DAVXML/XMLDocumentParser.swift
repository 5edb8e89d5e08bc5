/// One-shot parsing of a complete body held in memory.
public enum XMLDocumentParser {
    /// Parses a complete XML document.
    ///
    /// The encoding is detected from a byte order mark or the XML declaration
    /// (XML 1.0 appendix F); without either it is UTF-8.
    public static func parse(_ bytes: [UInt8], limits: XMLLimits = .default) throws(XMLParseError) -> XMLElement {
        var parser = XMLPushParser(limits: limits)
        try parser.feed(bytes)
        return try parser.finish()
    }

    /// Parses a complete XML document held in a string.
    ///
    /// The string's UTF-8 bytes are parsed; an `encoding` in its XML
    /// declaration is ignored because a Swift string has no other encoding.
    public static func parse(_ string: String, limits: XMLLimits = .default) throws(XMLParseError) -> XMLElement {
        var parser = XMLPushParser(limits: limits, ignoreDeclaredEncoding: true)
        try parser.feed(Array(string.utf8))
        return try parser.finish()
    }
}
