import Foundation
@testable import ProviderCore
import Testing

/// Eviction chooses its files from what the index said a moment before; a
/// write that lands in between must keep its content (the order a budget
/// pass racing a PUT of a file it chose produces).
@Suite("eviction racing a write")
struct EvictionRaceTests {
    /// `inline`: a small write, whose bytes are in the journal and which
    /// replaces the file there by one made of them.
    @Test("a file written after eviction chose it keeps its new content, and the read serves it", arguments: [false, true])
    func writeBetweenChoiceAndEviction(inline: Bool) async throws {
        let f = try await Fixture(ttl: 600, writeMode: .back)
        defer { f.cleanUp() }
        try f.write("upstream version", "a.txt")
        let listed = try #require(try await f.provider.item(at: ["a.txt"]))
        _ = try await f.provider.contents(of: listed, at: ["a.txt"])
        let chosen = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(chosen.state == .materialized)

        _ = try await f.put("written here", at: ["a.txt"], inline: inline)
        #expect(try await f.provider.evict(chosen.id, cachedVersion: chosen.cachedVersion) == false)

        let now = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(f.provider.state(of: now) == .modified)
        guard case .file(let path) = try await f.provider.openContents(of: now, at: ["a.txt"]) else {
            Issue.record("a file written here must be served from the cache")
            return
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "written here")
    }

    @Test("an unchanged file chosen for eviction goes back to a placeholder")
    func unchangedFileIsEvicted() async throws {
        let f = try await Fixture(ttl: 600, writeMode: .back)
        defer { f.cleanUp() }
        try f.write("upstream version", "a.txt")
        let listed = try #require(try await f.provider.item(at: ["a.txt"]))
        _ = try await f.provider.contents(of: listed, at: ["a.txt"])
        let chosen = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(try await f.provider.evict(chosen.id, cachedVersion: chosen.cachedVersion))
        let now = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(f.provider.state(of: now) == .placeholder)
        #expect(!f.provider.cache.hasFile(for: now.id))
    }

    @Test("the file contents(of:) hands out stays while its lease is held (a PATCH's base, a staged upload's head, a conflict copy read as a version), and is evicted after")
    func contentsLeaseHoldsTheFile() async throws {
        let f = try await Fixture(ttl: 600, writeMode: .back)
        defer { f.cleanUp() }
        try f.write("upstream version", "a.txt")
        let listed = try #require(try await f.provider.item(at: ["a.txt"]))
        let chosen: Item
        do {
            let held = try await f.provider.contents(of: listed, at: ["a.txt"])
            chosen = try #require(try await f.provider.item(at: ["a.txt"]))
            #expect(try await f.provider.evict(chosen.id, cachedVersion: chosen.cachedVersion) == false, "evicted under a lease")
            #expect(try String(contentsOf: held.file, encoding: .utf8) == "upstream version")
            withExtendedLifetime(held.lease) {}
        }
        #expect(try await f.provider.evict(chosen.id, cachedVersion: chosen.cachedVersion), "the lease outlived its holder")
    }
}
