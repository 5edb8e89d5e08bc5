#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ISO 8601 UTC timestamps in the RFC 3339 form `1997-12-01T17:42:21Z`: a
/// WebDAV `creationdate` (RFC 4918 section 15.1) and the dates of davgate's
/// own files (users, vault, the status document), which Foundation's
/// `.iso8601` JSON strategy wrote in this same form before.
public enum ISO8601 {
    /// Whole seconds; years outside 0...9999 are written with as many digits as they need.
    public static func string(_ date: Date) -> String {
        let t = UTCTime(date)
        guard (0...9999).contains(t.year) else {
            let pad = ASCIIWriter.zeroPadded
            return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))T\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2))Z"
        }
        return String(unsafeUninitializedCapacity: 20) { out in
            var writer = ASCIIWriter(out)
            writer.digits(t.year, 4)
            writer.ascii("-")
            writer.digits(t.month, 2)
            writer.ascii("-")
            writer.digits(t.day, 2)
            writer.ascii("T")
            writer.clock(t)
            writer.ascii("Z")
            return writer.count
        }
    }

    /// Parses an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS`, an optional
    /// fraction (kept to the microsecond), then `Z` or an offset `±HH:MM`;
    /// `t` and `z` in lower case are accepted (RFC 3339 section 5.6). Nil on
    /// anything else.
    public static func date(from string: String) -> Date? {
        let b = Array(string.utf8)
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] | 0x20 == 0x74, b[13] == 0x3A, b[16] == 0x3A,
              let year = number(b, 0, 4), let month = number(b, 5, 2), let day = number(b, 8, 2),
              let hour = number(b, 11, 2), let minute = number(b, 14, 2), let second = number(b, 17, 2)
        else { return nil }
        var index = 19
        var fraction = 0.0
        if b[index] == 0x2E {
            let start = index + 1
            index = start
            while index < b.count, (0x30...0x39).contains(b[index]) { index += 1 }
            guard index > start, let digits = number(b, start, min(index - start, 6)) else { return nil }
            fraction = Double(digits) / pow10(min(index - start, 6))
        }
        guard index < b.count else { return nil }
        var offset = 0
        if b[index] | 0x20 == 0x7A {
            index += 1
        } else if b[index] == 0x2B || b[index] == 0x2D {
            guard index + 6 == b.count, b[index + 3] == 0x3A,
                  let hours = number(b, index + 1, 2), let minutes = number(b, index + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (b[index] == 0x2B ? 1 : -1)
            index += 6
        }
        guard index == b.count,
              let date = UTCTime.date(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        return date.addingTimeInterval(fraction - Double(offset))
    }

    private static func number(_ b: [UInt8], _ start: Int, _ width: Int) -> Int? {
        guard start + width <= b.count else { return nil }
        var value = 0
        for k in start..<start + width {
            guard (0x30...0x39).contains(b[k]) else { return nil }
            value = value * 10 + Int(b[k] - 0x30)
        }
        return value
    }

    private static func pow10(_ n: Int) -> Double {
        (0..<n).reduce(1.0) { product, _ in product * 10 }
    }
}
