import Foundation
import Logging
import ProviderCore
import Testing

/// The cache is a cache: over its budget, the least recently read clean
/// content goes back to placeholders; pinned, locked and read content stays.
@Suite("Provider: eviction under a cache budget")
struct EvictionTests {
    /// Seven 100,000-byte files upstream (100 KiB on disk each); room for three.
    struct Fixture {
        let root: URL
        let provider: Provider

        init() async throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("evict-\(UUID().uuidString)")
            let upstream = root.appendingPathComponent("upstream")
            try FileManager.default.createDirectory(at: upstream, withIntermediateDirectories: true)
            for i in 0..<7 { try Data(repeating: UInt8(i), count: 100_000).write(to: upstream.appendingPathComponent("f\(i).bin")) }
            let index = try await TestIndex.open(in: root)
            provider = try Provider(domain: "files", store: FaultyStore(root: upstream), index: index,
                                    cacheFolder: root.appendingPathComponent("cache"), listingTTL: 600,
                                    budget: CacheBudget(maxBytes: 3 * 102_400), logger: Logger(label: "test"))
        }

        func item(_ i: Int) async throws -> Item { try #require(try await provider.item(at: ["f\(i).bin"])) }

        /// Reads as GET does (under a lease, which marks the read), then
        /// checks the budget.
        func read(_ i: Int) async throws {
            do {
                let item = try await item(i)
                let lease = provider.beginRead(item)
                _ = try await provider.contents(of: item, at: ["f\(i).bin"])
                withExtendedLifetime(lease) {}
            }
            await provider.enforceBudget()
        }

        func local() async throws -> [Int] {
            var result: [Int] = []
            for i in 0..<7 where try await item(i).isMaterialized { result.append(i) }
            return result
        }

        func cleanUp() { try? FileManager.default.removeItem(at: root) }
    }

    @Test("the least recently read files are evicted first, back to placeholders, and read again on demand")
    func leastRecentlyRead() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        for i in 0..<5 { try await f.read(i) }
        #expect(try await f.local() == [2, 3, 4])
        let status = try await f.provider.status()
        #expect(status.cache.bytes <= 3 * 102_400)
        // Read again: fetched anew, and now the most recent.
        try await f.read(2)
        try await f.read(0)
        #expect(try await f.local() == [0, 2, 4])
    }

    @Test("eager (pinned), locked and currently read files are never evicted")
    func keptFiles() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        for i in 0..<3 { try await f.read(i) }
        try await f.provider.changeProperties(of: try await f.item(0), [.contentPolicy(.eager)])
        let lock = try await f.provider.createLock(on: try await f.item(1), depthInfinity: false, exclusive: true,
                                                   ownerXML: nil, principal: "admin", timeout: 600)
        var lease: ReadLease? = f.provider.beginRead(try await f.item(2))
        for i in 3..<7 { try await f.read(i) }
        #expect(try await f.local().prefix(3) == [0, 1, 2], "kept through the pressure of four more files")

        // Let go of the lock and the read: they are the least recently read now,
        // and go one by one as room is needed.
        try await f.provider.unlock(token: lock.token)
        lease = nil
        _ = lease
        try await f.read(3)
        let afterUnlock = try await f.local()
        #expect(afterUnlock == [0, 2, 3], "\(afterUnlock)")
        try await f.read(4)
        #expect(try await f.local() == [0, 3, 4], "still eager: 0")
    }
}
