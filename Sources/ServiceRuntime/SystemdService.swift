import Logging
import ServiceLifecycle

/// The service manager's side of the process's life, as one service of the
/// server's group: while it runs it sends `WATCHDOG=1` at half the interval
/// systemd asked for (its own advice in `sd_watchdog_enabled(3)`); when the
/// graceful shutdown begins it sends `STOPPING=1` at once, so `systemctl
/// stop` shows the service as deactivating while requests drain.
///
/// `READY=1` is not sent here: only the server knows when it listens.
/// Placed last in its group, it is the first to hear of a shutdown (a group
/// stops its services last first). The pings run on the global executor,
/// the event loops, so loops that stop turning stop them too and the
/// watchdog restarts a wedged server, which is what it is for.
public struct SystemdService: Service, CustomStringConvertible {
    public let notifier: SystemdNotifier
    public let logger: Logger

    public init(notifier: SystemdNotifier, logger: Logger) {
        self.notifier = notifier
        self.logger = logger
    }

    public func run() async throws {
        let notifier = notifier
        let logger = logger
        if let interval = notifier.watchdogInterval {
            logger.info("systemd watchdog: a sign of life every \(interval / 2) (WatchdogSec is \(interval))")
            try? await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: interval / 2)
                    if let failure = notifier.notify("WATCHDOG=1") { logger.warning("\(failure)") }
                }
            }
        } else {
            try? await gracefulShutdown()
        }
        if let failure = notifier.notify("STOPPING=1") { logger.warning("\(failure)") }
    }

    public var description: String { "SystemdService" }
}
