/// The header of a partial PUT (RFC 9110 section 14.5): `Content-Range:
/// bytes A-B/N`, the bytes `A...B` of an `N`-byte representation, as Apache
/// and lighttpd accept it.
public struct ContentRange: Sendable, Equatable {
    public let first: Int64
    public let last: Int64
    /// The complete length. Required: it says when the file is whole.
    public let total: Int64

    public var count: Int64 { last - first + 1 }

    public init(first: Int64, last: Int64, total: Int64) {
        self.first = first
        self.last = last
        self.total = total
    }

    /// - Throws: `HeaderError` for anything but `bytes A-B/N` with
    ///   `A <= B < N`; an unknown total (`/*`) among them.
    public static func parse(_ value: String) throws(HeaderError) -> ContentRange {
        let invalid = HeaderError.invalid(header: "Content-Range", value: value)
        let text = value.trimmingSpaces()
        guard text.lowercased().hasPrefix("bytes "), let slash = text.firstIndex(of: "/") else { throw invalid }
        let span = text[text.index(text.startIndex, offsetBy: 6)..<slash].trimmingSpaces()
        guard let dash = span.firstIndex(of: "-"),
              let first = RangeRequest.digits(span[..<dash]),
              let last = RangeRequest.digits(span[span.index(after: dash)...]),
              let total = RangeRequest.digits(text[text.index(after: slash)...]),
              first <= last, last < total
        else { throw invalid }
        return ContentRange(first: first, last: last, total: total)
    }
}

/// SabreDAV's `X-Update-Range` of a `PATCH` with `Content-Type:
/// application/x-sabredav-partialupdate`: where its body goes in the file.
public enum UpdateRange: Sendable, Equatable {
    /// `bytes=A-B`: the body is exactly these bytes.
    case span(first: Int64, last: Int64)
    /// `bytes=A-`: from `A` on, as long as the body.
    case from(Int64)
    /// `bytes=-N`: the last `N` bytes of the file, extended by the body.
    case suffix(Int64)
    /// `append`: after the end.
    case append

    public static let contentType = "application/x-sabredav-partialupdate"

    public static func parse(_ value: String) throws(HeaderError) -> UpdateRange {
        let invalid = HeaderError.invalid(header: "X-Update-Range", value: value)
        let text = value.trimmingSpaces()
        if text.lowercased() == "append" { return .append }
        guard text.lowercased().hasPrefix("bytes=") else { throw invalid }
        let spec = text.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { throw invalid }
        let start = spec[..<dash], end = spec[spec.index(after: dash)...]
        switch (RangeRequest.digits(start), RangeRequest.digits(end)) {
        case (nil, let back?) where start.isEmpty && back > 0: return .suffix(back)
        case (let first?, nil) where end.isEmpty: return .from(first)
        case (let first?, let last?) where first <= last: return .span(first: first, last: last)
        default: throw invalid
        }
    }
}
