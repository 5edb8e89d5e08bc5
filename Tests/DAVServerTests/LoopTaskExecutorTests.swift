@testable import DAVServer
import Foundation
import NIOCore
import NIOPosix
import Testing

/// A task that prefers a loop's `LoopTaskExecutor` runs on that loop, and
/// comes back to it after an `await` resumed from any other thread.
@Suite struct LoopTaskExecutorTests {
    /// Suspends until a thread of its own (neither a loop nor the
    /// runtime's pool) resumes it.
    private static func resumedFromAnotherThread() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread { continuation.resume() }.start()
        }
    }

    @Test("the task runs on the preferred loop, before and after a resumption from another thread")
    func staysOnItsLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loop = group.next()
        let (before, after) = await withTaskExecutorPreference(LoopTaskExecutor.of(loop)) {
            let before = loop.inEventLoop
            await Self.resumedFromAnotherThread()
            return (before, loop.inEventLoop)
        }
        #expect(before, "the task should start on its loop")
        #expect(after, "the resumption should come back to the loop")

        // The same thing without the preference leaves the loop: what the
        // check above sees is the executor's doing.
        await Self.resumedFromAnotherThread()
        #expect(!loop.inEventLoop)
        try await group.shutdownGracefully()
    }

    @Test("one executor per loop, kept")
    func onePerLoop() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        let (a, b) = (group.next(), group.next())
        #expect(LoopTaskExecutor.of(a) === LoopTaskExecutor.of(a))
        #expect(LoopTaskExecutor.of(a) !== LoopTaskExecutor.of(b))
    }
}
