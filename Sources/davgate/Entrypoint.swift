import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import ServiceRuntime

/// The process entry: before anything else runs, a job Swift concurrency
/// enqueues from one of SwiftNIO's event loops stays on that loop
/// (`ConcurrencyOnEventLoops`). A request then runs on the loop whose
/// socket it came from, and an `await` resumed there stays there, instead
/// of hopping between the loops' threads and a second pool of the same
/// size (profiled in issue 14: most of the small-request time was spent in
/// context switches between them). What blocks for longer than a
/// page-cache read (fsync, rename, copies, upstream I/O) is moved off by
/// `blocking`, and resumes on the runtime's own pool.
@main
enum Entrypoint {
    static func main() async {
        // Before the event loops below start their threads, which inherit
        // the mask (see `ServiceSignals`).
        if CommandLine.arguments.dropFirst().first == "serve" {
            ServiceSignals.blockBeforeThreadsStart()
        }
        if !ConcurrencyOnEventLoops.takeOver() {
            // Still correct, only slower: every request's task hops to the
            // runtime's pool and back.
            let warning = "davgate: warning: Swift concurrency's global executor hook was set already; requests will not stay on their event loops\n"
            _ = warning.withCString { write(2, $0, strlen($0)) }
        }
        await DavGate.main()
    }
}
