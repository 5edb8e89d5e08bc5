/// Writes ASCII into a string's uninitialized storage of known size: a
/// PROPFIND of a large folder formats two dates a member, and interpolation
/// allocated a string for every field.
package struct ASCIIWriter {
    let out: UnsafeMutableBufferPointer<UInt8>
    package private(set) var count = 0

    package init(_ out: UnsafeMutableBufferPointer<UInt8>) { self.out = out }

    package mutating func ascii(_ text: StaticString) {
        for k in 0..<text.utf8CodeUnitCount { out[count + k] = text.utf8Start[k] }
        count += text.utf8CodeUnitCount
    }

    /// The `index`th three-letter name of `table`.
    package mutating func letters(_ table: [UInt8], at index: Int) {
        for k in 0..<3 { out[count + k] = table[index * 3 + k] }
        count += 3
    }

    /// `n` in `width` decimal digits, zero-padded (n < 10^width).
    package mutating func digits(_ n: Int, _ width: Int) {
        var rest = n
        for k in stride(from: width - 1, through: 0, by: -1) {
            out[count + k] = UInt8(48 + rest % 10)
            rest /= 10
        }
        count += width
    }

    /// `HH:MM:SS`.
    package mutating func clock(_ t: UTCTime) {
        digits(t.hour, 2)
        ascii(":")
        digits(t.minute, 2)
        ascii(":")
        digits(t.second, 2)
    }

    /// `n` in at least `width` digits, zero-padded: the slow form, for years
    /// outside 0...9999 that the fixed-size writers do not take.
    package static func zeroPadded(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
