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
        for n in 0..<count { _ = try await f.put("file \(n)", at: ["f\(n).txt"], inline: true) }
        let finished = NIOLockedValueBox<[ContinuousClock.Instant]>([])
        f.store.afterUpload.withLockedValue { $0 = { _ in finished.withLockedValue { $0.append(.now) } } }
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        while try await f.provider.index.pendingUploads(domain: "files") > 0 { try await Task.sleep(for: .milliseconds(20)) }
        let times = finished.withLockedValue { $0 }
        #expect(times.count == count)
        // One read holds the uploads in flight and 32 more: this backlog
        // takes nine reads. A pause after each read shows as gaps of a
        // quarter second between uploads; one stall of the machine may too.
        let pauses = zip(times, times.dropFirst()).filter { $1 - $0 >= .milliseconds(240) }.count
        #expect(pauses <= 1, "\(pauses) pauses of a quarter second between uploads of a backlog of \(count)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path).count == count)
    }
}
