/// Failures of provider calls, phrased in File Provider terms; DAVServer maps
/// each to one precise HTTP status and DAV error body.
public enum ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound
    /// The parent of the target does not exist or is not a folder (409).
    case parentMissing
    /// The target already exists where that is not allowed (405 for MKCOL, 412 for Overwrite: F).
    case exists
    /// A file operation on a folder or the other way round.
    case wrongKind
    /// Source and destination overlap (MOVE/COPY into itself).
    case overlapping
    case upstream(UpstreamError)
    case local(String)
    /// The shared index (PostgreSQL) cannot be reached, or a commit's outcome is unknown: nothing was acknowledged.
    case indexUnavailable(String)
    /// Write-back: the bytes waiting for upload would exceed the budget.
    case dirtyBudgetExceeded(pending: Int64, budget: Int64)
    /// The cache's disk is full: nothing was stored.
    case localNoSpace
    /// The upstream cannot hold this name (too long, or a control character).
    case nameRefused(NameViolation)
    /// A lock covers the target whose token the writer did not submit
    /// (423, naming the lock's root), perhaps granted while its body arrived.
    case locked(domain: String, root: ItemPath, isFolder: Bool)
    /// The content changed between the request's conditions and its
    /// commit (412): judged again, they might not hold.
    case conditionChanged
    /// A staged upload's path changed since its first piece (412): the
    /// pieces were discarded, the upload must start again.
    case stagedUploadStale
    /// A partial write's start lies beyond the file's end (416).
    case rangeNotSatisfiable(size: Int64)
    /// A piece past byte 0 of an upload nothing of which is here, over no
    /// file to patch (416): the upload expired, or never began.
    case stagedUploadMissing
    /// A first piece past byte 0 over an existing file, sent without an
    /// ETag condition (428): it would patch whatever the file holds now.
    case patchNeedsCondition
    /// A piece of an upload in several requests while instances share the
    /// index (501): each instance stages pieces on its own disk, and the
    /// next piece may reach another instance.
    case piecesNeedOneInstance

    public var description: String {
        switch self {
        case .notFound: "not found"
        case .parentMissing: "parent folder does not exist"
        case .exists: "already exists"
        case .wrongKind: "wrong kind of item for this operation"
        case .overlapping: "source and destination overlap"
        case .upstream(let e): e.description
        case .local(let m): "local storage error: \(m)"
        case .indexUnavailable(let m): "the index database is unavailable: \(m)"
        case .dirtyBudgetExceeded(let pending, let budget):
            "\(pending) bytes already wait for upload (dirty_budget \(budget)); try again once the upstream caught up"
        case .localNoSpace: "the cache's disk is full; nothing was stored"
        case .nameRefused(let violation): violation.description
        case .locked(_, let root, _): "locked: a lock on /\(root.joined(separator: "/")) was not submitted"
        case .conditionChanged: "the resource changed while the request was received; its conditions no longer hold"
        case .stagedUploadStale:
            "the file changed since this upload's first piece; the pieces received were discarded, send the file again from byte 0"
        case .rangeNotSatisfiable(let size): "the range starts beyond the end of the file, which holds \(size) bytes"
        case .stagedUploadMissing:
            "nothing of this upload is here (it expired, or never began); send the file from byte 0"
        case .piecesNeedOneInstance:
            "uploads in several requests are not supported while several davgate instances share the index (a piece may reach another instance than the one holding the others); send the file with one PUT"
        case .patchNeedsCondition:
            "no upload of this file is staged here; to patch or append to the file as it is, send If-Match with its ETag, or send the file from byte 0"
        }
    }
}
