import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// Small write-back writes make no file before their answer: the journal
/// row holds their bytes, durable with the grouped commit, and the cache
/// file and the outbox file are made from it when first needed (a read, the
/// upload). A crash may leave those files short: the next start removes
/// what is not whole, and they are made again.
@Suite("small writes kept in the journal")
struct InlineJournalTests {
    func outboxNames(_ f: Fixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: f.provider.cache.outbox.path)
    }

    func text(_ f: Fixture, at path: ItemPath) async throws -> String {
        let item = try #require(try await f.provider.item(at: path))
        let read = try await f.provider.contents(of: item, at: path)
        defer { withExtendedLifetime(read.lease) {} }
        return try String(contentsOf: read.file, encoding: .utf8)
    }

    func modificationTime(_ path: String) -> TimeInterval? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return TimeInterval(st.st_mtim.tv_sec) + TimeInterval(st.st_mtim.tv_nsec) / 1e9
    }

    @Test("a small write makes no file; its first read makes the cache file from the journal; a newer write replaces that file")
    func noFileUntilRead() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        #expect(f.provider.inlineWriteLimit > 0)
        let item = try await f.put("first", at: ["s.txt"], inline: true)
        #expect(try outboxNames(f).isEmpty, "no outbox file")
        #expect(!f.provider.cache.hasFile(for: item.id), "no cache file")
        #expect(try await f.provider.index.inlineWrites(domain: "files").map(\.content) == [Data("first".utf8)])

        #expect(try await text(f, at: ["s.txt"]) == "first")
        #expect(f.provider.cache.hasFile(for: item.id), "the read made the cache file")
        let made = try #require(modificationTime(f.provider.cache.path(for: item.id)))
        #expect(abs(made - item.modified.timeIntervalSince1970) < 1e-6, "the write's modification time")

        // Replaced by a rename: a reader opening it meanwhile finds a file.
        let inode = try FileManager.default.attributesOfItem(atPath: f.provider.cache.path(for: item.id))[.systemFileNumber] as? Int
        _ = try await f.put("second", at: ["s.txt"], inline: true)
        #expect(try String(contentsOfFile: f.provider.cache.path(for: item.id), encoding: .utf8) == "second")
        #expect(try FileManager.default.attributesOfItem(atPath: f.provider.cache.path(for: item.id))[.systemFileNumber] as? Int != inode)
        #expect(try await text(f, at: ["s.txt"]) == "second")
        #expect(try outboxNames(f).isEmpty)
    }

    @Test("the upload makes the outbox file from the journal: the upstream gets the bytes and their time, and the file stays the item's content")
    func uploadMakesTheFile() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        let item = try await f.put("uploaded bytes", at: ["u.txt"], inline: true)
        #expect(!f.provider.cache.hasFile(for: item.id))
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        let deadline = ContinuousClock.now + .seconds(20)
        while try await f.provider.index.pendingUploads(domain: "files") > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let upstream = f.upstream.appendingPathComponent("u.txt").path
        #expect(try String(contentsOfFile: upstream, encoding: .utf8) == "uploaded bytes")
        let stamped = try #require(modificationTime(upstream))
        #expect(abs(stamped - item.modified.timeIntervalSince1970) < 1e-6, "the write's modification time upstream")
        #expect(f.provider.cache.hasFile(for: item.id), "the uploaded file is the item's content, not fetched back")
        #expect(try String(contentsOfFile: f.provider.cache.path(for: item.id), encoding: .utf8) == "uploaded bytes")
    }

    @Test("files made from the journal and cut short by a crash go at start, and are made whole again")
    func shortFilesAfterCrash() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let item = try await f.put("acknowledged, never fsynced", at: ["small.txt"], inline: true)
        let entry = try #require(try await f.provider.index.journal(domain: "files").first)
        #expect(try await text(f, at: ["small.txt"]) == "acknowledged, never fsynced")
        let outbox = try await f.provider.outboxFileForUpload(entry).path
        #expect(try String(contentsOfFile: outbox, encoding: .utf8) == "acknowledged, never fsynced")

        // What power loss can leave of files whose data was never synced.
        #expect(truncate(outbox, 0) == 0)
        #expect(truncate(f.provider.cache.path(for: item.id), 3) == 0)

        try await f.provider.recoverJournal()
        #expect(!FileManager.default.fileExists(atPath: outbox), "the short outbox file went")
        #expect(!f.provider.cache.hasFile(for: item.id), "the short cache file went")
        #expect(try await text(f, at: ["small.txt"]) == "acknowledged, never fsynced")
        #expect(try String(contentsOfFile: try await f.provider.outboxFileForUpload(entry).path, encoding: .utf8)
                == "acknowledged, never fsynced")

        // A whole outbox file stays: its time tells a cut upload of it.
        let whole = modificationTime(outbox)
        try await f.provider.recoverJournal()
        #expect(FileManager.default.fileExists(atPath: outbox))
        #expect(modificationTime(outbox) == whole)
    }

    /// A read that found the older bytes in the journal must not install
    /// them after a newer write removed the file: each write here races a
    /// read, and the read after the last write must see the last bytes.
    @Test("reads racing small writes never leave older bytes as the content")
    func readsRacingWrites() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        _ = try await f.put("v-start", at: ["r.txt"], inline: true)
        for round in 0..<150 {
            let listed = try #require(try await f.provider.item(at: ["r.txt"]))
            async let reading: Void = {
                let read = try await f.provider.contents(of: listed, at: ["r.txt"])
                withExtendedLifetime(read.lease) {}
            }()
            _ = try await f.put("v-\(round)", at: ["r.txt"], inline: true)
            try await reading
            #expect(try await text(f, at: ["r.txt"]) == "v-\(round)", "round \(round)")
        }
    }

    /// A reader that began a fetch of the upstream's version before a
    /// small write must get those bytes, and they must not become the
    /// written file's content when the fetch ends after the write.
    @Test("a fetch that began before a small write keeps its bytes to itself; the write's bytes are the content")
    func fetchRacingWrite() async throws {
        let f = try await Fixture(ttl: 600, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try f.write("upstream version", "a.txt")
        let listed = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(!listed.isMaterialized)
        f.store.fetchDelay.withLockedValue { $0 = .milliseconds(400) }
        async let fetched = f.provider.contents(of: listed, at: ["a.txt"])
        while f.store.fetchCount.withLockedValue({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        _ = try await f.put("written here", at: ["a.txt"], inline: true)
        let old = try await fetched
        #expect(try String(contentsOf: old.file, encoding: .utf8) == "upstream version")
        withExtendedLifetime(old.lease) {}
        #expect(try await text(f, at: ["a.txt"]) == "written here")
    }

    @Test("write-through takes no bytes inline: the upstream has them before the answer")
    func writeThroughSyncsItself() async throws {
        let f = try await Fixture(writeMode: .through)
        defer { f.cleanUp() }
        #expect(f.provider.inlineWriteLimit == 0)
        _ = try await f.put("through", at: ["t.txt"], inline: true)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("t.txt"), encoding: .utf8) == "through")
        #expect(try await f.provider.index.inlineWrites(domain: "files").isEmpty)
    }
}
