import Testing
@testable import DAVProtocol

/// The headers of partial writes: a PUT's `Content-Range` (Apache's and
/// lighttpd's partial PUT) and a SabreDAV PATCH's `X-Update-Range`. What
/// they accept decides where bytes land in a user's file, so anything but
/// the exact forms is refused rather than guessed at: a range that ends
/// before it starts, an unknown or too small total, another unit.
@Suite struct PartialWriteTests {
    @Test("Content-Range bytes A-B/N is the bytes A through B of an N-byte file", arguments: [
        ("bytes 0-9/10", ContentRange(first: 0, last: 9, total: 10)),
        ("bytes 10-19/100", ContentRange(first: 10, last: 19, total: 100)),
        ("bytes 5-5/6", ContentRange(first: 5, last: 5, total: 6)),
        ("BYTES 0-0/1", ContentRange(first: 0, last: 0, total: 1)),
        ("  bytes 1-2/3\t", ContentRange(first: 1, last: 2, total: 3)),
        ("bytes  7-8/9", ContentRange(first: 7, last: 8, total: 9)),
        ("bytes 1048576-2097151/5000000", ContentRange(first: 1_048_576, last: 2_097_151, total: 5_000_000)),
    ])
    func contentRange(value: String, expected: ContentRange) throws {
        let parsed = try ContentRange.parse(value)
        #expect(parsed == expected)
        #expect(parsed.count == expected.last - expected.first + 1)
    }

    @Test("a Content-Range other than bytes A-B/N with A <= B < N is refused", arguments: [
        "bytes 5-4/10",         // ends before it starts
        "bytes 0-9/*",          // unknown total: the file would never be whole
        "bytes 0-10/10",        // past the declared length
        "bytes 0-9/9",
        "bytes */10",           // the form of a 416 answer
        "0-9/10",               // no unit
        "bytes=0-9/10",         // a Range header's syntax
        "items 0-9/10",
        "bytes 0-9",            // no total
        "bytes 0-/10",
        "bytes -9/10",
        "bytes a-b/10",
        "bytes +1-2/10",
        "bytes 0-9/1x",
        "bytes 0-9/",
        "bytes 0-1,3-4/10",
        "bytes 0-9/10/20",
        "bytes 0-99999999999999999999/99999999999999999999",
        "",
        "garbage",
    ])
    func contentRangeRefused(value: String) {
        #expect(throws: HeaderError.invalid(header: "Content-Range", value: value)) { try ContentRange.parse(value) }
    }

    @Test("X-Update-Range: a span, an open start, a suffix, or append", arguments: [
        ("bytes=0-9", UpdateRange.span(first: 0, last: 9)),
        ("bytes=3-3", .span(first: 3, last: 3)),
        ("BYTES=10-", .from(10)),
        ("bytes=0-", .from(0)),
        ("bytes=-5", .suffix(5)),
        ("append", .append),
        (" Append ", .append),
    ])
    func updateRange(value: String, expected: UpdateRange) throws {
        #expect(try UpdateRange.parse(value) == expected)
    }

    @Test("an X-Update-Range of another form is refused", arguments: [
        "bytes=-0",             // the last nothing
        "bytes=5-4",
        "bytes=-",
        "bytes=",
        "bytes=5",
        "bytes=a-b",
        "bytes=--1",
        "bytes=+1-2",
        "bytes=0-1,3-4",
        "bytes 0-9",            // a Content-Range's syntax
        "0-9",
        "items=0-9",
        "appendix",
        "",
        "garbage",
    ])
    func updateRangeRefused(value: String) {
        #expect(throws: HeaderError.invalid(header: "X-Update-Range", value: value)) { try UpdateRange.parse(value) }
    }

    @Test("the PATCH content type is SabreDAV's")
    func contentType() {
        #expect(UpdateRange.contentType == "application/x-sabredav-partialupdate")
    }
}
