import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// The change feed through the provider, over a real SQLite index and a
/// real folder: what a sync since a token reports, and when a token is
/// refused.
@Suite("the change feed")
struct ChangeFeedTests {
    func paths(_ changes: Provider.ChangeSet) -> Set<ItemPath> { Set(changes.present.map { $0.1 }) }

    /// Every page of changes below the root since `token`, `limit` places
    /// each, until one is not cut short (100 at most: a feed that never
    /// ends fails its test rather than hang it).
    func pages(_ f: Fixture, since token: String, infinite: Bool, limit: Int) async throws -> [Provider.ChangeSet] {
        let root = try await f.provider.root()
        var token = token
        var pages: [Provider.ChangeSet] = []
        for _ in 0..<100 {
            let page = try await f.provider.changes(below: root, at: [], since: token, infinite: infinite, limit: limit)
            pages.append(page)
            token = page.token.description
            if !page.truncated { break }
        }
        return pages
    }

    @Test("every kind of change appears once in the next answer and never again, at depth 1 and infinite")
    func everyKindOnce() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        _ = try await f.put("kept", at: ["kept.txt"])
        let root = try await f.provider.root()
        let first = try await f.provider.changes(below: root, at: [], since: "", infinite: true, limit: nil)
        #expect(paths(first) == [["kept.txt"]])
        #expect(first.removed.isEmpty && !first.truncated)

        _ = try await f.put("a", at: ["a.txt"])
        _ = try await f.provider.makeFolder(at: ["d"])
        let x = try await f.put("x", at: ["d", "x.txt"])
        _ = try await f.provider.copy(from: ["d"], to: ["e"], recursive: true, overwrite: false)
        _ = try await f.provider.move(from: ["a.txt"], to: ["d", "a2.txt"], overwrite: false)
        try await f.provider.changeProperties(of: x, [.set(DeadProperty(namespace: "urn:x", name: "p", xml: "<x0:p xmlns:x0=\"urn:x\">v</x0:p>"))])
        try await f.provider.delete(at: ["e"])
        _ = try await f.put("kept, changed", at: ["kept.txt"])

        let deep = try await f.provider.changes(below: root, at: [], since: first.token.description, infinite: true, limit: nil)
        #expect(paths(deep) == [["d"], ["d", "x.txt"], ["d", "a2.txt"], ["kept.txt"]])
        // e's members went with it: the client drops e and what it held.
        #expect(Set(deep.removed) == [["a.txt"], ["e"]])
        #expect(deep.present.count == 4, "each place once")
        #expect(deep.token.sequence > first.token.sequence && !deep.truncated)

        let shallow = try await f.provider.changes(below: root, at: [], since: first.token.description, infinite: false, limit: nil)
        #expect(paths(shallow) == [["d"], ["kept.txt"]])
        #expect(Set(shallow.removed) == [["a.txt"], ["e"]])

        let folder = try #require(try await f.provider.item(at: ["d"]))
        let inFolder = try await f.provider.changes(below: folder, at: ["d"], since: first.token.description, infinite: false, limit: nil)
        #expect(paths(inFolder) == [["d", "x.txt"], ["d", "a2.txt"]])

