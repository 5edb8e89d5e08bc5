/// How a file's content is kept: the File Provider's download policies, set
/// on a file or a folder (`g:content-policy`) and inherited by everything
/// below that sets none of its own.
public enum ContentPolicy: String, Sendable, CaseIterable {
    /// The default: content is fetched on first read and may be evicted. A
    /// local copy the upstream changes is downloaded again in the background,
    /// as the File Provider does for a materialized item, so what was read
    /// once stays readable offline.
    case lazy
    /// Content is fetched at once and kept: every new or changed file below
    /// is downloaded when a refresh sees it, nothing is evicted, and the
    /// folder is refreshed every `refresh_interval` without a client asking.
    /// The earlier `g:pinned` is this.
    case eager
    /// A local copy the upstream changes is dropped, neither kept stale nor
    /// downloaded again: for large files read once.
    case evictOnChange = "evict-on-change"

    /// The values a client may set, as the error for any other names them.
    public static let spelled = allCases.map(\.rawValue).joined(separator: ", ")
}

/// An item's policy as it applies: its own, or the nearest folder's above
/// it, or `lazy` when none sets one.
public struct EffectivePolicy: Sendable, Equatable {
    public var policy: ContentPolicy
    /// Whether the policy comes from a folder above rather than the item.
    public var inherited: Bool

    public init(_ policy: ContentPolicy, inherited: Bool) {
        self.policy = policy
        self.inherited = inherited
    }
}
