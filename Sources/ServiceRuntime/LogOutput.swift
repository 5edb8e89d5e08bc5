#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import NIOConcurrencyHelpers

/// How log lines are written: readable text (swift-log's stream format,
/// the default) or one JSON object per line for log shippers (journald
/// with `journalctl -o cat`, Vector, Fluent Bit, Loki's promtail).
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json
}

/// The one place every logger of the process writes through, shared by all
/// of their copies. Its level and format are the process's, not a copy's,
/// so a reload can change them for every logger at once; swift-log's
/// `StreamLogHandler` keeps its level per copy, which no reload could reach.
public final class LogOutput: Sendable {
    private struct Settings {
        var level: Logger.Level
        var format: LogFormat
    }
    private let settings: NIOLockedValueBox<Settings>
    /// Serializes whole lines: two threads logging at once never interleave
    /// inside a line, whatever its length.
    private let writing = NIOLock()
    private let descriptor: Int32

    /// - Parameter descriptor: where lines go; standard error by default,
    ///   which systemd hands to the journal.
    public init(level: Logger.Level, format: LogFormat, descriptor: Int32 = 2) {
        settings = NIOLockedValueBox(Settings(level: level, format: format))
        self.descriptor = descriptor
    }

    public var level: Logger.Level {
        get { settings.withLockedValue { $0.level } }
        set { settings.withLockedValue { $0.level = newValue } }
    }

    public var format: LogFormat {
        get { settings.withLockedValue { $0.format } }
        set { settings.withLockedValue { $0.format = newValue } }
    }

    /// A handler for `Logger(label:factory:)`.
    public func handler(label: String) -> ConsoleLogHandler {
        ConsoleLogHandler(label: label, output: self)
    }

    /// Writes one finished line with as few system calls as it takes.
    func write(_ line: String) {
        var line = line
        line.withUTF8 { bytes in
            writing.withLock {
                var offset = 0
                while offset < bytes.count {
                    let written = Glibc_write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return  // a closed or full log has nowhere to report to
                    }
                    offset += written
                }
            }
        }
    }
}

@inline(__always)
private func Glibc_write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(descriptor, bytes, count)
    #else
    Darwin.write(descriptor, bytes, count)
    #endif
}
