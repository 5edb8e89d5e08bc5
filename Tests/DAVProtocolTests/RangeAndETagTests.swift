import Testing
@testable import DAVProtocol

@Suite struct RangeRequestTests {
    @Test(arguments: [
        (nil, 100, RangeRequest.full),
        ("bytes=0-9", 100, .partial(0...9)),
        ("bytes=10-", 100, .partial(10...99)),
        ("bytes=-10", 100, .partial(90...99)),
        ("bytes=-1000", 100, .partial(0...99)),
        ("bytes=90-1000", 100, .partial(90...99)),
        ("bytes=99-99", 100, .partial(99...99)),
        ("BYTES = 5-6", 100, .partial(5...6)),
        ("bytes=100-", 100, .unsatisfiable),
        ("bytes=100-200", 100, .unsatisfiable),
        ("bytes=99999999999999999999999-", 100, .unsatisfiable),
        ("bytes=-0", 100, .unsatisfiable),
        ("bytes=0-1,5-6", 100, .full),
        ("bytes=0-1, ", 100, .partial(0...1)),
        ("bytes=5-4", 100, .full),
        ("bytes=a-b", 100, .full),
        ("bytes=1", 100, .full),
        ("bytes=", 100, .full),
        ("bytes=--1", 100, .full),
        ("bytes=+1-2", 100, .full),
        ("items=0-1", 100, .full),
        ("0-1", 100, .full),
        ("bytes=0-0", 0, .full),
        ("bytes=-5", 0, .full),
    ] as [(String?, Int64, RangeRequest)])
    func evaluate(header: String?, size: Int64, expected: RangeRequest) {
        #expect(RangeRequest.evaluate(header, size: size) == expected)
    }
}

@Suite struct EntityTagTests {
    @Test func parsing() {
        #expect(EntityTagCondition.parse(nil) == nil)
        #expect(EntityTagCondition.parse("") == nil)
        #expect(EntityTagCondition.parse(" * ") == .any)
        #expect(EntityTagCondition.parse("\"abc\"") == .tags(["\"abc\""]))
        #expect(EntityTagCondition.parse("\"a\", W/\"b\" ,\"c,d\"") == .tags(["\"a\"", "W/\"b\"", "\"c,d\""]))
        #expect(EntityTagCondition.parse("abc") == .tags(["\"abc\""]))
    }

    @Test func strongMatching() {
        let c = EntityTagCondition.parse("\"x\", \"abc\"")!
        #expect(c.matchesStrong("\"abc\""))
        #expect(!c.matchesStrong("\"abd\""))
        #expect(!c.matchesStrong(nil))
        #expect(!c.matchesStrong("W/\"abc\""))
        #expect(!EntityTagCondition.parse("W/\"abc\"")!.matchesStrong("\"abc\""))
        #expect(EntityTagCondition.any.matchesStrong("\"anything\""))
        #expect(!EntityTagCondition.any.matchesStrong(nil))
    }

    @Test func weakMatching() {
        #expect(EntityTagCondition.parse("W/\"abc\"")!.matchesWeak("\"abc\""))
        #expect(EntityTagCondition.parse("\"abc\"")!.matchesWeak("W/\"abc\""))
        #expect(EntityTagCondition.parse("\"abc\"")!.matchesWeak("\"abc\""))
        #expect(!EntityTagCondition.parse("\"abc\"")!.matchesWeak("\"abcd\""))
        #expect(EntityTagCondition.any.matchesWeak("\"x\""))
        #expect(!EntityTagCondition.any.matchesWeak(nil))
        #expect(!EntityTagCondition.parse("\"abc\"")!.matchesWeak(nil))
    }
}
