import Foundation
@testable import ProviderCore
import Testing

/// A finished upload's completion does not wait for the index's fsync
/// (`IndexStore.completeUpload`); its outbox files are deleted only once a
/// sync covers it, so that a power loss that takes the completion back
/// finds every row it brings back with its file.
@Suite("outbox files of finished uploads")
struct SettledOutboxTests {
    @Test("a finished upload's outbox file stays until an index sync, then goes; the uploader does both")
    func deletedAfterSync() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        // Not inline: a file whose bytes no journal row holds, the one a
        // lost completion would need again.
        _ = try await f.put("large enough to matter", at: ["a.txt"])
        let entry = try #require(try await f.provider.index.journal(domain: "files").first)
        let outbox = f.provider.cache.outboxFile(entry.file).path

        try await f.provider.upload(entry)
        #expect(try await f.provider.index.journal(domain: "files").isEmpty, "the upload is recorded")
        #expect(FileManager.default.fileExists(atPath: outbox), "deleted before a sync covered the completion")
        await f.provider.removeSettledOutbox()
        #expect(!FileManager.default.fileExists(atPath: outbox))

        // The uploader's own turn deletes them too.
        _ = try await f.put("second", at: ["b.txt"])
        let second = try #require(try await f.provider.index.journal(domain: "files").first)
        try await f.provider.upload(second)
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        #expect(await eventually { !FileManager.default.fileExists(atPath: f.provider.cache.outboxFile(second.file).path) })
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("b.txt"), encoding: .utf8) == "second")
    }
}
