import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// Uploads that arrive in pieces (`Content-Range` PUTs, the rest of a cut
/// PUT, SabreDAV's `PATCH`), through the real provider, index and folder
/// upstream. Pieces are staged beside the cache and the path keeps its old
/// content until they cover the declared length; the last one commits them
/// as one ordinary write, so it gets everything a write promises: checked
/// against locks and against a change made since the first piece, kept as
/// one version, and surviving a restart in between. Staging must also never
/// mix two users' pieces, lose a piece to a concurrent one, or keep what
/// nobody finishes.
@Suite("Staged uploads", .disabled(if: TestIndex.usesPostgres, "a shared index refuses uploads in pieces (SharedIndexTests.piecesRefused)"))
struct StagedUploadTests {
    private static let alice = WriteConditions(principal: "alice")

    private func fixture(_ writeMode: WriteMode = .through, versions: VersionPolicy? = nil, uploadExpiry: TimeInterval = 86_400) async throws -> Fixture {
        // Write-back uploads only when flushed (`flushAllUploads`).
        try await Fixture(writeMode: writeMode, uploads: UploadPolicy(quietDelay: 3600), versions: versions, uploadExpiry: uploadExpiry)
    }

    /// Sends `bytes` as the piece at `offset` of a `total`-byte upload, as
    /// the server does: written into a file of the provider's, handed over.
    private func piece(_ provider: Provider, _ bytes: some Collection<UInt8>, at offset: Int, total: Int, path: ItemPath,
                       conditions: WriteConditions = alice) async throws -> Provider.PieceOutcome {
        let file = provider.newWriteFile()
        try Data(bytes).write(to: file)
        return try await provider.writePiece(file, count: Int64(bytes.count), at: Int64(offset), total: Int64(total), path: path,
                                             conditions: conditions)
    }

    /// Alice's conditions naming the file at `path` as it is: what a piece
    /// past byte 0 that patches it must send (If-Match).
    private func patching(_ f: Fixture, _ path: ItemPath) async throws -> WriteConditions {
        let current = try #require(try await f.provider.item(at: path))
        return WriteConditions(principal: "alice", judgedAgainst: .etag(current.etag))
    }

    private func piece(_ f: Fixture, _ text: String, at offset: Int, total: Int, path: ItemPath,
                       conditions: WriteConditions = alice) async throws -> Provider.PieceOutcome {
        try await piece(f.provider, Array(text.utf8), at: offset, total: total, path: path, conditions: conditions)
    }

    private func upstreamBytes(_ f: Fixture, _ name: String) throws -> Data {
        try Data(contentsOf: f.upstream.appendingPathComponent(name))
    }

    private func upstreamText(_ f: Fixture, _ name: String) throws -> String {
        try String(contentsOf: f.upstream.appendingPathComponent(name), encoding: .utf8)
    }

    /// What the provider serves at `path` (the local truth in write-back).
    private func served(_ f: Fixture, _ path: ItemPath) async throws -> String? {
        guard let item = try await f.provider.item(at: path) else { return nil }
        return try String(contentsOf: try await f.provider.contents(of: item, at: path).file, encoding: .utf8)
    }

