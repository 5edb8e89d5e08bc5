import Foundation

/// Where the index has read the upstream's change feed up to, and since
/// when listings are kept current by it.
struct UpstreamFeedState: Sendable, Equatable {
    let position: String
    /// Listings read at or after this moment are covered by the feed.
    let coversSince: Date
}
