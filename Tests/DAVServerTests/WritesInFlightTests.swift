@testable import DAVServer
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

/// A body's chunks wait for the connection's event loop: at most two are
/// queued on it, whatever the speed of the reads that make them.
@Suite struct WritesInFlightTests {
    /// Writes as NIO's async channel writes from off its event loop: each
    /// chunk is a task queued on the loop, which puts it in the channel.
    struct LoopHoppingWriter: ResponseBodyWriter {
        let loop: any EventLoop
        let channel: NIOLockedValueBox<[ByteBuffer]>

        mutating func write(_ buffer: ByteBuffer) async throws {
            let channel = self.channel
            loop.execute { channel.withLockedValue { $0.append(buffer) } }
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    @Test("while the event loop is busy, the third chunk waits; once it runs, every chunk reaches the channel in order and nothing stays counted")
    func waitsForTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        // The loop is busy (encrypting, say) until `busy` is signalled.
        let busy = DispatchSemaphore(value: 0)
        loop.execute { busy.wait() }

        let channel = NIOLockedValueBox<[ByteBuffer]>([])
        let handedOver = NIOLockedValueBox(0)
        let inFlight = WritesInFlight(on: loop)
        let body = Task {
            var writer: any ResponseBodyWriter = LoopHoppingWriter(loop: loop, channel: channel)
            for n in 0..<10 {
                try await inFlight.write(ByteBuffer(integer: UInt32(n)), to: &writer)
                handedOver.withLockedValue { $0 += 1 }
            }
        }
        // Two chunks are handed over (however long a busy machine takes);
        // then the body has every chance to run ahead of the blocked loop.
        let deadline = ContinuousClock.now + .seconds(30)
        while handedOver.withLockedValue({ $0 }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(handedOver.withLockedValue { $0 } == 2, "two chunks queued on the busy loop, the third waits")
        #expect(inFlight.queued == 2)
        #expect(channel.withLockedValue { $0.isEmpty })

        busy.signal()
        try await body.value
        // The last chunk's write, and the task that lets its count go, are
        // queued on the loop behind this one.
        try await loop.submit {}.get()
        let written = channel.withLockedValue { $0.map { $0.getInteger(at: 0, as: UInt32.self) } }
        #expect(written == (0..<10).map { UInt32($0) })
        #expect(inFlight.queued == 0)
        try await group.shutdownGracefully()
    }
}
