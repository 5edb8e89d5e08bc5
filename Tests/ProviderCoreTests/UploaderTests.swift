import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import ProviderCore
import ServiceLifecycle
import Testing

/// The uploader as a service of a `ServiceGroup`, as `davgate serve` runs
/// it: a graceful stop lets the upload in flight finish and starts no other.
@Suite("Uploader: a service that stops gracefully")
struct UploaderTests {
    /// Two files written back, one upload at a time, each taking `linger`.
    func twoWrites(linger: Duration) async throws -> Fixture {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 0, parallelism: 1))
        _ = try await f.put("first", at: ["a.txt"])
        _ = try await f.put("second", at: ["b.txt"])
        f.store.uploadLinger.withLockedValue { $0 = linger }
        return f
    }

    @Test("on a graceful stop the group's run returns once the upload in flight has finished; the entry not started stays in the journal")
    func gracefulStop() async throws {
        let f = try await twoWrites(linger: .seconds(1))
        defer { f.cleanUp() }
        let group = ServiceGroup(services: [Uploader(providers: [f.provider])], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        #expect(await eventually { f.store.uploadsBegun.withLockedValue { $0.count } == 1 })
        await group.triggerGracefulShutdown()

        let stopped = await outcome(of: running, within: prompt)
        #expect(stopped != nil, "the group's run returned")
        if case .failure(let error) = stopped { Issue.record("the group failed: \(error)") }
        let begun = f.store.uploadsBegun.withLockedValue { $0 }
        #expect(begun == [["a.txt"]], "the oldest went first and nothing started after the stop")
        #expect((try? String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8)) == "first", "the upload in flight finished")
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("b.txt").path))
        let pending = try await f.provider.index.newestEntries(domain: "files")
        #expect(pending.count == 1, "b.txt waits in the journal for the next start")
        #expect(try await f.provider.index.path(of: try #require(pending.first).itemID) == ["b.txt"])
    }

    @Test("an upload still in flight after the grace is cancelled; its entry stays in the journal and the run returns")
    func graceExpires() async throws {
        let f = try await twoWrites(linger: .seconds(60))
        defer { f.cleanUp() }
        let group = ServiceGroup(services: [Uploader(providers: [f.provider], grace: .milliseconds(300))], logger: Logger(label: "test"))
        let running = Task { try await group.run() }
        #expect(await eventually { f.store.uploadsBegun.withLockedValue { $0.count } == 1 })
        let asked = ContinuousClock.now
        await group.triggerGracefulShutdown()

        let stopped = await outcome(of: running, within: prompt)
        #expect(stopped != nil, "the group's run returned")
        #expect(ContinuousClock.now - asked < prompt, "soon after the grace, not when the 60 s upload would have ended")
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("a.txt").path))
        #expect(try await f.provider.index.newestEntries(domain: "files").count == 2, "both files go at the next start")
        #expect(try await f.provider.index.journal(domain: "files").allSatisfy { $0.attempts == 0 }, "a stop is no failed attempt")
    }
}
