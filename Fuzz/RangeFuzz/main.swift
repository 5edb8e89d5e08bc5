// libFuzzer target for the `Range` header of GET (RFC 9110 section 14.2):
// Sources/DAVProtocol/RangeRequest.swift. Built by scripts/fuzz against
// DAVProtocol compiled with -enable-testing.

@testable import DAVProtocol

/// Representation sizes every input is evaluated against: the smallest, a few
/// ordinary ones, and the largest (where `size - 1` and suffixes could overflow).
private let sizes: [Int64] = [1, 2, 7, 100, 4096, 1 << 40, .max - 1, .max]

/// Checks, for any input used as the header's value:
/// - an empty representation is sent whole;
/// - a partial answer lies inside the representation;
/// - a partial answer spelt back as `bytes=first-last` gives the same answer;
/// - whether the header is understood at all does not depend on the size
///   (a malformed or multi-range header is `.full` at every size);
/// - a range satisfiable for some size stays satisfiable for every larger
///   one, an unsatisfiable one stays unsatisfiable for every smaller one;
/// - the range unit is case-insensitive (section 14.1).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRange(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    check(RangeRequest.evaluate(text, size: 0) == .full, "\(text) slices an empty representation")
    check(RangeRequest.evaluate(nil, size: Int64(size)) == .full, "no header is not .full")

    let answers = sizes.map { RangeRequest.evaluate(text, size: $0) }
    let upper = String(decoding: bytes.map { (97...122).contains($0) ? $0 - 32 : $0 }, as: UTF8.self)
    for (contentSize, answer) in zip(sizes, answers) {
        check(RangeRequest.evaluate(upper, size: contentSize) == answer, "\(upper) differs from \(text) at \(contentSize)")
        if case .partial(let range) = answer {
            check(range.lowerBound >= 0 && range.upperBound < contentSize, "\(text): \(range) outside \(contentSize) bytes")
            let canonical = "bytes=\(range.lowerBound)-\(range.upperBound)"
            check(RangeRequest.evaluate(canonical, size: contentSize) == answer, "\(canonical) is not \(answer) at \(contentSize)")
        }
    }
    let full = answers.map { $0 == .full }
    check(full.allSatisfy { $0 } || !full.contains(true), "\(text): .full at some sizes only: \(answers)")
    for i in answers.indices {
        for j in answers.indices where j > i {
            if case .partial = answers[i] {
                guard case .partial = answers[j] else { fail("\(text): \(answers[i]) at \(sizes[i]) but \(answers[j]) at \(sizes[j])") }
            }
            if answers[j] == .unsatisfiable {
                check(answers[i] == .unsatisfiable, "\(text): unsatisfiable at \(sizes[j]) but \(answers[i]) at \(sizes[i])")
            }
        }
    }
    return 0
}
