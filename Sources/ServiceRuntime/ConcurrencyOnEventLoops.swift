import CGlobalExecutorHook
import NIOCore
import NIOPosix

/// Swift concurrency's global executor made SwiftNIO's singleton event
/// loops: a request's task runs on the loop whose socket it came from, and
/// an `await` resumes there, instead of hopping between the loops' threads
/// and Dispatch's pool of the same size.
///
/// Why not SwiftNIO's own `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`:
/// it finds the runtime's hook with `dlsym`, and the static standard
/// library's link arguments (`--exclude-libs ALL`) keep the hook out of the
/// dynamic symbol table. In the package's binary it returned false, and
/// every request's task ran on Dispatch's threads (63% of the server's
/// samples in a profile of 6,000 small PUTs) while the debug builds the
/// tests start took the loops: the tests measured a different server from
/// the one shipped. `CGlobalExecutorHook` sets the hook by a link-time
/// reference, which both builds resolve.
public enum ConcurrencyOnEventLoops {
    /// Installs the hook; call it first thing in `main`, before work is
    /// started. Returns false when a hook was set already.
    @discardableResult
    public static func takeOver() -> Bool {
        davgate_install_global_enqueue { job in
            // The loop the caller runs on when it is one of the group's
            // (no thread switch), else the next in turn.
            MultiThreadedEventLoopGroup.singleton.any().enqueue(ExecutorJob(unsafeBitCast(job, to: UnownedJob.self)))
        }
    }

    /// Whether the global executor is the event loops.
    public static var isInstalled: Bool { davgate_global_enqueue_installed() }

    /// Gives the global executor back to the runtime (for tests).
    @discardableResult
    public static func giveBack() -> Bool { davgate_remove_global_enqueue() }
}
