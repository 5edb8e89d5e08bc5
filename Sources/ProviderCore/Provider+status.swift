import NIOConcurrencyHelpers
import Foundation

/// A domain's state as `davgate status` and the status page show it.
public struct DomainStatus: Sendable, Codable, Equatable {
    public struct Cache: Sendable, Codable, Equatable {
        /// Bytes of content files in the cache folder (with fetches and
        /// writes in progress).
        public var bytes: Int64
        public var files: Int
    }
    public struct Uploads: Sendable, Codable, Equatable {
        /// Uploads running now.
        public var inFlight: Int
        /// Write-back: files written here waiting for their upload, and their bytes.
        public var pending: Int
        public var pendingBytes: Int64
        /// Uploads given up after `upload_max_age` (kept here, never dropped).
        public var failed: [Failure]
    }
    public struct Failure: Sendable, Codable, Equatable {
        public var path: String
        public var error: String
        public var attempts: Int
    }
    public struct Conflict: Sendable, Codable, Equatable {
        /// The kept-both copy holding our edit.
        public var path: String
    }

    public var name: String
    public var upstream: String
    public var health: UpstreamHealth.Snapshot
    public var items: MetadataIndex.ItemCounts
    public var cache: Cache
    public var uploads: Uploads
    public var conflicts: [Conflict]
}

extension Provider {
    public func status() async throws -> DomainStatus {
        let counts = try await index.counts(domain: domain)
        var conflicts: [DomainStatus.Conflict] = []
        for id in try await index.items(withProperty: Self.namespace, "conflict-of", domain: domain) {
            conflicts.append(.init(path: Self.display(try await index.path(of: id))))
        }
        let cache = self.cache
        let cacheUse = try await blocking { cache.usage() }
        let newest = try await index.newestEntries(domain: domain)
        var failures: [DomainStatus.Failure] = []
        for entry in newest where entry.failed {
            failures.append(.init(path: Self.display(try await index.path(of: entry.itemID)),
                                  error: entry.lastError ?? "", attempts: entry.attempts))
        }
        return DomainStatus(name: domain, upstream: store.displayName, health: health.snapshot, items: counts,
                            cache: .init(bytes: cacheUse.bytes, files: cacheUse.files),
                            uploads: .init(inFlight: uploadSlots.inFlight, pending: newest.count,
                                           pendingBytes: newest.reduce(0) { $0 + $1.size }, failed: failures),
                            conflicts: conflicts)
    }
}
