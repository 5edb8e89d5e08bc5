import NIOConcurrencyHelpers

/// The bytes of one upload sent so far: the store counts them as they go,
/// `davgate status` shows them beside the file's size.
public final class UploadProgress: Sendable {
    private let sent = NIOLockedValueBox<Int64>(0)

    public init() {}

    public func add(_ bytes: Int64) {
        sent.withLockedValue { $0 += bytes }
    }

    public var bytesSent: Int64 { sent.withLockedValue { $0 } }
}
