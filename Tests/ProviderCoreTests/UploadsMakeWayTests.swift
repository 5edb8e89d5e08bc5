import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// While write-back writes keep arriving, the journal starts no upload;
/// once they stop, or after `burstLimit` of them, it uploads at
/// `upload_parallelism` (`WriteActivity`). The uploads are held in the
/// store, so what is counted is what the uploader starts, whatever the
/// machine's speed; the window is 2 s rather than a quarter, as one PUT
/// beside the rest of the suite took up to half a second.
@Suite("uploads make way for a burst of writes")
struct UploadsMakeWayTests {
    func fixture(limit: Duration = .seconds(30)) async throws -> Fixture {
        let f = try await Fixture(ttl: 60, writeMode: .back,
                                  uploads: UploadPolicy(quietDelay: 0, parallelism: 4, burstWindow: .seconds(2), burstLimit: limit))
        f.store.uploadsHeld.withLockedValue { $0 = true }
        return f
    }

    func drain(_ f: Fixture, expecting count: Int) async throws {
        f.store.uploadsHeld.withLockedValue { $0 = false }
        while try await f.provider.index.pendingUploads(domain: "files") > 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path).count == count)
    }

    @Test("no upload starts while writes come; four run once they stop", .timeLimit(.minutes(1)),
          .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
    func noneDuringWrites() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        for n in 0..<12 {
            _ = try await f.put("during \(n)", at: ["during\(n).txt"], inline: true)
            try await Task.sleep(for: .milliseconds(50))
        }
        let duringWrites = f.store.mostUploadsInFlight.withLockedValue { $0 }
        #expect(duringWrites == 0, "uploads started while writes came: \(duringWrites)")
        // The writes stopped. Nothing is in flight to wake the uploader as
        // it finishes: it looks again a window after it began to wait.
        #expect(await eventually(within: .seconds(8)) { f.store.uploadsInFlight.withLockedValue { $0 } == 4 },
                "uploads at once after the writes: \(f.store.uploadsInFlight.withLockedValue { $0 })")
        try await drain(f, expecting: 12)
    }

    @Test("writes that never pause get the full width after the burst limit", .timeLimit(.minutes(1)),
          .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
    func widthAfterTheLimit() async throws {
        let f = try await fixture(limit: .seconds(1))
        defer { f.cleanUp() }
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        var widened = false
        var n = 0
        let deadline = ContinuousClock.now + .seconds(10)
        // Writing on, never a pause of the window, until four run at once.
        while !widened, ContinuousClock.now < deadline {
            _ = try await f.put("file \(n)", at: ["f\(n).txt"], inline: true)
            n += 1
            try await Task.sleep(for: .milliseconds(50))
            widened = f.store.uploadsInFlight.withLockedValue { $0 } == 4
        }
        #expect(widened, "four uploads at once while writes went on past the limit")
        try await drain(f, expecting: n)
    }
}
