/// What the upstream said about a write's name in a folder whose listing
/// is stale, asked before the write takes the domain's coordination
/// (`Provider.lookAtTarget`), so that a burst of writes into one stale
/// folder asks in parallel instead of one write at a time while every
/// other writer of the domain waits. Asked under the coordination, an S3
/// upstream's HEADs and LISTs were serial: 3,000 PUTs of 4 KiB from 8
/// connections through `rclone serve s3` on tmpfs made 489-550 files/s into
/// a stale folder, 1,631-1,716 asked before it (issue 14), and each request
/// to a distant bucket cost every writer of the domain its round trip.
///
/// The answer counts only while the index's row for the name is the one
/// read before asking: any change to a row of that name here since (a
/// write, a delete or a move, an upload recorded, a listing that changed
/// it, an eviction) makes another row, and the commit asks again. Changes
/// to other names, which in a burst are nearly all of them, leave it
/// standing; the namespace clock, which a look under the coordination
/// checks instead, would have thrown nearly every early answer away. One
/// case leaves no trace in the row: no row before, and a row that came
/// and went meanwhile (written here, uploaded, deleted). The answer may
/// then show that file, gone since; so an answer that shows a file where
/// the index had none is never used (`holds`), and the commit asks again.
/// A burst of new names, where both had none, keeps its early answers.
struct TargetLook: Sendable {
    enum Answer: Sendable {
        /// The name's entry upstream; nil: free there, in a folder that is there.
        case seen(UpstreamEntry?)
        /// The name is free and its folder is no folder upstream any more.
        case folderGone
        /// The upstream could not be asked (the error, for the log).
        case unreachable(String)
    }

    let folderID: Int64
    let name: String
    /// The index's row for the name just before the upstream was asked.
    let indexed: Item?
    let answer: Answer

    /// Whether this look is about `name` in `folder`, as the commit resolved them.
    func isAbout(_ name: String, in folder: Item) -> Bool {
        folderID == folder.id && self.name == name
    }

    /// Whether the answer still holds, given the name's row now.
    func holds(given row: Item?) -> Bool {
        guard row == indexed else { return false }
        if indexed == nil, case .seen(.some) = answer { return false }
        return true
    }
}
