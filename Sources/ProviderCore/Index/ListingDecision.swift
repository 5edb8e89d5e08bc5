import Foundation

/// What a fresh upstream entry does to the member of the same name the
/// index holds: the decision both index implementations apply, each in its
/// own SQL, so a listing means the same whichever database holds it.
enum ListingDecision: Equatable {
    /// No such member yet: a new placeholder (or folder).
    case insert
    /// Written here and waiting for its upload: ours is the truth until the
    /// upload (which settles any conflict) is done.
    case keepOurs
    /// A file became a folder or the other way round: the old subtree goes,
    /// a new item takes the name.
    case replace
    /// The file's version changed upstream: new size, date and version, a
    /// new content version (ETag), and the cached bytes are stale.
    case newContent
    /// A folder's date changed.
    case newFolderDate
    /// Nothing to change but the mark that this listing saw it.
    case unchanged

    init(existing item: Item?, entry: UpstreamEntry) {
        guard let item else { self = .insert; return }
        if item.dirty { self = .keepOurs }
        else if item.isFolder != entry.isFolder { self = .replace }
        else if !entry.isFolder, item.upstreamVersion != entry.version { self = .newContent }
        else if entry.isFolder, item.modified != entry.modified { self = .newFolderDate }
        else { self = .unchanged }
    }
}
