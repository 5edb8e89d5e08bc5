import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// Two davgate instances as the provider sees them: providers `a` and
/// `b` on one PostgreSQL index (whatever `DAVGATE_TEST_INDEX` says) over one
/// upstream folder, each with its own cache folder and holdings, and its
/// own `FaultyStore` to break or watch; `open` makes another one on the
/// same index. Write-through, the cluster's only write mode.
struct SharedIndexInstances {
    let root: URL
    let upstream: URL
    let a: Instance
    let b: Instance

    struct Instance {
        let store: FaultyStore
        let provider: Provider
        let holdings: URL

        /// Fetches of this instance from the upstream so far.
        var fetches: Int { store.fetchCount.withLockedValue { $0 } }

        func item(_ name: String) async throws -> Item { try #require(try await provider.item(at: [name])) }

        /// Reads the file as a GET does: its bytes, and whether they came from the cache.
        func read(_ name: String) async throws -> String {
            let item = try await item(name)
            let (_, file, lease) = try await provider.contents(of: item, at: [name])
            defer { withExtendedLifetime(lease) {} }
            return try String(contentsOf: file, encoding: .utf8)
        }

        /// A PUT of `text`.
        @discardableResult
        func put(_ text: String, at name: String) async throws -> Item {
            let file = provider.newWriteFile()
            try text.write(to: file, atomically: false, encoding: .utf8)
            return try await provider.write(WriteRequest(path: [name], file: file, size: Int64(text.utf8.count), conditions: .unconditional)).item
        }

        func holdsFile(_ name: String) async throws -> Bool {
            provider.cache.hasFile(for: try await item(name).id)
        }
    }

    /// Listings older than `ttl` are refreshed.
    let ttl: TimeInterval

    init(ttl: TimeInterval) async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("instances-\(UUID().uuidString)")
        upstream = root.appendingPathComponent("upstream")
        self.ttl = ttl
        try FileManager.default.createDirectory(at: upstream, withIntermediateDirectories: true)
        a = try await Self.open("a", root: root, upstream: upstream, ttl: ttl)
        b = try await Self.open("b", root: root, upstream: upstream, ttl: ttl)
    }

    /// An instance named `name`: its cache and holdings in their own
    /// folder; opened again, it finds what it left there.
    static func open(_ name: String, root: URL, upstream: URL, ttl: TimeInterval, budget: CacheBudget = CacheBudget()) async throws -> Instance {
        let folder = root.appendingPathComponent(name)
        let holdings = folder.appendingPathComponent("holdings.sqlite")
        let store = FaultyStore(root: upstream)
        let index = try await TestIndex.openPostgres(in: root, holdings: holdings)
        let provider = try Provider(domain: "files", store: store, index: index, cacheFolder: folder.appendingPathComponent("cache"),
                                    listingTTL: ttl, budget: budget, writeMode: .through, logger: Logger(label: "test.\(name)"))
        return Instance(store: store, provider: provider, holdings: holdings)
    }

    func open(_ name: String, budget: CacheBudget = CacheBudget()) async throws -> Instance {
        try await Self.open(name, root: root, upstream: upstream, ttl: ttl, budget: budget)
    }

    func write(_ text: String, _ name: String) throws {
        try text.write(to: upstream.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }
}
