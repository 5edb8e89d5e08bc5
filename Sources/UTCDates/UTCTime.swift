#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A UTC broken-down time, converted by hand (H. Hinnant's civil-date
/// algorithms) rather than by Foundation's `Calendar`: a `Calendar`, even
/// one asked for UTC, first looks up the machine's current time zone
/// through ICU, which brought about 1.6 MiB of ICU's code and its time-zone
/// tables into every davgate process that read or wrote its users file
/// (issue 14's resident-memory target).
package struct UTCTime: Sendable, Equatable {
    package var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0
    /// 0 for Sunday.
    package var weekday = 0

    /// Fractions of a second are truncated (towards the past).
    package init(_ date: Date) {
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

    /// The date of a UTC civil time, or nil when a field is out of range. A
    /// leap second (`:60`) is read as `:59`, as HTTP dates allow it.
    package static func date(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), (1...31).contains(day), day <= daysIn(month: month, year: year),
              (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        let seconds = days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + min(second, 59)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    package static func days(year y0: Int, month m: Int, day d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
