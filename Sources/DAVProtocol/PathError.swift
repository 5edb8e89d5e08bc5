/// Why a request target (or a `Destination`, or an `If` resource tag) cannot
/// name an item. Every case maps to `400 Bad Request` at the HTTP layer.
public enum PathError: Error, Sendable, Equatable {
    /// A `%` not followed by two hex digits.
    case badEncoding
    /// A `.` or `..` segment, literal or percent-encoded (RFC 3986 section 5.2.4).
    /// Dot segments are refused rather than resolved so that no client string
    /// can ever climb out of a domain.
    case dotSegment
    /// `%00` somewhere in a segment.
    case nulByte
    /// `%2F` inside a segment: a name cannot contain `/`.
    case encodedSlash
    /// Neither an absolute path nor an absolute `http(s)` URL (for example `*`
    /// or a relative reference).
    case notAbsolute
    /// The decoded bytes of a segment are not UTF-8.
    case invalidUTF8
    /// A raw `#`: clients must not send fragments (litmus `delete_fragment`);
    /// a `#` in a name arrives as `%23`.
    case fragment
}
