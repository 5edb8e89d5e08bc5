import DAVXML
import Testing
@testable import DAVProtocol

@Suite struct RenderingTests {
    @Test func statusLines() {
        #expect(StatusLine.line(200) == "HTTP/1.1 200 OK")
        #expect(StatusLine.line(207) == "HTTP/1.1 207 Multi-Status")
        #expect(StatusLine.line(404) == "HTTP/1.1 404 Not Found")
        #expect(StatusLine.line(423) == "HTTP/1.1 423 Locked")
        #expect(StatusLine.line(424) == "HTTP/1.1 424 Failed Dependency")
        #expect(StatusLine.line(507) == "HTTP/1.1 507 Insufficient Storage")
        for code in [201, 204, 403, 409, 412, 415, 502, 503] {
            #expect(StatusLine.reason(code) != "Unknown")
        }
    }

    @Test func propertyElements() {
        #expect(PropertyXML.text(.dav("displayname"), "a & <b>") == "<D:displayname>a &amp; &lt;b&gt;</D:displayname>")
        #expect(PropertyXML.empty(.dav("getetag")) == "<D:getetag/>")
        #expect(PropertyXML.element(.dav("resourcetype"), valueXML: "<D:collection/>") == "<D:resourcetype><D:collection/></D:resourcetype>")
        #expect(PropertyXML.text(XMLName("http://apache.org/dav/props/", "executable"), "F")
            == "<x:executable xmlns:x=\"http://apache.org/dav/props/\">F</x:executable>")
        #expect(PropertyXML.empty(XMLName("urn:a\"b", "p")) == "<x:p xmlns:x=\"urn:a&quot;b\"/>")
        #expect(PropertyXML.text(XMLName("", "nullns"), "v") == "<nullns xmlns=\"\">v</nullns>")
        #expect(PropertyXML.empty(XMLName("", "nullns")) == "<nullns xmlns=\"\"/>")
    }

    @Test("escaping: plain ASCII comes back as it is; markup, quotes, tabs, newlines, carriage returns, controls and non-characters are handled as before")
    func escaping() {
        #expect(XMLEscaping.text("plain name-1.txt") == "plain name-1.txt")
        #expect(XMLEscaping.text("say \"hi\"\tto\nme") == "say \"hi\"\tto\nme")
        #expect(XMLEscaping.attribute("say \"hi\"\tto\nme") == "say &quot;hi&quot;&#9;to&#10;me")
        #expect(XMLEscaping.text("a & <b> c\r") == "a &amp; &lt;b&gt; c&#13;")
        #expect(XMLEscaping.text("bell\u{7}here\u{7F}") == "bellhere\u{7F}")
        #expect(XMLEscaping.text("Grüße 日本 😀") == "Grüße 日本 😀")
        #expect(XMLEscaping.text("x\u{FFFE}y&") == "xy&amp;")
    }

    @Test("PropertyTags, rendered once, write what PropertyXML writes: each namespace form, escaped text, an empty value")
    func propertyTagsMatchPropertyXML() {
        let names = [XMLName.dav("displayname"), XMLName("http://apache.org/dav/props/", "executable"),
                     XMLName("urn:a\"b", "p"), XMLName("", "nullns")]
        for name in names {
            let tags = PropertyTags(name)
            for value in ["a & <b>", "plain", "", "\u{1}"] {
                var out = XMLBytes(capacity: 1)
                out.append("before")
                tags.append(text: value, to: &out)
                #expect(out.string == "before" + PropertyXML.text(name, value), "\(name) \(value.debugDescription)")
            }
            var element = XMLBytes()
            tags.append(valueXML: "<D:collection/>", to: &element)
            #expect(element.string == PropertyXML.element(name, valueXML: "<D:collection/>"))
            #expect(tags.empty == PropertyXML.empty(name))
        }
    }

    @Test("a response written in parts is the response built from propstats")
    func multistatusResponseInParts() {
        let href = DAVPath(segments: ["a&b <c>", "ü"]).href(collection: false)
        let found = [PropertyXML.text(.dav("getetag"), "\"1\""), PropertyXML.empty(.dav("resourcetype"))]
        let missing = [PropertyXML.empty(XMLName("urn:x", "gone"))]
        var out = XMLBytes()
        Multistatus.openResponse(href: href, into: &out)
        for (status, properties) in [(200, found), (404, missing)] {
            Multistatus.openPropstat(into: &out)
            for property in properties { out.append(property) }
            Multistatus.closePropstat(status: status, into: &out)
        }
        out.append(Multistatus.closeResponse)
        #expect(out.string == Multistatus.response(href: href, propstats: [PropStat(status: 200, properties: found),
                                                                    PropStat(status: 404, properties: missing)]))
    }

    @Test func multistatusResponseWithPropstats() {
        let href = DAVPath(segments: ["a&b <c>", "ü"]).href(collection: true)
        let chunk = Multistatus.response(href: href, propstats: [
            PropStat(status: 200, properties: [PropertyXML.text(.dav("getetag"), "\"e\""), PropertyXML.empty(.dav("resourcetype"))]),
            PropStat(status: 404, properties: [PropertyXML.empty(XMLName("urn:x", "missing"))]),
            PropStat(status: 403, properties: [PropertyXML.empty(.dav("getetag"))], error: .dav("cannot-modify-protected-property")),
        ])
        #expect(chunk == "<D:response><D:href>/a&amp;b%20%3Cc%3E/%C3%BC/</D:href>"
            + "<D:propstat><D:prop><D:getetag>\"e\"</D:getetag><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"
            + "<D:propstat><D:prop><x:missing xmlns:x=\"urn:x\"/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>"
            + "<D:propstat><D:prop><D:getetag/></D:prop><D:status>HTTP/1.1 403 Forbidden</D:status>"
            + "<D:error><D:cannot-modify-protected-property/></D:error></D:propstat>"
            + "</D:response>")
    }

    @Test func multistatusStatusResponse() {
        #expect(Multistatus.response(href: "/x", status: 423, error: .dav("lock-token-submitted"), description: "locked by <someone>")
            == "<D:response><D:href>/x</D:href><D:status>HTTP/1.1 423 Locked</D:status>"
            + "<D:error><D:lock-token-submitted/></D:error>"
            + "<D:responsedescription>locked by &lt;someone&gt;</D:responsedescription></D:response>")
        #expect(Multistatus.response(href: "/x", status: 424) == "<D:response><D:href>/x</D:href><D:status>HTTP/1.1 424 Failed Dependency</D:status></D:response>")
    }

    @Test func multistatusDocumentParsesBack() throws {
        let href = DAVPath(segments: ["sp ace", "😀&#"]).href(collection: false)
        let body = Multistatus.header
            + Multistatus.response(href: href, propstats: [
                PropStat(status: 200, properties: [
                    PropertyXML.text(.dav("displayname"), "😀&# <>\"'"),
                    PropertyXML.text(XMLName("", "nullns"), "n"),
                    PropertyXML.text(XMLName("http://example.com/ns", "p"), "v"),
                    e(XMLName("urn:dead", "prop"), e(XMLName("urn:other", "inner"), text: "deep")).serialized(),
                ]),
            ])
            + Multistatus.response(href: "/gone", status: 404)
            + Multistatus.footer
        let root = try XMLDocumentParser.parse(body)
        #expect(root.name == .dav("multistatus"))
        let responses = root.elements
        #expect(responses.count == 2)
        let first = responses[0]
        let parsedHref = try #require(first.first(.dav("href"))?.text)
        #expect(try DAVPath.parse(requestTarget: parsedHref).path == DAVPath(segments: ["sp ace", "😀&#"]))
        let prop = try #require(first.first(.dav("propstat"))?.first(.dav("prop")))
        #expect(prop.elements.map(\.name) == [.dav("displayname"), XMLName("", "nullns"), XMLName("http://example.com/ns", "p"), XMLName("urn:dead", "prop")])
        #expect(prop.first(.dav("displayname"))?.text == "😀&# <>\"'")
        #expect(prop.first(XMLName("urn:dead", "prop"))?.first(XMLName("urn:other", "inner"))?.text == "deep")
        #expect(first.first(.dav("propstat"))?.first(.dav("status"))?.text == "HTTP/1.1 200 OK")
        #expect(responses[1].first(.dav("status"))?.text == "HTTP/1.1 404 Not Found")
    }

    let lock = ActiveLockInfo(token: "urn:uuid:6f1e", scope: .exclusive, depthInfinity: false,
                              ownerXML: e(.dav("owner"), text: "litmus test suite").serialized(),
                              timeoutSeconds: 3600, rootHref: "/litmus/lockme")

    @Test func lockdiscovery() {
        let value = LockXML.lockdiscoveryValue([lock])
        #expect(value.hasPrefix("<D:activelock><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:depth>0</D:depth>"))
        #expect(value.contains("<D:timeout>Second-3600</D:timeout>"))
        #expect(value.contains("<D:locktoken><D:href>urn:uuid:6f1e</D:href></D:locktoken>"))
        #expect(value.hasSuffix("<D:lockroot><D:href>/litmus/lockme</D:href></D:lockroot></D:activelock>"))
        #expect(value.contains("litmus test suite"))

        var shared = lock
        shared.scope = .shared
        shared.depthInfinity = true
        shared.ownerXML = nil
        shared.timeoutSeconds = nil
        let v2 = LockXML.lockdiscoveryValue([shared])
        #expect(v2.contains("<D:shared/>"))
        #expect(v2.contains("<D:depth>infinity</D:depth>"))
        #expect(v2.contains("<D:timeout>Infinite</D:timeout>"))
        #expect(!v2.contains("owner"))
        #expect(LockXML.lockdiscoveryValue([]) == "")
        #expect(PropertyXML.element(.dav("lockdiscovery"), valueXML: LockXML.lockdiscoveryValue([])) == "<D:lockdiscovery/>")
        #expect(LockXML.lockdiscoveryValue([lock, shared]) == LockXML.lockdiscoveryValue([lock]) + LockXML.lockdiscoveryValue([shared]))
    }

    @Test func lockResponseParsesBack() throws {
        let root = try XMLDocumentParser.parse(LockXML.lockResponseBody(lock))
        #expect(root.name == .dav("prop"))
        let active = try #require(root.first(.dav("lockdiscovery"))?.first(.dav("activelock")))
        #expect(active.first(.dav("owner"))?.text == "litmus test suite")
        #expect(active.first(.dav("locktoken"))?.first(.dav("href"))?.text == "urn:uuid:6f1e")
        #expect(active.first(.dav("lockscope"))?.first(.dav("exclusive")) != nil)
        #expect(active.first(.dav("depth"))?.text == "0")
        #expect(active.first(.dav("timeout"))?.text == "Second-3600")
        #expect(active.first(.dav("lockroot"))?.first(.dav("href"))?.text == "/litmus/lockme")
    }

    @Test func supportedlockParsesBack() throws {
        let doc = "<D:prop xmlns:D=\"DAV:\">" + PropertyXML.element(.dav("supportedlock"), valueXML: LockXML.supportedlockValue) + "</D:prop>"
        let entries = try XMLDocumentParser.parse(doc).first(.dav("supportedlock"))?.elements ?? []
        #expect(entries.count == 2)
        #expect(entries.compactMap { $0.first(.dav("lockscope"))?.elements.first?.name } == [.dav("exclusive"), .dav("shared")])
        #expect(entries.allSatisfy { $0.first(.dav("locktype"))?.first(.dav("write")) != nil })
    }

    @Test func errorBodies() throws {
        #expect(DAVErrorBody.render(.dav("propfind-finite-depth"))
            == "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:error xmlns:D=\"DAV:\"><D:propfind-finite-depth/></D:error>\n")
        let custom = DAVErrorBody.render(XMLName("https://davgate.dev/ns", "upstream-unavailable"), description: "store <down> & out")
        #expect(custom.contains("<x:upstream-unavailable xmlns:x=\"https://davgate.dev/ns\"/>"))
        #expect(custom.contains("<g:message xmlns:g=\"https://davgate.dev/ns\">store &lt;down&gt; &amp; out</g:message>"))
        let root = try XMLDocumentParser.parse(custom)
        #expect(root.name == .dav("error"))
        #expect(root.elements.map(\.name) == [XMLName("https://davgate.dev/ns", "upstream-unavailable"), XMLName("https://davgate.dev/ns", "message")])
        #expect(root.first(XMLName("https://davgate.dev/ns", "message"))?.text == "store <down> & out")
    }

    @Test func parsedRequestBodies() throws {
        // The same bodies as above, through the real parser.
        let propfind = try XMLDocumentParser.parse("""
            <?xml version="1.0" encoding="utf-8"?>
            <propfind xmlns="DAV:"><prop><getetag/><x:executable xmlns:x="http://apache.org/dav/props/"/><nullns xmlns=""/></prop></propfind>
            """)
        #expect(try PropfindRequest.parse(propfind) == .prop([.dav("getetag"), XMLName("http://apache.org/dav/props/", "executable"), XMLName("", "nullns")]))
        let lockinfo = try XMLDocumentParser.parse("""
            <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>litmus test suite</D:owner></D:lockinfo>
            """)
        let lockRequest = try LockRequest.parse(lockinfo)
        #expect(lockRequest.scope == .shared)
        #expect(lockRequest.owner?.text == "litmus test suite")
        let update = try XMLDocumentParser.parse("""
            <D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://ns.example.com/standards/z39.50/"><D:set><D:prop><Z:Authors><Z:Author>Jim Whitehead</Z:Author></Z:Authors></D:prop></D:set><D:remove><D:prop><Z:Copyright-Owner/></D:prop></D:remove></D:propertyupdate>
            """)
        let instructions = try PropertyUpdate.parse(update).instructions
        #expect(instructions.map(\.name) == [XMLName("http://ns.example.com/standards/z39.50/", "Authors"), XMLName("http://ns.example.com/standards/z39.50/", "Copyright-Owner")])
        guard case .set(let authors) = instructions[0] else { Issue.record("expected set"); return }
        #expect(authors.first(XMLName("http://ns.example.com/standards/z39.50/", "Author"))?.text == "Jim Whitehead")
    }
}
