import Logging
import ServiceLifecycle
import UnixSignals

/// SIGHUP, the reload signal of every Unix daemon and what `systemctl
/// reload` sends (the unit's `ExecReload`), as one service of the server's
/// group: each signal runs `reload` once, one after the other, never two
/// at a time, bracketed by `RELOADING=1` and `READY=1` for the service
/// manager.
///
/// Without it SIGHUP's default action ends the process, which is what a
/// reload must never do.
public struct ReloadSignal: Service, CustomStringConvertible {
    public let notifier: SystemdNotifier
    public let reload: @Sendable () async -> Void

    public init(notifier: SystemdNotifier, reload: @escaping @Sendable () async -> Void) {
        self.notifier = notifier
        self.reload = reload
    }

    public func run() async throws {
        for await _ in await UnixSignalsSequence(trapping: .sighup).cancelOnGracefulShutdown() {
            notifier.notify("RELOADING=1\nMONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())")
            await reload()
            notifier.notify("READY=1")
        }
    }

    public var description: String { "ReloadSignal" }
}
