import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A write into a folder whose listing is stale checks its own name
/// upstream instead of relisting the folder (issue 14: relisting on every
/// write made a burst of small PUTs quadratic).
@Suite("Where a write lands, in a stale folder")
struct WriteTargetTests {
    /// A fixture whose folder `docs` was listed once and is stale from then
    /// on (TTL 0), with `names` in it upstream at that listing.
    private func staleFolder(_ writeMode: WriteMode, names: [String] = []) async throws -> Fixture {
        let f = try await Fixture(ttl: 0, writeMode: writeMode, uploads: UploadPolicy(quietDelay: 0))
        try FileManager.default.createDirectory(at: f.upstream.appendingPathComponent("docs"), withIntermediateDirectories: true)
        for name in names { try f.write("listed \(name)", "docs/\(name)") }
        let docs = try #require(try await f.provider.item(at: ["docs"]))
        try await f.provider.refreshIfStale(docs)
        f.store.listed.withLockedValue { $0 = [] }
        return f
    }

    /// Runs `change` once, in the first stat of `path` that has read the
    /// upstream and not answered yet: a change landing while that answer is
    /// on its way. Returns whether it ran.
    private func onFirstStat(of path: ItemPath, in f: Fixture,
                             _ change: @escaping @Sendable () async throws -> Void) -> NIOLockedValueBox<Bool> {
        let fired = NIOLockedValueBox(false)
        f.store.afterStat.withLockedValue {
            $0 = { statted in
                guard statted == path, !fired.withLockedValue({ let was = $0; $0 = true; return was }) else { return }
                try await change()
            }
        }
        return fired
    }

