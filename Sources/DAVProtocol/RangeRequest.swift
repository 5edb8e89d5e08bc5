/// The outcome of a `Range` header on a GET (RFC 9110 section 14.2).
public enum RangeRequest: Sendable, Equatable {
    /// Send the whole representation with `200`.
    case full
    /// Send these bytes with `206` and `Content-Range: bytes a-b/size`.
    case partial(ClosedRange<Int64>)
    /// Answer `416` with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Evaluates a `Range` header against a representation of `size` bytes.
    ///
    /// - `bytes=a-b`, `bytes=a-` and suffix `bytes=-n` are honoured; an end past
    ///   the last byte is clamped, a suffix longer than the file means the whole
    ///   file as a 206.
    /// - Several ranges: `.full` (a server may ignore Range, RFC 9110 section
    ///   14.2; davgate does not do `multipart/byteranges`).
    /// - A malformed header or an unknown unit is ignored: `.full`.
    /// - A first byte at or past `size`, or `bytes=-0`: `.unsatisfiable`.
    /// - An empty representation: `.full` (there is nothing to slice).
    public static func evaluate(_ header: String?, size: Int64) -> RangeRequest {
        guard let header, size > 0 else { return .full }
        let value = header.trimmingSpaces()
        guard let eq = value.firstIndex(of: "="),
              value[..<eq].trimmingSpaces().lowercased() == "bytes"
        else { return .full }
        let specs = value[value.index(after: eq)...]
            .split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingSpaces() }
            .filter { !$0.isEmpty }
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return .full }
        let first = spec[..<dash].trimmingSpaces()
        let last = spec[spec.index(after: dash)...].trimmingSpaces()
        if first.isEmpty {
            guard let n = digits(last) else { return .full }
            if n == 0 { return .unsatisfiable }
            return .partial(max(0, size - n)...(size - 1))
        }
        guard let a = digits(first) else { return .full }
        if last.isEmpty {
            return a >= size ? .unsatisfiable : .partial(a...(size - 1))
        }
        guard let b = digits(last), a <= b else { return .full }
        if a >= size { return .unsatisfiable }
        return .partial(a...min(b, size - 1))
    }

    /// A non-negative decimal, saturating at `Int64.max`; `nil` unless all digits.
    static func digits(_ s: Substring) -> Int64? {
        guard !s.isEmpty else { return nil }
        var n: Int64 = 0
        for b in s.utf8 {
            guard b >= 48 && b <= 57 else { return nil }
            let (m, o1) = n.multipliedReportingOverflow(by: 10)
            let (r, o2) = m.addingReportingOverflow(Int64(b - 48))
            if o1 || o2 { n = .max } else { n = r }
        }
        return n
    }
}
