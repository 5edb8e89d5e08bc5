import Foundation
import ProviderCore

/// An upload into a folder that is not there is refused (a WebDAV server
/// answers 409; S3 would make the folder, keys need none), which costs a
/// LIST per file. Within `folderSightingTTL` of a LIST or an upload of this
/// store that showed the folder, an upload takes it as there: a burst of
/// uploads into one folder lists it once every few seconds, not once a
/// file (`Sightings`).
extension S3Store {
    /// As long as davgate's default `listing_ttl`, the age at which a
    /// folder's listing is trusted too. A folder another client empties in
    /// those seconds is made again by the upload, as any S3 client's upload
    /// would make it; a DELETE or MOVE through this store forgets every
    /// sighting first.
    static let folderSightingTTL: TimeInterval = 5

    /// Whether an upload into `folder` may go ahead: the root always; else a
    /// folder seen lately, or one that holds keys now.
    func folderTakesUploads(_ folder: ItemPath) async throws -> Bool {
        if folder.isEmpty { return true }
        if foldersSeen.seenLately(try folderPrefix(folder), ttl: Self.folderSightingTTL) { return true }
        guard try await holdsKeys(below: folder) else { return false }
        sawFolder(folder)
        return true
    }

    /// Records that `folder` holds keys now (a listing showed one, an upload wrote one).
    func sawFolder(_ folder: ItemPath) {
        guard !folder.isEmpty, let prefix = try? folderPrefix(folder) else { return }
        foldersSeen.saw(prefix, ttl: Self.folderSightingTTL)
    }
}
