import Foundation
import Logging

/// When a cached file is compared with the upstream before it is served.
public enum Revalidation: String, Sendable, CaseIterable {
    /// When its folder's listing is refreshed (every listing TTL): cheap,
    /// and a file changed upstream is served stale for at most the TTL.
    case listing
    /// Before every read, with one upstream stat: never stale, one round
    /// trip more per GET.
    case always
}

extension Provider {
    /// The item as the upstream has it now, when the policy asks for a check
    /// before serving: a changed version drops the cached copy (the read then
    /// fetches the new one), a vanished file is gone (nil). When the upstream
    /// cannot be reached, what is known is served.
    public func revalidated(_ item: Item, at path: ItemPath) async throws -> Item? {
        guard revalidation == .always, item.kind == .file, item.cachedVersion != nil else { return item }
        let entry: UpstreamEntry?
        do {
            entry = try await store.stat(path)
        } catch let error as UpstreamError {
            logger.warning("cannot revalidate; serving the cached copy", metadata: ["path": "\(Self.display(path))", "error": "\(error)"])
            return item
        }
        guard let entry, !entry.isFolder else {
            cache.removeLater(items: try await index.delete(id: item.id))
            return nil
        }
        guard entry.version != item.upstreamVersion || entry.size != item.size else { return item }
        logger.info("changed upstream; the cached copy is dropped", metadata: ["path": "\(Self.display(path))"])
        let updated = try await index.updateContent(id: item.id, entry: entry, event: .upstreamChanged)
        cache.remove([item.id])
        return updated
    }
}
