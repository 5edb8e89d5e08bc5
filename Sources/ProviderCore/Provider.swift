import CoreMetrics
import Foundation
import Logging
import NIOConcurrencyHelpers

/// One domain (an `NSFileProviderDomain`): the File Provider API that the
/// WebDAV handlers call, bridging the index, the content cache and one
/// upstream store.
///
/// Reads go to the index and the cache and never serialize; namespace
/// changes run one at a time per domain so the upstream and the index change
/// together, upstream first, so a failure on either side leaves both as they
/// were.
public final class Provider: Sendable {
    public let domain: String
    /// Not public: the provider's methods keep the upstream, the index and
    /// the cache in step, so no caller reads an item, a lock or a file
    /// past them.
    let store: any UpstreamStore
    /// The store with the trash folder in it (`store` hides it); only the
    /// trash's own methods use it.
    let trashStore: any UpstreamStore
    /// What the domain keeps of deletions; nil when it destroys them.
    public let trashPolicy: TrashPolicy?
    /// How many earlier contents of a file it keeps; nil for none.
    public let versionPolicy: VersionPolicy?
    /// When the trash's entries were last compared with the upstream.
    let trashListedAt = NIOLockedValueBox<Date?>(nil)
    /// Folders below `.davgate/` made upstream (`makeReservedFolders`).
    let reservedFoldersMade = NIOLockedValueBox<Set<ItemPath>>([])
    /// Upstream contents already kept as versions (`keepVersion`), so a
    /// retried upload does not keep the same one again.
    let versionsKept = NIOLockedValueBox<Set<VersionKey>>([])
    /// A budget expiry is waiting to run (one at a time after a burst of DELETEs).
    let trashExpiryQueued = NIOLockedValueBox(BackgroundPass())
    /// The same for `versions_budget`, after writes that kept versions.
    let versionsExpiryQueued = NIOLockedValueBox(BackgroundPass())
    let index: any IndexStore
    let cache: ContentCache
    /// Uploads arriving in pieces (`Provider+stagedUploads`), and the
    /// mutexes that apply each upload's pieces one at a time, by stripe.
    let staging: UploadStaging
    let stagingLocks = (0..<32).map { _ in AsyncMutex() }
    /// How long a staged upload nobody adds to is kept.
    public let uploadExpiry: TimeInterval
    /// What a reload may change while the provider runs (`retune`).
    let tuning: NIOLockedValueBox<ProviderTuning>
    let logger: Logger
    let metrics: ProviderMetrics
    let health = UpstreamHealth()
    /// Whether a PUT waits for its upload (through) or the journal's (back).
    /// The initializer defaults to write-through, since write-back needs
    /// `runUploads()` running beside the provider; `davgate serve` starts it,
    /// and there the configuration's default is write-back.
    public let writeMode: WriteMode
    /// Where clients' locks on files are mirrored (`mirror_locks`), if anywhere.
    public let lockMirror: (any LockMirror)?
    /// Uploads side by side up to `uploads.parallelism`, one per item, so
    /// an item's uploads stay in order and a DELETE can wait for its own.
    let uploadSlots: UploadSlots
    /// Outbox files of finished uploads, deleted after the next index sync.
    let settledOutbox = SettledOutbox()
    /// When the last write-back write came: uploads make way for a burst.
    let writeActivity = WriteActivity()
    /// Quarter-second waits of the upload loop after a journal read that
    /// stopped at its limit, for the tests: a backlog drains without them.
    let uploadWaitsAfterCutRead = NIOLockedValueBox(0)
    /// The uploads running now and their bytes sent, for `davgate status`.
    let uploadProgress = NIOLockedValueBox<[Int64: UploadProgress]>([:])
    /// Write-through uploads running now (a PUT waiting for the upstream).
    let uploadsThrough = NIOLockedValueBox(0)
    /// Readers by item, and when each item was last read.
    let reads = NIOLockedValueBox(ReadTracking())
    /// One eviction pass at a time.
    let evictions = AsyncMutex()