        let again = try await f.provider.changes(below: root, at: [], since: deep.token.description, infinite: true, limit: nil)
        #expect(again.present.isEmpty && again.removed.isEmpty, "nothing twice")
        #expect(again.token == deep.token)
    }

    @Test("a folder moved into the synced tree arrives with everything in it")
    func folderMovedIn() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        _ = try await f.provider.makeFolder(at: ["watched"])
        _ = try await f.provider.makeFolder(at: ["outside"])
        _ = try await f.provider.makeFolder(at: ["outside", "sub"])
        _ = try await f.put("deep", at: ["outside", "sub", "deep.txt"])
        let watched = try #require(try await f.provider.item(at: ["watched"]))
        let before = try await f.provider.changes(below: watched, at: ["watched"], since: "", infinite: true, limit: nil)
        #expect(before.present.isEmpty)
        _ = try await f.provider.move(from: ["outside"], to: ["watched", "moved"], overwrite: false)
        let after = try await f.provider.changes(below: watched, at: ["watched"], since: before.token.description, infinite: true, limit: nil)
        #expect(paths(after) == [["watched", "moved"], ["watched", "moved", "sub"], ["watched", "moved", "sub", "deep.txt"]])
        // And out again: the client drops the folder, and with it what it held.
        _ = try await f.provider.move(from: ["watched", "moved"], to: ["gone"], overwrite: false)
        let out = try await f.provider.changes(below: watched, at: ["watched"], since: after.token.description, infinite: true, limit: nil)
        #expect(out.present.isEmpty)
        #expect(out.removed == [["watched", "moved"]])
    }

    @Test("a file changed in the upstream is reported once a listing sees it")
    func upstreamChangeSeenOnRefresh() async throws {
        let f = try await Fixture(ttl: 0)
        defer { f.cleanUp() }
        try f.write("theirs", "before.txt")
        let root = try await f.provider.root()
        let first = try await f.provider.changes(below: root, at: [], since: "", infinite: false, limit: nil)
        #expect(paths(first) == [["before.txt"]])
        try f.write("new upstream", "after.txt")
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("before.txt"))
        let next = try await f.provider.changes(below: root, at: [], since: first.token.description, infinite: false, limit: nil)
        #expect(paths(next) == [["after.txt"]])
        #expect(next.removed == [["before.txt"]])
    }

    @Test("syncs racing a burst of new folders and files report each new item exactly once, and miss none")
    func syncsRacingWrites() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let root = try await f.provider.root()
        let start = try await f.provider.changes(below: root, at: [], since: "", infinite: true, limit: nil)
        var expected: [ItemPath] = []
        for d in 0..<15 {
            expected.append(["d\(d)"])
            for i in 0..<8 { expected.append(["d\(d)", "f\(i).txt"]) }
        }
        let finished = NIOLockedValueBox(false)
        let writer = Task {
            defer { finished.withLockedValue { $0 = true } }
            for d in 0..<15 {
                _ = try await f.provider.makeFolder(at: ["d\(d)"])
                for i in 0..<8 { _ = try await f.put("\(d).\(i)", at: ["d\(d)", "f\(i).txt"]) }
            }
        }
        var token = start.token.description
        var reported: [ItemPath] = []
        while true {
            let last = finished.withLockedValue { $0 }
            let page = try await f.provider.changes(below: root, at: [], since: token, infinite: true, limit: 7)
            reported += page.present.map { $0.1 }
            token = page.token.description
            if last && !page.truncated { break }
        }
        try await writer.value
        let counts = Dictionary(grouping: reported, by: { $0 }).mapValues(\.count)
        #expect(counts.filter { $0.value > 1 }.isEmpty, "reported twice: \(counts.filter { $0.value > 1 }.keys.sorted { $0.joined(separator: "/") < $1.joined(separator: "/") })")
        #expect(Set(reported) == Set(expected), "missing: \(Set(expected).subtracting(reported).count)")
    }

    @Test("a page cut short inside a new folder reports each member once: one changed after the page's end comes with the page that reads its change")
    func truncatedPageInsideNewFolder() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let root = try await f.provider.root()
        let start = try await f.provider.changes(below: root, at: [], since: "", infinite: true, limit: nil)
        _ = try await f.provider.makeFolder(at: ["d"])
        for i in 0..<10 { _ = try await f.put("\(i)", at: ["d", "f\(i).txt"]) }
        let reported = try await pages(f, since: start.token.description, infinite: true, limit: 3).flatMap { $0.present.map(\.1) }
        // The first page holds d, f0 and f1 and ends there; before, d's
        // arrival brought f2-f9 along and the next pages reported them again.
        #expect(reported == [["d"]] + (0..<10).map { ["d", "f\($0).txt"] })
    }

    @Test("a page cut short inside a new folder leaves a folder moved into it later, with what it holds, to the page that reads the move")
    func truncatedPageLeavesLaterArrivalWhole() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        _ = try await f.provider.makeFolder(at: ["outside"])
        _ = try await f.provider.makeFolder(at: ["outside", "sub"])
        _ = try await f.put("x", at: ["outside", "sub", "x.txt"])
        let root = try await f.provider.root()
        let start = try await f.provider.changes(below: root, at: [], since: "", infinite: true, limit: nil)
        _ = try await f.provider.makeFolder(at: ["d"])
        for i in 0..<5 { _ = try await f.put("\(i)", at: ["d", "f\(i).txt"]) }
        _ = try await f.provider.move(from: ["outside", "sub"], to: ["d", "sub"], overwrite: false)
        let read = try await pages(f, since: start.token.description, infinite: true, limit: 3)
        let reported = read.flatMap { $0.present.map(\.1) }, removed = read.flatMap(\.removed)
        // x.txt has no change of its own since the token: it comes with
        // sub's arrival, not also with d's on the first page.
        #expect(reported == [["d"]] + (0..<5).map { ["d", "f\($0).txt"] } + [["d", "sub"], ["d", "sub", "x.txt"]])
        #expect(removed == [["outside", "sub"]])
    }

    @Test("a limit pages the answer: each place once across the pages, truncated until the last")
    func paging() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let root = try await f.provider.root()
        let start = try await f.provider.changes(below: root, at: [], since: "", infinite: false, limit: nil)
        for i in 0..<25 { _ = try await f.put("\(i)", at: ["f\(i).txt"]) }
        let read = try await pages(f, since: start.token.description, infinite: false, limit: 10)
        let seen = read.flatMap { $0.present.map(\.1) }
        #expect(read.map(\.present.count) == [10, 10, 5])
        #expect(seen.count == 25 && Set(seen).count == 25)
    }

    @Test("a token survives reopening the index; another feed's, a future and a compacted token are refused")
    func tokens() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let root = try await f.provider.root()
        _ = try await f.put("one", at: ["one.txt"])
        let token = try await f.provider.currentSyncToken()
        _ = try await f.put("two", at: ["two.txt"])

        let reopened = try await Provider(domain: "files", store: f.store, index: TestIndex.open(in: f.root),
                                    cacheFolder: f.root.appendingPathComponent("cache"), listingTTL: 60, logger: Logger(label: "test"))
        let later = try await reopened.changes(below: root, at: [], since: token.description, infinite: false, limit: nil)
        #expect(paths(later) == [["two.txt"]])

        for bad in [SyncToken(feed: "0123456789abcdef", sequence: token.sequence).description,
                    SyncToken(feed: token.feed, sequence: later.token.sequence + 1).description,
                    "https://davgate.dev/sync/\(token.feed)/x", "urn:uuid:1"] {
            await #expect(throws: Provider.InvalidSyncToken.self, "\(bad)") {
                _ = try await reopened.changes(below: root, at: [], since: bad, infinite: false, limit: nil)
            }
        }
        // Compacted away: the client is told to start over, not given a partial answer.
        #expect(try await reopened.index.compactChanges(olderThan: -60, keep: 0) > 0)
        await #expect(throws: Provider.InvalidSyncToken.self) {
            _ = try await reopened.changes(below: root, at: [], since: token.description, infinite: false, limit: nil)
        }
        let current = try await reopened.currentSyncToken()
        #expect(try await reopened.changes(below: root, at: [], since: current.description, infinite: false, limit: nil).present.isEmpty)
    }

    @Test("a folder's ETag moves when anything below it changes, and only then; its siblings' stay")
    func folderETags() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        for folder in [["a"], ["a", "b"], ["a", "b", "c"], ["sibling"]] { _ = try await f.provider.makeFolder(at: folder) }
        let x = try await f.put("x", at: ["a", "b", "c", "x.txt"])
        func etags(_ paths: [ItemPath] = [["a"], ["a", "b"], ["a", "b", "c"], ["sibling"]]) async throws -> [String] {
            var tags = [try await f.provider.root().etag]
            for path in paths { tags.append(try #require(try await f.provider.item(at: path), "\(path)").etag) }
            return tags
        }
        var before = try await etags()
        #expect(try await etags() == before, "reading moves nothing")

        // Content, a dead property, a new member, a removal and a move, each deep down.
        let changes: [(String, () async throws -> Void)] = [
            ("content", { _ = try await f.put("x, edited", at: ["a", "b", "c", "x.txt"]) }),
            ("property", { try await f.provider.changeProperties(of: x, [.set(DeadProperty(namespace: "urn:x", name: "p", xml: "<x0:p xmlns:x0=\"urn:x\">v</x0:p>"))]) }),
            ("new file", { _ = try await f.put("y", at: ["a", "b", "c", "y.txt"]) }),
            ("removal", { try await f.provider.delete(at: ["a", "b", "c", "y.txt"]) }),
            ("rename", { _ = try await f.provider.move(from: ["a", "b", "c", "x.txt"], to: ["a", "b", "c", "z.txt"], overwrite: false) }),
        ]
        for (what, change) in changes {
            try await change()
            let after = try await etags()
            for i in 0..<4 { #expect(after[i] != before[i], "\(what): the ETag of folder \(i) levels from the root moved") }
            #expect(after[4] == before[4], "\(what): the sibling's ETag stays")
            before = after
        }

        // A folder moved from one branch to another moves both chains' ETags, not its own.
        let moved = try #require(try await f.provider.item(at: ["a", "b", "c"])).etag
        _ = try await f.provider.move(from: ["a", "b", "c"], to: ["sibling", "c"], overwrite: false)
        let after = try await etags([["a"], ["a", "b"], ["sibling", "c"], ["sibling"]])
        #expect(after[0] != before[0] && after[1] != before[1] && after[2] != before[2] && after[4] != before[4])
        #expect(try #require(try await f.provider.item(at: ["sibling", "c"])).etag == moved, "nothing inside it changed")
    }

    @Test("tokens are URIs of ours, read back exactly; anything else is not a token")
    func tokenText() {
        let token = SyncToken(feed: "ab12", sequence: 42)
        #expect(token.description == "https://davgate.dev/sync/ab12/42")
        #expect(SyncToken(token.description) == token)
        for bad in ["https://davgate.dev/sync/ab12/", "https://davgate.dev/sync//4", "https://davgate.dev/sync/xyz/4",
                    "https://davgate.dev/sync/ab/04", "https://davgate.dev/sync/ab/4/5", "http://davgate.dev/sync/ab/4",
                    "https://davgate.dev/sync/ab/-1", ""] {
            #expect(SyncToken(bad) == nil, "\(bad)")
        }
    }
}
