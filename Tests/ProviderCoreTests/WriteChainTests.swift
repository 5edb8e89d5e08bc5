import Foundation
@testable import ProviderCore
import Synchronization
import Testing

/// A write resolves its folder from a chain kept across the writes that
/// change no folder (`SQLiteIndex.writeChain`): a burst of PUTs into one
/// folder reads it once, and any change to a folder is seen by the next
/// write, through the provider over either index.
@Suite("A write's folder chain, kept across PUTs")
struct WriteChainTests {
    @Test("a burst of write-back commits and upload completions into one folder reads its chain once; only tree versions lag")
    func burstReadsTheChainOnce() async throws {
        // A lifetime no slow run reaches: what is measured is what the
        // writes keep, not the clock.
        let opened = try await TemporarySQLiteIndex.open(readCacheLifetime: .seconds(3600))
        defer { opened.cleanUp() }
        let index = opened.index
        let docs = try await index.insert(UpstreamEntry(name: "docs", isFolder: true, size: 0, modified: Date(), version: "d1"),
                                          parent: opened.root.id, domain: "d", listed: true)
        let before = try await index.writeChain(domain: "d", path: ["docs"])
        #expect(before.map(\.id) == [opened.root.id, docs.id])
        let reads = index.writeChainReads.load(ordering: .relaxed)

        var written: [Item] = []
        for n in 0..<20 {
            written.append(try await index.recordLocalWrite(existing: nil, parent: docs.id, domain: "d", name: "f\(n)", size: 1,
                                                            modified: Date(), file: "out-\(n)", content: Data("x".utf8), checksum: nil))
            _ = try await index.writeChain(domain: "d", path: ["docs"])
        }
        _ = try await index.recordLocalWrite(existing: written[0], parent: docs.id, domain: "d", name: "f0", size: 2,
                                             modified: Date(), file: "out-again", content: Data("xy".utf8), checksum: nil)
        for entry in try await index.newestEntries(domain: "d") {
            _ = try await index.completeUpload(entry, uploaded: UpstreamEntry(name: entry.file, isFolder: false, size: entry.size,
                                                                              modified: Date(), version: "v-\(entry.seq)"))
            _ = try await index.writeChain(domain: "d", path: ["docs"])
        }
        #expect(index.writeChainReads.load(ordering: .relaxed) == reads, "a commit or an upload's completion made the chain be read again")

        // What the kept chain may lag in: the folders' tree versions, and
        // nothing else; `chain`, which a PROPFIND reads, is current.
        let kept = try await index.writeChain(domain: "d", path: ["docs"])
        let current = try await index.chain(domain: "d", path: ["docs"])
        #expect(kept == before)
        #expect(current.map(\.id) == kept.map(\.id))
        #expect(current.map(\.listedAt) == kept.map(\.listedAt))
        #expect(try #require(current.last).treeVersion > (try #require(kept.last)).treeVersion)

        // A write that may change a folder forgets the kept chain.
        try await index.markListed(id: docs.id, at: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try await index.writeChain(domain: "d", path: ["docs"]).last?.listedAt == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(index.writeChainReads.load(ordering: .relaxed) == reads + 1)
    }

    @Test("a folder deleted, made again, moved away or replaced by a file between two writes is what the next write finds",
          arguments: WriteMode.allCases)
    func folderChangesAreSeen(writeMode: WriteMode) async throws {
        let f = try await Fixture(ttl: 60, writeMode: writeMode)
        defer { f.cleanUp() }
        let first = try await f.provider.makeFolder(at: ["docs"])
        _ = try await f.put("a", at: ["docs", "a.txt"], inline: writeMode == .back)

        try await f.provider.delete(at: ["docs"])
        let again = try await f.provider.makeFolder(at: ["docs"])
        #expect(again.id != first.id)
        let b = try await f.put("b", at: ["docs", "b.txt"], inline: writeMode == .back)
        #expect(b.parentID == again.id, "the write landed in the deleted folder")
        #expect(try await f.provider.item(at: ["docs", "b.txt"])?.id == b.id)

        _ = try await f.provider.move(from: ["docs"], to: ["moved"], overwrite: false)
        await #expect(throws: ProviderError.parentMissing) {
            _ = try await f.put("c", at: ["docs", "c.txt"], inline: writeMode == .back)
        }
        #expect(try await f.provider.item(at: ["moved", "b.txt"])?.id == b.id)

        _ = try await f.put("now a file", at: ["docs"], inline: writeMode == .back)
        await #expect(throws: ProviderError.parentMissing) {
            _ = try await f.put("d", at: ["docs", "d.txt"], inline: writeMode == .back)
        }
    }
}
