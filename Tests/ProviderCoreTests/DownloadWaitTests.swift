import Foundation
@testable import ProviderCore
import Testing

/// A reader of a download in flight stops waiting when its task is
/// cancelled (its client went away); the download goes on for the others.
@Suite("Download: cancellable reader waits")
struct DownloadWaitTests {
    @Test("a reader cancelled while it waits for bytes returns at once with CancellationError; the other readers are still served")
    func cancelledReader() async throws {
        let download = Download(itemID: 1, file: URL(fileURLWithPath: "/nonexistent"))
        let leaving = Task { try await download.bytes(upTo: 100) }
        let staying = Task { try await download.bytes(upTo: 50) }
        #expect(await eventually { download.waiting == 2 })
        leaving.cancel()
        #expect(isCancellation(await outcome(of: leaving, within: prompt)))
        #expect(download.waiting == 1)
        download.reached(60)
        #expect(try await outcome(of: staying, within: prompt)?.get() == 60)
    }

    @Test("readers cancelled while they wait for the head or the end return at once with CancellationError")
    func cancelledHeadAndResult() async throws {
        let download = Download(itemID: 1, file: URL(fileURLWithPath: "/nonexistent"))
        let head = Task { _ = try await download.head() }
        let result = Task { _ = try await download.result() }
        #expect(await eventually { download.waiting == 2 })
        head.cancel()
        result.cancel()
        #expect(isCancellation(await outcome(of: head, within: prompt)))
        #expect(isCancellation(await outcome(of: result, within: prompt)))
        #expect(download.waiting == 0)
    }
}
