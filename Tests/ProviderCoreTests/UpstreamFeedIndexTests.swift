import Foundation
@testable import ProviderCore
import Testing

/// How a page of the upstream's change feed lands in a real SQLite index:
/// like a listing page, but for places all over the tree at once.
@Suite("the upstream's change feed in the index")
struct UpstreamFeedIndexTests {
    func entry(_ name: String, folder: Bool = false, version: String = "v1") -> UpstreamEntry {
        UpstreamEntry(name: name, isFolder: folder, size: folder ? 0 : 3, modified: Date(timeIntervalSince1970: 1_700_000_000), version: version)
    }

    @Test("changes under known folders apply, those under unknown ones wait for a listing; the position moves; only listings the feed covers turn fresh")
    func applyPage() async throws {
        let f = try await Fixture(ttl: 600)
        defer { f.cleanUp() }
        try f.write("old", "old.txt")
        try f.write("kept", "kept.txt")
        try FileManager.default.createDirectory(at: f.upstream.appendingPathComponent("listed-before"), withIntermediateDirectories: true)
        let index = f.provider.index
        let root = try await f.provider.root()
        _ = try await f.provider.children(of: root)
        #expect(try await f.provider.item(at: ["old.txt"]) != nil)
        let before = try #require(try await f.provider.item(at: ["listed-before"]))
        try await f.provider.refreshIfStale(before)
        try await Task.sleep(for: .milliseconds(20))

        // The position is taken; the root is listed again after it.
        try await index.startUpstreamFeed(domain: "files", at: .init(position: "p1", coversSince: Date()))
        try await index.markListed(id: root.id, at: Date().addingTimeInterval(-900))
        try await index.markListed(id: root.id)
        try await index.markListed(id: before.id, at: Date().addingTimeInterval(-900))

        let stale = try await index.applyUpstreamChanges(
            domain: "files",
            present: [(["new"], entry("new", folder: true)), (["new", "inside.txt"], entry("inside.txt")),
                      (["kept.txt"], entry("kept.txt", version: "v2")), (["nowhere", "x.txt"], entry("x.txt"))],
            removed: [["old.txt"], ["never-there.txt"]], position: "p2", last: true)
        #expect(try await f.provider.item(at: ["old.txt"]) == nil)
        #expect(try await index.child(of: root.id, named: "new")?.isFolder == true)
        let new = try #require(try await index.child(of: root.id, named: "new"))
        #expect(try await index.child(of: new.id, named: "inside.txt") != nil, "a member of a folder that arrived in the same page")
        #expect(new.listedAt == nil, "a folder that arrived is listed when opened")
        let kept = try #require(try await index.child(of: root.id, named: "kept.txt"))
        #expect(kept.upstreamVersion == "v2" && kept.contentVersion > 1, "a changed version is a new ETag")
        #expect(try await index.child(of: root.id, named: "nowhere") == nil, "nothing made under a folder the index does not hold")
        #expect(stale.stale.isEmpty == false, "the removed file's id goes to the cache")
        #expect(try await index.upstreamFeed(domain: "files")?.position == "p2")
        let rootNow = try #require(try await index.item(id: root.id))
        #expect(f.provider.isFresh(rootNow), "listed after the position: kept current by the feed")
        #expect(!f.provider.isFresh(try #require(try await index.item(id: before.id))), "listed before it: read again when opened")

        // Refused: forgotten, so that listings are read again and a new position taken.
        try await index.forgetUpstreamFeed(domain: "files")
        #expect(try await index.upstreamFeed(domain: "files") == nil)
        #expect(try await index.applyUpstreamChanges(domain: "files", present: [(["late.txt"], entry("late.txt"))], removed: [],
                                                     position: "p3", last: true).stale.isEmpty)
        #expect(try await index.child(of: root.id, named: "late.txt") == nil, "no position, no page applied")
    }
}
