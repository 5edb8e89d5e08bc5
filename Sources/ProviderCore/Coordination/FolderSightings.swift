import Foundation
import NIOConcurrencyHelpers

/// Folders that a write's stat found upstream lately, and when. A write of
/// a new name into a folder whose listing is stale asks whether the folder
/// is still there (`Provider.lookAtTarget`); within a listing's TTL of the
/// last such answer it takes that answer instead, as it would take a
/// listing that young. On S3 that question is a HEAD and a LIST: a burst
/// of new files into one stale folder asked it for every file, half of
/// the requests each PUT made.
struct FolderSightings: Sendable {
    private let seen = NIOLockedValueBox<[Int64: Date]>([:])
    /// Past this many folders, sightings older than the TTL are dropped.
    private let pruneAt = 1024

    /// Whether `folder` was seen upstream less than `ttl` seconds ago.
    func seenLately(_ folder: Int64, ttl: TimeInterval, now: Date = Date()) -> Bool {
        guard let at = seen.withLockedValue({ $0[folder] }) else { return false }
        return now.timeIntervalSince(at) < ttl
    }

    /// Records that a stat found `folder` upstream now.
    func saw(_ folder: Int64, ttl: TimeInterval, now: Date = Date()) {
        seen.withLockedValue { seen in
            seen[folder] = now
            if seen.count > pruneAt { seen = seen.filter { now.timeIntervalSince($0.value) < ttl } }
        }
    }

    /// Forgets `folder`: a stat found it gone, or a change removed it here.
    func forget(_ folder: Int64) {
        seen.withLockedValue { _ = $0.removeValue(forKey: folder) }
    }
}
