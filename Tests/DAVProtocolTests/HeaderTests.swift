import Testing
@testable import DAVProtocol

@Suite struct DestinationTests {
    @Test(arguments: [
        ("https://dav.example:8443/a/b", "dav.example:8443"),
        ("https://DAV.Example:8443/a/b", "dav.example:8443"),
        ("https://dav.example:8443/a/b", "DAV.EXAMPLE:8443"),
        ("https://dav.example/a/b", "dav.example"),
        ("https://dav.example:443/a/b", "dav.example"),
        ("https://dav.example/a/b", "dav.example:443"),
        ("http://dav.example:80/a/b", "dav.example"),
        ("https://user@dav.example:8443/a/b", "dav.example:8443"),
        ("https://[::1]:8443/a/b", "[::1]:8443"),
        ("/a/b", "dav.example:8443"),
        ("https://anything/a/b", nil),
    ] as [(String, String?)])
    func local(header: String, host: String?) throws {
        #expect(try Destination.parse(header, requestHost: host) == .local(DAVPath(segments: ["a", "b"]), trailingSlash: false))
    }

    @Test(arguments: [
        ("https://other.example:8443/a", "dav.example:8443"),
        ("https://dav.example:9443/a", "dav.example:8443"),
        ("https://dav.example/a", "dav.example:8443"),
        ("http://dav.example/a", "dav.example:443"),
        ("https://[::2]:8443/a", "[::1]:8443"),
    ])
    func foreign(header: String, host: String) throws {
        #expect(try Destination.parse(header, requestHost: host) == .foreign)
    }

    @Test func decodesAndKeepsSlash() throws {
        let target = try Destination.parse(" https://h/litmus/coll%C3%A9%20x/ ", requestHost: "h")
        #expect(target == .local(DAVPath(segments: ["litmus", "collé x"]), trailingSlash: true))
    }

    /// Found by DestinationFuzz: AbsoluteURL looked for delimiters among
    /// Characters, and the prepended U+0603 fuses with the `#` after it, so the
    /// fragment stayed in the path. Likewise a `/` followed by a combining mark
    /// did not end the authority, and the path became part of the host.
    @Test func delimitersInsideCharacters() throws {
        #expect(try Destination.parse("http://e:80/files/\u{603}#y=", requestHost: "e")
            == .local(DAVPath(segments: ["files", "\u{603}"]), trailingSlash: false))
        #expect(try Destination.parse("http://h/\u{301}x/y", requestHost: "h")
            == .local(DAVPath(segments: ["\u{301}x", "y"]), trailingSlash: false))
    }

    @Test(arguments: [
        ("relative/x", PathError.notAbsolute),
        ("", .notAbsolute),
        ("https://h/a/../../etc", .dotSegment),
        ("https://h/a%2Fb", .encodedSlash),
        ("/x%00", .nulByte),
    ])
    func refused(header: String, error: PathError) {
        #expect(throws: error) { try Destination.parse(header, requestHost: "h") }
    }
}

@Suite struct SimpleHeaderTests {
    @Test func depth() throws {
        #expect(try Depth.parse(nil) == nil)
        #expect(try Depth.parse("0") == .zero)
        #expect(try Depth.parse("1") == .one)
        #expect(try Depth.parse("infinity") == .infinity)
        #expect(try Depth.parse("Infinity") == .infinity)
        #expect(try Depth.parse(" 1 ") == .one)
        for bad in ["", "2", "-1", "infinite", "one", "0,1"] {
            #expect(throws: HeaderError.invalid(header: "Depth", value: bad)) { try Depth.parse(bad) }
        }
    }

    @Test func overwrite() throws {
        #expect(try Overwrite.parse(nil) == true)
        #expect(try Overwrite.parse("T") == true)
        #expect(try Overwrite.parse("F") == false)
        #expect(try Overwrite.parse(" f ") == false)
        for bad in ["", "true", "FALSE", "Y", "TF"] {
            #expect(throws: HeaderError.invalid(header: "Overwrite", value: bad)) { try Overwrite.parse(bad) }
        }
    }

    @Test(arguments: [
        (nil, 600),
        ("Second-1800", 1800),
        ("second-1800", 1800),
        ("Second-3600", 3600),
        ("Second-100000", 86400),
        ("Infinite", 86400),
        ("Infinite, Second-4100000000", 86400),
        ("Second-4100000000", 86400),
        ("Second-99999999999999999999999", 86400),
        ("Second-60, Infinite", 60),
        ("Bogus, Second-120", 120),
        ("Second-", 600),
        ("Second-abc", 600),
        ("Second--5", 600),
        ("Second-0", 600),
        ("", 600),
        ("garbage", 600),
    ] as [(String?, Int)])
    func timeout(header: String?, expected: Int) {
        #expect(LockTimeout.seconds(from: header, default: 600, maximum: 86400) == expected)
    }

    @Test func timeoutDefaultIsClamped() {
        #expect(LockTimeout.seconds(from: nil, default: 7200, maximum: 3600) == 3600)
    }

    @Test(arguments: [
        ("<urn:uuid:5c2d8f1e-1111-4222-8333-944445555666>", "urn:uuid:5c2d8f1e-1111-4222-8333-944445555666"),
        ("  <opaquelocktoken:abc>  ", "opaquelocktoken:abc"),
        ("urn:uuid:abc", "urn:uuid:abc"),
        (" urn:uuid:abc ", "urn:uuid:abc"),
        ("< urn:uuid:abc >", "urn:uuid:abc"),
    ])
    func lockToken(header: String, token: String) {
        #expect(LockTokenHeader.parse(header) == token)
    }

    @Test func lockTokenAbsent() {
        #expect(LockTokenHeader.parse(nil) == nil)
        #expect(LockTokenHeader.parse("") == nil)
        #expect(LockTokenHeader.parse("  ") == nil)
        #expect(LockTokenHeader.parse("<>") == nil)
    }
}
