import DAVXML

/// Percent-encoding of path segments for hrefs (RFC 3986 section 2.1).
enum PercentEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Bytes written literally in an href segment: RFC 3986 unreserved
    /// characters plus the sub-delims and `:`/`@` that `pchar` allows, minus
    /// `;` (path parameters to some clients, and Apache encodes it too).
    /// Everything else (space, `%`, `#`, `?`, `"`, `<`, `>`, `\`, `^`, `` ` ``,
    /// `{`, `|`, `}`, `[`, `]`, controls, non-ASCII) is encoded.
    private static let literal: [Bool] = {
        var table = [Bool](repeating: false, count: 128)
        for b in UInt8(ascii: "a")...UInt8(ascii: "z") { table[Int(b)] = true }
        for b in UInt8(ascii: "A")...UInt8(ascii: "Z") { table[Int(b)] = true }
        for b in UInt8(ascii: "0")...UInt8(ascii: "9") { table[Int(b)] = true }
        for c in "-._~!$&'()*+,=:@".utf8 { table[Int(c)] = true }
        return table
    }()

    static func appendEncoded(_ segment: String, to out: inout String) {
        if segment.allBytes({ $0 < 0x80 && literal[Int($0)] }) {
            out += segment
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(segment.utf8.count * 3)
        for b in segment.utf8 {
            if b < 0x80 && literal[Int(b)] {
                bytes.append(b)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(b >> 4)])
                bytes.append(hexDigits[Int(b & 0xF)])
            }
        }
        out += String(decoding: bytes, as: UTF8.self)
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
