/// What the `If` header is evaluated against for one resource
/// (RFC 4918 section 10.4.4 state tokens, section 10.4.5 entity tags).
public struct ResourceState: Sendable, Equatable {
    /// The current strong ETag with its quotes; `nil` when the resource does not exist.
    public var etag: String?
    /// The tokens of every lock that covers the resource (direct or inherited).
    public var lockTokens: Set<String>

    public init(etag: String?, lockTokens: Set<String>) {
        self.etag = etag
        self.lockTokens = lockTokens
    }

    /// A resource that does not exist: no ETag, no locks.
    public static let missing = ResourceState(etag: nil, lockTokens: [])
}
