import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// The chunks of one response body handed to the connection's event loop
/// and not yet written into its channel; the body waits while `limit` are.
///
/// Why: Hummingbird's body writer waits only while the channel is not
/// writable, and a chunk written from off the event loop counts towards
/// that only once the loop has run the task that writes it. A reader of
/// cached pages outruns a loop busy encrypting: in 1 GiB GETs the package
/// binary's heap rose to 34-52 MiB with chunks queued so, the dynamically
/// linked build's to 9-11 (issue 14); the package binary's to 9.9-11.6
/// since. The loop runs its tasks in the order they were queued, so a task
/// queued after a chunk's write runs once that chunk has reached the
/// channel, where writability counts it.
///
/// A waiting body is not cancellable and needs none: what it waits for is a
/// task already queued on the loop, which runs whether the client stayed
/// or left (a loop that was shut down drops it, but the server's loops
/// live as long as the process). One writer per instance: one body.
final class WritesInFlight: Sendable {
    private struct State: Sendable {
        var queued = 0
        var waiter: CheckedContinuation<Void, Never>?

        /// Counts one more chunk if there is room for it.
        mutating func admit(limit: Int) -> Bool {
            guard queued < limit else { return false }
            queued += 1
            return true
        }
    }

    private let state = NIOLockedValueBox(State())
    private let eventLoop: any EventLoop
    private let limit: Int

    /// Two: the loop has the next chunk as soon as it is done with one,
    /// without waiting for the body's task to be woken.
    init(on eventLoop: any EventLoop, limit: Int = 2) {
        self.eventLoop = eventLoop
        self.limit = max(1, limit)
    }

    /// Writes `chunk` once fewer than `limit` chunks are on their way to the
    /// channel.
    func write(_ chunk: ByteBuffer, to writer: inout any ResponseBodyWriter) async throws {
        await roomForOne()
        // Queued after the write's own task, also when the write throws:
        // the count then no longer matters, but the loop's task is cheap.
        defer { eventLoop.execute { self.reachedChannel() } }
        try await writer.write(chunk)
    }

    /// How many chunks are on their way now (for the tests).
    var queued: Int { state.withLockedValue { $0.queued } }

    private func roomForOne() async {
        // The common case, room at once, suspends nothing.
        if state.withLockedValue({ $0.admit(limit: limit) }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state -> Bool in
                if state.admit(limit: limit) { return true }
                precondition(state.waiter == nil, "one body writes through a WritesInFlight")
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func reachedChannel() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            state.queued -= 1
            guard state.waiter != nil, state.admit(limit: limit) else { return nil }
            return state.waiter.take()
        }
        waiter?.resume()
    }
}
