import Foundation

/// A WebDAV write lock (RFC 4918 section 6) as kept in the index, so a
/// restart keeps every lock a client holds.
public struct Lock: Sendable, Equatable {
    public var token: String
    /// The item the lock was taken on (its root).
    public var itemID: Int64
    public var depthInfinity: Bool
    public var exclusive: Bool
    /// The serialized DAV:owner element the client sent, returned verbatim.
    public var ownerXML: String?
    /// The authenticated user who took it; only they may use the token.
    public var principal: String
    /// Requested timeout in seconds; nil means Infinite.
    public var timeout: Int?
    public var expires: Date?
    /// The LOCK created the (empty) resource it locks: until its first
    /// write, `If-None-Match: *` treats it as new (davfs2 creates files so).
    public var createdItem: Bool
    /// The token of the same lock held upstream (`mirror_locks`), nil when
    /// it is not mirrored.
    public var upstreamToken: String?

    public init(token: String, itemID: Int64, depthInfinity: Bool, exclusive: Bool, ownerXML: String?, principal: String,
                timeout: Int?, expires: Date?, createdItem: Bool = false, upstreamToken: String? = nil) {
        self.token = token
        self.itemID = itemID
        self.depthInfinity = depthInfinity
        self.exclusive = exclusive
        self.ownerXML = ownerXML
        self.principal = principal
        self.timeout = timeout
        self.expires = expires
        self.createdItem = createdItem
        self.upstreamToken = upstreamToken
    }

    /// Seconds left, nil for Infinite.
    public func remaining(now: Date = Date()) -> Int? {
        expires.map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) }
    }

    /// Two locks conflict unless both are shared (RFC 4918 section 6.2).
    public func conflicts(exclusive other: Bool) -> Bool { exclusive || other }
}

/// Why a lock could not be taken.
public enum LockError: Error, Sendable, Equatable {
    /// An existing lock conflicts (the one given, whose root the answer
    /// names); the client gets 423 with `no-conflicting-lock`.
    case conflict(Lock)
    case unknownToken
}
