import DAVXML
import Testing
@testable import DAVProtocol

/// Builds a tree by hand: `e(.dav("prop"), e(.dav("getetag")))`.
func e(_ name: XMLName, _ children: XMLElement..., text: String? = nil) -> XMLElement {
    var nodes = children.map { XMLNode.element($0) }
    if let text { nodes.insert(.text(text), at: 0) }
    return XMLElement(name: name, children: nodes)
}

@Suite struct PropfindRequestTests {
    @Test func emptyBodyIsAllprop() throws {
        #expect(try PropfindRequest.parse(nil) == .allprop(include: []))
    }

    @Test func allpropWithInclude() throws {
        let root = e(.dav("propfind"), e(.dav("allprop")),
                     e(.dav("include"), e(.dav("supportedlock")), e(XMLName("http://ns.example/", "x"))))
        #expect(try PropfindRequest.parse(root) == .allprop(include: [.dav("supportedlock"), XMLName("http://ns.example/", "x")]))
        #expect(try PropfindRequest.parse(e(.dav("propfind"), e(.dav("allprop")))) == .allprop(include: []))
    }

    @Test func propname() throws {
        #expect(try PropfindRequest.parse(e(.dav("propfind"), e(.dav("propname")))) == .propname)
    }

    @Test func propListInManyNamespaces() throws {
        var prop = e(.dav("prop"), e(.dav("getetag")), e(XMLName("http://apache.org/dav/props/", "executable")),
                     e(XMLName("", "nullns")), e(XMLName("http://example.com/ünï", "high")))
        prop.children.insert(.text("\n  "), at: 1)
        let root = e(.dav("propfind"), prop)
        #expect(try PropfindRequest.parse(root) == .prop([
            .dav("getetag"), XMLName("http://apache.org/dav/props/", "executable"),
            XMLName("", "nullns"), XMLName("http://example.com/ünï", "high"),
        ]))
    }

    @Test func errors() {
        #expect(throws: DAVRequestError.unexpectedRoot(XMLName("", "propfind"))) {
            try PropfindRequest.parse(e(XMLName("", "propfind"), e(.dav("allprop"))))
        }
        #expect(throws: DAVRequestError.unexpectedRoot(.dav("propertyupdate"))) {
            try PropfindRequest.parse(e(.dav("propertyupdate")))
        }
        #expect(throws: DAVRequestError.missing("allprop, propname or prop")) {
            try PropfindRequest.parse(e(.dav("propfind")))
        }
        #expect(throws: DAVRequestError.missing("allprop, propname or prop")) {
            try PropfindRequest.parse(e(.dav("propfind"), e(XMLName("urn:x", "prop"))))
        }
        #expect(throws: (any Error).self) {
            try PropfindRequest.parse(e(.dav("propfind"), e(.dav("propname")), e(.dav("prop"))))
        }
    }
}

@Suite struct PropertyUpdateTests {
    @Test func documentOrderKept() throws {
        let ns = "http://webdav.org/neon/litmus/"
        let valued = XMLElement(name: XMLName(ns, "prop0"), attributes: [(XMLName("", "lang"), "en")],
                                children: [.text("value0 "), .element(e(XMLName("urn:y", "inner"), text: "deep"))])
        let root = e(.dav("propertyupdate"),
                     e(.dav("set"), e(.dav("prop"), valued, e(XMLName("", "nullns"), text: "x"))),
                     e(.dav("remove"), e(.dav("prop"), e(XMLName(ns, "prop1")))),
                     e(.dav("set"), e(.dav("prop"), e(XMLName(ns, "prop1"), text: "again"))))
        let update = try PropertyUpdate.parse(root)
        #expect(update.instructions == [
            .set(valued),
            .set(e(XMLName("", "nullns"), text: "x")),
            .remove(XMLName(ns, "prop1")),
            .set(e(XMLName(ns, "prop1"), text: "again")),
        ])
        #expect(update.instructions.map(\.name) == [XMLName(ns, "prop0"), XMLName("", "nullns"), XMLName(ns, "prop1"), XMLName(ns, "prop1")])
    }

    @Test func errors() {
        #expect(throws: DAVRequestError.unexpectedRoot(.dav("propfind"))) { try PropertyUpdate.parse(e(.dav("propfind"))) }
        #expect(throws: DAVRequestError.missing("set or remove")) { try PropertyUpdate.parse(e(.dav("propertyupdate"))) }
        #expect(throws: DAVRequestError.missing("prop")) {
            try PropertyUpdate.parse(e(.dav("propertyupdate"), e(.dav("set"), e(XMLName("urn:x", "a")))))
        }
        #expect(throws: DAVRequestError.invalid("remove with an empty prop")) {
            try PropertyUpdate.parse(e(.dav("propertyupdate"), e(.dav("remove"), e(.dav("prop")))))
        }
    }
}

@Suite struct LockRequestTests {
    @Test func exclusiveWithOwner() throws {
        let owner = e(.dav("owner"), text: "litmus test suite")
        let root = e(.dav("lockinfo"), e(.dav("lockscope"), e(.dav("exclusive"))), e(.dav("locktype"), e(.dav("write"))), owner)
        #expect(try LockRequest.parse(root) == LockRequest(scope: .exclusive, owner: owner))
    }

    @Test func sharedWithoutOwner() throws {
        let root = e(.dav("lockinfo"), e(.dav("locktype"), e(.dav("write"))), e(.dav("lockscope"), e(.dav("shared"))))
        #expect(try LockRequest.parse(root) == LockRequest(scope: .shared, owner: nil))
    }

    @Test func hrefOwnerKeptAsSent() throws {
        let owner = e(.dav("owner"), e(.dav("href"), text: "mailto:a@example.com"))
        let root = e(.dav("lockinfo"), e(.dav("lockscope"), e(.dav("exclusive"))), e(.dav("locktype"), e(.dav("write"))), owner)
        #expect(try LockRequest.parse(root).owner == owner)
    }

    @Test func errors() {
        #expect(throws: DAVRequestError.unexpectedRoot(.dav("propfind"))) { try LockRequest.parse(e(.dav("propfind"))) }
        #expect(throws: DAVRequestError.missing("lockscope")) {
            try LockRequest.parse(e(.dav("lockinfo"), e(.dav("locktype"), e(.dav("write")))))
        }
        #expect(throws: DAVRequestError.missing("locktype")) {
            try LockRequest.parse(e(.dav("lockinfo"), e(.dav("lockscope"), e(.dav("exclusive")))))
        }
        #expect(throws: DAVRequestError.invalid("locktype")) {
            try LockRequest.parse(e(.dav("lockinfo"), e(.dav("lockscope"), e(.dav("exclusive"))), e(.dav("locktype"), e(XMLName("urn:x", "write")))))
        }
        #expect(throws: DAVRequestError.invalid("lockscope")) {
            try LockRequest.parse(e(.dav("lockinfo"), e(.dav("lockscope"), e(.dav("bogus"))), e(.dav("locktype"), e(.dav("write")))))
        }
    }
}
