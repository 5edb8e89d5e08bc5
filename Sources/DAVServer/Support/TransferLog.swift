import Foundation
import Hummingbird
import Logging

/// One log line per finished body transfer with its size and rate; at info
/// for transfers over 1 MiB (the ones an operator may be waiting on), at
/// debug otherwise so small requests do not flood the log.
func logTransfer(_ context: DAVRequestContext, _ method: String, _ href: @autoclosure () -> String, bytes: Int64, since start: ContinuousClock.Instant) {
    let level: Logger.Level = bytes > 1 << 20 ? .info : .debug
    // Formatting a line nobody reads was 1% of a small PUT's time.
    guard context.logger.logLevel <= level else { return }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let mib = Double(bytes) / 1_048_576
    let rate = seconds > 0 ? mib / seconds : 0
    let line: Logger.Message = "\(method) \(href()): \(bytes) bytes in \(String(format: "%.2f", seconds)) s (\(String(format: "%.1f", rate)) MiB/s)"
    context.logger.log(level: level, line)
}
