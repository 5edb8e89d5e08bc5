/// What applying upstream entries did to local content.
struct ListingEffects: Sendable {
    /// Ids whose cached content is stale or whose item is gone.
    var stale: [Int64] = []
    /// Files that were wholly local before the upstream changed them:
    /// the content policy says whether the new version is downloaded.
    var changedLocal: [Int64] = []
}
