import Foundation
import Logging

/// Content policies (`ContentPolicy`): what is downloaded without a client
/// reading it. An `eager` item is fetched when the policy is set, when a
/// refresh sees a new or changed file below it, and by the background
/// refresh every `refresh_interval`; a `lazy` file that was local is
/// downloaded again when the upstream changes it; an `evict-on-change` one
/// stays a placeholder until read.
extension Provider {
    /// Fetches everything an eager item covers, one file at a time, logging
    /// how far it got; failures are logged and the rest goes on (a later
    /// read, or the next background refresh, fetches what is missing).
    /// Folders are listed when older than `maxAge` (the listing TTL unless
    /// said otherwise). A member that sets a policy of its own other than
    /// `eager` is left to that policy, with what is below it.
    func fetchEagerly(_ item: Item, maxAge: TimeInterval? = nil) async {
        let started = ContinuousClock.now
        var files = 0, bytes: Int64 = 0, failures = 0
        var pending: [Item] = [item]
        while let next = pending.popLast() {
            do {
                if next.isFolder {
                    guard try await refreshIfStale(next, maxAge: maxAge) else { continue }
                    try await forEachChildPage(of: next) { page in
                        let policies = try await index.effectivePolicies(of: page.map(\.id))
                        pending += page.filter { policies[$0.id]?.inherited != false || policies[$0.id]?.policy == .eager }
                    }
                } else if !next.isMaterialized {
                    bytes += try await fetchContent(next)
                    files += 1
                }
            } catch {
                failures += 1
                logger.warning("eager: cannot fetch an item", metadata: ["id": "\(next.id)", "error": "\(error)"])
            }
        }
        guard files > 0 || failures > 0 || maxAge == nil else { return }
        let path = (try? await index.path(of: item.id)).map(Self.display) ?? "?"
        let elapsed = ContinuousClock.now - started
        logger.info("eager \(path): fetched \(files) files, \(bytes) bytes in \(elapsed.components.seconds) s\(failures > 0 ? ", \(failures) failed" : "")")
    }

    /// After a refresh: downloads again, in the background, the files that
    /// were local and changed upstream, unless their policy is
    /// `evict-on-change`; and, when the refreshed folder is eager, its files
    /// that are not local (new ones, or ones changed while a read was going).
    func followContentPolicies(changed: [Int64], in folder: Item?) {
        // Unstructured, like a pin's fetch: the refresh that found the
        // changes is answered first, and a fetch cut short by a stop leaves
        // only tmp/, emptied at start.
        Task { await NamespaceClock.outsideChange { await fetchFollowingPolicies(changed: changed, in: folder) } }
    }

    private func fetchFollowingPolicies(changed: [Int64], in folder: Item?) async {
        do {
            var wanted = Set<Int64>()
            let policies = try await index.effectivePolicies(of: changed + (folder.map { [$0.id] } ?? []))
            wanted.formUnion(changed.filter { policies[$0]?.policy != .evictOnChange })
            if let folder, policies[folder.id]?.policy == .eager {
                try await forEachChildPage(of: folder) { page in
                    let files = page.filter { !$0.isFolder && !$0.isMaterialized }
                    let own = try await index.effectivePolicies(of: files.map(\.id))
                    wanted.formUnion(files.filter { own[$0.id]?.policy == .eager }.map(\.id))
                }
            }
            guard !wanted.isEmpty else { return }
            var files = 0, bytes: Int64 = 0
            for id in wanted.sorted() {
                // Gone, replaced, or read meanwhile: nothing to do.
                guard let item = try await index.item(id: id), !item.isFolder, !item.isMaterialized else { continue }
                do {
                    bytes += try await fetchContent(item)
                    files += 1
                } catch {
                    logger.warning("content policy: cannot download a changed file", metadata: ["id": "\(id)", "error": "\(error)"])
                }
            }
            if files > 0 { logger.info("content policy: downloaded \(files) new or changed files, \(bytes) bytes") }
        } catch {
            logger.warning("content policy: cannot follow a refresh", metadata: ["error": "\(error)"])
        }
    }

    /// Fetches a file's whole content as a read would; returns its size.
    private func fetchContent(_ file: Item) async throws -> Int64 {
        try await contents(of: file, at: try await index.path(of: file.id)).item.size
    }

    /// Refreshes every eager folder (listings older than `interval`) and
    /// fetches what is new or changed below it: one pass, an eager root
    /// under another eager folder left to that folder's walk.
    public func refreshEagerItems(olderThan interval: TimeInterval) async {
        do {
            let roots = try await index.eagerRoots(domain: domain)
            let above = try await index.effectivePolicies(of: roots.compactMap(\.parentID))
            for root in roots where root.parentID.flatMap({ above[$0]?.policy }) != .eager {
                await fetchEagerly(root, maxAge: interval)
            }
        } catch {
            logger.warning("eager refresh failed", metadata: ["error": "\(error)"])
        }
    }

    /// Runs `refreshEagerItems` every `refresh_interval` until cancelled.
    public func runEagerRefresh() async {
        while !Task.isCancelled {
            let interval = refreshInterval
            guard interval > 0 else {
                try? await Task.sleep(for: .seconds(5))
                continue
            }
            try? await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
            if Task.isCancelled { return }
            await refreshEagerItems(olderThan: interval)
        }
    }
}
