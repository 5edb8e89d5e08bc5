import NIOConcurrencyHelpers

/// How many requests this process has begun: the measure of whether the
/// server is busy, for the work it should only do once it has gone quiet
/// (giving memory back, `QuietMemoryRelease`).
public enum ServerActivity {
    private static let begun = NIOLockedValueBox(0)

    /// Requests begun since the start.
    public static var requestsBegun: Int { begun.withLockedValue { $0 } }

    static func requestBegins() {
        begun.withLockedValue { $0 &+= 1 }
    }
}
