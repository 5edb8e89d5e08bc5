import Foundation
import NIOConcurrencyHelpers

/// The settings of a domain that a reload changes while it serves (SIGHUP):
/// how long listings are trusted, how much the cache may hold, and how the
/// journal uploads. Everything else about a domain (its upstream, write
/// mode, revalidation) is fixed for the provider's life.
public struct ProviderTuning: Sendable, Equatable {
    /// How long a folder listing is trusted before it is refreshed.
    public var listingTTL: TimeInterval
    /// How much the cache may hold.
    public var budget: CacheBudget
    public var uploads: UploadPolicy
    /// How often eager folders are refreshed in the background (0: never).
    public var refreshInterval: TimeInterval

    public init(listingTTL: TimeInterval, budget: CacheBudget, uploads: UploadPolicy, refreshInterval: TimeInterval = 300) {
        self.listingTTL = listingTTL
        self.budget = budget
        self.uploads = uploads
        self.refreshInterval = refreshInterval
    }
}

extension Provider {
    public var listingTTL: TimeInterval { tuning.withLockedValue { $0.listingTTL } }
    public var budget: CacheBudget { tuning.withLockedValue { $0.budget } }
    public var uploads: UploadPolicy { tuning.withLockedValue { $0.uploads } }
    public var refreshInterval: TimeInterval { tuning.withLockedValue { $0.refreshInterval } }

    /// Takes new settings from the next request, refresh or upload on:
    /// a shorter TTL makes listings stale at once, a smaller budget evicts
    /// now, a raised upload parallelism starts the waiting uploads.
    /// - Returns: the names of the settings that changed, for the log.
    @discardableResult
    public func retune(_ new: ProviderTuning) -> [String] {
        let old = tuning.withLockedValue { old in
            defer { old = new }
            return old
        }
        var changed: [String] = []
        if old.listingTTL != new.listingTTL { changed.append("listing_ttl") }
        if old.refreshInterval != new.refreshInterval { changed.append("refresh_interval") }
        if old.budget.maxBytes != new.budget.maxBytes { changed.append("cache_budget") }
        if old.budget.minFreeBytes != new.budget.minFreeBytes { changed.append("min_free_disk") }
        if old.uploads.quietDelay != new.uploads.quietDelay { changed.append("upload_delay") }
        if old.uploads.maxAge != new.uploads.maxAge { changed.append("upload_max_age") }
        if old.uploads.dirtyBudget != new.uploads.dirtyBudget { changed.append("dirty_budget") }
        if old.uploads.parallelism != new.uploads.parallelism {
            changed.append("upload_parallelism")
            uploadSlots.setLimit(new.uploads.parallelism)
        }
        if old.budget != new.budget, new.budget.isLimited {
            Task { await enforceBudget() }
        }
        return changed
    }
}
