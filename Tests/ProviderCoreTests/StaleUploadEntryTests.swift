import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// The uploader keeps the due entries it read for up to a quarter second
/// (`runUploads`), so an entry may be started after it went stale: the file
/// written again, deleted, or locked meanwhile. Such an upload must send
/// nothing and change nothing; the newer state is what reaches the upstream.
@Suite("uploads started from an entry gone stale")
struct StaleUploadEntryTests {
    func fixture() async throws -> Fixture {
        try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
    }

    @Test("written again since: the older entry sends nothing, the newer one delivers the newest bytes")
    func writtenAgain() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        _ = try await f.put("first", at: ["x.txt"])
        let stale = try #require(try await f.provider.dueUploads(limit: 10).first)
        _ = try await f.put("second, longer", at: ["x.txt"])

        try await f.provider.upload(stale, unlessLocked: true)
        #expect(f.store.uploadsBegun.withLockedValue { $0 }.isEmpty, "nothing sent for the stale entry")
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("x.txt").path))
        #expect(try await f.provider.index.journal(domain: "files").count == 2, "the journal is as it was")

        let newest = try #require(try await f.provider.dueUploads(limit: 10).first)
        try await f.provider.upload(newest, unlessLocked: true)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("x.txt"), encoding: .utf8) == "second, longer")
        #expect(try await f.provider.index.journal(domain: "files").isEmpty)
    }

    @Test("deleted since: nothing is sent, and nothing comes back")
    func deleted() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        _ = try await f.put("doomed", at: ["x.txt"])
        let stale = try #require(try await f.provider.dueUploads(limit: 10).first)
        try await f.provider.delete(at: ["x.txt"])

        try await f.provider.upload(stale, unlessLocked: true)
        #expect(f.store.uploadsBegun.withLockedValue { $0 }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("x.txt").path))
        #expect(try await f.provider.item(at: ["x.txt"]) == nil)
        #expect(try await f.provider.index.journal(domain: "files").isEmpty)
    }

    @Test("locked since: the background upload holds back, a flush (a MOVE's) still goes")
    func lockedSince() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        let item = try await f.put("held", at: ["x.txt"])
        let stale = try #require(try await f.provider.dueUploads(limit: 10).first)
        _ = try await f.provider.createLock(on: item, depthInfinity: false, exclusive: true, ownerXML: nil, principal: "alice", timeout: 600)

        try await f.provider.upload(stale, unlessLocked: true)
        #expect(f.store.uploadsBegun.withLockedValue { $0 }.isEmpty, "a lock taken after the entry was read holds it back")
        #expect(try await f.provider.index.journal(domain: "files").count == 1)

        try await f.provider.upload(stale)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("x.txt"), encoding: .utf8) == "held")
        #expect(try await f.provider.index.journal(domain: "files").isEmpty)
    }
}
