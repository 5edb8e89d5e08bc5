import Foundation

/// A file's next content arriving in pieces (`Content-Range` PUTs, or a PUT
/// whose connection was cut): the bytes received so far, staged beside the
/// cache, and what they are meant to become. The path keeps its old content
/// until the pieces cover the whole declared length; then they are committed
/// as one ordinary write (one journal row, one upload, one version kept).
///
/// Apache and lighttpd patch the file in place with each piece, so a reader
/// sees half a file and the old content is gone before the new one is
/// whole, and a versioning server would keep a version a piece. An upload
/// that starts at byte 0 is staged whole instead; one that starts past it
/// over an existing file patches that file (`Provider.writePiece`).
public struct StagedUpload: Codable, Sendable, Equatable {
    public var path: ItemPath
    /// Whose upload it is: another user's pieces never mix in.
    public var principal: String
    /// The complete length the pieces declared (`Content-Range: bytes A-B/N`).
    public var total: Int64
    /// The bytes present, as `[first, last]` pairs (JSON has no ranges).
    var receivedPairs: [[Int64]]
    /// The ETag of what the path held when the upload began, nil for
    /// nothing: committing over anything else would drop another writer's
    /// change, so the commit is conditional on it.
    public var basis: String?
    public var updated: Date

    init(path: ItemPath, principal: String, total: Int64, basis: String?, updated: Date = Date()) {
        self.path = path
        self.principal = principal
        self.total = total
        self.receivedPairs = []
        self.basis = basis
        self.updated = updated
    }

    public var received: ByteRanges {
        get { ByteRanges(receivedPairs.compactMap { $0.count == 2 && $0[0] <= $0[1] ? $0[0]...$0[1] : nil }) }
        set { receivedPairs = newValue.ranges.map { [$0.lowerBound, $0.upperBound] } }
    }

    /// The bytes received from the start without a gap: where a client
    /// that sends in order resumes.
    public var offset: Int64 { received.end(from: 0) }

    /// Whether every byte of the declared length is there.
    public var isComplete: Bool { total == 0 || received.gaps(in: 0...(total - 1)).isEmpty }

    mutating func add(_ range: ClosedRange<Int64>) {
        var ranges = received
        ranges.insert(range)
        received = ranges
        updated = Date()
    }
}
