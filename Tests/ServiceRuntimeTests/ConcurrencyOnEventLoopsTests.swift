import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceRuntime
import Testing

/// The global executor's hook, set by a link-time reference: a job enqueued
/// from an event loop stays on it, any other goes to the runtime's own
/// pool. Each test runs in a process of its own (an exit test): the hook is
/// process-wide, and the tests running beside it keep Swift's own executor.
@Suite("Swift concurrency kept on the event loop it came from")
struct ConcurrencyOnEventLoopsTests {
    /// Exits with 0 when `check` holds, 1 when not.
    static func exit(when check: Bool) -> Never { Foundation.exit(check ? 0 : 1) }

    @Test("started or resumed from a loop: the task runs on that very loop")
    func staysOnTheLoop() async {
        await #expect(processExitsWith: .success) {
            guard ConcurrencyOnEventLoops.takeOver() else { Foundation.exit(2) }
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            // Started from the loop's thread.
            let started = try! await loop.submit {
                Task.detached { MultiThreadedEventLoopGroup.currentEventLoop === loop }
            }.get().value
            // A child task and a continuation resumed from the loop.
            let resumed = await Task.detached { () -> Bool in
                await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
                let here = MultiThreadedEventLoopGroup.currentEventLoop === loop
                let child = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { MultiThreadedEventLoopGroup.currentEventLoop === loop }
                    return await group.next()!
                }
                return here && child
            }.value
            Self.exit(when: started && resumed)
        }
    }

    /// Calls into nonisolated async code that never suspends: run as the
    /// global executor runs a job, the task goes straight on; isolated to
    /// the loop's executor, as SwiftNIO runs the jobs it is given, each
    /// call was a switch that went through the global executor and to the
    /// back of the loop's queue (a small PUT's job ran 25 times, now 2,
    /// issue 14).
    @Test("a task on a loop runs as the global executor: nonisolated calls do not requeue it")
    func nonisolatedCallsStayInPlace() async {
        await #expect(processExitsWith: .success) {
            guard ConcurrencyOnEventLoops.takeOver() else { Foundation.exit(2) }
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let inPlace = try! await loop.submit {
                Task.detached { () -> Bool in
                    guard MultiThreadedEventLoopGroup.currentEventLoop === loop else { return false }
                    // Queued on the loop behind this job: it runs first only
                    // if this task is queued again.
                    let overtaken = NIOLockedValueBox(false)
                    loop.execute { overtaken.withLockedValue { $0 = true } }
                    for _ in 0..<10 { await Self.neverSuspends() }
                    return !overtaken.withLockedValue { $0 } && MultiThreadedEventLoopGroup.currentEventLoop === loop
                }
            }.get().value
            Self.exit(when: inPlace)
        }
    }

    /// Runs on the generic executor whatever the module's defaults
    /// (`@concurrent`), and is not optimized away, so each call is a switch
    /// to the generic executor and back.
    @inline(never) @_optimize(none)
    @concurrent static func neverSuspends() async {}

    @Test("started or resumed from any other thread: the runtime's own pool, not a loop")
    func othersGoToTheRuntime() async {
        await #expect(processExitsWith: .success) {
            guard ConcurrencyOnEventLoops.takeOver(), ConcurrencyOnEventLoops.isInstalled else { Foundation.exit(2) }
            let detached = await Task.detached { MultiThreadedEventLoopGroup.currentEventLoop == nil }.value
            let resumed = await Task.detached { () -> Bool in
                await withCheckedContinuation { continuation in Thread.detachNewThread { continuation.resume() } }
                return MultiThreadedEventLoopGroup.currentEventLoop == nil
            }.value
            Self.exit(when: detached && resumed)
        }
    }

    @Test("a second take-over changes nothing; given back, a task started on a loop leaves it")
    func onceAndGivenBack() async {
        await #expect(processExitsWith: .success) {
            guard ConcurrencyOnEventLoops.takeOver(), !ConcurrencyOnEventLoops.takeOver(), ConcurrencyOnEventLoops.isInstalled else {
                Foundation.exit(2)
            }
            guard ConcurrencyOnEventLoops.giveBack(), !ConcurrencyOnEventLoops.isInstalled else { Foundation.exit(3) }
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let onLoop = try! await loop.submit {
                Task.detached { MultiThreadedEventLoopGroup.currentEventLoop != nil }
            }.get().value
            Self.exit(when: !onLoop)
        }
    }
}
