import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// An upload waiting for its slot, or a DELETE waiting to hold its items,
/// stops waiting when its task is cancelled.
@Suite("UploadSlots: cancellable waits")
struct UploadSlotsTests {
    @Test("an upload cancelled while it waits for a slot returns at once with CancellationError; the slot then serves others")
    func cancelledUpload() async throws {
        let slots = UploadSlots(limit: 1)
        let ran = NIOLockedValueBox(false)
        let release = await holding { body in try await slots.withUpload(of: 1) { await body() } }
        let waiter = Task { try await slots.withUpload(of: 2) { ran.withLockedValue { $0 = true } } }
        #expect(await eventually { slots.waiting == 1 })
        waiter.cancel()
        #expect(isCancellation(await outcome(of: waiter, within: prompt)))
        #expect(slots.waiting == 0)
        release.finish()
        let next = Task { try await slots.withUpload(of: 3) { 3 } }
        #expect(try await outcome(of: next, within: prompt)?.get() == 3)
        #expect(!ran.withLockedValue { $0 })
    }

    @Test("a DELETE cancelled while it waits for an upload in flight gives up its items: an upload it held back goes at once")
    func cancelledHold() async throws {
        let slots = UploadSlots(limit: 2)
        let release = await holding { body in try await slots.withUpload(of: 2) { await body() } }
        defer { release.finish() }
        let delete = Task { try await slots.withHeld([1, 2]) {} }
        #expect(await eventually { slots.waiting == 1 })
        // Free otherwise, but a DELETE of item 1 waits: no more bytes for it.
        let upload = Task { try await slots.withUpload(of: 1) { 1 } }
        #expect(await eventually { slots.waiting == 2 })
        delete.cancel()
        #expect(isCancellation(await outcome(of: delete, within: prompt)))
        #expect(try await outcome(of: upload, within: prompt)?.get() == 1, "without waiting for the upload of item 2")
    }

    @Test("uploads waiting for the one slot get it in the order they asked; a cancelled one leaves its place")
    func fifo() async throws {
        let slots = UploadSlots(limit: 1)
        let order = NIOLockedValueBox<[Int64]>([])
        let release = await holding { body in try await slots.withUpload(of: 0) { await body() } }
        var waiters: [Task<Void, any Error>] = []
        for id in Int64(1)...4 {
            waiters.append(Task { try await slots.withUpload(of: id) { order.withLockedValue { $0.append(id) } } })
            #expect(await eventually { slots.waiting == Int(id) })
        }
        waiters[1].cancel()
        #expect(isCancellation(await outcome(of: waiters[1], within: prompt)))
        release.finish()
        for (i, waiter) in waiters.enumerated() where i != 1 {
            #expect(await outcome(of: waiter, within: prompt) != nil)
        }
        #expect(order.withLockedValue { $0 } == [1, 3, 4])
    }
}
