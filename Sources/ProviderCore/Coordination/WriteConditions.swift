/// What a writer holds and what it saw, carried into the provider call as a
/// value so the provider checks it again at the moment it commits.
///
/// A PUT's lock and `If` checks run before its body arrives, which for a
/// large file is minutes before the commit; a LOCK granted meanwhile must
/// still stop it (the File Provider's promise that a coordinated writer is
/// never overwritten). The server checks early to refuse before the body,
/// and the provider checks these again under the domain's coordination,
/// where no LOCK can slip in between the check and the write.
public struct WriteConditions: Sendable, Equatable {
    /// The authenticated user: only a lock's owner may use its token.
    public var principal: String
    /// Lock tokens the request submitted in its `If` header.
    public var tokens: Set<String>
    /// The content the request's conditions (If-Match, If-None-Match,
    /// If-Unmodified-Since, an `If` with ETags) were judged against; nil
    /// when it sent none. Anything else at commit fails the write (412):
    /// the conditions would have to be judged again.
    public var judgedAgainst: Judged?

    public enum Judged: Sendable, Equatable {
        case absent
        case etag(String)
    }

    public init(principal: String, tokens: Set<String> = [], judgedAgainst: Judged? = nil) {
        self.principal = principal
        self.tokens = tokens
        self.judgedAgainst = judgedAgainst
    }

    /// A writer that holds no lock and judged nothing: refused wherever a
    /// lock stands. The default of the namespace calls, for callers that
    /// speak for no client (tests, the CLI).
    public static let unconditional = WriteConditions(principal: "")

    /// The same holder, judging nothing: for the other items a change
    /// touches (a parent, a destination), whose locks count but whose
    /// content the request's conditions were not about.
    public var locksOnly: WriteConditions {
        WriteConditions(principal: principal, tokens: tokens)
    }

    /// How `item` (nil: nothing there) is judged: its ETag, or absent. A
    /// folder's ETag is judged when the request arrives and not again at
    /// commit: it moves with every change below, and a write landing deep
    /// inside meanwhile should not fail a MOVE or DELETE of the folder.
    public static func judged(_ item: Item?) -> Judged {
        guard let item, !item.isFolder else { return .absent }
        return .etag(item.etag)
    }
}
