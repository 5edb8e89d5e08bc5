import NIOConcurrencyHelpers
import ServiceRuntime
import Testing

/// The release after a burst of requests: once per quiet spell, never
/// while requests keep coming, never again while the server stays idle.
@Suite struct QuietMemoryReleaseTests {
    /// The watch's answer for each period's count, from `start`.
    private func answers(from start: Int, _ counts: [Int]) -> [Bool] {
        var watch = QuietWatch(count: start)
        return counts.map { watch.quietAfterWork(count: $0) }
    }

    @Test func onceAfterWorkThenNotAgainWhileIdle() {
        // Nothing since the start; requests begin; the first quiet period
        // after them; still idle, already released.
        #expect(answers(from: 0, [0, 40, 40, 40, 40]) == [false, false, true, false, false])
    }

    @Test func neverWhileBusy() {
        let busy = Array(stride(from: 8, through: 800, by: 8))
        #expect(answers(from: 7, busy + [800]) == Array(repeating: false, count: busy.count) + [true])
    }

    @Test func eachQuietSpellAfterWorkAgain() {
        // One request is work too.
        #expect(answers(from: 0, [5, 5, 6, 6, 6]) == [false, true, false, true, false])
    }

    /// The service itself: releases once when the count stops moving, and
    /// stops with its task.
    @Test func serviceReleasesOnceWhenTheCountStops() async throws {
        let requests = NIOLockedValueBox(0)
        let looks = NIOLockedValueBox(0)
        let releases = NIOLockedValueBox(0)
        let service = QuietMemoryRelease(period: .milliseconds(20), activity: {
            looks.withLockedValue { $0 += 1 }
            return requests.withLockedValue { $0 }
        }) {
            releases.withLockedValue { $0 += 1 }
        }
        let running = Task { try await service.run() }
        // Some periods pass with no request at all (waited for as looks, so
        // a slow machine only makes the test slower).
        try await waitUntil { looks.withLockedValue { $0 } >= 5 }
        #expect(releases.withLockedValue { $0 } == 0, "no request yet: nothing to give back")
        requests.withLockedValue { $0 += 3 }
        try await waitUntil { releases.withLockedValue { $0 } >= 1 }
        let looked = looks.withLockedValue { $0 }
        try await waitUntil { looks.withLockedValue { $0 } >= looked + 10 }
        #expect(releases.withLockedValue { $0 } == 1, "idle since: not again")
        running.cancel()
        try await running.value
    }
}
