/// Bytes as hex digits, for checksums and names derived from digests.
///
/// `String(format: "%02x")` per byte went through Foundation's formatter
/// twenty times for every PUT's SHA-1: 3% of the server's time under a
/// burst of small PUTs (issue 14's profile). Inlinable, so that the modules
/// calling it (DAVServer, for every PUT's SHA-1) get it specialized for
/// their digest: called through the generic `Sequence` witness it was still
/// a hundredth of a small PUT's CPU.
extension Sequence where Element == UInt8 {
    @inlinable
    public func hexEncoded(uppercase: Bool = false) -> String {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        let bytes = Array(self)
        return String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            digits.withUTF8Buffer { digits in
                for (i, byte) in bytes.enumerated() {
                    text[2 * i] = digits[Int(byte >> 4)]
                    text[2 * i + 1] = digits[Int(byte & 0x0f)]
                }
            }
            return bytes.count * 2
        }
    }
}