    /// When a cached file is compared with the upstream before it is served.
    public let revalidation: Revalidation
    /// Whether an upstream folder's version changes whenever anything in it
    /// changes (Nextcloud and ownCloud folder ETags), so an unchanged version
    /// proves an unchanged listing.
    public let trustFolderVersions: Bool
    /// Downloads in flight and sparse files, by item id: one download per
    /// item however many readers.
    let fetches = NIOLockedValueBox(Fetches())
    let listings = SingleFlight<Int64, Bool>()
    /// The upstream's change feed, when it has one (`Provider+upstreamFeed`).
    let upstreamFeed = NIOLockedValueBox(UpstreamFeedProgress())
    let feedRefreshes = SingleFlight<Int, Bool>()
    let mutations = AsyncMutex()
    /// Installs of a cache file that a write-back write may be racing, one
    /// at a time: a write's own (a large write's outbox file, a small
    /// write's bytes over an older file), a first read's of bytes still in
    /// the journal, an upload's of the file it made, a fetch's, and an
    /// eviction's move aside and back. Each decides on what the index says
    /// under it, so none can put back bytes a newer write replaced
    /// (`Provider+journaledContent`).
    let contentInstalls = AsyncMutex()
    /// Moved by every namespace change; a listing fetched while it moved is
    /// not applied, so a refresh can never undo a concurrent change.
    let namespaceClock = NamespaceClock()
    /// A refresh's check of the generation with the application of its
    /// listing, and an upload's bump of it once the upstream took the
    /// bytes, one at a time: a listing read before an upload landed is
    /// either applied before the upload is recorded or not at all, so it can
    /// never set an item back to the version before davgate's own upload
    /// (whose next write would then conflict with that upload; found by
    /// scripts/soak).
    let listingApplication = AsyncMutex()
    /// Folders, by id, that a write's stat found upstream lately.
    let folderSightings = Sightings<Int64>()

    public init(domain: String, store: any UpstreamStore, index: MetadataIndex, cacheFolder: URL, listingTTL: TimeInterval,
                revalidation: Revalidation = .listing, trustFolderVersions: Bool = false,
                budget: CacheBudget = CacheBudget(), writeMode: WriteMode = .through, uploads: UploadPolicy = UploadPolicy(),
                lockMirror: (any LockMirror)? = nil, refreshInterval: TimeInterval = 300, trash: TrashPolicy? = nil,
                versions: VersionPolicy? = nil, uploadExpiry: TimeInterval = 86_400, logger: Logger) throws {
        self.domain = domain
        self.store = ReservedNameFilter(base: store)
        self.trashStore = store
        self.trashPolicy = trash
        self.versionPolicy = versions.flatMap { $0.keep > 0 ? $0 : nil }
        self.index = index.store
        self.cache = try ContentCache(folder: cacheFolder)
        self.staging = try UploadStaging(cacheFolder: cacheFolder)
        self.uploadExpiry = uploadExpiry
        self.tuning = NIOLockedValueBox(ProviderTuning(listingTTL: listingTTL, budget: budget, uploads: uploads,
                                                            refreshInterval: refreshInterval))
        self.revalidation = revalidation
        self.trustFolderVersions = trustFolderVersions
        self.writeMode = writeMode
        self.uploadSlots = UploadSlots(limit: uploads.parallelism)
        self.lockMirror = lockMirror
        self.metrics = ProviderMetrics(domain: domain)
        self.logger = logger
    }

    public func root() async throws -> Item {
        try await index.root(domain: domain)
    }

    /// Resolves a path, refreshing each folder on the way whose listing is
    /// older than the TTL; nil when nothing is there.
    public func item(at path: ItemPath) async throws -> Item? {
        // The hot path: one read of the whole chain, answered from it when
        // every folder looked into is fresh (no upstream, no second read).
        let chain = try await index.chain(domain: domain, path: path)
        if !chain.isEmpty {
            let looked = chain.prefix(min(chain.count, path.count))
            if looked.allSatisfy({ $0.isFolder && isFresh($0) }) {
                if chain.count == path.count + 1 { return chain.last }
                // Stopped early below a fresh folder: the name is not there.
                if let last = chain.last, last.isFolder, isFresh(last) { return nil }
            }
        }
        var current = try await root()
        for name in path {
            guard current.isFolder else { return nil }
            guard try await refreshIfStale(current) else { return nil }
            guard let child = try await index.child(of: current.id, named: name) else { return nil }
            current = child
        }
        return current
    }

