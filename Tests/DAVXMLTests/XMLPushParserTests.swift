import DAVXML
import Testing

/// Incremental feeding, round trips through `serialized()`, and concurrency.
@Suite struct XMLPushParserTests {
    static let sample = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z:\u{E9}">
          <!-- a comment -->
          <D:set><D:prop>
            <Z:Authors Z:lang="fr" plain="a&amp;b">Jos\u{E9} &amp; \u{1F600}<![CDATA[<raw>]]>&#x1F601;</Z:Authors>
            <foo xmlns="">null ns</foo>
            <x:deep xmlns:x="urn:x"><x:deeper>\u{20000}</x:deeper></x:deep>
          </D:prop></D:set>
        </D:propertyupdate>
        """

    @Test func byteByByteEqualsOneChunk() throws {
        let bytes = Array(Self.sample.utf8)
        let whole = try XMLDocumentParser.parse(bytes)
        #expect(whole.elements.count == 1)
        #expect(try parseInChunks(bytes, size: 1).get() == whole)
        for size in [2, 3, 5, 7, 64] {
            #expect(try parseInChunks(bytes, size: size).get() == whole)
        }
        #expect(try XMLDocumentParser.parse(Self.sample) == whole)
    }

    @Test func feedOverloadsAgree() throws {
        let bytes = Array(Self.sample.utf8)
        let expected = try XMLDocumentParser.parse(bytes)

        var fromRaw = XMLPushParser()
        try bytes.withUnsafeBytes { raw in try fromRaw.feed(raw) }
        #expect(try fromRaw.finish() == expected)

        var fromArray = XMLPushParser()
        try fromArray.feed(bytes)
        #expect(try fromArray.finish() == expected)

        // A non-contiguous sequence takes the copying path.
        var fromSequence = XMLPushParser()
        try fromSequence.feed(bytes.lazy.map { $0 })
        #expect(try fromSequence.finish() == expected)
    }

    @Test func finishingTwiceIsAnError() throws {
        var parser = XMLPushParser()
        try parser.feed(Array("<a/>".utf8))
        #expect(try parser.finish() == element("", "a"))
        #expect(throws: XMLParseError.self) { _ = try parser.finish() }
        #expect(throws: XMLParseError.self) { try parser.feed(Array("<b/>".utf8)) }
    }

    @Test func parserCanBeAbandonedMidway() throws {
        // Nothing to assert but that dropping a half-fed parser frees it
        // cleanly (run under ASan/valgrind to see leaks).
        for _ in 0..<100 {
            var parser = XMLPushParser()
            try parser.feed(Array("<a><b>".utf8))
        }
    }

    // MARK: Round trips

    static let roundTripTrees: [XMLElement] = [
        element("", "plain"),
        element("DAV:", "prop", [],
            node(element("", "foo", [], .text("null namespace"))),
            node(element("http://example.com/ns/1", "one", [], node(element("", "inner")))),
            node(element("http://example.com/ns/2", "two", [(XMLName("", "a"), "1"), (XMLName("urn:attr", "b"), "2")])),
            node(element("DAV:", "again"))),
        element("urn:x", "escaping", [(XMLName("", "q"), "\"quoted\" <&> 'single'"), (XMLName("urn:y", "ws"), "tab\there\nnewline\r\ncrlf  two")],
            .text("<tag> & \"quotes\" ]]> \r\n\ttext")),
        element("", "root", [],
            node(element("urn:a", "a", [], node(element("urn:b", "b", [], node(element("", "c", [], .text("deep"))))))),
            .text(" mixed "),
            node(element("urn:a", "a2"))),
        element("urn:a&b<c>\"d\"", "amp", [(XMLName("urn:a&b<c>\"d\"", "x"), "&")], node(element("urn:e&amp;", "e"))),
        element("urn:\u{1F600}", "\u{1F600}", [(XMLName("", "v\u{10400}"), "\u{1F600}\u{E9}\u{20000}")], .text("\u{1F600}")),
    ]

    @Test(arguments: roundTripTrees)
    func serializedTreeParsesBackEqual(_ tree: XMLElement) throws {
        let xml = tree.serialized()
        #expect(try XMLDocumentParser.parse(xml) == tree, "\(xml)")
        #expect(try XMLDocumentParser.parse(Array(xml.utf8)) == tree)
    }

    @Test func parsedBodyRoundTrips() throws {
        let parsed = try XMLDocumentParser.parse(Self.sample)
        #expect(try XMLDocumentParser.parse(parsed.serialized()) == parsed)
    }

    /// Found by DAVXMLFuzz on its seed Fuzz/DAVXMLFuzz/seeds/proppatch-litmus.xml:
    /// `xml:lang` on a dead property (which RFC 4918 section 4.3 says to keep)
    /// was written with a generated prefix bound to the XML namespace, which
    /// Namespaces in XML 1.0 section 3 forbids, so the stored property no
    /// longer parsed.
    @Test func xmlLangKeepsItsPrefix() throws {
        let body = #"<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><t:lang xmlns:t="urn:x" xml:lang="en-US">text <b>mixed</b></t:lang></D:prop></D:set></D:propertyupdate>"#
        let parsed = try XMLDocumentParser.parse(body)
        let property = try #require(parsed.first(.dav("set"))?.first(.dav("prop"))?.elements.first)
        let stored = property.serialized()
        #expect(stored.contains(#" xml:lang="en-US""#) && !stored.contains("XML/1998"), "\(stored)")
        #expect(try XMLDocumentParser.parse(stored) == property)
        #expect(try XMLDocumentParser.parse(parsed.serialized()) == parsed)
    }

    // MARK: Concurrency

    @Test func manyParsersInParallel() async throws {
        let results = await withTaskGroup(of: (Int, Result<XMLElement, XMLParseError>).self) { group in
            for i in 0..<200 {
                group.addTask {
                    // Every third body is broken, so errors from one context
                    // must not leak into another.
                    let body = i % 3 == 0
                        ? "<D:prop xmlns:D=\"DAV:\"><n\(i)></D:prop>"
                        : "<D:prop xmlns:D=\"DAV:\" xmlns:Z=\"urn:\(i)\"><Z:v\(i) a=\"\(i)\">\u{1F600}\(i)</Z:v\(i)></D:prop>"
                    let bytes = Array(body.utf8)
                    return (i, i % 2 == 0 ? parseInChunks(bytes, size: 3) : parseResult(bytes))
                }
            }
            var all: [Int: Result<XMLElement, XMLParseError>] = [:]
            for await (i, result) in group { all[i] = result }
            return all
        }
        #expect(results.count == 200)
        for (i, result) in results {
            if i % 3 == 0 {
                guard case .failure(.malformed(let message)) = result else {
                    Issue.record("body \(i): expected malformed, got \(result)")
                    continue
                }
                #expect(message.contains("n\(i)"), "body \(i): \(message)")
            } else {
                let expected = element("DAV:", "prop", [],
                    node(element("urn:\(i)", "v\(i)", [(XMLName("", "a"), "\(i)")], .text("\u{1F600}\(i)"))))
                #expect(try result.get() == expected, "body \(i)")
            }
        }
    }
}
