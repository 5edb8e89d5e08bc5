import CGlobalExecutorHook
import NIOCore
import NIOPosix

/// Swift concurrency's global executor made to keep a job on the SwiftNIO
/// event loop it was enqueued from: a request's task, started on the loop
/// whose socket it came from, runs there, and so does every `await` it
/// resumes from that loop (an in-place index read, a response written).
/// A job enqueued from any other thread (the blocking pool after an fsync,
/// GRDB's writer queue, a timer) goes to the runtime's own pool, as it did,
/// unless its task prefers an executor: a request's task prefers its
/// connection's loop (DAVServer's `LoopTaskExecutor`), so its resumptions
/// go back there, where its response is written.
///
/// Why: a small GET or PROPFIND hopped between a loop and Dispatch's pool
/// for nothing; kept on the loop, it took 84-92 us of CPU against 94-122
/// (wrk, 4 KiB, three rounds each). Why not every job on the loops, as
/// SwiftNIO's own take-over does: a job from another thread then wakes a
/// loop (its eventfd, then epoll) where Dispatch wakes an idle worker more
/// cheaply, and the loops that serve sockets take the uploader's work too;
/// small PUTs, which resume from the fsync's thread, used 15-25% more CPU.
///
/// Why not SwiftNIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`
/// at all: it finds the runtime's hook with `dlsym`, and the static
/// standard library's link arguments (`--exclude-libs ALL`) keep the hook
/// out of the dynamic symbol table. In the package's binary it returned
/// false, and every request's task ran on Dispatch's threads, while the
/// debug builds the tests start took the loops: the tests measured a
/// different server from the one shipped. `CGlobalExecutorHook` sets the
/// hook by a link-time reference, which both builds resolve.
public enum ConcurrencyOnEventLoops {
    /// Installs the hook; call it first thing in `main`, before work is
    /// started. Returns false when a hook was set already.
    @discardableResult
    public static func takeOver() -> Bool {
        davgate_install_global_enqueue { job in
            guard let loop = MultiThreadedEventLoopGroup.currentEventLoop, let job else { return false }
            // Run as the global executor would, not isolated to the loop
            // (davgate_run_job_as_global says why). The pointer travels as
            // an integer: a raw pointer is not Sendable.
            let bits = UInt(bitPattern: job)
            loop.execute { davgate_run_job_as_global(UnsafeMutableRawPointer(bitPattern: bits)) }
            return true
        }
    }

    /// Whether the hook is the one the runtime calls.
    public static var isInstalled: Bool { davgate_global_enqueue_installed() }

    /// Gives the global executor back to the runtime (for tests).
    @discardableResult
    public static func giveBack() -> Bool { davgate_remove_global_enqueue() }
}
