import DavgateTestSupport
import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// Two providers on one PostgreSQL index over one upstream folder, each
/// with a cache of its own: two davgate instances as the provider sees
/// them. Always on PostgreSQL, whatever `DAVGATE_TEST_INDEX` says.
struct Instances {
    let root: URL
    let upstream: URL
    let storeA: FaultyStore
    let storeB: FaultyStore
    let a: Provider
    let b: Provider

    init(ttl: TimeInterval = 0) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pi-\(UUID().uuidString)")
        self.root = root
        upstream = root.appendingPathComponent("upstream")
        try FileManager.default.createDirectory(at: upstream, withIntermediateDirectories: true)
        let url = try await SharedPostgres.shared.database(for: root.lastPathComponent)
        func instance(_ name: String, store: any UpstreamStore) async throws -> Provider {
            let index = try await MetadataIndex(postgres: try PostgresLocation(url: url), holdings: root.appendingPathComponent("holdings-\(name).sqlite"),
                                                logger: Logger(label: "instance-\(name)"))
            return try Provider(domain: "files", store: store, index: index, cacheFolder: root.appendingPathComponent("cache-\(name)"),
                                listingTTL: ttl, writeMode: .through, logger: Logger(label: "instance-\(name)"))
        }
        storeA = FaultyStore(root: upstream)
        a = try await instance("a", store: storeA)
        storeB = FaultyStore(root: upstream)
        b = try await instance("b", store: storeB)
    }

    /// A PUT of `text` through `provider`.
    func put(_ text: String, at path: ItemPath, through provider: Provider) async throws -> Item {
        let file = provider.newWriteFile()
        try text.write(to: file, atomically: false, encoding: .utf8)
        return try await provider.write(WriteRequest(path: path, file: file, size: Int64(text.utf8.count), conditions: .unconditional)).item
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }
}

/// What instances must see of each other's work at once: a namespace
/// change on one stops another's listing refresh from undoing it, and a
/// lock granted on one waits for a write another is committing.
@Suite("two instances on one shared index")
struct InstancesTests {
    @Test("a refresh on B that runs while A's PUT reached the upstream and not yet the index changes nothing; the PUT lands as one item")
    func refreshOnAnotherInstanceDuringChange() async throws {
        let f = try await Instances()
        defer { f.cleanUp() }
        let rootB = try await f.b.root()
        _ = try await f.b.refreshIfStale(rootB)
        let b = f.b
        let refreshed = NIOLockedFlag()
        f.storeA.afterUpload.withLockedValue {
            $0 = { path in
                guard path == ["new.txt"], refreshed.set() else { return }
                // The upstream holds new.txt, the index does not yet: B's
                // listing sees it, and must not make a placeholder of it.
                _ = try await b.refreshIfStale(try await b.root())
            }
        }
        let written = try await f.put("ours", at: ["new.txt"], through: f.a)
        #expect(refreshed.isSet, "B's refresh ran inside A's write")
        let listed = try await f.b.children(of: rootB)
        #expect(listed.map(\.name) == ["new.txt"])
        #expect(listed.first?.id == written.id, "one item, the write's")
    }

    @Test("a LOCK through B asked while A's PUT is between its lock check and its commit is granted after the commit, never before")
    func lockWaitsForAnotherInstancesCommit() async throws {
        let f = try await Instances()
        defer { f.cleanUp() }
        _ = try await f.put("v1", at: ["a.txt"], through: f.a)
        let target = try #require(try await f.b.item(at: ["a.txt"]))
        let b = f.b
        let granted = NIOLockedValueBox<Task<ProviderCore.Lock, any Error>?>(nil)
        let grantedDuringUpload = NIOLockedFlag()
        f.storeA.afterUpload.withLockedValue {
            $0 = { path in
                guard path == ["a.txt"] else { return }
                let task = Task { try await b.createLock(on: target, depthInfinity: false, exclusive: true, ownerXML: nil, principal: "bob", timeout: 60) }
                granted.withLockedValue { $0 = task }
                // Long enough for a grant that does not wait to land.
                try await Task.sleep(for: .milliseconds(500))
                if try await !b.locks(covering: target).isEmpty { _ = grantedDuringUpload.set() }
            }
        }
        _ = try await f.put("v2", at: ["a.txt"], through: f.a)
        let grant = try #require(granted.withLockedValue { $0 })
        let lock = try await grant.value
        #expect(!grantedDuringUpload.isSet, "no lock was granted while A's write was committing")
        #expect(try await f.a.locks(covering: try #require(try await f.a.item(at: ["a.txt"]))).map(\.token) == [lock.token])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "v2")
    }

    @Test("A and B refreshing one stale folder at once ask the upstream once: the second uses the first's listing")
    func oneListingAcrossInstances() async throws {
        let f = try await Instances(ttl: 60)
        defer { f.cleanUp() }
        for name in ["x.txt", "y.txt"] {
            try name.write(to: f.upstream.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        for store in [f.storeA, f.storeB] { store.listLinger.withLockedValue { $0 = .milliseconds(700) } }
        let (rootA, rootB) = (try await f.a.root(), try await f.b.root())
        async let listedA = f.a.refreshIfStale(rootA)
        async let listedB = f.b.refreshIfStale(rootB)
        let (foundA, foundB) = try await (listedA, listedB)
        #expect(foundA && foundB)
        let listings = f.storeA.listed.withLockedValue { $0 }.count + f.storeB.listed.withLockedValue { $0 }.count
        #expect(listings == 1, "one upstream listing for both instances")
        #expect(try await f.b.children(of: rootB).map(\.name) == ["x.txt", "y.txt"])
        #expect(try await f.a.children(of: rootA).map(\.name) == ["x.txt", "y.txt"])
    }
}
