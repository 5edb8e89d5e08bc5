extension String {
    /// The string without the XML white space around it (space, tab, CR and
    /// LF: the `S` production of XML 1.0), which is all that pads a DAV
    /// element's text. Foundation's `trimmingCharacters(in:)` bridges
    /// through `NSString` and tests every scalar against a `CharacterSet`:
    /// for each property of each member it was a twelfth of applying a
    /// cold listing from a WebDAV upstream.
    public var trimmingXMLWhitespace: String {
        let bytes = utf8
        guard let first = bytes.firstIndex(where: { !Self.isXMLWhitespace($0) }) else { return "" }
        // The byte after the last kept one is white space or the end, so
        // both ends fall on scalar boundaries.
        let end = bytes.index(after: bytes.lastIndex(where: { !Self.isXMLWhitespace($0) })!)
        if first == bytes.startIndex && end == bytes.endIndex { return self }
        return String(self[first..<end])
    }

    @inline(__always)
    static func isXMLWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
