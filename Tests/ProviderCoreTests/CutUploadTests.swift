import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing
import Upstreams

/// An upload the upstream took just before davgate stopped, so that the
/// journal never recorded it: at the next start the newest write goes there
/// under its name, not into a conflict copy of davgate's own upload; a
/// change made upstream by someone else is still a conflict.
@Suite("uploads cut off before they were recorded")
struct CutUploadTests {
    /// Two writes of `x.txt` journaled, and the older one delivered to the
    /// upstream behind the journal's back, as a kill -9 right after the
    /// store took it leaves things.
    func cutAfterDelivery(_ f: Fixture, deliver index: Int) async throws {
        _ = try await f.put("first write", at: ["x.txt"])
        _ = try await f.put("second, longer write", at: ["x.txt"])
        let entries = try await f.provider.index.journal(domain: "files")
        #expect(entries.count == 2)
        _ = try await f.store.base.upload(f.provider.cache.outboxFile(entries[index].file), to: ["x.txt"], expecting: .absent, progress: nil)
    }

    func drain(_ f: Fixture) async throws {
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        #expect(try await eventually { try await f.provider.index.journal(domain: "files").isEmpty })
    }

    func names(_ f: Fixture) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: f.upstream.path).sorted()
    }

    @Test("an older write that reached the upstream unrecorded: the newest replaces it, no conflict copy", arguments: [0, 1])
    func cutUploadIsOurs(delivered: Int) async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        try await cutAfterDelivery(f, deliver: delivered)
        try await drain(f)
        #expect(try names(f) == ["x.txt"], "no conflict copy of our own upload")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("x.txt"), encoding: .utf8) == "second, longer write")
        let item = try #require(try await f.provider.item(at: ["x.txt"]))
        #expect(f.provider.state(of: item) == .materialized)
    }

    @Test("the same size written upstream by someone else is still a conflict: both kept")
    func someoneElsesChangeStaysAConflict() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        _ = try await f.put("ours", at: ["x.txt"])
        try f.write("them", "x.txt")
        try await drain(f)
        let listed = try names(f)
        #expect(listed.count == 2 && listed.contains("x.txt"), "\(listed)")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("x.txt"), encoding: .utf8) == "them")
    }
}
