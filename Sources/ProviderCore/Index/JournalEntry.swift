import Foundation

/// One acknowledged write waiting for its upload.
public struct JournalEntry: Sendable, Equatable {
    public var seq: Int64
    public var itemID: Int64
    /// The name of the bytes' file in the cache's outbox: durable there
    /// for a large write; for a small one, whose row holds the bytes, made
    /// only for its upload.
    public var file: String
    public var size: Int64
    /// The upstream version the edit was based on; nil for a new file.
    public var basis: String?
    public var created: Date
    public var attempts: Int
    public var lastError: String?
    public var failed: Bool

    static let columns = "seq, item_id, file, size, basis, created, attempts, last_error, failed"


    public init(seq: Int64, itemID: Int64, file: String, size: Int64, basis: String?, created: Date,
                attempts: Int, lastError: String?, failed: Bool) {
        self.seq = seq
        self.itemID = itemID
        self.file = file
        self.size = size
        self.basis = basis
        self.created = created
        self.attempts = attempts
        self.lastError = lastError
        self.failed = failed
    }
}
