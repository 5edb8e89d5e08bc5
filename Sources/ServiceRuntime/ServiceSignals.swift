#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The signals a server takes as requests (SIGTERM and SIGINT to stop,
/// SIGHUP to reload), blocked in every thread before the first thread is
/// made.
///
/// On Linux, Dispatch's signal sources (which ServiceLifecycle's signal
/// sequences use) read a `signalfd`, which only sees a signal that is
/// blocked; in a thread that does not block it, Dispatch's fallback handler
/// blocks it there and sends it on to its manager thread. With dozens of
/// threads (event loops, the file I/O pool) that fallback lost a SIGTERM
/// now and then under load: the service kept running. Blocked everywhere
/// from the start, a signal stays pending for the process until the
/// `signalfd` reads it, and one sent during start-up (before its source is
/// registered) waits instead of killing the process.
///
/// Only for `serve`: a command without such sources would then ignore
/// Ctrl-C.
public enum ServiceSignals {
    public static func blockBeforeThreadsStart() {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }
}
