import Foundation
import NIOConcurrencyHelpers

/// Folders seen upstream lately, and when: a question about a folder's
/// existence that a burst of writes into it would ask once a file is asked
/// once a TTL instead, as a listing that young would be trusted.
///
/// Two users: a write of a new name into a folder whose listing is stale
/// asks whether the folder is still there (`Provider.lookAtTarget`; on S3
/// a HEAD and a LIST, half of the requests each such PUT made), and an S3
/// upload asks whether its folder still holds keys before it writes one
/// there (a LIST per file: on `rclone serve s3` a listing of the whole
/// folder, so 2,000 uploads into a folder of 10,000 objects took 43 s).
public struct Sightings<Key: Hashable & Sendable>: Sendable {
    private let seen = NIOLockedValueBox<[Key: Date]>([:])
    /// Past this many keys, sightings older than the TTL are dropped.
    private let pruneAt = 1024

    public init() {}

    /// Whether `key` was seen less than `ttl` seconds ago.
    public func seenLately(_ key: Key, ttl: TimeInterval, now: Date = Date()) -> Bool {
        guard let at = seen.withLockedValue({ $0[key] }) else { return false }
        return now.timeIntervalSince(at) < ttl
    }

    /// Records that `key` was seen now.
    public func saw(_ key: Key, ttl: TimeInterval, now: Date = Date()) {
        seen.withLockedValue { seen in
            seen[key] = now
            if seen.count > pruneAt { seen = seen.filter { now.timeIntervalSince($0.value) < ttl } }
        }
    }

    /// Forgets `key`: it was found gone.
    public func forget(_ key: Key) {
        seen.withLockedValue { _ = $0.removeValue(forKey: key) }
    }

    /// Forgets every sighting: something may have removed any of them.
    public func forgetAll() {
        seen.withLockedValue { $0.removeAll() }
    }
}
