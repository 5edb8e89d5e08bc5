import Foundation

/// How long a domain keeps what is deleted through it, and how much of it
/// (`trash_retention`, `trash_budget`). Older entries go first when the
/// budget is exceeded; an entry larger than the whole budget is still kept
/// until the next one arrives, so a DELETE never destroys at once.
public struct TrashPolicy: Sendable, Equatable {
    public var retention: TimeInterval
    /// Bytes all entries may hold together; nil for no limit.
    public var budget: Int64?

    public init(retention: TimeInterval = 30 * 86_400, budget: Int64? = nil) {
        self.retention = retention
        self.budget = budget
    }
}