    @Test("writes into a stale folder never list it, in either write mode", arguments: WriteMode.allCases)
    func noListingPerWrite(writeMode: WriteMode) async throws {
        let f = try await staleFolder(writeMode, names: ["old.txt"])
        defer { f.cleanUp() }
        for n in 0..<20 { _ = try await f.put("file \(n)", at: ["docs", "f\(n).txt"]) }
        _ = try await f.put("overwritten", at: ["docs", "old.txt"])
        #expect(!f.store.listed.withLockedValue { $0 }.contains(["docs"]), "docs was listed by a write")
        let names = try await f.provider.children(of: try #require(try await f.provider.index.chain(domain: "files", path: ["docs"]).last)).map(\.name)
        #expect(names == ["f0.txt", "f1.txt", "f10.txt", "f11.txt", "f12.txt", "f13.txt", "f14.txt", "f15.txt", "f16.txt", "f17.txt",
                          "f18.txt", "f19.txt", "f2.txt", "f3.txt", "f4.txt", "f5.txt", "f6.txt", "f7.txt", "f8.txt", "f9.txt", "old.txt"])
    }

    @Test("a file made upstream after the folder's listing is overwritten by a write, not kept beside it as a conflict", arguments: WriteMode.allCases)
    func fileMadeUpstreamSinceTheListing(writeMode: WriteMode) async throws {
        let f = try await staleFolder(writeMode)
        defer { f.cleanUp() }
        try f.write("made upstream", "docs/new.txt")
        _ = try await f.put("ours", at: ["docs", "new.txt"])
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path) == ["new.txt"])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/new.txt"), encoding: .utf8) == "ours")
    }

    @Test("a file changed upstream after the listing is overwritten by a write, and its stale copy is not served meanwhile", arguments: WriteMode.allCases)
    func fileChangedUpstreamSinceTheListing(writeMode: WriteMode) async throws {
        let f = try await staleFolder(writeMode, names: ["a.txt"])
        defer { f.cleanUp() }
        try f.write("changed upstream, longer", "docs/a.txt")
        let written = try await f.put("ours", at: ["docs", "a.txt"])
        #expect(written.size == 4)
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path) == ["a.txt"])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "ours")
    }

    @Test("a write into a folder deleted upstream since its listing is refused, and the folder is forgotten", arguments: WriteMode.allCases)
    func folderDeletedUpstream(writeMode: WriteMode) async throws {
        let f = try await staleFolder(writeMode, names: ["a.txt"])
        defer { f.cleanUp() }
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("docs"))
        await #expect(throws: ProviderError.parentMissing) { _ = try await f.put("ours", at: ["docs", "b.txt"]) }
        #expect(try await f.provider.index.chain(domain: "files", path: ["docs"]).count == 1, "only the root is left")
        #expect(try await f.provider.index.pendingUploads(domain: "files") == 0)
    }

    @Test("a file deleted upstream since the listing is written anew, with no conflict copy", arguments: WriteMode.allCases)
    func fileDeletedUpstream(writeMode: WriteMode) async throws {
        let f = try await staleFolder(writeMode, names: ["a.txt"])
        defer { f.cleanUp() }
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("docs/a.txt"))
        _ = try await f.put("ours", at: ["docs", "a.txt"])
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path) == ["a.txt"])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "ours")
    }

    @Test("the first write into a folder never listed lists it: a file already there upstream is overwritten, not kept beside", arguments: WriteMode.allCases)
    func folderNeverListed(writeMode: WriteMode) async throws {
        let f = try await Fixture(ttl: 0, writeMode: writeMode, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        try f.write("upstream's", "a.txt")
        _ = try await f.put("ours", at: ["a.txt"])
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path) == ["a.txt"])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "ours")
    }

    @Test("a PUT's checks before its body ask the upstream nothing; the write asks once about the name, and the folder when the name is free")
    func onlyTheCommitAsks() async throws {
        let f = try await staleFolder(.back)
        defer { f.cleanUp() }
        f.store.statted.withLockedValue { $0 = [] }
        let before = try await f.provider.writeTarget(["docs", "a.txt"], checkingUpstream: false)
        #expect(before.existing == nil)
        #expect(f.store.statted.withLockedValue { $0 }.isEmpty)
        _ = try await f.put("ours", at: ["docs", "a.txt"])
        #expect(f.store.statted.withLockedValue { $0 } == [["docs", "a.txt"], ["docs"]])
    }

    @Test("an upload finishing while a write's stat is on its way: the older answer is not applied, and the next upload is no conflict")
    func statOlderThanAnUpload() async throws {
        let f = try await staleFolder(.back, names: ["a.txt"])
        defer { f.cleanUp() }
        _ = try await f.put("first", at: ["docs", "a.txt"])
        // The second write's stat reads the upstream before the first write
        // is uploaded; the upload lands before the stat's answer is applied.
        let fired = onFirstStat(of: ["docs", "a.txt"], in: f) {
            try await f.provider.flushAllUploads()
        }
        _ = try await f.put("second", at: ["docs", "a.txt"])
        f.store.afterStat.withLockedValue { $0 = nil }
        #expect(fired.withLockedValue { $0 })
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path) == ["a.txt"],
                "no conflict copy")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "second")
    }

    @Test("writes into a stale folder ask the upstream in parallel, not one at a time under the domain's coordination", arguments: WriteMode.allCases)
    func statsInParallel(writeMode: WriteMode) async throws {
        let f = try await staleFolder(writeMode)
        defer { f.cleanUp() }
        // Each stat of a name in docs takes 200 ms: eight writes started
        // together overlap in them unless something serializes them.
        let inFlight = NIOLockedValueBox((now: 0, most: 0))
        f.store.afterStat.withLockedValue {
            $0 = { path in
                guard path.count == 2 else { return }
                inFlight.withLockedValue { $0.now += 1; $0.most = max($0.most, $0.now) }
                try await Task.sleep(for: .milliseconds(200))
                inFlight.withLockedValue { $0.now -= 1 }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<8 { group.addTask { _ = try await f.put("file \(n)", at: ["docs", "f\(n).txt"]) } }
            try await group.waitForAll()
        }
        f.store.afterStat.withLockedValue { $0 = nil }
        #expect(inFlight.withLockedValue { $0.most } >= 4, "stats of the burst overlapped at most \(inFlight.withLockedValue { $0.most }) at a time")
        let statted = f.store.statted.withLockedValue { $0 }.filter { $0.count == 2 }
        #expect(statted.count == 8, "each write asked once about its name: \(statted)")
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path).sorted()
                == (0..<8).map { "f\($0).txt" })
    }

    @Test("an answer asked before the coordination that shows a file the index did not know is asked again at the commit: another write of that name meanwhile, uploaded and perhaps deleted, is neither a conflict nor overwritten as if still there",
          .timeLimit(.minutes(1)), arguments: [false, true])
    func lookOutdatedByAnotherWrite(deletedMeanwhile: Bool) async throws {
        let f = try await staleFolder(.back)
        defer { f.cleanUp() }
        // The upstream has a.txt, made there after the listing.
        try f.write("made upstream", "docs/a.txt")
        // While the second write's stat is on its way (it sees that file), a
        // first write replaces it and is uploaded, and perhaps deleted: then
        // there is no row before, no row after, and no file upstream.
        let fired = onFirstStat(of: ["docs", "a.txt"], in: f) {
            _ = try await f.put("first", at: ["docs", "a.txt"])
            try await f.provider.flushAllUploads()
            if deletedMeanwhile { try await f.provider.delete(at: ["docs", "a.txt"]) }
        }
        let second = try await f.provider.write(try f.request("second", at: ["docs", "a.txt"]))
        f.store.afterStat.withLockedValue { $0 = nil }
        #expect(fired.withLockedValue { $0 })
        // Applied, the older answer would have made the index expect the file
        // made upstream: the upload of "second" a conflict copy, or (deleted
        // meanwhile) this write an overwrite (204) of a file that is gone.
        #expect(second.created == deletedMeanwhile)
        try await f.provider.flushAllUploads()
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path) == ["a.txt"],
                "no conflict copy")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "second")
    }

    @Test("an upload finishing while a commit asks the upstream again (its early answer outdated): the older answer is not applied",
          .timeLimit(.minutes(1)))
    func commitStatOlderThanAnUpload() async throws {
        let f = try await staleFolder(.back, names: ["a.txt"])
        defer { f.cleanUp() }
        _ = try await f.put("first", at: ["docs", "a.txt"])
        // The second write's early stat: a third write changes the name's
        // row meanwhile, so the commit asks again; while that stat's answer
        // is on its way, the third write is uploaded.
        let stats = NIOLockedValueBox(0)
        f.store.afterStat.withLockedValue {
            $0 = { path in
                guard path == ["docs", "a.txt"] else { return }
                switch stats.withLockedValue({ $0 += 1; return $0 }) {
                case 1: _ = try await f.put("third", at: ["docs", "a.txt"])
                case 3: try await f.provider.flushAllUploads()
                default: break
                }
            }
        }
        _ = try await f.put("second", at: ["docs", "a.txt"])
        f.store.afterStat.withLockedValue { $0 = nil }
        #expect(stats.withLockedValue { $0 } >= 3, "the commit asked again")
        try await f.provider.flushAllUploads()
        // Applied, the older answer would have made the index expect the
        // listed file, and the upload of "second" a conflict copy.
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.appendingPathComponent("docs").path) == ["a.txt"],
                "no conflict copy")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/a.txt"), encoding: .utf8) == "second")
    }

    @Test("new files in a stale folder ask about the folder once a listing TTL, not once a file",
          arguments: WriteMode.allCases)
    func folderAskedOncePerTTL(writeMode: WriteMode) async throws {
        // A TTL of a minute, and docs' listing made older than that.
        let f = try await Fixture(ttl: 60, writeMode: writeMode, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        try FileManager.default.createDirectory(at: f.upstream.appendingPathComponent("docs"), withIntermediateDirectories: true)
        let docs = try #require(try await f.provider.item(at: ["docs"]))
        try await f.provider.refreshIfStale(docs)
        try await f.provider.index.markListed(id: docs.id, at: .distantPast)
        f.store.statted.withLockedValue { $0 = [] }
        for name in ["a.txt", "b.txt", "c.txt"] { _ = try await f.put(name, at: ["docs", name]) }
        #expect(f.store.statted.withLockedValue { $0 } == [["docs", "a.txt"], ["docs"], ["docs", "b.txt"], ["docs", "c.txt"]])
    }

    @Test("while the upstream is unreachable, a write-back write into a stale folder is taken from what the index knows")
    func upstreamDown() async throws {
        let f = try await staleFolder(.back, names: ["a.txt"])
        defer { f.cleanUp() }
        f.store.failing.withLockedValue { $0 = ["stat": .unreachable("down"), "list": .unreachable("down")] }
        let item = try await f.put("ours", at: ["docs", "b.txt"])
        #expect(item.dirty)
        #expect(try await f.provider.index.pendingUploads(domain: "files") == 1)
    }
}

extension Provider {
    /// Every write of the journal delivered now (none in write-through).
    func flushAllUploads() async throws {
        try await flushUploads(under: try await root())
    }
}
