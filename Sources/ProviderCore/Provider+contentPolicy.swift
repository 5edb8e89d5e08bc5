import Foundation
import Logging

/// Pinning (the File Provider's "keep downloaded"): a pinned item's content
/// is fetched at once and kept through eviction.
extension Provider {
    /// Fetches everything the pin covers, one file at a time, logging how
    /// far it got; failures are logged and the rest goes on (a later read
    /// fetches what is missing).
    func fetchPinned(_ item: Item) async {
        let started = ContinuousClock.now
        var files = 0, bytes: Int64 = 0, failures = 0
        var pending: [Item] = [item]
        while let next = pending.popLast() {
            do {
                let path = try await index.path(of: next.id)
                if next.isFolder {
                    guard try await refreshIfStale(next) else { continue }
                    var after: String?
                    while true {
                        let page = try await children(of: next, after: after)
                        guard let last = page.last else { break }
                        after = last.name
                        pending += page
                    }
                } else if !next.isMaterialized {
                    let (fetched, _) = try await contents(of: next, at: path)
                    files += 1
                    bytes += fetched.size
                }
            } catch {
                failures += 1
                logger.warning("pinning: cannot fetch an item", metadata: ["id": "\(next.id)", "error": "\(error)"])
            }
        }
        let path = (try? await index.path(of: item.id)).map(Self.display) ?? "?"
        let elapsed = ContinuousClock.now - started
        logger.info("pinned \(path): fetched \(files) files, \(bytes) bytes in \(elapsed.components.seconds) s\(failures > 0 ? ", \(failures) failed" : "")")
    }
}
