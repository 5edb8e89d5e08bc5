/// Bytes as hex digits, for checksums and names derived from digests.
///
/// `String(format: "%02x")` per byte went through Foundation's formatter
/// twenty times for every PUT's SHA-1: 3% of the server's time under a
/// burst of small PUTs (issue 14's profile).
extension Sequence where Element == UInt8 {
    public func hexEncoded(uppercase: Bool = false) -> String {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        var text = [UInt8]()
        text.reserveCapacity(underestimatedCount * 2)
        digits.withUTF8Buffer { digits in
            for byte in self {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
