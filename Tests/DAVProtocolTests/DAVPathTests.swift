import Testing
@testable import DAVProtocol

@Suite struct DAVPathTests {
    @Test(arguments: [
        ("/", [String](), true),
        ("/a/b", ["a", "b"], false),
        ("/a/b/", ["a", "b"], true),
        ("//a///b//", ["a", "b"], true),
        ("/a%20b/c", ["a b", "c"], false),
        ("/caf%c3%a9", ["café"], false),
        ("/caf%C3%A9", ["café"], false),
        ("/100%25", ["100%"], false),
        ("/a%23b", ["a#b"], false),
        ("/x,y;z=1", ["x,y;z=1"], false),
        ("/%F0%9F%98%80.txt", ["😀.txt"], false),
        ("/a%EF%BF%BD", ["a\u{FFFD}"], false),
        ("/a/b?x=1&y=2", ["a", "b"], false),
        ("/a/b/?x", ["a", "b"], true),
        ("/a%252F", ["a%2F"], false),
        ("/...", ["..."], false),
        ("/.hidden", [".hidden"], false),
        ("https://example.com:8443/dav/x%20y", ["dav", "x y"], false),
        ("http://EXAMPLE.com", [], true),
        ("HTTPS://h/a/?q#f", ["a"], true),
    ])
    func parsesTargets(target: String, segments: [String], trailingSlash: Bool) throws {
        let parsed = try DAVPath.parse(requestTarget: target)
        #expect(parsed.path.segments == segments)
        #expect(parsed.trailingSlash == trailingSlash)
    }

    @Test func nfdEqualsNFC() throws {
        let nfd = try DAVPath.parse(requestTarget: "/u%CC%88ber").path
        let nfc = try DAVPath.parse(requestTarget: "/%C3%BCber").path
        #expect(nfd == nfc)
        #expect(nfd.segments[0].unicodeScalars.count == 4)
        #expect(nfd.href(collection: false) == "/%C3%BCber")
        #expect(DAVPath(segments: ["u\u{308}"]) == DAVPath(segments: ["ü"]))
        #expect(DAVPath.root.appending("u\u{308}") == nfc.parent!.appending("ü"))
    }

    @Test(arguments: [
        ("/a/../b", PathError.dotSegment),
        ("/a/./b", .dotSegment),
        ("/..", .dotSegment),
        ("/a/%2e%2e/b", .dotSegment),
        ("/a/%2E./b", .dotSegment),
        ("/a/.%2E", .dotSegment),
        ("/a/%2e", .dotSegment),
        ("/a%00b", .nulByte),
        ("/a%2Fb", .encodedSlash),
        ("/a%2fb", .encodedSlash),
        ("/a%2", .badEncoding),
        ("/a%zz", .badEncoding),
        ("/a%", .badEncoding),
        ("/%C3", .invalidUTF8),
        ("/%FF%FE", .invalidUTF8),
        ("/a\u{FFFD}b", .invalidUTF8),
        ("https://h/a/\u{FFFD}", .invalidUTF8),
        ("/litmus/frag/#ment", .fragment),
        ("*", .notAbsolute),
        ("a/b", .notAbsolute),
        ("ftp://h/a", .notAbsolute),
        ("", .notAbsolute),
        ("https://h/a/%2e%2e/x", .dotSegment),
    ])
    func refusesTargets(target: String, error: PathError) {
        #expect(throws: error) { try DAVPath.parse(requestTarget: target) }
    }

    /// Found by PathFuzz: the query was looked for among Characters, and `?`
    /// followed by a combining mark (U+031D) is one Character, so the query
    /// stayed in the name (`f?\u{31D}\u{FFFD}`). The same held for `#`, which
    /// must be refused, and for the trailing `/`.
    @Test func delimitersBeforeACombiningMark() throws {
        let fuzzed = try DAVPath.parse(requestTarget: "/f?\u{31D}\u{FFFD}")
        #expect(fuzzed.path.segments == ["f"])
        #expect(fuzzed.trailingSlash == false)
        #expect(try DAVPath.parse(requestTarget: "/a/?\u{301}x").trailingSlash == true)
        #expect(throws: PathError.fragment) { try DAVPath.parse(requestTarget: "/a#\u{301}b") }
    }

