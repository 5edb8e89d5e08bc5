import NIOConcurrencyHelpers

/// Fresh names for files in progress (request bodies, outbox entries,
/// fetches): a random tag drawn once per process, then a counter.
///
/// `UUID()` opened and read `/dev/urandom` for every name, three times per
/// small PUT (issue 14's strace). A name only has to differ from every other
/// name this process makes and from the leftovers of earlier ones, which
/// the 64 random bits of the tag see to.
public enum UniqueName {
    private static let tag = String(UInt64.random(in: .min ... .max), radix: 36)
    private static let counter = NIOLockedValueBox<UInt64>(0)

    /// `prefix-TAG-N`.
    public static func make(_ prefix: String) -> String {
        let n = counter.withLockedValue { value -> UInt64 in
            value &+= 1
            return value
        }
        return prefix + "-" + tag + "-" + String(n, radix: 36)
    }
}