    /// The files left in the cache folder's `uploads/` (staged uploads) or
    /// `tmp/` (pieces handed over).
    private func leftovers(_ f: Fixture, in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: f.provider.cache.folder.appendingPathComponent(folder).path)
    }

    /// Random bytes (an empty array, failing the test, if /dev/urandom cannot be read).
    private func randomBytes(_ count: Int) -> [UInt8] {
        (try? randomData(count)).map { [UInt8]($0) } ?? []
    }

    @Test("pieces sent out of order: nothing at the path until the last, then exactly the bytes, and nothing left staged", arguments: WriteMode.allCases)
    func outOfOrder(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        // Past 1 MiB, the step the bytes are copied in.
        let bytes = randomBytes(2_500_000)
        let path: ItemPath = ["big.bin"]

        // An upload begins at byte 0; past that, pieces come in any order.
        let first = try #require(try await piece(f.provider, bytes[..<400_000], at: 0, total: bytes.count, path: path).staged)
        #expect(first.offset == 400_000)
        #expect(try await f.provider.item(at: path) == nil)
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("big.bin").path))

        let second = try #require(try await piece(f.provider, bytes[1_000_000...], at: 1_000_000, total: bytes.count, path: path).staged)
        #expect(second.offset == 400_000, "a gap after byte 400,000")
        #expect(second.received == ByteRanges([0...399_999, 1_000_000...2_499_999]))
        #expect(f.provider.stagedUpload(at: path, principal: "alice") == second)
        #expect(try await f.provider.item(at: path) == nil)

        let written = try #require(try await piece(f.provider, bytes[400_000..<1_000_000], at: 400_000, total: bytes.count, path: path).written)
        #expect(written.created && written.item.size == Int64(bytes.count))
        try await f.provider.flushAllUploads()
        #expect(try upstreamBytes(f, "big.bin") == Data(bytes))
        #expect(f.provider.stagedUpload(at: path, principal: "alice") == nil)
        #expect(try leftovers(f, in: "uploads").isEmpty, "the staged bytes and record went with the commit")
        #expect(try leftovers(f, in: "tmp").isEmpty, "every piece handed over was consumed")
    }

    @Test("a piece over an existing file patches it as Apache does: at once, the old bytes around it; a smaller total truncates",
          arguments: WriteMode.allCases)
    func patchesExisting(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        let old = String((0..<100).map { Character(String($0 % 10)) })
        try f.write(old, "a.txt")
        try f.write(old, "b.txt")

        await #expect(throws: ProviderError.patchNeedsCondition, "patching the file as it is needs its ETag") {
            _ = try await piece(f, "ABCDEFGHIJ", at: 10, total: 100, path: ["a.txt"])
        }
        let patched = try #require(try await piece(f, "ABCDEFGHIJ", at: 10, total: 100, path: ["a.txt"],
                                                   conditions: try await patching(f, ["a.txt"])).written)
        #expect(!patched.created && patched.item.size == 100)
        let expected = String(old.prefix(10)) + "ABCDEFGHIJ" + String(old.dropFirst(20))
        #expect(try await served(f, ["a.txt"]) == expected)

        let truncated = try #require(try await piece(f, "xyz", at: 3, total: 50, path: ["b.txt"],
                                                     conditions: try await patching(f, ["b.txt"])).written)
        #expect(truncated.item.size == 50)
        let shorter = String(old.prefix(3)) + "xyz" + String(old.dropFirst(6).prefix(44))
        #expect(try await served(f, ["b.txt"]) == shorter)

        try await f.provider.flushAllUploads()
        #expect(try upstreamText(f, "a.txt") == expected)
        #expect(try upstreamText(f, "b.txt") == shorter)
        #expect(try leftovers(f, in: "uploads").isEmpty)
    }

    @Test("an upload from byte 0 over an existing file is new content: the old stays whole until the last piece")
    func newContentOverExisting() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        let old = String(repeating: "o", count: 100)
        _ = try await f.put(old, at: ["a.txt"])
        let staged = try #require(try await piece(f, String(repeating: "n", count: 40), at: 0, total: 100, path: ["a.txt"]).staged)
        #expect(staged.offset == 40, "the old bytes do not count")
        #expect(try await served(f, ["a.txt"]) == old)
        _ = try #require(try await piece(f, String(repeating: "N", count: 60), at: 40, total: 100, path: ["a.txt"]).written)
        #expect(try upstreamText(f, "a.txt") == String(repeating: "n", count: 40) + String(repeating: "N", count: 60))
    }

    @Test("a piece at byte 0 begins again: an abandoned upload's bytes never mix into the new one")
    func byteZeroBeginsAgain() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        // The first upload is abandoned after its first piece; the second,
        // of the same length, must not count that piece as its own.
        _ = try #require(try await piece(f, "first-", at: 0, total: 12, path: ["c.txt"]).staged)
        let restarted = try #require(try await piece(f, "second", at: 0, total: 12, path: ["c.txt"]).staged)
        #expect(restarted.received == ByteRanges([0...5]), "the second upload starts afresh")
        _ = try #require(try await piece(f, "-tail!", at: 6, total: 12, path: ["c.txt"]).written)
        #expect(try upstreamText(f, "c.txt") == "second-tail!")
    }

    @Test("a first piece past byte 0 over nothing is refused, and nothing is staged")
    func pieceOfNothing() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        await #expect(throws: ProviderError.stagedUploadMissing) {
            _ = try await piece(f, "tail", at: 10, total: 14, path: ["new.txt"])
        }
        #expect(f.provider.stagedUpload(at: ["new.txt"], principal: "alice") == nil)
        #expect(try leftovers(f, in: "uploads").isEmpty && leftovers(f, in: "tmp").isEmpty)
    }

    @Test("an upload longer than the existing file keeps the old content at the path until the gap past its end is filled",
          arguments: WriteMode.allCases)
    func extendsExisting(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        let old = String(repeating: "o", count: 100)
        _ = try await f.put(old, at: ["a.txt"])

        let staged = try #require(try await piece(f, String(repeating: "t", count: 50), at: 150, total: 200, path: ["a.txt"],
                                                  conditions: try await patching(f, ["a.txt"])).staged)
        #expect(staged.offset == 100, "the old bytes count as received")
        #expect(staged.received == ByteRanges([0...99, 150...199]))
        #expect(try await served(f, ["a.txt"]) == old)

        _ = try #require(try await piece(f, String(repeating: "m", count: 50), at: 100, total: 200, path: ["a.txt"]).written)
        try await f.provider.flushAllUploads()
        let expected = old + String(repeating: "m", count: 50) + String(repeating: "t", count: 50)
        #expect(try upstreamText(f, "a.txt") == expected)
        #expect(try await served(f, ["a.txt"]) == expected)
    }

    @Test("a piece that is the whole file replaces it without fetching the old content")
    func wholePieceFetchesNothing() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        try f.write("old content, never fetched", "a.txt")
        _ = try #require(try await f.provider.item(at: ["a.txt"]))
        _ = try #require(try await piece(f, "0123456789", at: 0, total: 10, path: ["a.txt"]).written)
        #expect(try upstreamText(f, "a.txt") == "0123456789")
        #expect(f.store.fetchCount.withLockedValue { $0 } == 0)
    }

    @Test("a staged upload survives a restart: the next provider finds it and its last piece completes it", arguments: WriteMode.allCases)
    func survivesRestart(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        _ = try await f.put("old", at: ["a.txt"])
        let staged = try #require(try await piece(f, "ABCDEFGHIJ", at: 0, total: 20, path: ["a.txt"]).staged)

        let restarted = try await f.restarted()
        let found = try #require(restarted.stagedUpload(at: ["a.txt"], principal: "alice"))
        #expect(found.received == staged.received && found.total == 20 && found.basis == staged.basis && found.path == ["a.txt"])
        #expect(restarted.stagedUpload(at: ["a.txt"], principal: "bob") == nil)

        let written = try #require(try await piece(restarted, Array("KLMNOPQRST".utf8), at: 10, total: 20, path: ["a.txt"]).written)
        #expect(written.item.size == 20)
        try await restarted.flushAllUploads()
        #expect(try upstreamText(f, "a.txt") == "ABCDEFGHIJKLMNOPQRST")
        #expect(restarted.stagedUpload(at: ["a.txt"], principal: "alice") == nil)
    }

    @Test("the file changed or deleted between pieces: the next piece is refused as stale and the pieces are dropped",
          arguments: WriteMode.allCases)
    func stale(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        _ = try #require(try await piece(f, "01234", at: 0, total: 10, path: ["new.txt"]).staged)
        _ = try await f.put("another writer's", at: ["new.txt"])
        await #expect(throws: ProviderError.stagedUploadStale) {
            _ = try await piece(f, "56789", at: 5, total: 10, path: ["new.txt"])
        }
        #expect(f.provider.stagedUpload(at: ["new.txt"], principal: "alice") == nil)
        #expect(try leftovers(f, in: "uploads").isEmpty)
        #expect(try await served(f, ["new.txt"]) == "another writer's")

        _ = try await f.put("old", at: ["gone.txt"])
        _ = try #require(try await piece(f, "01234", at: 0, total: 10, path: ["gone.txt"]).staged)
        try await f.provider.delete(at: ["gone.txt"])
        await #expect(throws: ProviderError.stagedUploadStale) {
            _ = try await piece(f, "56789", at: 5, total: 10, path: ["gone.txt"])
        }
        #expect(f.provider.stagedUpload(at: ["gone.txt"], principal: "alice") == nil)
        #expect(try await f.provider.item(at: ["gone.txt"]) == nil, "not created again from the dropped pieces")

        // Starting again from byte 0 is a new upload, which commits.
        _ = try #require(try await piece(f, "0123456789", at: 0, total: 10, path: ["new.txt"]).written)
        try await f.provider.flushAllUploads()
        #expect(try upstreamText(f, "new.txt") == "0123456789")
    }

    @Test("another declared length is another upload: the pieces of the first are dropped")
    func anotherTotal() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        _ = try #require(try await piece(f, "AAAAA", at: 0, total: 10, path: ["a.txt"]).staged)
        let restarted = try #require(try await piece(f, "aaa", at: 0, total: 6, path: ["a.txt"]).staged)
        #expect(restarted.total == 6 && restarted.received == ByteRanges([0...2]))
        _ = try #require(try await piece(f, "bbb", at: 3, total: 6, path: ["a.txt"]).written)
        #expect(try upstreamText(f, "a.txt") == "aaabbb")
    }

    @Test("two users' pieces for one path never mix: each upload holds its own, and the first to commit makes the other stale")
    func principalsApart() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        let bob = WriteConditions(principal: "bob")
        _ = try #require(try await piece(f, "alice", at: 0, total: 10, path: ["a.txt"]).staged)
        _ = try #require(try await piece(f, "BOB!!", at: 0, total: 10, path: ["a.txt"], conditions: bob).staged)
        #expect(f.provider.stagedUpload(at: ["a.txt"], principal: "alice")?.received == ByteRanges([0...4]))
        #expect(f.provider.stagedUpload(at: ["a.txt"], principal: "bob")?.received == ByteRanges([0...4]))
        #expect(try await f.provider.item(at: ["a.txt"]) == nil, "neither is complete")

        _ = try #require(try await piece(f, "-ALIC", at: 5, total: 10, path: ["a.txt"]).written)
        #expect(try upstreamText(f, "a.txt") == "alice-ALIC")
        await #expect(throws: ProviderError.stagedUploadStale) {
            _ = try await piece(f, "bob..", at: 5, total: 10, path: ["a.txt"], conditions: bob)
        }
        #expect(try upstreamText(f, "a.txt") == "alice-ALIC")
        #expect(try leftovers(f, in: "uploads").isEmpty)
    }

    @Test("two pieces of one upload sent at once both land, round after round", arguments: WriteMode.allCases)
    func concurrentPieces(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        let provider = f.provider
        for round in 0..<12 {
            let bytes = randomBytes(200_000)
            let path: ItemPath = ["round-\(round).bin"]
            // The upload begins at byte 0; its other two pieces race.
            _ = try #require(try await piece(provider, bytes[..<50_000], at: 0, total: bytes.count, path: path).staged)
            async let middle = piece(provider, bytes[50_000..<100_000], at: 50_000, total: bytes.count, path: path)
            async let tail = piece(provider, bytes[100_000...], at: 100_000, total: bytes.count, path: path)
            let outcomes = try await [middle, tail]
            #expect(outcomes.filter { $0.written != nil }.count == 1, "round \(round): one of them completes the upload")
            #expect(outcomes.compactMap(\.staged).map(\.received) == [ByteRanges([0...99_999])]
                        || outcomes.compactMap(\.staged).map(\.received) == [ByteRanges([0...49_999, 100_000...199_999])])
            try await provider.flushAllUploads()
            #expect(try upstreamBytes(f, "round-\(round).bin") == Data(bytes), "round \(round)")
        }
        #expect(try leftovers(f, in: "uploads").isEmpty)
    }

    @Test("a LOCK taken by another user before the last piece refuses it, and the staged upload is kept for after the UNLOCK",
          arguments: WriteMode.allCases)
    func lockedBeforeLastPiece(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        _ = try await f.put("old", at: ["doc.txt"])
        _ = try #require(try await piece(f, "ABCDEFGHIJ", at: 0, total: 20, path: ["doc.txt"]).staged)
        let item = try #require(try await f.provider.item(at: ["doc.txt"]))
        let lock = try await f.provider.createLock(on: item, depthInfinity: false, exclusive: true, ownerXML: nil, principal: "bob", timeout: 600)

        await #expect(throws: ProviderError.locked(domain: "files", root: ["doc.txt"], isFolder: false)) {
            _ = try await piece(f, "KLMNOPQRST", at: 10, total: 20, path: ["doc.txt"])
        }
        #expect(f.provider.stagedUpload(at: ["doc.txt"], principal: "alice") != nil)
        #expect(try await served(f, ["doc.txt"]) == "old")
        try await f.provider.flushAllUploads()
        #expect(try upstreamText(f, "doc.txt") == "old")

        try await f.provider.unlock(token: lock.token)
        _ = try #require(try await piece(f, "KLMNOPQRST", at: 10, total: 20, path: ["doc.txt"]).written)
        try await f.provider.flushAllUploads()
        #expect(try upstreamText(f, "doc.txt") == "ABCDEFGHIJKLMNOPQRST")
        #expect(try leftovers(f, in: "uploads").isEmpty)
    }

    @Test("with versions kept, an upload in three pieces over a file keeps exactly one version: the old content",
          arguments: WriteMode.allCases)
    func oneVersion(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode, versions: VersionPolicy(keep: 10))
        defer { f.cleanUp() }
        try f.write("old", "a.txt")
        _ = try #require(try await f.provider.item(at: ["a.txt"]))
        _ = try #require(try await piece(f, "aaaaaaaaaa", at: 0, total: 30, path: ["a.txt"]).staged)
        _ = try #require(try await piece(f, "cccccccccc", at: 20, total: 30, path: ["a.txt"]).staged)
        _ = try #require(try await piece(f, "bbbbbbbbbb", at: 10, total: 30, path: ["a.txt"]).written)
        try await f.provider.flushAllUploads()
        #expect(try upstreamText(f, "a.txt") == "aaaaaaaaaabbbbbbbbbbcccccccccc")
        var kept: [String] = []
        for version in try await f.provider.versions(of: ["a.txt"]) {
            let file = try await f.provider.versionContents(of: ["a.txt"], id: version.id)
            kept.append(try String(contentsOf: file, encoding: .utf8))
            f.provider.discardWrite(file)
        }
        #expect(kept == ["old"])
    }

    @Test("a cut PUT's first MiB or more is kept for a Content-Range resume; less, or all of it, is not")
    func cutWrite() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        let bytes = randomBytes(1_600_000)
        let cut = 1 << 20

        let file = f.provider.newWriteFile()
        try Data(bytes[..<cut]).write(to: file)
        #expect(await f.provider.stageCutWrite(file, count: Int64(cut), total: Int64(bytes.count), path: ["a.bin"], conditions: Self.alice))
        let staged = try #require(f.provider.stagedUpload(at: ["a.bin"], principal: "alice"))
        #expect(staged.offset == Int64(cut) && staged.total == Int64(bytes.count))
        #expect(try await f.provider.item(at: ["a.bin"]) == nil)
        _ = try #require(try await piece(f.provider, bytes[cut...], at: cut, total: bytes.count, path: ["a.bin"]).written)
        #expect(try upstreamBytes(f, "a.bin") == Data(bytes))

        let small = f.provider.newWriteFile()
        try Data(bytes[..<(cut - 1)]).write(to: small)
        #expect(!(await f.provider.stageCutWrite(small, count: Int64(cut - 1), total: Int64(bytes.count), path: ["b.bin"],
                                                 conditions: Self.alice)))
        #expect(f.provider.stagedUpload(at: ["b.bin"], principal: "alice") == nil)

        let whole = f.provider.newWriteFile()
        try Data(bytes).write(to: whole)
        #expect(!(await f.provider.stageCutWrite(whole, count: Int64(bytes.count), total: Int64(bytes.count), path: ["c.bin"],
                                                 conditions: Self.alice)))
        #expect(f.provider.stagedUpload(at: ["c.bin"], principal: "alice") == nil)
        #expect(try leftovers(f, in: "uploads").isEmpty)
        #expect(try leftovers(f, in: "tmp").isEmpty, "the files not kept were removed")
    }

    @Test("staged uploads idle for longer than upload_expiry are removed, fresh ones kept")
    func expiry() async throws {
        let f = try await fixture(uploadExpiry: 3600)
        defer { f.cleanUp() }
        #expect(f.provider.uploadExpiry == 3600)
        _ = try #require(try await piece(f, "old", at: 0, total: 10, path: ["idle.txt"]).staged)
        _ = try #require(try await piece(f, "new", at: 0, total: 10, path: ["fresh.txt"]).staged)

        await f.provider.expireStagedUploads(now: Date().addingTimeInterval(1800))
        #expect(f.provider.stagedUpload(at: ["idle.txt"], principal: "alice") != nil, "half the expiry: both kept")
        #expect(try leftovers(f, in: "uploads").count == 4)

        // The idle one last received a piece two hours ago.
        let key = UploadStaging.key(path: ["idle.txt"], principal: "alice")
        var idle = try #require(f.provider.staging.load(key))
        idle.updated = Date().addingTimeInterval(-7200)
        try await f.provider.staging.save(idle, key: key)
        // A part file whose record a crash lost, as old.
        let orphan = f.provider.staging.folder.appendingPathComponent("0123456789abcdef0123456789abcdef.part")
        try Data("lost".utf8).write(to: orphan)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: orphan.path)

        await f.provider.expireStagedUploads()
        #expect(f.provider.stagedUpload(at: ["idle.txt"], principal: "alice") == nil)
        #expect(f.provider.stagedUpload(at: ["fresh.txt"], principal: "alice") != nil)
        let freshKey = UploadStaging.key(path: ["fresh.txt"], principal: "alice")
        #expect(try leftovers(f, in: "uploads").sorted() == [freshKey + ".json", freshKey + ".part"])

        _ = try #require(try await piece(f, "-and-more", at: 1, total: 10, path: ["fresh.txt"]).written)
        #expect(try upstreamText(f, "fresh.txt") == "n-and-more")
    }

    @Test("PATCH writes at an offset, at the end, or counted from the end, extending the file; past its end or on nothing it is refused",
          arguments: WriteMode.allCases)
    func patch(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        try f.write("0123456789", "a.txt")
        _ = try #require(try await f.provider.item(at: ["a.txt"]))

        func patch(_ text: String, _ position: Provider.PatchPosition, _ path: ItemPath = ["a.txt"]) async throws -> Provider.WriteOutcome {
            let file = f.provider.newWriteFile()
            try Data(text.utf8).write(to: file)
            return try await f.provider.patch(file, count: Int64(text.utf8.count), at: position, path: path, conditions: Self.alice)
        }

        #expect(try await patch("ab", .at(2)).item.size == 10)
        #expect(try await served(f, ["a.txt"]) == "01ab456789")
        #expect(try await patch("XYZ", .at(8)).item.size == 11)
        #expect(try await served(f, ["a.txt"]) == "01ab4567XYZ")
        _ = try await patch("!", .at(11))
        #expect(try await served(f, ["a.txt"]) == "01ab4567XYZ!")
        _ = try await patch("<end>", .append)
        #expect(try await served(f, ["a.txt"]) == "01ab4567XYZ!<end>")
        _ = try await patch("E", .fromEnd(2))
        #expect(try await served(f, ["a.txt"]) == "01ab4567XYZ!<enE>")
        _ = try await patch("tail", .fromEnd(1))
        #expect(try await served(f, ["a.txt"]) == "01ab4567XYZ!<enEtail")

        await #expect(throws: ProviderError.rangeNotSatisfiable(size: 20)) { _ = try await patch("x", .at(21)) }
        await #expect(throws: ProviderError.rangeNotSatisfiable(size: 20)) { _ = try await patch("x", .fromEnd(21)) }
        await #expect(throws: ProviderError.notFound) { _ = try await patch("x", .at(0), ["missing.txt"]) }
        #expect(try await f.provider.item(at: ["missing.txt"]) == nil)

        try await f.provider.flushAllUploads()
        #expect(try upstreamText(f, "a.txt") == "01ab4567XYZ!<enEtail")
        #expect(try leftovers(f, in: "tmp").isEmpty, "the patch bodies were removed, refused ones too")
    }
}

extension Provider.PieceOutcome {
    var staged: StagedUpload? {
        if case .staged(let upload) = self { upload } else { nil }
    }

    var written: Provider.WriteOutcome? {
        if case .written(let outcome) = self { outcome } else { nil }
    }
}
