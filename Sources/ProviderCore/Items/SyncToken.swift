/// A point in a domain's change feed, handed to clients as a URI (RFC 6578
/// section 3.1 wants one): `https://davgate.dev/sync/FEED/SEQUENCE`.
///
/// `feed` names the index the sequence numbers belong to, so a token from
/// another index (a different server, or one rebuilt from scratch) is
/// refused instead of being read against numbers that mean something else.
public struct SyncToken: Sendable, Hashable, CustomStringConvertible {
    public let feed: String
    public let sequence: Int64

    static let prefix = "https://davgate.dev/sync/"

    public init(feed: String, sequence: Int64) {
        self.feed = feed
        self.sequence = sequence
    }

    /// The token's URI form; nil when `text` is not one of ours.
    public init?(_ text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        let parts = text.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isHexDigit }),
              let sequence = Int64(parts[1]), sequence >= 0, String(sequence) == parts[1] else { return nil }
        self.init(feed: String(parts[0]), sequence: sequence)
    }

    public var description: String { "\(Self.prefix)\(feed)/\(sequence)" }
}
