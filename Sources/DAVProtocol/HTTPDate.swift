#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import UTCDates

/// HTTP dates (RFC 9110 section 5.6.7) and the ISO 8601 `creationdate`
/// (RFC 4918 section 15.1). Civil-date arithmetic is done by hand
/// (`UTCTime`): no `DateFormatter` (slow, locale-sensitive), no `Calendar`
/// (ICU) and no libc.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate form used in `Last-Modified`, `Date` and `getlastmodified`:
    /// `Sun, 06 Nov 1994 08:49:37 GMT`. Fractions of a second are truncated.
    public static func rfc1123(_ date: Date) -> String {
        let t = UTCTime(date)
        guard (0...9999).contains(t.year) else {
            let pad = ASCIIWriter.zeroPadded
            return "\(weekdays[t.weekday]), \(pad(t.day, 2)) \(months[t.month - 1]) \(pad(t.year, 4)) "
                + "\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2)) GMT"
        }
        // Written byte by byte: a PROPFIND of a large folder formats two
        // dates a member, and the interpolated form allocated a string for
        // every field.
        return String(unsafeUninitializedCapacity: 29) { out in
            var writer = ASCIIWriter(out)
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
    public static func iso8601(_ date: Date) -> String { ISO8601.string(date) }

    private static let weekdayLetters = Array("SunMonTueWedThuFriSat".utf8)
    private static let monthLetters = Array("JanFebMarAprMayJunJulAugSepOctNovDec".utf8)

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
        UTCTime.date(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
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
}
