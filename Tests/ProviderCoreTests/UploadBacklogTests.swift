import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// The uploader reads the journal in batches; a backlog larger than one
/// batch must not wait a quarter second after each (issue 14: 36 small
/// uploads a batch, each 5 ms, held a drain through S3 to about 140 a second).
@Suite("A backlog of write-back uploads")
struct UploadBacklogTests {
    // Not over a shared index, which refuses write-back: there each PUT
    // and each upload waits for PostgreSQL's round trips (300 of each took
    // 12 s alone and passed the minute beside the rest of the suite), and
    // the pacing measured here is the same code.
    @Test("a backlog of many journal reads drains with no pause between them", .timeLimit(.minutes(2)),
          .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
    func noPauseBetweenReads() async throws {
        let f = try await Fixture(ttl: 60, writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        let count = 300
        // More than one read holds (the uploads in flight and 32 more):
        // this backlog takes about nine.
        try #require(count > f.provider.uploads.parallelism + 32)
        for n in 0..<count { _ = try await f.put("file \(n)", at: ["f\(n).txt"], inline: true) }
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        while try await f.provider.index.pendingUploads(domain: "files") > 0 { try await Task.sleep(for: .milliseconds(20)) }
        // Counted by the loop rather than read from the gaps between
        // uploads: on a loaded machine (the unit suites six at a time) the
        // uploads alone came 240 ms apart three times in 300.
        let waits = f.provider.uploadWaitsAfterCutRead.withLockedValue { $0 }
        #expect(waits == 0, "\(waits) quarter-second waits after a read that stopped at its limit")
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path).count == count)
    }
}
