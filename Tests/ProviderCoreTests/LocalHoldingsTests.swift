import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// Two instances on one shared index (PostgreSQL, whatever
/// `DAVGATE_TEST_INDEX` says), each with its own cache folder and
/// holdings, over one upstream folder: which version a cache holds is one
/// instance's fact (docs/scale-out.md §2 row 8), never the shared row's.
@Suite("LocalHoldings: two instances' caches on one shared index")
struct LocalHoldingsTests {
    @Test("B caches version 1, A writes version 2 through: B's next read serves version 2, not its cached bytes")
    func writeThroughAnotherInstance() async throws {
        let c = try await SharedIndexInstances(ttl: 600)
        defer { c.cleanUp() }
        try c.write("version 1", "a.txt")
        #expect(try await c.b.read("a.txt") == "version 1")
        #expect(try await c.b.item("a.txt").isMaterialized)

        try await c.a.put("version 2", at: "a.txt")
        #expect(try await c.a.item("a.txt").isMaterialized, "the writer holds what it wrote")
        let seen = try await c.b.item("a.txt")
        #expect(!seen.isMaterialized, "B's copy is of a version the index no longer names")
        #expect(try await c.b.holdsFile("a.txt"), "B still has its old bytes")
        #expect(try await c.b.read("a.txt") == "version 2")
        #expect(c.b.fetches == 2, "B fetched the new version")
        #expect(try await c.b.item("a.txt").isMaterialized)
        #expect(try await c.a.read("a.txt") == "version 2")
        #expect(c.a.fetches == 0, "A served what it wrote from its cache")
    }

    @Test("one instance evicting its copy neither makes the other fetch again nor changes its state, either way round")
    func evictionIsPerInstance() async throws {
        let c = try await SharedIndexInstances(ttl: 600)
        defer { c.cleanUp() }
        try c.write("shared", "a.txt")
        #expect(try await c.a.read("a.txt") == "shared")
        #expect(try await c.b.read("a.txt") == "shared")

        #expect(try await c.b.provider.evict(at: ["a.txt"]).evictedFiles == 1)
        #expect(try await !c.b.item("a.txt").isMaterialized)
        #expect(try await c.a.item("a.txt").isMaterialized, "B's eviction is not A's")
        #expect(try await c.a.provider.stateCounts()[.materialized] == 1, "A's status counts A's cache")
        #expect(try await c.b.provider.stateCounts()[.materialized] == nil, "B's counts B's")
        #expect(try await c.a.read("a.txt") == "shared")
        #expect(c.a.fetches == 1, "A read from its cache")

        #expect(try await c.b.read("a.txt") == "shared")
        #expect(c.b.fetches == 2)
        #expect(try await c.a.provider.evict(at: ["a.txt"]).evictedFiles == 1)
        #expect(try await c.b.item("a.txt").isMaterialized, "A's eviction is not B's")
        #expect(try await c.b.read("a.txt") == "shared")
        #expect(c.b.fetches == 2, "B read from its cache")
        #expect(try await !c.a.item("a.txt").isMaterialized)
    }

    @Test("a copy another instance's write made stale counts against the cache's budget and is evicted, the writer's copy kept")
    func staleCopiesAreEvicted() async throws {
        let c = try await SharedIndexInstances(ttl: 600)
        defer { c.cleanUp() }
        let big = String(repeating: "1", count: 100_000)
        try c.write(big, "old.txt")
        try c.write(String(repeating: "2", count: 100_000), "new.txt")
        // Room for one file and a half.
        let b = try await c.open("b-budget", budget: CacheBudget(maxBytes: 150 * 1024))
        #expect(try await b.read("old.txt") == big)
        await b.provider.enforceBudget()
        #expect(try await b.holdsFile("old.txt"))

        try await c.a.put(String(repeating: "3", count: 100_000), at: "old.txt")
        #expect(try await !b.item("old.txt").isMaterialized)
        #expect(try await b.read("new.txt").count == 100_000)
        await b.provider.enforceBudget()
        #expect(try await !b.holdsFile("old.txt"), "the stale copy went to make room")
        #expect(try await b.holdsFile("new.txt"))
        #expect(try await c.a.item("old.txt").isMaterialized, "the writer's copy is untouched")
    }

    @Test("holdings survive reopening the index: a restarted instance serves what its cache holds; a new one holds nothing")
    func holdingsSurviveRestart() async throws {
        let c = try await SharedIndexInstances(ttl: 600)
        defer { c.cleanUp() }
        try c.write("kept", "a.txt")
        #expect(try await c.a.read("a.txt") == "kept")

        let restarted = try await c.open("a")
        #expect(try await restarted.item("a.txt").isMaterialized)
        #expect(try await restarted.read("a.txt") == "kept")
        #expect(restarted.fetches == 0, "served from the cache it had")

        let fresh = try await c.open("c")
        #expect(try await !fresh.item("a.txt").isMaterialized)
        #expect(try await fresh.read("a.txt") == "kept")
        #expect(fresh.fetches == 1)
    }

    @Test("holdings kept for another database are dropped when the file is opened against this one")
    func holdingsBelongToOneDatabase() async throws {
        let c = try await SharedIndexInstances(ttl: 600)
        defer { c.cleanUp() }
        try c.write("kept", "a.txt")
        #expect(try await c.a.read("a.txt") == "kept")
        let other = try await TestIndex.openPostgres("other", in: c.root, holdings: c.a.holdings)
        let holdings = try #require(other.store as? PostgresIndex).holdings
        #expect(holdings.all().isEmpty, "ids of one database name other items in another")
    }
}
