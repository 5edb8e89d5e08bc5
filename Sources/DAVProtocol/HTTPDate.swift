#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTP dates (RFC 9110 section 5.6.7) and the ISO 8601 `creationdate`
/// (RFC 4918 section 15.1). Civil-date arithmetic is done by hand: no
/// `DateFormatter` (slow, locale-sensitive) and no libc.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate form used in `Last-Modified`, `Date` and `getlastmodified`:
    /// `Sun, 06 Nov 1994 08:49:37 GMT`. Fractions of a second are truncated.
    public static func rfc1123(_ date: Date) -> String {
        let t = Civil(date)
        guard (0...9999).contains(t.year) else {
            return "\(weekdays[t.weekday]), \(pad2(t.day)) \(months[t.month - 1]) \(pad4(t.year)) "
                + "\(pad2(t.hour)):\(pad2(t.minute)):\(pad2(t.second)) GMT"
        }
        // Written byte by byte: a PROPFIND of a large folder formats two
        // dates a member, and the interpolated form allocated a string for
        // every field.
        return String(unsafeUninitializedCapacity: 29) { out in
            var writer = FixedWriter(out)
            writer.letters(weekdayLetters, at: t.weekday)
            writer.ascii(", ")
            writer.digits(t.day, 2)
            writer.ascii(" ")
            writer.letters(monthLetters, at: t.month - 1)
            writer.ascii(" ")
            writer.digits(t.year, 4)
            writer.ascii(" ")
            writer.clock(t)
            writer.ascii(" GMT")
            return writer.count
        }
    }

    /// `creationdate` (RFC 4918 section 15.1, RFC 3339): `1997-12-01T17:42:21Z`.
    public static func iso8601(_ date: Date) -> String {
        let t = Civil(date)
        guard (0...9999).contains(t.year) else {
            return "\(pad4(t.year))-\(pad2(t.month))-\(pad2(t.day))T\(pad2(t.hour)):\(pad2(t.minute)):\(pad2(t.second))Z"
        }
        return String(unsafeUninitializedCapacity: 20) { out in
            var writer = FixedWriter(out)
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

    private static let weekdayLetters = Array("SunMonTueWedThuFriSat".utf8)
    private static let monthLetters = Array("JanFebMarAprMayJunJulAugSepOctNovDec".utf8)

    /// Writes ASCII into a string's uninitialized storage of known size.
    private struct FixedWriter {
        let out: UnsafeMutableBufferPointer<UInt8>
        var count = 0

        init(_ out: UnsafeMutableBufferPointer<UInt8>) { self.out = out }

        mutating func ascii(_ text: StaticString) {
            for k in 0..<text.utf8CodeUnitCount { out[count + k] = text.utf8Start[k] }
            count += text.utf8CodeUnitCount
        }

        /// The `index`th three-letter name of `table`.
        mutating func letters(_ table: [UInt8], at index: Int) {
            for k in 0..<3 { out[count + k] = table[index * 3 + k] }
            count += 3
        }

        /// `n` in `width` decimal digits, zero-padded (n < 10^width).
        mutating func digits(_ n: Int, _ width: Int) {
            var rest = n
            for k in stride(from: width - 1, through: 0, by: -1) {
                out[count + k] = UInt8(48 + rest % 10)
                rest /= 10
            }
            count += width
        }

        /// `HH:MM:SS`.
        mutating func clock(_ t: Civil) {
            digits(t.hour, 2)
            ascii(":")
            digits(t.minute, 2)
            ascii(":")
            digits(t.second, 2)
        }
    }

    /// Parses the three formats a recipient must accept (RFC 9110 section 5.6.7):
    /// IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, RFC 850
    /// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`.
    /// The weekday is not checked against the date. Returns `nil` on anything else.
    public static func parse(_ string: String) -> Date? {
        let fields = string.split(whereSeparator: { $0 == " " || $0 == "\t" })
        // IMF-fixdate: "Sun," "06" "Nov" "1994" "08:49:37" "GMT"
        if fields.count == 6, fields[0].hasSuffix(","), fields[5] == "GMT",
           let day = number(fields[1], digits: 2), let month = month(fields[2]),
           let year = number(fields[3], digits: 4), let time = clock(fields[4]) {
            return make(year, month, day, time)
        }
        // RFC 850: "Sunday," "06-Nov-94" "08:49:37" "GMT"
        if fields.count == 4, fields[0].hasSuffix(","), fields[3] == "GMT" {
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 3, let day = number(parts[0], digits: 2), let month = month(parts[1]),
               let yy = number(parts[2], digits: 2), let time = clock(fields[2]) {
                // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
                let year = yy < 70 ? 2000 + yy : 1900 + yy
                return make(year, month, day, time)
            }
        }
        // asctime: "Sun" "Nov" "6" "08:49:37" "1994"
        if fields.count == 5, let month = month(fields[1]),
           let day = number(fields[2], digits: 1...2), let time = clock(fields[3]),
           let year = number(fields[4], digits: 4) {
            return make(year, month, day, time)
        }
        return nil
    }

    private static func make(_ year: Int, _ month: Int, _ day: Int, _ time: (Int, Int, Int)) -> Date? {
        guard (1...31).contains(day), day <= daysIn(month: month, year: year),
              time.0 < 24, time.1 < 60, time.2 < 61
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + time.0 * 3600 + time.1 * 60 + min(time.2, 59)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func month(_ s: Substring) -> Int? {
        months.firstIndex(of: String(s)).map { $0 + 1 }
    }

    private static func number(_ s: Substring, digits: Int) -> Int? {
        number(s, digits: digits...digits)
    }

    private static func number(_ s: Substring, digits: ClosedRange<Int>) -> Int? {
        guard digits.contains(s.utf8.count), s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(s)
    }

    private static func clock(_ s: Substring) -> (Int, Int, Int)? {
        let p = s.split(separator: ":", omittingEmptySubsequences: false)
        guard p.count == 3, let h = number(p[0], digits: 2), let m = number(p[1], digits: 2),
              let sec = number(p[2], digits: 2)
        else { return nil }
        return (h, m, sec)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    private static func pad4(_ n: Int) -> String {
        let s = String(n)
        return s.count >= 4 ? s : String(repeating: "0", count: 4 - s.count) + s
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// A UTC broken-down time.
    private struct Civil {
        var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, weekday = 0

        init(_ date: Date) {
            let total = Int(date.timeIntervalSince1970.rounded(.down))
            var days = total / 86_400
            var secs = total % 86_400
            if secs < 0 { secs += 86_400; days -= 1 }
            hour = secs / 3600
            minute = secs % 3600 / 60
            second = secs % 60
            weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (4)
            let z = days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let doe = z - era * 146_097
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
            let mp = (5 * doy + 2) / 153
            day = doy - (153 * mp + 2) / 5 + 1
            month = mp < 10 ? mp + 3 : mp - 9
            year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        }
    }
}
