// libFuzzer target for the small DAVProtocol header parsers, each in its own
// file under Sources/DAVProtocol: Depth, Overwrite, LockTokenHeader,
// EntityTagCondition (If-Match, If-None-Match) and HTTPDate. Built by
// scripts/fuzz against DAVProtocol compiled with -enable-testing.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
@testable import DAVProtocol

/// Feeds every input, as a header value, to each parser and checks:
/// - `Depth` (RFC 4918 section 10.2) and `Overwrite` (section 10.6): an accepted
///   value is still accepted, as the same, with blanks around it or in upper case;
/// - `Lock-Token` (section 10.5): the token is trimmed and non-empty, and reads
///   back from `<token>`;
/// - `If-Match`/`If-None-Match` (RFC 9110 sections 13.1.1, 13.1.2): every tag
///   keeps its quotes, matches itself weakly, matches itself strongly unless
///   weak; a strong match is also a weak one; no missing resource matches;
///   the tags written back as a list read back the same;
/// - HTTP dates (RFC 9110 section 5.6.7): a parsed date is whole seconds and
///   reads back equal from its IMF-fixdate, asctime and (for 1970 to 2069)
///   RFC 850 spellings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeaders(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let upper = String(decoding: bytes.map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self)
    checkDepth(text, upper)
    checkOverwrite(text, upper)
    checkLockToken(text)
    checkEntityTags(text)
    checkDate(text)
    return 0
}

private func checkDepth(_ text: String, _ upper: String) {
    guard case .success(let depth) = Result(catching: { () throws(HeaderError) in try Depth.parse(text) }) else { return }
    check(depth != nil, "Depth \(text) parsed to nothing")
    for variant in [" \t\(text) ", upper] {
        check((try? Depth.parse(variant)) == depth, "Depth \(variant) differs from \(text)")
    }
}

private func checkOverwrite(_ text: String, _ upper: String) {
    guard let overwrite = try? Overwrite.parse(text) else { return }
    for variant in [" \t\(text) ", upper] {
        check((try? Overwrite.parse(variant)) == overwrite, "Overwrite \(variant) differs from \(text)")
    }
}

private func checkLockToken(_ text: String) {
    guard let token = LockTokenHeader.parse(text) else { return }
    let blanks: Set<Character> = [" ", "\t"]
    check(!token.isEmpty && !blanks.contains(token.first!) && !blanks.contains(token.last!), "Lock-Token \(text) gave \(token)")
    // A token that starts or ends with a combining mark would fuse with the
    // bracket into one character; tokens are ASCII URIs, so skip those.
    let coded = "<\(token)>"
    if coded.count == token.count + 2 {
        check(LockTokenHeader.parse(" \(coded) ") == token, "Lock-Token \(coded) does not read back as \(token)")
    }
}

private func checkEntityTags(_ text: String) {
    let resource = "\"a\""
    guard let condition = EntityTagCondition.parse(text) else { return }
    check(!condition.matchesStrong(nil) && !condition.matchesWeak(nil), "\(text) matched a missing resource")
    check(!condition.matchesStrong(resource) || condition.matchesWeak(resource), "\(text) matched strongly, not weakly")
    guard case .tags(let tags) = condition else {
        check(condition.matchesStrong(resource), "* does not match")
        return
    }
    // Only an ASCII list is read back: elsewhere a combining mark after a
    // quote fuses with it into one character, and `a"b` is read leniently as
    // the tag "a"b", which has no spelling.
    var readsBack = text.utf8.allSatisfy { $0 < 0x80 }
    for tag in tags {
        let weak = tag.hasPrefix("W/")
        let opaque = EntityTag.opaque(tag).utf8
        check(opaque.count >= 2 && opaque.first == UInt8(ascii: "\"") && opaque.last == UInt8(ascii: "\""),
                     "\(text): tag \(tag) lost its quotes")
        check(EntityTagCondition.tags([tag]).matchesWeak(tag), "\(tag) does not match itself weakly")
        check(EntityTagCondition.tags([tag]).matchesStrong(tag) == !weak, "\(tag) strong match with itself wrong")
        check(condition.matchesWeak(String(EntityTag.opaque(tag))), "\(text) does not match its own \(tag) weakly")
        if opaque.dropFirst().dropLast().contains(UInt8(ascii: "\"")) { readsBack = false }
    }
    if readsBack {
        let list = tags.joined(separator: ", ")
        check(EntityTagCondition.parse(list) == condition, "\(list) does not read back as \(condition)")
    }
}

private func checkDate(_ text: String) {
    guard let date = HTTPDate.parse(text) else { return }
    let seconds = date.timeIntervalSince1970
    check(seconds == seconds.rounded(.down), "\(text) parsed to a fraction of a second")
    let imf = HTTPDate.rfc1123(date)
    check(HTTPDate.parse(imf) == date, "\(imf) (from \(text)) reads back differently")
    // "Sun, 06 Nov 1994 08:49:37 GMT" into the other two forms.
    let f = imf.split(separator: " ")
    let weekday = f[0].dropLast()
    let asctime = "\(weekday) \(f[2]) \(Int(f[1])!) \(f[4]) \(f[3])"
    check(HTTPDate.parse(asctime) == date, "\(asctime) (from \(text)) reads back differently")
    if let year = Int(f[3]), (1970...2069).contains(year) {
        let fullDay = ["Sun": "Sunday", "Mon": "Monday", "Tue": "Tuesday", "Wed": "Wednesday",
                       "Thu": "Thursday", "Fri": "Friday", "Sat": "Saturday"][String(weekday)]!
        let rfc850 = "\(fullDay), \(f[1])-\(f[2])-\(f[3].suffix(2)) \(f[4]) GMT"
        check(HTTPDate.parse(rfc850) == date, "\(rfc850) (from \(text)) reads back differently")
    }
}
