import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// What instances must see of each other's work at once: a namespace
/// change on one stops another's listing refresh from undoing it, and a
/// lock granted or a DELETE on one waits for a write another is committing.
@Suite("two instances on one shared index")
struct InstancesTests {
    @Test("a refresh on B that runs while A's PUT reached the upstream and not yet the index changes nothing; the PUT lands as one item")
    func refreshOnAnotherInstanceDuringChange() async throws {
        let f = try await SharedIndexInstances(ttl: 0)
        defer { f.cleanUp() }
        let rootB = try await f.b.provider.root()
        _ = try await f.b.provider.refreshIfStale(rootB)
        let b = f.b.provider
        let refreshed = NIOLockedFlag()
        f.a.store.afterUpload.withLockedValue {
            $0 = { path in
                guard path == ["new.txt"], refreshed.set() else { return }
                // The upstream holds new.txt, the index does not yet: B's
                // listing sees it, and must not make a placeholder of it.
                _ = try await b.refreshIfStale(try await b.root())
            }
        }
        let written = try await f.a.put("ours", at: "new.txt")
        #expect(refreshed.isSet, "B's refresh ran inside A's write")
        let listed = try await f.b.provider.children(of: rootB)
        #expect(listed.map(\.name) == ["new.txt"])
        #expect(listed.first?.id == written.id, "one item, the write's")
    }

    @Test("a LOCK through B asked while A's PUT is between its lock check and its commit is granted after the commit, never before")
    func lockWaitsForAnotherInstancesCommit() async throws {
        let f = try await SharedIndexInstances(ttl: 0)
        defer { f.cleanUp() }
        _ = try await f.a.put("v1", at: "a.txt")
        let target = try #require(try await f.b.provider.item(at: ["a.txt"]))
        let b = f.b.provider
        let granted = NIOLockedValueBox<Task<ProviderCore.Lock, any Error>?>(nil)
        let grantedDuringUpload = NIOLockedFlag()
        f.a.store.afterUpload.withLockedValue {
            $0 = { path in
                guard path == ["a.txt"] else { return }
                let task = Task { try await b.createLock(on: target, depthInfinity: false, exclusive: true, ownerXML: nil, principal: "bob", timeout: 60) }
                granted.withLockedValue { $0 = task }
                // Long enough for a grant that does not wait to land.
                try await Task.sleep(for: .milliseconds(500))
                if try await !b.locks(covering: target).isEmpty { _ = grantedDuringUpload.set() }
            }
        }
        _ = try await f.a.put("v2", at: "a.txt")
        let grant = try #require(granted.withLockedValue { $0 })
        let lock = try await grant.value
        #expect(!grantedDuringUpload.isSet, "no lock was granted while A's write was committing")
        #expect(try await f.a.provider.locks(covering: try #require(try await f.a.provider.item(at: ["a.txt"]))).map(\.token) == [lock.token])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "v2")
    }

    @Test("a DELETE through B asked while A's PUT of the file is between its upload and its commit waits for the commit, then removes the file everywhere")
    func deleteWaitsForAnotherInstancesWrite() async throws {
        let f = try await SharedIndexInstances(ttl: 0)
        defer { f.cleanUp() }
        try await f.a.put("v1", at: "a.txt")
        let upstreamFile = f.upstream.appendingPathComponent("a.txt")
        let b = f.b.provider
        let deletion = NIOLockedValueBox<Task<Void, any Error>?>(nil)
        let deletedDuringWrite = NIOLockedFlag()
        f.a.store.afterUpload.withLockedValue {
            $0 = { path in
                guard path == ["a.txt"], deletion.withLockedValue({ $0 }) == nil else { return }
                deletion.withLockedValue { $0 = Task { try await b.delete(at: ["a.txt"]) } }
                // Long enough for a DELETE that does not wait to land.
                try await Task.sleep(for: .milliseconds(500))
                if !FileManager.default.fileExists(atPath: upstreamFile.path) { _ = deletedDuringWrite.set() }
            }
        }
        try await f.a.put("v2", at: "a.txt")
        try await #require(deletion.withLockedValue { $0 }).value
        #expect(!deletedDuringWrite.isSet, "B's DELETE did not run while A's write was committing")
        #expect(!FileManager.default.fileExists(atPath: upstreamFile.path), "the DELETE, after the write, removed the file upstream")
        #expect(try await f.a.provider.item(at: ["a.txt"]) == nil)
        #expect(try await f.b.provider.item(at: ["a.txt"]) == nil)
    }

    @Test("A and B refreshing one stale folder at once ask the upstream once: the second uses the first's listing")
    func oneListingAcrossInstances() async throws {
        let f = try await SharedIndexInstances(ttl: 60)
        defer { f.cleanUp() }
        for name in ["x.txt", "y.txt"] {
            try name.write(to: f.upstream.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        for store in [f.a.store, f.b.store] { store.listLinger.withLockedValue { $0 = .milliseconds(700) } }
        let (rootA, rootB) = (try await f.a.provider.root(), try await f.b.provider.root())
        async let listedA = f.a.provider.refreshIfStale(rootA)
        async let listedB = f.b.provider.refreshIfStale(rootB)
        let (foundA, foundB) = try await (listedA, listedB)
        #expect(foundA && foundB)
        let listings = f.a.store.listed.withLockedValue { $0 }.count + f.b.store.listed.withLockedValue { $0 }.count
        #expect(listings == 1, "one upstream listing for both instances")
        #expect(try await f.b.provider.children(of: rootB).map(\.name) == ["x.txt", "y.txt"])
        #expect(try await f.a.provider.children(of: rootA).map(\.name) == ["x.txt", "y.txt"])
    }
}
