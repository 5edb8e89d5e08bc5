import Foundation
import Logging
import NIOConcurrencyHelpers

/// What the provider knows of its upstream's change feed while it runs.
struct UpstreamFeedProgress: Sendable {
    /// The store has no feed (asked once per start).
    var unsupported = false
    /// When the feed last brought every covered listing up to date.
    var refreshedAt: ContinuousClock.Instant?
}

/// Keeping listings current through the upstream's change feed (another
/// davgate's sync-collection): instead of a PROPFIND of every stale folder,
/// one REPORT per `listing_ttl` for the whole tree says what changed, and
/// every listing read since the feed's position was taken is fresh again.
///
/// The position is taken before anything is listed, so a listing never
/// predates it: a change is in the listing, in the feed, or in both
/// (applying it twice changes nothing). Folders never listed are listed
/// once, when someone opens them. A page read while davgate changed the
/// namespace itself is not applied, as with listings, and the position
/// stays where it was: the next refresh reads it again.
extension Provider {
    static let feedPageSize = 1000

    /// Brings the listings the feed covers up to date, at most once per
    /// `listing_ttl`. False when the store has no feed, the upstream
    /// refused or failed, or davgate's own changes interrupted: the caller
    /// lists the folder as it would without a feed.
    func refreshedThroughFeed() async -> Bool {
        let progress = upstreamFeed.withLockedValue { $0 }
        // listing_ttl = 0 asks for a listing on every look: nothing the feed
        // says could make one fresh.
        if progress.unsupported || listingTTL <= 0 { return false }
        if let at = progress.refreshedAt, ContinuousClock.now - at < .milliseconds(Int64(listingTTL * 1000)) { return true }
        return (try? await feedRefreshes.run(0) { [self] in await refreshThroughFeed() }) ?? false
    }

    private func refreshThroughFeed() async -> Bool {
        let started = ContinuousClock.now
        do {
            guard let state = try await index.upstreamFeed(domain: domain) else { return try await startFollowingFeed() }
            var position = state.position
            var changes = 0
            while true {
                let before = try await namespaceReading()
                let page = try await upstream { try await store.changes(since: position, limit: Self.feedPageSize) }
                let applied = try await listingApplication.withLock { () -> Bool in
                    guard namespaceClock.undisturbed(since: before) else { return false }
                    let effects = try await index.applyUpstreamChanges(domain: domain, present: page.present, removed: page.removed,
                                                                       position: page.position, last: !page.more,
                                                                       namespace: before.shared)
                    cache.remove(effects.stale)
                    followContentPolicies(changed: effects.changedLocal, in: nil)
                    return true
                }
                guard applied else { return false }
                changes += page.present.count + page.removed.count
                position = page.position
                if !page.more { break }
            }
            upstreamFeed.withLockedValue { $0.refreshedAt = started }
            if changes > 0 { logger.info("upstream feed: \(changes) changes applied") }
            return true
        } catch UpstreamFeedError.positionRefused {
            logger.warning("upstream feed: the upstream no longer knows davgate's position; listings are read again")
            try? await index.forgetUpstreamFeed(domain: domain)
            return false
        } catch UpstreamFeedError.unsupported {
            noFeed()
            return false
        } catch is NamespaceChangedWhileListing {
            // Another instance changed the namespace meanwhile: as a page
            // found stale here, listed folder by folder this time.
            return false
        } catch {
            logger.warning("upstream feed: refresh failed, listing folder by folder meanwhile", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Takes the feed's position now: listings read from here on are
    /// covered by it. Nothing is fresh yet, so the caller lists.
    private func startFollowingFeed() async throws -> Bool {
        let since = Date(), started = ContinuousClock.now
        guard let position = try await upstream({ try await store.feedPosition() }) else {
            noFeed()
            return false
        }
        try await index.startUpstreamFeed(domain: domain, at: .init(position: position, coversSince: since))
        // Nothing happened since the position that a REPORT could tell.
        upstreamFeed.withLockedValue { $0.refreshedAt = started }
        logger.info("upstream feed: following \(store.displayName)'s changes from \(position)")
        return false
    }

    private func noFeed() {
        upstreamFeed.withLockedValue { $0.unsupported = true }
        logger.debug("upstream feed: \(store.displayName) has none; listing folder by folder")
    }
}
