import Foundation
import Testing
@testable import UTCDates

@Suite struct ISO8601Tests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (880_998_141, "1997-12-01T17:42:21Z"),
        (1_709_164_800, "2024-02-29T00:00:00Z"),
        (1_709_164_800.999, "2024-02-29T00:00:00Z"),
        (253_402_300_799, "9999-12-31T23:59:59Z"),
        (253_402_300_800, "10000-01-01T00:00:00Z"),
    ])
    func writesRFC3339(seconds: Double, text: String) {
        #expect(ISO8601.string(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test(arguments: [
        ("1997-12-01T17:42:21Z", 880_998_141.0),
        ("1997-12-01t17:42:21z", 880_998_141),
        ("1997-12-01T17:42:21.25Z", 880_998_141.25),
        ("1997-12-01T19:42:21+02:00", 880_998_141),
        ("1997-12-01T12:42:21-05:00", 880_998_141),
        ("2024-02-29T00:00:00Z", 1_709_164_800),
        ("1969-12-31T23:59:59Z", -1),
    ])
    func readsRFC3339(text: String, seconds: Double) throws {
        let date = try #require(ISO8601.date(from: text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 1e-6)
    }

    @Test(arguments: [
        "", "1997-12-01", "1997-12-01T17:42:21", "1997-12-01 17:42:21Z", "1997-13-01T17:42:21Z",
        "2023-02-29T00:00:00Z", "1997-12-01T24:00:00Z", "1997-12-01T17:42:21Zx", "1997-12-01T17:42:21.Z",
        "1997-12-01T17:42:21+0200", "1997-12-01T17:42:21+24:00", "19a7-12-01T17:42:21Z",
    ])
    func refusesAnythingElse(text: String) {
        #expect(ISO8601.date(from: text) == nil)
    }

    /// davgate's users, vault and status files were written with
    /// Foundation's `.iso8601` strategy: what it wrote must read back to the
    /// same instant, and what davgate writes now must be what it would have
    /// written (a downgrade reads it).
    @Test func matchesFoundationsStrategyBothWays() throws {
        struct Stamped: Codable, Equatable { var at: [Date] }
        let value = Stamped(at: [0, -1, 880_998_141, 1_709_164_800, 1_764_000_000, 4_102_444_799].map {
            Date(timeIntervalSince1970: $0)
        })
        let foundationEncoder = JSONEncoder()
        foundationEncoder.dateEncodingStrategy = .iso8601
        let ownEncoder = JSONEncoder()
        ownEncoder.dateEncodingStrategy = .utcISO8601
        let written = try ownEncoder.encode(value)
        #expect(written == (try foundationEncoder.encode(value)))

        let ownDecoder = JSONDecoder()
        ownDecoder.dateDecodingStrategy = .utcISO8601
        let foundationDecoder = JSONDecoder()
        foundationDecoder.dateDecodingStrategy = .iso8601
        #expect(try ownDecoder.decode(Stamped.self, from: foundationEncoder.encode(value)) == value)
        #expect(try foundationDecoder.decode(Stamped.self, from: written) == value)
    }

    @Test func aDamagedDateIsADecodingError() {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .utcISO8601
        #expect(throws: DecodingError.self) {
            _ = try decoder.decode([Date].self, from: Data(#"["yesterday"]"#.utf8))
        }
    }
}
