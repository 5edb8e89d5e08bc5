#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing
@testable import DAVProtocol

@Suite struct HTTPDateTests {
    @Test(arguments: [
        (784_111_777.0, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
        (784_111_777.999, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (-36_921_657_600, "Sat, 01 Jan 0800 00:00:00 GMT"),
        (253_402_300_799, "Fri, 31 Dec 9999 23:59:59 GMT"),
        (253_402_300_800, "Sat, 01 Jan 10000 00:00:00 GMT"),
    ])
    func rfc1123(seconds: Double, text: String) {
        #expect(HTTPDate.rfc1123(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test func iso8601() {
        #expect(HTTPDate.iso8601(Date(timeIntervalSince1970: 880_998_141)) == "1997-12-01T17:42:21Z")
        #expect(HTTPDate.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(HTTPDate.iso8601(Date(timeIntervalSince1970: -36_921_657_600)) == "0800-01-01T00:00:00Z")
        #expect(HTTPDate.iso8601(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",
        "Sunday, 06-Nov-94 08:49:37 GMT",
        "Sun Nov  6 08:49:37 1994",
        "Sun Nov 06 08:49:37 1994",
    ])
    func parsesThreeFormats(text: String) {
        #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func rfc850CenturyWindow() {
        #expect(HTTPDate.parse("Thursday, 01-Jan-15 00:00:00 GMT") == Date(timeIntervalSince1970: 1_420_070_400))
    }

    @Test(arguments: [
        "", "garbage", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:00:00 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT", "1994-11-06T08:49:37Z",
    ])
    func refusesMalformed(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func roundTrip() {
        for t in stride(from: -86_400.0 * 400, to: 86_400.0 * 365 * 130, by: 86_400.0 * 37 + 3_607) {
            let d = Date(timeIntervalSince1970: t)
            #expect(HTTPDate.parse(HTTPDate.rfc1123(d)) == d)
        }
    }
}

@Suite struct ContentTypeTests {
    @Test(arguments: [
        ("notes.txt", "text/plain; charset=utf-8"),
        ("INDEX.HTML", "text/html; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
        ("app.js", "text/javascript; charset=utf-8"),
        ("data.json", "application/json"),
        ("doc.pdf", "application/pdf"),
        ("photo.JPG", "image/jpeg"),
        ("image.jpeg", "image/jpeg"),
        ("logo.svg", "image/svg+xml"),
        ("song.mp3", "audio/mpeg"),
        ("clip.mkv", "video/x-matroska"),
        ("archive.tar.gz", "application/gzip"),
        ("report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("sheet.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("main.swift", "text/x-swift; charset=utf-8"),
        ("font.woff2", "font/woff2"),
        ("invite.ics", "text/calendar; charset=utf-8"),
        ("README.md", "text/markdown; charset=utf-8"),
        ("table.csv", "text/csv; charset=utf-8"),
        ("noext", "application/octet-stream"),
        (".bashrc", "application/octet-stream"),
        ("file.", "application/octet-stream"),
        ("weird.xyz123", "application/octet-stream"),
        ("SHOUT.TXT", "text/plain; charset=utf-8"),
        ("Photo.JpG", "image/jpeg"),
        ("café.html", "text/html; charset=utf-8"),
        ("日本語.pdf", "application/pdf"),
        ("a.b.c", "text/x-c; charset=utf-8"),
        ("a.c.zzz", "application/octet-stream"),
    ])
    func byExtension(name: String, type: String) {
        #expect(ContentType.forName(name) == type)
    }
}
