/// The `Timeout` request header of LOCK (RFC 4918 section 10.7):
/// `Timeout = 1#TimeType`, `TimeType = ("Second-" DAVTimeOutVal | "Infinite")`.
public enum LockTimeout {
    /// The lock duration to grant.
    ///
    /// The client lists its preferences in order; the first one understood wins
    /// (RFC 4918 section 10.7: the server is not required to honour any of them).
    /// `Infinite` and anything above `maximum` become `maximum`.
    /// - Parameters:
    ///   - header: the `Timeout` value, or `nil` when absent.
    ///   - default: seconds to grant when the header is absent or nothing in it
    ///     is understood (clamped to `maximum` too).
    ///   - maximum: the longest lock davgate grants.
    public static func seconds(from header: String?, default defaultSeconds: Int, maximum: Int) -> Int {
        guard let header else { return min(defaultSeconds, maximum) }
        for item in header.split(separator: ",") {
            let value = item.trimmingSpaces()
            if value.lowercased() == "infinite" { return maximum }
            guard value.count > 7, value.prefix(7).lowercased() == "second-" else { continue }
            let digits = value.dropFirst(7)
            guard digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { continue }
            // DAVTimeOutVal is up to 2^32-1; longer digit strings are simply "long".
            guard let n = Int(digits) else { return maximum }
            if n == 0 { continue }
            return min(n, maximum)
        }
        return min(defaultSeconds, maximum)
    }
}
