import Foundation
import NIOConcurrencyHelpers
import ServiceRuntime
import Testing

/// The heap's free resident memory, measured, and given back while the
/// server stays busy once it has grown past the limit.
@Suite struct HeapSlackTests {
    @Test("a trim is due only when the slack is more than the limit above the least seen since the last trim")
    func decisions() {
        let mib = 1 << 20
        var watch = HeapSlack(slack: 3 * mib, limit: 6 * mib)
        // 5 MiB above the floor; lower, the new floor; 7 MiB above it.
        let answers = [8, 2, 9].map { watch.worthTrimming(slack: $0 * mib) }
        #expect(answers == [false, false, true])
        // What the trim could not return is not trimmed for again.
        watch.trimmed(leaving: 7 * mib)
        let after = [12, 14].map { watch.worthTrimming(slack: $0 * mib) }
        #expect(after == [false, true])
    }

    @Test("freeing 24 MiB of small blocks below one still held raises the measured slack; a trim gives it back",
          .enabled(if: HeapSlack.measure() != nil, "no mallinfo2 or /proc/self/statm here"))
    func measuresFreedMemory() throws {
        // The measure is the whole process's, and other tests allocate
        // meanwhile: the best of three tries, with wide margins.
        var best: (rise: Int, fall: Int, text: String) = (0, 0, "")
        for _ in 0..<3 where best.rise <= 12 << 20 || best.fall <= 12 << 20 {
            let count = 6_144, size = 4_096
            var blocks: [UnsafeMutableRawPointer] = []
            for _ in 0..<count {
                let block = try #require(malloc(size))
                memset(block, 1, size)      // resident
                blocks.append(block)
            }
            let held = try #require(malloc(size))   // keeps the freed blocks off the heap's top
            let before = try #require(HeapSlack.measure())
            for block in blocks { free(block) }
            let freed = try #require(HeapSlack.measure())
            QuietMemoryRelease.trimHeap()
            let trimmed = try #require(HeapSlack.measure())
            free(held)
            if freed - before > best.rise || freed - trimmed > best.fall {
                best = (freed - before, freed - trimmed,
                        "slack \(before >> 10) KiB before the frees, \(freed >> 10) KiB after, \(trimmed >> 10) KiB after the trim")
            }
        }
        #expect(best.rise > 12 << 20, "\(best.text)")
        #expect(best.fall > 12 << 20, "\(best.text)")
    }

    /// The service: trims once the slack has grown past the limit, not
    /// while it stays below, and stops with its task.
    @Test func serviceTrimsWhenTheSlackGrows() async throws {
        let slack = NIOLockedValueBox(1 << 20)
        let looks = NIOLockedValueBox(0)
        let trims = NIOLockedValueBox(0)
        let service = HeapSlackRelease(period: .milliseconds(10), limit: 6 << 20, slack: {
            looks.withLockedValue { $0 += 1 }
            return slack.withLockedValue { $0 }
        }, trim: {
            trims.withLockedValue { $0 += 1 }
            slack.withLockedValue { $0 = 2 << 20 }
        })
        let running = Task { try await service.run() }
        // The service has read its first floor, 1 MiB.
        try await waitUntil { looks.withLockedValue { $0 } >= 1 }
        slack.withLockedValue { $0 = 5 << 20 }
        let atFive = looks.withLockedValue { $0 }
        try await waitUntil { looks.withLockedValue { $0 } >= atFive + 10 }
        #expect(trims.withLockedValue { $0 } == 0, "4 MiB above the floor: no trim")
        slack.withLockedValue { $0 = 9 << 20 }
        try await waitUntil { trims.withLockedValue { $0 } >= 1 }
        let looked = looks.withLockedValue { $0 }
        try await waitUntil { looks.withLockedValue { $0 } >= looked + 10 }
        #expect(trims.withLockedValue { $0 } == 1, "given back once; the slack is back at the floor")
        running.cancel()
        try await running.value
    }
}