    @Test(arguments: [
        ["a b"], ["100%"], ["a#b"], ["q?x=1"], ["x,y;z"], ["😀 emoji", "𝄞 clef"],
        ["\"<>\\^`{|}"], ["tab\there", "nl\nthere"], ["ünïcödé"], ["a+b=c&d"], ["[x]"],
        ["%2F", "%00"], ["..."], ["日本語のファイル名.txt"], ["'quote'(paren)!$*@:~"],
    ])
    func hrefRoundTrips(segments: [String]) throws {
        let path = DAVPath(segments: segments)
        for collection in [false, true] {
            let href = path.href(collection: collection)
            let parsed = try DAVPath.parse(requestTarget: href)
            #expect(parsed.path == path)
            #expect(parsed.trailingSlash == collection)
        }
    }

    @Test func hrefEncodingIsUpperCaseAndMinimal() {
        let path = DAVPath(segments: ["a b", "ü", "x#y?z%", "keep-._~!$&'()*+,=:@", "semi;colon", "\"<>\\^`{|}[]"])
        #expect(path.href(collection: true)
            == "/a%20b/%C3%BC/x%23y%3Fz%25/keep-._~!$&'()*+,=:@/semi%3Bcolon/%22%3C%3E%5C%5E%60%7B%7C%7D%5B%5D/")
        #expect(DAVPath.root.href(collection: true) == "/")
        #expect(DAVPath.root.href(collection: false) == "/")
        #expect(DAVPath(segments: ["\u{1}"]).href(collection: false) == "/%01")
    }

    @Test func navigation() {
        let p = DAVPath(segments: ["a", "b", "c"])
        #expect(p.parent == DAVPath(segments: ["a", "b"]))
        #expect(p.name == "c")
        #expect(DAVPath.root.parent == nil)
        #expect(DAVPath.root.name == nil)
        #expect(DAVPath.root.isRoot)
        #expect(!p.isRoot)
        #expect(DAVPath.root.appending("a").appending("b").appending("c") == p)
        #expect(p.hasPrefix(DAVPath(segments: ["a", "b"])))
        #expect(p.hasPrefix(p))
        #expect(p.hasPrefix(.root))
        #expect(!p.hasPrefix(DAVPath(segments: ["a", "bc"])))
        #expect(!DAVPath(segments: ["a", "bc"]).hasPrefix(DAVPath(segments: ["a", "b"])))
        #expect(!DAVPath(segments: ["a"]).hasPrefix(p))
        #expect(p.dropFirst(1) == DAVPath(segments: ["b", "c"]))
        #expect(p.dropFirst(5) == .root)
        #expect(p.replacingPrefix(DAVPath(segments: ["a"]), with: DAVPath(segments: ["x", "y"]))
            == DAVPath(segments: ["x", "y", "b", "c"]))
        #expect(p.replacingPrefix(DAVPath(segments: ["z"]), with: .root) == p)
        #expect(p.replacingPrefix(p, with: .root) == .root)
        #expect(p.description == "/a/b/c")
        #expect(DAVPath.root.description == "/")
    }

    /// A listing encodes its folder's href once and appends each member:
    /// that must be the href the member's own path gives.
    @Test(arguments: [
        ([String](), "plain.txt"), (["a"], "with space"), (["a", "b c"], "café"), (["x"], "100%"),
        (["x"], "q?#[]"), (["日本"], "語"), (["a"], "e\u{301}"),
    ])
    func memberHrefFromItsFolders(parent: [String], name: String) {
        for collection in [false, true] {
            var href = DAVPath(segments: parent).href(collection: true)
            DAVPath.appendSegment(name, collection: collection, to: &href)
            #expect(href == DAVPath(segments: parent + [name]).href(collection: collection))
        }
    }
}

extension DAVPathTests {
    /// A listed name a request path can reach is NFC; a decomposed one is not.
    @Test func isNFC() {
        #expect(DAVPath.isNFC("plain-ascii.txt"))
        #expect(DAVPath.isNFC(""))
        #expect(DAVPath.isNFC("\u{FC}ber"))            // ü composed
        #expect(!DAVPath.isNFC("u\u{308}ber"))         // u + combining diaeresis
        #expect(DAVPath.isNFC("日本語.txt"))
        #expect(!DAVPath.isNFC("\u{212B}"))            // Angstrom sign: NFC is Å
    }
}
