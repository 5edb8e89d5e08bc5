import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// While write-back writes keep arriving, the journal uploads one file at a
/// time; once they stop, at `upload_parallelism` (`WriteActivity`).
@Suite("uploads make way for a burst of writes")
struct UploadsMakeWayTests {
    @Test("one upload at a time while writes come, four at once after", .timeLimit(.minutes(1)),
          .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
    func oneAtATimeDuringWrites() async throws {
        // A window of 2 s rather than a quarter: beside the rest of the
        // suite one PUT here took up to half a second.
        let f = try await Fixture(ttl: 60, writeMode: .back,
                                  uploads: UploadPolicy(quietDelay: 0, parallelism: 4, burstWindow: .seconds(2)))
        defer { f.cleanUp() }
        f.store.uploadLinger.withLockedValue { $0 = .milliseconds(200) }
        for n in 0..<8 { _ = try await f.put("before \(n)", at: ["before\(n).txt"], inline: true) }
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }

        // A write every 40 ms (and the PUT's own time), well inside the window.
        for n in 0..<40 {
            _ = try await f.put("during \(n)", at: ["during\(n).txt"], inline: true)
            try await Task.sleep(for: .milliseconds(40))
        }
        let duringWrites = f.store.mostUploadsInFlight.withLockedValue { $0 }
        let pendingAtEnd = try await f.provider.index.pendingUploads(domain: "files")
        f.store.mostUploadsInFlight.withLockedValue { $0 = 0 }

        while try await f.provider.index.pendingUploads(domain: "files") > 0 { try await Task.sleep(for: .milliseconds(20)) }
        let afterWrites = f.store.mostUploadsInFlight.withLockedValue { $0 }
        #expect(duringWrites == 1, "uploads at once while writes came: \(duringWrites)")
        // One upload of 200 ms at a time beside 40 writes: a backlog is left.
        try #require(pendingAtEnd >= 8, "pending when the writes stopped: \(pendingAtEnd)")
        #expect(afterWrites == 4, "uploads at once after the writes: \(afterWrites)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path).count == 48)
    }
}
