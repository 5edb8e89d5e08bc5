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
        /// The oldest waiting files (at most `queueLimit`), with the bytes
        /// sent of those uploading now.
        public var queue: [Pending]
        /// Uploads given up after `upload_max_age` (kept here, never dropped).
        public var failed: [Failure]

        /// Files waiting that `queue` does not name.
        public var unlisted: Int { pending - failed.count - queue.count }
    }
    public struct Pending: Sendable, Codable, Equatable {
        public var path: String
        public var size: Int64
        /// Bytes sent so far; nil while it waits.
        public var sent: Int64?
        /// Earlier attempts, and why the last one failed.
        public var attempts: Int
        public var lastError: String?

        /// For people: "8.4 MB, uploading 45%", or "12 KB, waiting; 3
        /// attempts, last: upstream unavailable".
        public var summary: String {
            let size = ByteCountFormatter.string(fromByteCount: self.size, countStyle: .file)
            if let sent {
                return "\(size), uploading \(self.size == 0 ? 100 : Int(sent * 100 / self.size))%"
            }
            return "\(size), waiting" + (attempts == 0 ? "" : "; \(attempts) attempts, last: \(lastError ?? "?")")
        }
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

extension DomainStatus {
    /// How many waiting files the status lists by name.
    public static let queueLimit = 50

    /// What the index and the cache folder tell about a domain: the running
    /// server adds its upstream's health, the uploads' progress and the
    /// states in flight (`Provider.stateCounts`), and
    /// `davgate status --offline` reads the same from the state folder alone.
    public static func read(domain: String, upstream: String, index: MetadataIndex, cacheFolder: URL,
                            health: UpstreamHealth.Snapshot, sent: [Int64: Int64] = [:],
                            states: [ItemState.Name: Int]? = nil) async throws -> DomainStatus {
        try await read(domain: domain, upstream: upstream, index: index.store, cacheFolder: cacheFolder, health: health,
                       sent: sent, states: states)
    }

    static func read(domain: String, upstream: String, index: any IndexStore, cacheFolder: URL,
                     health: UpstreamHealth.Snapshot, sent: [Int64: Int64], states: [ItemState.Name: Int]?) async throws -> DomainStatus {
        let stateCounts = if let states { states } else { try await index.storedStateCounts(domain: domain) }
        let counts = MetadataIndex.ItemCounts(states: stateCounts, bytesListed: try await index.bytesListed(domain: domain))
        var conflicts: [Conflict] = []
        for id in try await index.items(in: .conflict, domain: domain) {
            conflicts.append(.init(path: Provider.display(try await index.path(of: id))))
        }
        let cacheUse = try await blocking { ContentCache.usage(of: cacheFolder) }
        let newest = try await index.newestEntries(domain: domain)
        var failures: [Failure] = []
        for entry in newest where entry.failed {
            failures.append(.init(path: Provider.display(try await index.path(of: entry.itemID)),
                                  error: entry.lastError ?? "", attempts: entry.attempts))
        }
        var queue: [Pending] = []
        for entry in newest.filter({ !$0.failed }).prefix(queueLimit) {
            queue.append(.init(path: Provider.display(try await index.path(of: entry.itemID)), size: entry.size,
                               sent: sent[entry.itemID], attempts: entry.attempts, lastError: entry.lastError))
        }
        return DomainStatus(name: domain, upstream: upstream, health: health, items: counts,
                            cache: .init(bytes: cacheUse.bytes, files: cacheUse.files),
                            uploads: .init(inFlight: sent.count, pending: newest.count,
                                           pendingBytes: newest.reduce(0) { $0 + $1.size }, queue: queue, failed: failures),
                            conflicts: conflicts)
    }
}

extension Provider {
    public func status() async throws -> DomainStatus {
        let sent = uploadProgress.withLockedValue { $0.mapValues(\.bytesSent) }
        var status = try await DomainStatus.read(domain: domain, upstream: store.displayName, index: index, cacheFolder: cache.folder,
                                                 health: health.snapshot, sent: sent, states: try await stateCounts())
        status.uploads.inFlight += uploadsThrough.withLockedValue { $0 }
        return status
    }

    /// Uploads running now, write-back's and write-through's.
    public var uploadsRunning: Int {
        uploadProgress.withLockedValue { $0.count } + uploadsThrough.withLockedValue { $0 }
    }
}
