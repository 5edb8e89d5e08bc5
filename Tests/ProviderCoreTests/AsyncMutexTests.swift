import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A wait for the lock honours cancellation; holding it does not depend on it.
@Suite("AsyncMutex: cancellable waits")
struct AsyncMutexTests {
    @Test("a waiter cancelled while the lock is held returns at once with CancellationError, without running; the lock then serves others")
    func cancelledWaiter() async throws {
        let mutex = AsyncMutex()
        let ran = NIOLockedValueBox(false)
        let release = await holding { body in try await mutex.withLock { await body() } }
        let waiter = Task { try await mutex.withLock { ran.withLockedValue { $0 = true } } }
        #expect(await eventually { mutex.waiting == 1 })
        waiter.cancel()
        #expect(isCancellation(await outcome(of: waiter, within: prompt)), "it stops waiting while the lock is still held")
        #expect(mutex.waiting == 0)
        release.finish()
        let next = Task { try await mutex.withLock { 42 } }
        #expect(try await outcome(of: next, within: prompt)?.get() == 42)
        #expect(!ran.withLockedValue { $0 })
    }

    @Test("a task cancelled before it asks for a held lock never parks")
    func cancelledBeforeWaiting() async throws {
        let mutex = AsyncMutex()
        let release = await holding { body in try await mutex.withLock { await body() } }
        defer { release.finish() }
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await mutex.withLock {}
        }
        #expect(isCancellation(await outcome(of: waiter, within: prompt)))
        #expect(mutex.waiting == 0)
    }

    @Test("a cancelled task still takes a free lock: taking it is no wait")
    func freeLockDespiteCancellation() async throws {
        let mutex = AsyncMutex()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await mutex.withLock { "ran" }
        }
        #expect(try await outcome(of: task, within: prompt)?.get() == "ran")
    }

    @Test("waiters get the lock in the order they asked; a cancelled one leaves its place")
    func fifo() async throws {
        let mutex = AsyncMutex()
        let order = NIOLockedValueBox<[Int]>([])
        let release = await holding { body in try await mutex.withLock { await body() } }
        var waiters: [Task<Void, any Error>] = []
        for i in 1...5 {
            waiters.append(Task { try await mutex.withLock { order.withLockedValue { $0.append(i) } } })
            #expect(await eventually { mutex.waiting == i }, "waiter \(i) parked behind the others")
        }
        waiters[2].cancel()
        #expect(isCancellation(await outcome(of: waiters[2], within: prompt)))
        release.finish()
        for (i, waiter) in waiters.enumerated() where i != 2 {
            #expect(await outcome(of: waiter, within: prompt) != nil)
        }
        #expect(order.withLockedValue { $0 } == [1, 2, 4, 5])
    }

    @Test("a cancellation racing the hand-over never loses the lock: the waiter either holds it (and releases it) or gives up its place")
    func cancellationRacingTheHandOver() async throws {
        let mutex = AsyncMutex()
        for _ in 0..<100 {
            let release = await holding { body in try await mutex.withLock { await body() } }
            let waiter = Task { try await mutex.withLock {} }
            #expect(await eventually { mutex.waiting == 1 })
            // Released and cancelled at the same time, in either order.
            async let cancelled: Void = waiter.cancel()
            release.finish()
            await cancelled
            let ended = await outcome(of: waiter, within: prompt)
            #expect(ended != nil)
            let next = Task { try await mutex.withLock {} }
            #expect(await outcome(of: next, within: prompt) != nil, "the lock is still usable")
        }
    }
}
