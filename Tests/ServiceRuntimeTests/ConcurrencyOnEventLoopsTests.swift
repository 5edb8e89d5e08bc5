import Foundation
import NIOPosix
import ServiceRuntime
import Testing

/// The global executor taken over by a link-time reference to the runtime's
/// hook. Each test runs in a process of its own (an exit test): the hook is
/// process-wide, and the tests running beside it must keep Swift's own
/// executor.
@Suite("Swift concurrency on the event loops")
struct ConcurrencyOnEventLoopsTests {
    @Test("taken over: tasks, task-group children and resumed continuations run on the singleton's event loops")
    func tasksRunOnTheLoops() async {
        await #expect(processExitsWith: .success) {
            guard ConcurrencyOnEventLoops.takeOver(), ConcurrencyOnEventLoops.isInstalled else { exit(2) }
            let detached = await Task.detached { MultiThreadedEventLoopGroup.currentEventLoop != nil }.value
            let children = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { MultiThreadedEventLoopGroup.currentEventLoop != nil } }
                return await group.reduce(true) { $0 && $1 }
            }
            // Resumed from a thread of no loop: the rest of the task runs on one.
            let resumed = await Task.detached { () -> Bool in
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume() }
                }
                return MultiThreadedEventLoopGroup.currentEventLoop != nil
            }.value
            exit(detached && children && resumed ? 0 : 1)
        }
    }

    @Test("a second take-over changes nothing; given back, tasks run on Swift's own executor again")
    func onceAndGivenBack() async {
        await #expect(processExitsWith: .success) {
            guard ConcurrencyOnEventLoops.takeOver(), !ConcurrencyOnEventLoops.takeOver(), ConcurrencyOnEventLoops.isInstalled else { exit(2) }
            guard ConcurrencyOnEventLoops.giveBack(), !ConcurrencyOnEventLoops.isInstalled else { exit(3) }
            let onLoop = await Task.detached { MultiThreadedEventLoopGroup.currentEventLoop != nil }.value
            exit(onLoop ? 1 : 0)
        }
    }
}
