#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The JSON date strategies of davgate's own files. Foundation's `.iso8601`
/// writes and reads the same text, but through a `Calendar` that looks up
/// the machine's time zone in ICU on first use (see `UTCTime`).
extension JSONEncoder.DateEncodingStrategy {
    public static let utcISO8601: Self = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(ISO8601.string(date))
    }
}

extension JSONDecoder.DateDecodingStrategy {
    public static let utcISO8601: Self = .custom { decoder in
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = ISO8601.date(from: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 date: \(text)")
        }
        return date
    }
}
