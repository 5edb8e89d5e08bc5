import Testing
@testable import DAVProtocol

private func path(_ s: String) -> DAVPath { try! DAVPath.parse(requestTarget: s).path }

@Suite struct IfHeaderParseTests {
    @Test func untaggedTokenAndEtag() throws {
        let h = try IfHeader.parse("(<urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2> [\"I am an ETag\"])")
        #expect(h.lists == [IfHeader.List(resource: nil, conditions: [
            .init(.token("urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2")),
            .init(.etag("\"I am an ETag\"")),
        ])])
    }

    @Test func severalListsAndNot() throws {
        // RFC 4918 section 10.4.7 (two lists, one with Not)
        let h = try IfHeader.parse("(Not <urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2> <urn:uuid:58f202ac-22cf-11d1-b12d-002035b29092>) (NOT<DAV:no-lock>)")
        #expect(h.lists.count == 2)
        #expect(h.lists[0].conditions == [
            .init(negated: true, .token("urn:uuid:181d4fae-7d8c-11d0-a765-00a0c91e6bf2")),
            .init(.token("urn:uuid:58f202ac-22cf-11d1-b12d-002035b29092")),
        ])
        #expect(h.lists[1].conditions == [.init(negated: true, .token("DAV:no-lock"))])
        #expect(h.lists.allSatisfy { $0.resource == nil })
    }

    @Test func taggedWithAbsoluteURLAndPath() throws {
        // RFC 4918 section 10.4.6 style, plus an absolute-path tag.
        let h = try IfHeader.parse(
            "<https://www.example.com/users/f/fielding/index.html> ([W/\"A weak one\"] [\"strong\"]) (<opaquelocktoken:x>)\t</other/r%C3%A9s/> (Not [\"e\"])")
        #expect(h.lists.count == 3)
        #expect(h.lists[0].resource == path("/users/f/fielding/index.html"))
        #expect(h.lists[0].conditions == [.init(.etag("W/\"A weak one\"")), .init(.etag("\"strong\""))])
        #expect(h.lists[1].resource == path("/users/f/fielding/index.html"))
        #expect(h.lists[1].conditions == [.init(.token("opaquelocktoken:x"))])
        #expect(h.lists[2].resource == DAVPath(segments: ["other", "rés"]))
        #expect(h.lists[2].conditions == [.init(negated: true, .etag("\"e\""))])
    }

    @Test func neonTaggedHeader() throws {
        // neon's lock store (cadaver, litmus owner_modify): " <uri> (<token>)" per lock.
        let h = try IfHeader.parse(" <https://localhost:8443/litmus/lockcoll/> (<opaquelocktoken:1>) <https://localhost:8443/litmus/lockme> (<opaquelocktoken:2>)")
        #expect(h.lists.map(\.resource) == [path("/litmus/lockcoll"), path("/litmus/lockme")])
        #expect(h.allTokens == ["opaquelocktoken:1", "opaquelocktoken:2"])
    }

    @Test func lenientEtagSpelling() throws {
        let h = try IfHeader.parse("([ \"a\" ] [abc] [w/\"b\"])")
        #expect(h.lists[0].conditions == [.init(.etag("\"a\"")), .init(.etag("\"abc\"")), .init(.etag("W/\"b\""))])
    }

    @Test(arguments: [
        "", "   ", "()", "(", ")", "(<a>", "(<a> [\"x\"]", "(<>)", "([])", "([\"x\")", "([\"x])",
        "<http://h/a>", "<http://h/a> ", "(<a>) <http://h/a> (<b>)", "<http://h/a> (<b>) (<c>) x",
        "<http://h/a> (<b>) (<c>) <http://h/b>", "(Not)", "(Nothing <a>)", "(<a>) junk", "<a b> (<c>)",
        "<relative/path> (<a>)", "<http://h/../x> (<a>)", "(<a) (<b>)", "[\"x\"]", "<urn:uuid:x> (<a>)",
        "(<a b>)",
    ])
    func malformedThrows(header: String) {
        #expect(throws: HeaderError.invalid(header: "If", value: header)) { try IfHeader.parse(header) }
    }

    @Test func tokensExcludeNegated() throws {
        let h = try IfHeader.parse("(<a> Not <b>) (Not <c> [\"e\"] <d>)")
        #expect(h.allTokens == ["a", "d"])
    }
}

