import DAVXML
import Testing

/// `trimmingXMLWhitespace` takes off what XML calls white space and nothing
/// else, and never cuts a multi-byte character at either end.
@Suite struct XMLWhitespaceTests {
    @Test(arguments: [
        ("  /dav/a.txt\n", "/dav/a.txt"),
        ("\r\n\t\"abc-123\" \t", "\"abc-123\""),
        ("HTTP/1.1 200 OK", "HTTP/1.1 200 OK"),
        ("", ""),
        (" \t\r\n ", ""),
        ("\n é dossier ü\n", "é dossier ü"),
        ("日本語", "日本語"),
        (" x ", "x"),
    ])
    func trims(_ text: String, _ expected: String) {
        #expect(text.trimmingXMLWhitespace == expected)
    }

    /// No-break space, ideographic space and a vertical tab are not XML
    /// white space: they are part of a name and must survive.
    @Test func keepsWhatXMLDoesNotCallWhiteSpace() {
        #expect("\u{00A0}name\u{00A0}".trimmingXMLWhitespace == "\u{00A0}name\u{00A0}")
        #expect(" \u{3000}name\u{3000} ".trimmingXMLWhitespace == "\u{3000}name\u{3000}")
        #expect("\u{0B}name".trimmingXMLWhitespace == "\u{0B}name")
    }
}
