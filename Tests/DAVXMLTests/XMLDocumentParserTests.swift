import DAVXML
import Testing

/// Well-formed bodies as WebDAV clients send them (RFC 4918 section 9 and the
/// litmus `props` suite).
@Suite struct XMLDocumentParserTests {
    @Test func propfindWithSeveralNamespaces() throws {
        let body = """
            <?xml version="1.0" encoding="utf-8" ?>
            <D:propfind xmlns:D="DAV:" xmlns:Z="http://ns.example.com/z/">
              <D:prop>
                <D:getetag/>
                <Z:Authors/>
                <displayname xmlns="http://other.example/"/>
                <D:resourcetype xmlns:D="urn:shadowed"/>
              </D:prop>
            </D:propfind>
            """
        let root = try XMLDocumentParser.parse(body)
        #expect(root.name == .dav("propfind"))
        let prop = try #require(root.first(.dav("prop")))
        #expect(prop.elements.map(\.name) == [
            .dav("getetag"),
            XMLName("http://ns.example.com/z/", "Authors"),
            XMLName("http://other.example/", "displayname"),
            XMLName("urn:shadowed", "resourcetype"),
        ])
        #expect(prop.elements.allSatisfy { $0.children.isEmpty && $0.attributes.isEmpty })
    }

    @Test func proppatchSetAndRemoveWithNestedValue() throws {
        let body = """
            <?xml version="1.0" encoding="utf-8" ?>
            <D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://ns.example.com/z39.50/">
            <D:set><D:prop><Z:Authors><Z:Author>Jim Whitehead</Z:Author><Z:Author>Roy Fielding</Z:Author></Z:Authors></D:prop></D:set>
            <D:set><D:prop><Z:note>see <h:b xmlns:h="http://www.w3.org/1999/xhtml" h:class="x">this</h:b> &amp; <i xmlns="urn:i">that</i></Z:note></D:prop></D:set>
            <D:remove><D:prop><Z:Copyright-Owner/></D:prop></D:remove>
            </D:propertyupdate>
            """
        let root = try XMLDocumentParser.parse(body)
        let z = "http://ns.example.com/z39.50/"
        #expect(root.elements.map(\.name) == [.dav("set"), .dav("set"), .dav("remove")])

        let authors = try #require(root.elements[0].first(.dav("prop"))?.first(XMLName(z, "Authors")))
        #expect(authors == element(z, "Authors", [],
            node(element(z, "Author", [], .text("Jim Whitehead"))),
            node(element(z, "Author", [], .text("Roy Fielding")))))

        let note = try #require(root.elements[1].first(.dav("prop"))?.first(XMLName(z, "note")))
        let xhtml = "http://www.w3.org/1999/xhtml"
        #expect(note == element(z, "note", [],
            .text("see "),
            node(element(xhtml, "b", [(XMLName(xhtml, "class"), "x")], .text("this"))),
            .text(" & "),
            node(element("urn:i", "i", [], .text("that")))))
        #expect(note.text == "see this & that")

        let removed = try #require(root.elements[2].first(.dav("prop")))
        #expect(removed.elements == [element(z, "Copyright-Owner")])
    }

    @Test func nullNamespaceProperty() throws {
        let root = try XMLDocumentParser.parse("""
            <propertyupdate xmlns="DAV:"><set><prop><foo xmlns="">bar</foo><bar/></prop></set></propertyupdate>
            """)
        let prop = try #require(root.first(.dav("set"))?.first(.dav("prop")))
        #expect(prop.elements[0] == element("", "foo", [], .text("bar")))
        #expect(prop.elements[0].name != .dav("foo"))
        #expect(prop.elements[1].name == .dav("bar"))

        // No default namespace declared at all: also no namespace.
        #expect(try XMLDocumentParser.parse("<plain/>").name == XMLName("", "plain"))
    }

    @Test func attributesAreResolved() throws {
        let root = try XMLDocumentParser.parse("""
            <a xmlns="urn:a" xmlns:p="urn:p" plain="1" p:q="2"><b p:r="&amp;&#38;&lt;&#x1F600;&quot;&apos;" xml:lang="en" s='&#38;#38;'/></a>
            """)
        #expect(root.name == XMLName("urn:a", "a"))
        // An unprefixed attribute is in no namespace, not the default one
        // (Namespaces in XML 1.0 section 6.2).
        #expect(root.attributes.map(\.name) == [XMLName("", "plain"), XMLName("urn:p", "q")])
        #expect(root.attributes.map(\.value) == ["1", "2"])
        let b = try #require(root.first(XMLName("urn:a", "b")))
        #expect(b.attributes.map(\.name) == [
            XMLName("urn:p", "r"),
            XMLName("http://www.w3.org/XML/1998/namespace", "lang"),
            XMLName("", "s"),
        ])
        #expect(b.attributes.map(\.value) == ["&&<\u{1F600}\"'", "en", "&#38;"])
    }

    @Test func namespaceNamesDecodeReferences() throws {
        // Found by the fuzz target: namespace names are attribute values, so
        // libxml2 hands an `&amp;` in them over as `&#38;` too.
        let root = try XMLDocumentParser.parse("<p:a xmlns:p=\"urn:a&amp;b&#38;c&lt;\" xmlns=\"urn:&#x1F600;&amp;\" p:x=\"1\"><b/></p:a>")
        #expect(root.name == XMLName("urn:a&b&c<", "a"))
        #expect(root.attributes.first?.name == XMLName("urn:a&b&c<", "x"))
        #expect(root.elements.first?.name == XMLName("urn:\u{1F600}&", "b"))
    }

    @Test func attributeValuesAreNormalized() throws {
        // XML 1.0 section 3.3.3: literal whitespace becomes a space, while
        // character references keep the character.
        let root = try XMLDocumentParser.parse("<a v=\"x\ty\nz&#9;&#10;&#13;\"/>")
        #expect(root.attributes.first?.value == "x y z\t\n\r")
    }

    @Test func whitespaceTextNodesArePreserved() throws {
        let root = try XMLDocumentParser.parse("<a>\n  <b/>\t<c> </c>\n</a>")
        #expect(root.children == [
            .text("\n  "),
            node(element("", "b")),
            .text("\t"),
            node(element("", "c", [], .text(" "))),
            .text("\n"),
        ])
        #expect(root.elements.count == 2)
    }

    @Test func adjacentTextIsMergedAndCDATAIsText() throws {
        let root = try XMLDocumentParser.parse("<a>one &lt;<![CDATA[<two> & ]]><!-- gone -->three&#x20;&#65;<?pi x?>end</a>")
        #expect(root.children == [.text("one <<two> & three Aend")])
    }

    @Test func highUnicodeInNamesTextAndAttributes() throws {
        let body = "<x:\u{1F600} xmlns:x=\"urn:\u{1F600}\" a\u{10400}=\"\u{1F600}\u{E9}\">\u{1F600}&#x1F601;\u{20000}</x:\u{1F600}>"
        let root = try XMLDocumentParser.parse(body)
        #expect(root == element("urn:\u{1F600}", "\u{1F600}",
            [(XMLName("", "a\u{10400}"), "\u{1F600}\u{E9}")],
            .text("\u{1F600}\u{1F601}\u{20000}")))
        #expect(try XMLDocumentParser.parse(Array(body.utf8)) == root)
    }

    @Test func declaredEncodingIsHonoured() throws {
        // "café" in ISO-8859-1: the é is the single byte 0xE9.
        var latin1 = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a v=\"caf".utf8)
        latin1 += [0xE9] + Array("\">caf".utf8) + [0xE9] + Array("</a>".utf8)
        let root = try XMLDocumentParser.parse(latin1)
        #expect(root == element("", "a", [(XMLName("", "v"), "caf\u{E9}")], .text("caf\u{E9}")))
        // Byte by byte, the declaration arrives in pieces.
        #expect(try parseInChunks(latin1, size: 1).get() == root)
    }

    @Test func iconvEncodingIsRefusedAtTheRootElement() {
        // "日本" in Shift_JIS is decoded by iconv, whose chunk-by-chunk use in
        // libxml2 2.9 is not dependable (XMLParseError.unsupportedEncoding).
        let body = Array("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><a>".utf8) + [0x93, 0xFA, 0x96, 0x7B] + Array("</a>".utf8)
        #expect(parseResult(body).failure == .unsupportedEncoding("Shift_JIS"))
        for size in [1, 2, 3, 5, 1000] {
            #expect(parseInChunks(body, size: size).failure == .unsupportedEncoding("Shift_JIS"))
        }
    }

    @Test func utf16WithByteOrderMark() throws {
        let text = "<a>\u{1F600}\u{E9}</a>"
        let utf16le: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { (unit: UInt16) -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        #expect(try XMLDocumentParser.parse(utf16le) == element("", "a", [], .text("\u{1F600}\u{E9}")))
        #expect(try parseInChunks(utf16le, size: 1).get() == element("", "a", [], .text("\u{1F600}\u{E9}")))
    }

    @Test func utf8ByteOrderMarkIsSkipped() throws {
        #expect(try XMLDocumentParser.parse([0xEF, 0xBB, 0xBF] + Array("<a/>".utf8)) == element("", "a"))
    }

    @Test func stringInputIgnoresDeclaredEncoding() throws {
        // A Swift string is Unicode; its UTF-8 bytes must not be re-read as Latin-1.
        let root = try XMLDocumentParser.parse("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>\u{E9}\u{1F600}</a>")
        #expect(root.text == "\u{E9}\u{1F600}")
    }
}
