import Foundation
import NIOConcurrencyHelpers

/// Slows down password guessing: each failed login for a user name, and
/// each from an address, makes the next failure wait longer (100 ms,
/// doubling, at most 5 s), for a quarter of an hour after the last failure.
/// A success clears the user's and the address's record.
///
/// The delay is paid by the failing request before its 401, so a client
/// that knows the password is never slowed, while a guesser's rate falls
/// geometrically, whether it rotates names or addresses.
final class LoginThrottle: Sendable {
    private struct Record {
        var failures: Int
        var last: Date
    }

    private let records = NIOLockedValueBox<[String: Record]>([:])
    private let window: TimeInterval = 900
    private let base: Double = 0.1
    private let maximum: Double = 5
    private let capacity = 10_000

    /// Records a failure and returns how long to wait before answering.
    func failed(user: String, address: String, now: Date = Date()) -> Duration {
        let keys = ["user:" + user, "addr:" + address]
        let count = records.withLockedValue { records -> Int in
            if records.count >= capacity { prune(&records, now: now) }
            var worst = 0
            for key in keys {
                var record = records[key].flatMap { now.timeIntervalSince($0.last) < window ? $0 : nil } ?? Record(failures: 0, last: now)
                record.failures += 1
                record.last = now
                records[key] = record
                worst = max(worst, record.failures)
            }
            return worst
        }
        let seconds = min(maximum, base * pow(2, Double(count - 1)))
        return .milliseconds(Int(seconds * 1000))
    }

    func succeeded(user: String, address: String) {
        records.withLockedValue { records in
            records["user:" + user] = nil
            records["addr:" + address] = nil
        }
    }

    private func prune(_ records: inout [String: Record], now: Date) {
        records = records.filter { now.timeIntervalSince($0.value.last) < window }
        if records.count >= capacity {
            // Still full of fresh records: keep the most recent half.
            let keep = records.sorted { $0.value.last > $1.value.last }.prefix(capacity / 2)
            records = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
