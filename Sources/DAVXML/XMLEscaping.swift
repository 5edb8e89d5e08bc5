/// Escaping for text and attribute values written into XML responses.
///
/// Characters XML 1.0 cannot carry at all (most C0 controls) are dropped rather
/// than written, so a hostile file name can never make a response unparseable.
public enum XMLEscaping {
    /// Escapes character data (`&`, `<`, `>`).
    public static func text(_ s: String) -> String {
        escape(s, quotes: false)
    }

    /// Escapes an attribute value for double-quoted attributes.
    ///
    /// Tab and newline are written as character references: a parser
    /// replaces literal ones with spaces (XML 1.0 section 3.3.3, attribute
    /// value normalization), so a dead property's attribute would not come
    /// back as it was stored.
    public static func attribute(_ s: String) -> String {
        escape(s, quotes: true)
    }

    private static func escape(_ s: String, quotes: Bool) -> String {
        // Most names and values are ASCII with nothing to escape, and one
        // pass over the bytes says so (a PROPFIND of a large folder escapes
        // every name and href; decoding scalars was a twentieth of it).
        if s.allBytes({ isPlainASCII($0, quotes: quotes) }) { return s }
        if !s.unicodeScalars.contains(where: { needsWork($0, quotes: quotes) }) { return s }
        var out = String()
        out.reserveCapacity(s.utf8.count + 16)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quotes: out += "&quot;"
            case "\r": out += "&#13;"
            case "\t" where quotes: out += "&#9;"
            case "\n" where quotes: out += "&#10;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if isAllowed(scalar) { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// An ASCII byte written as it is.
    private static func isPlainASCII(_ b: UInt8, quotes: Bool) -> Bool {
        switch b {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\r"): false
        case UInt8(ascii: "\""), UInt8(ascii: "\t"), UInt8(ascii: "\n"): !quotes
        default: b >= 0x20 && b < 0x80
        }
    }

    private static func needsWork(_ c: Unicode.Scalar, quotes: Bool) -> Bool {
        switch c {
        case "&", "<", ">", "\"", "\r": true
        case "\t", "\n": quotes
        default: !isAllowed(c) || (c.value < 0x20 && c != "\t" && c != "\n")
        }
    }

    /// XML 1.0 section 2.2 `Char`.
    private static func isAllowed(_ c: Unicode.Scalar) -> Bool {
        let v = c.value
        return v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v <= 0xD7FF)
            || (v >= 0xE000 && v <= 0xFFFD) || (v >= 0x10000 && v <= 0x10FFFF)
    }
}
