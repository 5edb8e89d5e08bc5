// libFuzzer target for the `Timeout` header of LOCK (RFC 4918 section 10.7):
// Sources/DAVProtocol/LockTimeout.swift. Built by scripts/fuzz against
// DAVProtocol compiled with -enable-testing.

@testable import DAVProtocol

/// Stands for "nothing in the header was understood": no granted timeout is
/// ever negative, so it cannot be confused with one.
private let notUnderstood = -1

/// (default, maximum) pairs the header is evaluated with.
private let bounds: [(Int, Int)] = [(600, 3600), (600, 604_800), (1, 1), (3600, 600), (.max, .max), (1, .max)]

/// Checks, for an input split at its first newline into a header and a tail:
/// - the granted timeout is positive and never above the maximum; with nothing
///   understood it is the default (clamped); no header at all is the default;
/// - clamping commutes: the timeout under any maximum is the unbounded one
///   clamped to that maximum;
/// - the first understood preference wins: appending `, tail` changes nothing
///   when the header was understood, and gives the tail's answer when not;
/// - `Second-` and `Infinite` are case-insensitive (RFC 5234 section 2.3).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTimeout(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
    let header = String(decoding: bytes[..<newline], as: UTF8.self)
    let tail = String(decoding: bytes[min(newline + 1, bytes.endIndex)...], as: UTF8.self)

    let unbounded = LockTimeout.seconds(from: header, default: notUnderstood, maximum: .max)
    check(unbounded == notUnderstood || unbounded > 0, "\(header): \(unbounded) seconds")
    for (defaultSeconds, maximum) in bounds {
        let granted = LockTimeout.seconds(from: header, default: defaultSeconds, maximum: maximum)
        check(granted > 0 && granted <= maximum, "\(header): \(granted) seconds, maximum \(maximum)")
        let expected = min(unbounded == notUnderstood ? defaultSeconds : unbounded, maximum)
        check(granted == expected, "\(header): \(granted) seconds under \(maximum), \(unbounded) unbounded")
        check(LockTimeout.seconds(from: nil, default: defaultSeconds, maximum: maximum) == min(defaultSeconds, maximum),
                     "no header is not the default")
    }

    // A comma starts a new list element whatever precedes it (RFC 9110
    // section 5.6.1), unless the header's last character swallows it into
    // one grapheme cluster; such a header is not ASCII and not a Timeout.
    let joined = header + ", " + tail
    if joined.count == header.count + 2 + tail.count {
        let expected = unbounded != notUnderstood ? unbounded : LockTimeout.seconds(from: tail, default: notUnderstood, maximum: .max)
        check(LockTimeout.seconds(from: joined, default: notUnderstood, maximum: .max) == expected,
                     "\(joined): not the first understood preference, \(expected)")
    }

    let upper = String(decoding: bytes[..<newline].map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self)
    check(LockTimeout.seconds(from: upper, default: notUnderstood, maximum: .max) == unbounded,
                 "\(upper) differs from \(header)")
    return 0
}