@Suite struct IfHeaderEvaluationTests {
    let res = path("/litmus/lockme")
    let token = "urn:uuid:0a4f3e2c-6b1d-4c8e-9f00-123456789abc"
    let etag = "\"abc123\""

    func lockedState(_ p: DAVPath) -> ResourceState {
        p == res ? ResourceState(etag: etag, lockTokens: [token]) : .missing
    }

    /// What the server answers to a PUT on `res` carrying `If: header` when
    /// `locked` (exclusive lock `token` on `res`): parse -> 400,
    /// evaluate -> 412, lock check -> 423, else 201/204.
    func outcome(_ header: String, locked: Bool = true) -> Int {
        guard let h = try? IfHeader.parse(header) else { return 400 }
        let state: (DAVPath) -> ResourceState = { p in
            p == res ? ResourceState(etag: etag, lockTokens: locked ? [token] : []) : .missing
        }
        guard h.evaluate(requestPath: res, state: state) else { return 412 }
        if locked && !h.submittedTokens(for: res, requestPath: res).contains(token) { return 423 }
        return 204
    }

    // litmus src/locks.c, Julian Reschke's conditional PUTs, with the exact formats.
    @Test func litmusCondPut() { #expect(outcome("(<\(token)> [\(etag)])") == 204) }
    @Test func litmusFailCondPut() { #expect(outcome("(<DAV:no-lock> [\(etag)])") == 412) }
    @Test func litmusCondPutWithNot() { #expect(outcome("(<\(token)>) (Not <DAV:no-lock>)") == 204) }
    @Test func litmusCondPutCorruptToken() { #expect(outcome("(<\(token)x>) (Not <DAV:no-lock>)") == 423) }
    @Test func litmusComplexCondPut() { #expect(outcome("(<\(token)> [\(etag)]) (Not <DAV:no-lock> [\(etag)])") == 204) }
    @Test func litmusFailComplexCondPut() {
        // litmus corrupts the third character from the end of the ETag.
        let bad = "\"abc133\""
        #expect(outcome("(<\(token)> [\(bad)]) (Not <DAV:no-lock> [\(bad)])") == 412)
    }
    @Test func litmusFailCondPutUnlocked() { #expect(outcome("(<DAV:no-lock>)", locked: false) == 412) }
    @Test func litmusRefreshHeader() throws {
        // ne_lock_refresh: "If: (<token>)" untagged.
        #expect(try IfHeader.parse("(<\(token)>)").allTokens == [token])
        #expect(outcome("(<\(token)>)") == 204)
    }

    @Test func notLockedWithoutIfTokenPasses() {
        #expect(outcome("([\(etag)])", locked: false) == 204)
        #expect(outcome("([\(etag)])", locked: true) == 423)
    }

    @Test func etagComparison() throws {
        let state: (DAVPath) -> ResourceState = { _ in ResourceState(etag: "\"x\"", lockTokens: []) }
        #expect(try IfHeader.parse("([\"x\"])").evaluate(requestPath: res, state: state))
        #expect(try IfHeader.parse("([W/\"x\"])").evaluate(requestPath: res, state: state))
        #expect(!(try IfHeader.parse("([\"y\"])").evaluate(requestPath: res, state: state)))
        #expect(try IfHeader.parse("(Not [\"y\"])").evaluate(requestPath: res, state: state))
        let weakState: (DAVPath) -> ResourceState = { _ in ResourceState(etag: "W/\"x\"", lockTokens: []) }
        #expect(!(try IfHeader.parse("([\"x\"])").evaluate(requestPath: res, state: weakState)))
        #expect(try IfHeader.parse("([W/\"x\"])").evaluate(requestPath: res, state: weakState))
        // A missing resource has no ETag: only a negated condition can hold.
        #expect(!(try IfHeader.parse("([\"x\"])").evaluate(requestPath: res, state: { _ in .missing })))
        #expect(try IfHeader.parse("(Not [\"x\"])").evaluate(requestPath: res, state: { _ in .missing }))
    }

    @Test func taggedListsUseTheirResource() throws {
        let other = path("/litmus/notlocked")
        let state: (DAVPath) -> ResourceState = { p in
            p == other ? ResourceState(etag: "\"o\"", lockTokens: ["t-other"]) : ResourceState(etag: "\"r\"", lockTokens: [])
        }
        // The etag of the tagged resource, not of the request-URI.
        #expect(try IfHeader.parse("<https://h/litmus/notlocked> ([\"o\"])").evaluate(requestPath: res, state: state))
        #expect(!(try IfHeader.parse("<https://h/litmus/notlocked> ([\"r\"])").evaluate(requestPath: res, state: state)))
        // Trailing slash on the tag is not significant.
        #expect(try IfHeader.parse("</litmus/notlocked/> (<t-other>)").evaluate(requestPath: res, state: state))
        // Any list true makes the header true, whatever resource it is tagged with.
        #expect(try IfHeader.parse("</litmus/lockme> ([\"bad\"]) </litmus/notlocked> ([\"o\"])").evaluate(requestPath: res, state: state))
        #expect(!(try IfHeader.parse("</litmus/lockme> ([\"bad\"]) </litmus/notlocked> ([\"bad\"])").evaluate(requestPath: res, state: state)))
    }

    @Test func allConditionsOfAListMustHold() throws {
        let h = try IfHeader.parse("(<\(token)> [\"nope\"])")
        #expect(!h.evaluate(requestPath: res, state: lockedState))
        let h2 = try IfHeader.parse("(<\(token)> Not [\"nope\"])")
        #expect(h2.evaluate(requestPath: res, state: lockedState))
    }

    @Test func evaluatesEachResourceOnce() throws {
        var calls: [DAVPath] = []
        let h = try IfHeader.parse("([\"1\"]) ([\"2\"]) ([\"3\"])")
        _ = h.evaluate(requestPath: res) { p in calls.append(p); return .missing }
        #expect(calls == [res])
    }

    @Test func submittedTokensFollowTagsAndAncestors() throws {
        let coll = path("/litmus/lockcoll")
        let member = path("/litmus/lockcoll/lockme.txt")
        // cadaver/neon: a write to a member of a locked collection tags the collection.
        let h = try IfHeader.parse("<https://localhost:8443/litmus/lockcoll/> (<urn:uuid:coll>)")
        #expect(h.submittedTokens(for: member, requestPath: member) == ["urn:uuid:coll"])
        #expect(h.submittedTokens(for: coll, requestPath: member) == ["urn:uuid:coll"])
        #expect(h.submittedTokens(for: path("/litmus/other"), requestPath: member).isEmpty)
        #expect(h.submittedTokens(for: path("/litmus"), requestPath: member).isEmpty)

        // A tag on a member does not submit its token for the collection.
        let h2 = try IfHeader.parse("</litmus/lockcoll/lockme.txt> (<urn:uuid:m>) </litmus/x> (Not <urn:uuid:neg>)")
        #expect(h2.submittedTokens(for: member, requestPath: coll) == ["urn:uuid:m"])
        #expect(h2.submittedTokens(for: coll, requestPath: coll).isEmpty)
        #expect(h2.submittedTokens(for: path("/litmus/x"), requestPath: coll).isEmpty)

        // Untagged tokens count for any path (RFC 4918 section 10.4.1), e.g. a MOVE destination.
        let h3 = try IfHeader.parse("(<urn:uuid:u>) (Not <DAV:no-lock>)")
        #expect(h3.submittedTokens(for: path("/dest/file"), requestPath: path("/src/file")) == ["urn:uuid:u"])
        #expect(h3.submittedTokens(for: member, requestPath: coll) == ["urn:uuid:u"])
    }
}
