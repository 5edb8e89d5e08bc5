import Foundation
@testable import ProviderCore
import Testing

/// Content policies in a real SQLite index: inheritance as PROPFIND shows
/// it, and what eviction keeps, which must stop where a member sets a
/// policy of its own.
@Suite("content policies in the index")
struct ContentPolicyIndexTests {
    @Test("the nearest policy applies, set or inherited; eviction keeps what is eager, not a lazy member of an eager folder nor what is below it")
    func inheritanceAndEviction() async throws {
        let f = try await Fixture(ttl: 600)
        defer { f.cleanUp() }
        try FileManager.default.createDirectory(at: f.upstream.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        for name in ["top.txt", "a/x.txt", "a/b/y.txt", "a/b/z.txt"] { try f.write(name, name) }
        func item(_ path: ItemPath) async throws -> Item { try #require(try await f.provider.item(at: path)) }
        let (top, a, x, b, y, z) = (try await item(["top.txt"]), try await item(["a"]), try await item(["a", "x.txt"]),
                                    try await item(["a", "b"]), try await item(["a", "b", "y.txt"]), try await item(["a", "b", "z.txt"]))
        // Straight into the index: PROPPATCH's eager fetch would muddy what eviction keeps.
        let index = f.provider.index
        try await index.applyPropertyChanges([.contentPolicy(.eager)], to: a.id)
        try await index.applyPropertyChanges([.contentPolicy(.lazy)], to: b.id)
        try await index.applyPropertyChanges([.contentPolicy(.eager)], to: z.id)

        let policies = try await f.provider.contentPolicies(of: [top, a, x, b, y, z])
        #expect(policies[top.id] == EffectivePolicy(.lazy, inherited: true), "the default")
        #expect(policies[a.id] == EffectivePolicy(.eager, inherited: false))
        #expect(policies[x.id] == EffectivePolicy(.eager, inherited: true))
        #expect(policies[b.id] == EffectivePolicy(.lazy, inherited: false))
        #expect(policies[y.id] == EffectivePolicy(.lazy, inherited: true), "the nearest folder's, not a's")
        #expect(policies[z.id] == EffectivePolicy(.eager, inherited: false))

        let kept = try await index.keptItems(domain: "files")
        #expect(kept.isSuperset(of: [a.id, x.id, z.id]))
        #expect(kept.isDisjoint(with: [top.id, b.id, y.id]), "\(kept)")
        #expect(try await index.eagerRoots(domain: "files").map(\.id) == [a.id, z.id].sorted())

        // Removed: inherited again.
        try await index.applyPropertyChanges([.contentPolicy(nil)], to: b.id)
        #expect(try await f.provider.contentPolicies(of: [y])[y.id] == EffectivePolicy(.eager, inherited: true))
        #expect(try await index.keptItems(domain: "files").isSuperset(of: [b.id, y.id]))
    }
}
