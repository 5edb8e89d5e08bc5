// libFuzzer target for request targets and hrefs: DAVPath.parse(requestTarget:)
// and DAVPath.href(collection:) in Sources/DAVProtocol/DAVPath.swift, with
// PercentEncoding.swift. Built by scripts/fuzz against DAVProtocol compiled
// with -enable-testing.

@testable import DAVProtocol

/// Checks, for any input used as a request target (RFC 9110 section 7.1):
/// - a raw `#` before the query is refused as a fragment (RFC 9112 section
///   3.2), and a target without `%` yields no segment holding `?` or `#`;
/// - the trailing slash reported is the target's own (before any query);
/// - every segment is non-empty, not `.` or `..`, free of `/` and NUL, and
///   already in NFC;
/// - a path's href is ASCII and parses back to the same path and slash, in
///   origin form, in absolute form, and with lower-case hex (RFC 3986
///   section 2.1: hex digits are case-insensitive);
/// - rebasing a path onto another prefix and back gives the path again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPath(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let parsed = Result { () throws(PathError) in try DAVPath.parse(requestTarget: text) }
    let target = text.utf8.prefix { $0 != UInt8(ascii: "?") }
    if target.contains(UInt8(ascii: "#")) {
        check(parsed.map { $0.path } == .failure(.fragment), "\(text): a raw # gave \(parsed)")
    }
    guard case .success(let (path, slash)) = parsed else { return 0 }

    if target.first == UInt8(ascii: "/") {
        check(slash == (target.last == UInt8(ascii: "/")), "\(text): trailing slash \(slash)")
    }
    if !text.utf8.contains(UInt8(ascii: "%")) {
        for segment in path.segments {
            check(!segment.utf8.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") },
                         "\(text): segment \(segment) keeps a raw ? or #")
        }
    }
    for segment in path.segments {
        check(!segment.isEmpty && segment != "." && segment != "..", "\(text): segment \(segment)")
        check(!segment.utf8.contains { $0 == UInt8(ascii: "/") || $0 == 0 }, "\(text): segment \(segment) holds / or NUL")
        check(DAVPath.nfc(segment) == segment, "\(text): segment \(segment) is not NFC")
    }
    check(DAVPath(segments: path.segments) == path, "\(path) changes when rebuilt from its segments")

    for collection in [false, true] {
        let href = path.href(collection: collection)
        check(href.utf8.allSatisfy { $0 < 0x80 }, "href \(href) of \(path) is not ASCII")
        let lowerHex = lowerCasingEscapes(href)
        for spelling in [href, "https://dav.example:8443" + href, lowerHex] {
            guard let (again, againSlash) = try? DAVPath.parse(requestTarget: spelling) else {
                fail("href \(spelling) of \(path) does not parse back")
            }
            check(again == path, "href \(spelling) reads back as \(again), not \(path)")
            check(againSlash == (collection || path.isRoot), "href \(spelling) lost its trailing slash")
        }
    }

    if let parent = path.parent {
        check(path.hasPrefix(parent) && path.hasPrefix(.root), "\(path) lacks its ancestors as prefixes")
        let elsewhere = DAVPath(segments: ["moved", "here"])
        let moved = path.replacingPrefix(parent, with: elsewhere)
        check(moved.hasPrefix(elsewhere) && moved.name == path.name, "\(path) rebased onto \(elsewhere) is \(moved)")
        check(moved.replacingPrefix(elsewhere, with: parent) == path, "\(path) does not rebase back from \(moved)")
    }
    return 0
}

/// `%C3%A9` as `%c3%a9`.
private func lowerCasingEscapes(_ href: String) -> String {
    var out: [UInt8] = []
    var escape = 0
    for b in href.utf8 {
        if b == UInt8(ascii: "%") {
            escape = 2
            out.append(b)
        } else if escape > 0 {
            escape -= 1
            out.append((65...70).contains(b) ? b + 32 : b)
        } else {
            out.append(b)
        }
    }
    return String(decoding: out, as: UTF8.self)
}
