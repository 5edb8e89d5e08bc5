import DAVXML

/// A normalised item path inside a domain: the request target percent-decoded
/// exactly once, split into segments, in Unicode NFC.
///
/// Clients spell the same name in many ways (lower- or upper-case hex, NFD from
/// macOS, with or without a trailing slash, as an absolute URL in
/// `Destination`); a `DAVPath` is the one spelling the server compares. It never
/// contains `.`/`..` segments, empty segments, `/` or NUL inside a segment.
public struct DAVPath: Hashable, Sendable, CustomStringConvertible {
    /// The decoded segments, each in NFC.
    public let segments: [String]

    /// Creates a path from already decoded segments; each is normalised to NFC.
    /// Callers pass names, never raw client strings (use ``parse(requestTarget:)``).
    public init(segments: [String]) {
        self.segments = segments.map(DAVPath.nfc)
    }

    private init(normalized: [String]) {
        self.segments = normalized
    }

    /// The domain root, `/`.
    public static let root = DAVPath(normalized: [])

    public var isRoot: Bool { segments.isEmpty }

    /// The containing collection; `nil` for the root.
    public var parent: DAVPath? {
        isRoot ? nil : DAVPath(normalized: Array(segments.dropLast()))
    }

    /// The last segment; `nil` for the root.
    public var name: String? { segments.last }

    public func appending(_ segment: String) -> DAVPath {
        DAVPath(normalized: segments + [DAVPath.nfc(segment)])
    }

    /// Segment-wise prefix test: `/a/b` has prefix `/a` and `/a/b`, not `/a/bc`'s `/a/b`.
    /// Every path has the root as a prefix.
    public func hasPrefix(_ other: DAVPath) -> Bool {
        other.segments.count <= segments.count && zip(other.segments, segments).allSatisfy(==)
    }

    /// The path without its first `n` segments (used to strip a mount prefix).
    public func dropFirst(_ n: Int) -> DAVPath {
        DAVPath(normalized: Array(segments.dropFirst(n)))
    }

    /// Rebases the path (MOVE/COPY of a collection): `/a/b/c` with `/a` -> `/x`
    /// becomes `/x/b/c`. A path that does not start with `old` is returned unchanged.
    public func replacingPrefix(_ old: DAVPath, with new: DAVPath) -> DAVPath {
        guard hasPrefix(old) else { return self }
        return DAVPath(normalized: new.segments + segments.dropFirst(old.segments.count))
    }

    /// The decoded path, `/a/b c`, for logs and messages (never for responses).
    public var description: String { "/" + segments.joined(separator: "/") }

    /// The href of this item as sent in responses (RFC 4918 section 8.3):
    /// an absolute path, each segment percent-encoded as UTF-8 with upper-case
    /// hex (gvfs compares hrefs textually), plus a trailing `/` for a collection.
    public func href(collection: Bool) -> String {
        if isRoot { return "/" }
        var out = ""
        for segment in segments {
            out += "/"
            PercentEncoding.appendEncoded(segment, to: &out)
        }
        if collection { out += "/" }
        return out
    }

    /// Appends one member's segment to its collection's href (which ends
    /// in `/`), in NFC as `href(collection:)` would encode it: a listing
    /// encodes its folder's href once, not once per member.
    public static func appendSegment(_ segment: String, collection: Bool, to href: inout String) {
        PercentEncoding.appendEncoded(nfc(segment), to: &href)
        if collection { href += "/" }
    }

    /// Parses an HTTP request target (RFC 9110 section 7.1, RFC 3986).
    ///
    /// Accepts the origin form (`/a/b%20c/`) and the absolute form
    /// (`https://host:port/a`), strips a query, collapses empty
    /// segments (`//`), decodes `%XX` (either case) exactly once and normalises
    /// each segment to NFC.
    /// - Returns: the path and whether the target ended in `/` (the root always does).
    /// - Throws: ``PathError`` for dot segments, `%00`, `%2F`, bad escapes, invalid
    ///   UTF-8 (escaped, or raw and replaced by U+FFFD), a raw `#`, or a target
    ///   that is not absolute.
    public static func parse(requestTarget: String) throws(PathError) -> (path: DAVPath, trailingSlash: Bool) {
        // Delimiters are looked for among the bytes (RFC 3986 section 2.2),
        // not the characters: `?` or `/` followed by a combining mark is one
        // Character, and would slip into a name.
        var target = Substring(requestTarget)
        if let cut = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            target = target[..<cut]
        }
        // A fragment never belongs in a request target (RFC 9112 section 3.2);
        // cutting it off would turn `DELETE /dir/#frag` into `DELETE /dir/`.
        if target.utf8.contains(UInt8(ascii: "#")) { throw .fragment }
        // The HTTP layer decodes header values (Destination, If) as UTF-8 and
        // replaces bytes that are not with U+FFFD, so a raw U+FFFD in the
        // path is the trace of invalid UTF-8 on the wire: refused, never
        // stored as a name. (A name holding U+FFFD itself arrives escaped,
        // %EF%BF%BD.) The query is not ours to judge.
        if target.unicodeScalars.contains("\u{FFFD}") { throw .invalidUTF8 }
        if target.utf8.first != UInt8(ascii: "/") {
            guard let url = AbsoluteURL(target) else { throw .notAbsolute }
            target = url.path
        }
        var segments: [String] = []
        for raw in target.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            segments.append(try decodeSegment(raw))
        }
        return (DAVPath(normalized: segments), target.utf8.last == UInt8(ascii: "/"))
    }

    private static func decodeSegment(_ raw: Substring.UTF8View.SubSequence) throws(PathError) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var i = raw.startIndex
        while i != raw.endIndex {
            let byte = raw[i]
            if byte == UInt8(ascii: "%") {
                let h = raw.index(after: i)
                guard h != raw.endIndex else { throw .badEncoding }
                let l = raw.index(after: h)
                guard l != raw.endIndex,
                      let high = PercentEncoding.hexValue(raw[h]),
                      let low = PercentEncoding.hexValue(raw[l])
                else { throw .badEncoding }
                let decoded = high << 4 | low
                if decoded == 0 { throw .nulByte }
                if decoded == UInt8(ascii: "/") { throw .encodedSlash }
                bytes.append(decoded)
                i = raw.index(after: l)
            } else {
                if byte == 0 { throw .nulByte }
                bytes.append(byte)
                i = raw.index(after: i)
            }
        }
        guard let segment = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        if segment == "." || segment == ".." { throw .dotSegment }
        return nfc(segment)
    }

    /// NFC (macOS sends NFD, e.g. `u%CC%88` for `ü`). ASCII needs no work.
    ///
    /// Uses the standard library's own normaliser (the one behind `String`
    /// equality) rather than Foundation's `precomposedStringWithCanonicalMapping`:
    /// this module then needs no Foundation at all, and full Foundation cannot be
    /// imported beside libxml2's ICU headers.
    static func nfc(_ s: String) -> String {
        if s.allBytes({ $0 < 0x80 }) { return s }
        return String(decoding: s._nfcCodeUnits, as: UTF8.self)
    }

    /// Whether `s` is NFC already, so that a request path can name it: a
    /// folder's names are checked one by one when it is listed, and
    /// Foundation's normaliser (through ICU) took a fifteenth of a refresh.
    public static func isNFC(_ s: String) -> Bool {
        s.allBytes { $0 < 0x80 } || s.utf8.elementsEqual(s._nfcCodeUnits)
    }
}