    /// Whether a folder's listing is younger than `maxAge` (the listing TTL
    /// unless said otherwise).
    func isFresh(_ folder: Item, maxAge: TimeInterval? = nil) -> Bool {
        guard let listed = folder.listedAt else { return false }
        return Date().timeIntervalSince(listed) < (maxAge ?? listingTTL)
    }

    /// One page of a folder's children, in name order.
    public func children(of folder: Item, after name: String? = nil, limit: Int = 500) async throws -> [Item] {
        try await index.children(of: folder.id, after: name, limit: limit)
    }

    /// Every child of a folder as the index holds it, a page at a time, in
    /// name order: a folder of any size without holding it whole.
    func forEachChildPage(of folder: Item, _ body: ([Item]) async throws -> Void) async throws {
        var after: String?
        while true {
            let page = try await children(of: folder, after: after)
            guard let last = page.last else { return }
            after = last.name
            try await body(page)
        }
    }

    /// Brings a folder's listing up to date when it is older than the TTL
    /// (or `maxAge`, for the background refresh of eager folders). Returns
    /// false when the folder no longer exists upstream. When the upstream
    /// cannot be reached the last known listing keeps being served. Files
    /// the refresh finds changed or new are then downloaded in the
    /// background as their content policy asks.
    @discardableResult
    public func refreshIfStale(_ folder: Item, maxAge: TimeInterval? = nil) async throws -> Bool {
        if isFresh(folder, maxAge: maxAge) { return true }
        // One REPORT for the whole tree, when the upstream has a feed.
        if await refreshedThroughFeed(), let current = try await index.item(id: folder.id), isFresh(current, maxAge: maxAge) { return true }
        return try await listings.run(folder.id) { [self] in try await index.withListingTurn(folder: folder.id) { waited in
            // Another instance listed it meanwhile: its listing serves here too.
            if waited, let current = try await index.item(id: folder.id), isFresh(current, maxAge: maxAge) { return true }
            let path = try await index.path(of: folder.id)
            var before = try await namespaceReading(of: folder.id)
            // A folder never listed has no last listing to serve while a
            // change runs: it waits for the change, then lists.
            if !before.isQuiet && folder.listedAt == nil {
                before = try await NamespaceClock.quietReading { try await namespaceReading(of: folder.id) }
            }
            let pass = Int64.random(in: 1...Int64.max)
            let changedLocal = NIOLockedValueBox<[Int64]>([])
            let version: String?
            do {
                if try await unchangedSinceListed(folder, at: path) {
                    try await index.markListed(id: folder.id)
                    return true
                }
                metrics.listings.increment()
                version = try await upstream {
                    try await store.listPages(path) { entries in
                        let changed = try await applyPage(entries, of: folder, pass: pass, since: before)
                        changedLocal.withLockedValue { $0 += changed }
                    }
                }
            } catch ProviderError.upstream(.notFound) where !folder.isRoot {
                if namespaceClock.undisturbed(since: before), try await index.namespaceStamp(domain: domain) == before.shared {
                    cache.removeLater(items: try await index.delete(id: folder.id))
                }
                return false
            } catch ProviderError.upstream(let error) {
                // Never listed: there is no last known listing to serve, and
                // an empty one would answer 404 for what may well be there.
                guard folder.listedAt != nil else { throw ProviderError.upstream(error) }
                logger.warning("listing refresh failed, serving the last known listing", metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
                return true
            } catch is NamespaceChangedWhileListing {
                // The pages so far stand; the next read lists again.
                metrics.listingsDiscarded.increment()
                return true
            }
            do {
                try await listingApplication.withLock {
                    guard namespaceClock.undisturbed(since: before) else {
                        metrics.listingsDiscarded.increment()
                        return
                    }
                    cache.remove(try await index.finishListing(folder: folder.id, pass: pass,
                                                               version: trustFolderVersions ? version : nil, namespace: before.shared))
                }
            } catch is NamespaceChangedWhileListing {
                // A change reaching the folder ran meanwhile, here or on
                // another instance: no sweep; the pages applied stand, and
                // the next read lists again.
                metrics.listingsDiscarded.increment()
                return true
            }
            followContentPolicies(changed: changedLocal.withLockedValue { $0 }, in: folder)
            return true
        } }
    }

    /// Applies one page of a refresh, unless the namespace changed here
    /// since the refresh began: its pages may predate that change. Returns
    /// the files that were local and changed.
    private func applyPage(_ entries: [UpstreamEntry], of folder: Item, pass: Int64, since before: NamespaceClock.Reading) async throws -> [Int64] {
        try await listingApplication.withLock {
            guard namespaceClock.undisturbed(since: before) else { throw NamespaceChangedWhileListing() }
            let effects = try await index.applyListingPage(folder: folder.id, domain: domain, entries: entries, pass: pass,
                                                           namespace: before.shared)
            cache.remove(effects.stale)
            return effects.changedLocal
        }
    }

    /// With trusted folder versions: whether the folder's version upstream is
    /// the one its listing was read at (one cheap stat instead of a listing).
    private func unchangedSinceListed(_ folder: Item, at path: ItemPath) async throws -> Bool {
        guard trustFolderVersions, let known = try await index.listedVersion(of: folder.id) else { return false }
        return try await upstream { try await store.stat(path) }?.version == known
    }

    /// Runs a namespace change: one at a time per domain, and marked so that
    /// concurrent listing refreshes discard what they fetched.
    /// With a shared index the change also moves the index's clock, so
    /// other instances' refreshes discard theirs too.
    /// `scope`: what the change may alter until it confines itself further
    /// (`NamespaceClock.confine`); everything unless the caller knows.
    func mutate<T: Sendable>(confinedTo scope: NamespaceClock.Scope = .everything, expectingSync: Bool = false,
                             _ body: () async throws -> T) async throws -> T {
        try await coordinated(expectingSync: expectingSync) {
            try await namespaceClock.change(confinedTo: scope) {
                try await index.moveNamespaceClock(domain: domain, .changeBegan)
                let outcome: Result<T, any Error>
                do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
                do {
                    try await index.moveNamespaceClock(domain: domain, .changeEnded)
                } catch {
                    // Left odd, the clock is closed by the next change or
                    // reading (`namespaceStamp`); the change itself stands.
                    logger.warning("could not mark a namespace change finished in the shared index", metadata: ["error": "\(error)"])
                }
                return try outcome.get()
            }
        }
    }

    /// The namespace clock's reading, with the shared index's clock when
    /// there is one: what a listing refresh of `folder` (nil: of the whole
    /// domain) takes before asking the upstream.
    func namespaceReading(of folder: Int64? = nil) async throws -> NamespaceClock.Reading {
        namespaceClock.read(shared: try await index.namespaceStamp(domain: domain), folder: folder)
    }

    /// Called once the upstream took an upload into `folder` outside a
    /// namespace change (which bumps the generation itself), before the
    /// index records it. nil: a folder not known, taken as everything.
    func upstreamChanged(in folder: Int64?) async {
        try? await listingApplication.withLock {
            namespaceClock.tick(.members(of: folder))
            do {
                try await index.moveNamespaceClock(domain: domain, .tick)
            } catch {
                logger.warning("could not move the shared index's namespace clock after an upload", metadata: ["error": "\(error)"])
            }
        }
    }

    /// A path as logs show it.
    public static func display(_ path: ItemPath) -> String { "/" + path.joined(separator: "/") }

    /// Calls the store, turning its errors into provider errors and keeping
    /// the upstream's health for the status page.
    func upstream<T>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            health.succeeded()
            return result
        } catch let error as UpstreamError {
            health.failed(error)
            if health.snapshot.failing { metrics.upstreamErrors.increment() }
            throw ProviderError.upstream(error)
        }
    }

    public func quota() async throws -> UpstreamQuota? {
        try await upstream { try await store.quota() }
    }
}

/// A refresh stopped because davgate changed the folder's namespace meanwhile.
struct NamespaceChangedWhileListing: Error {}
