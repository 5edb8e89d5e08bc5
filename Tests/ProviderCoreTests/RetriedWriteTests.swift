import Foundation
@testable import ProviderCore
import Testing

/// A write-through the upstream took and the index never recorded (the
/// instance that took it was killed in between), sent again by a client
/// that heard nothing: the retry is that write, not a conflict with it.
@Suite("writes retried after the upstream took them")
struct RetriedWriteTests {
    @Test("an overwrite whose bytes the upstream already holds is recorded as the write: no conflict copy, the index knows the version")
    func retriedOverwrite() async throws {
        let f = try await Fixture(ttl: 3600)
        defer { f.cleanUp() }
        _ = try await f.put("first", at: ["a.txt"])
        // The first attempt of the next write reached the upstream only.
        try f.write("second", "a.txt")
        let retried = try await f.put("second", at: ["a.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path) == ["a.txt"], "no conflict copy")
        #expect(retried.upstreamVersion == (try await f.store.stat(["a.txt"]))?.version)
    }

    @Test("a new file whose bytes the upstream already holds is recorded as the write")
    func retriedCreate() async throws {
        let f = try await Fixture(ttl: 3600)
        defer { f.cleanUp() }
        try await f.provider.refreshIfStale(try await f.provider.root())
        try f.write("made", "new.txt")
        let retried = try await f.put("made", at: ["new.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path) == ["new.txt"], "no conflict copy")
        #expect(retried.name == "new.txt")
    }

    @Test("other bytes of the same size are a conflict all the same: both kept")
    func sameSizeOtherBytes() async throws {
        let f = try await Fixture(ttl: 3600)
        defer { f.cleanUp() }
        _ = try await f.put("first", at: ["a.txt"])
        try f.write("theirs", "a.txt")
        let outcome = try await f.provider.write(try f.request("mine!!", at: ["a.txt"]))
        #expect(outcome.conflictCopy != nil)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "theirs")
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path).count == 2)
    }
}
