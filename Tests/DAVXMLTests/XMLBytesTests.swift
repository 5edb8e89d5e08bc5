import Testing

@testable import DAVXML

@Suite struct XMLBytesTests {
    @Test("appends grow the buffer past its capacity and keep every byte, multi-byte text included")
    func growsAndKeepsBytes() {
        var out = XMLBytes(capacity: 1)
        var expected = ""
        for k in 0..<2_000 {
            let piece = k % 3 == 0 ? "<D:a>\(k)</D:a>" : (k % 3 == 1 ? "ü€𝄞" : "")
            out.append(piece)
            expected += piece
        }
        #expect(out.count == expected.utf8.count)
        #expect(out.string == expected)
    }

    @Test("escaping appends what XMLEscaping.text gives; a bridged-free small string and a large one alike")
    func escapes() {
        var out = XMLBytes()
        out.append(escaping: "a & <b>")
        out.append(escaping: String(repeating: "x<", count: 100))
        #expect(out.string == "a &amp; &lt;b&gt;" + String(repeating: "x&lt;", count: 100))
    }

    @Test("truncate takes back what followed a mark; removeAll empties and the buffer is reused")
    func truncateAndRemoveAll() {
        var out = XMLBytes(capacity: 4)
        out.append("<D:prop>")
        let mark = out.count
        out.append("<D:x/>")
        out.truncate(to: mark)
        #expect(out.string == "<D:prop>")
        var other = XMLBytes()
        other.append("tail")
        other.withUnsafeBytes { out.append($0) }
        #expect(out.string == "<D:prop>tail")
        out.removeAll()
        let written = out.count
        #expect(written == 0)
        out.append("again")
        #expect(out.string == "again")
        out.withUnsafeBytes { #expect(Array($0) == Array("again".utf8)) }
    }
}
