#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The service manager's notification protocol, `sd_notify(3)`, without
/// libsystemd: each state change is one datagram of `KEY=VALUE` lines sent
/// to the `AF_UNIX` socket named by `NOTIFY_SOCKET`. systemd sets that
/// variable for a `Type=notify` unit; anywhere else it is unset and every
/// call does nothing, so the same binary runs under systemd, in a terminal
/// and in the tests (which bind a socket of their own and set the variable).
public struct SystemdNotifier: Sendable {
    /// The socket's path; a leading `@` names Linux's abstract namespace,
    /// as `sd_notify` accepts. nil when not started by a service manager.
    public let socketPath: String?
    /// How often the watchdog wants a sign of life (`WATCHDOG_USEC`), when
    /// the unit sets `WatchdogSec=` and the variable is meant for this
    /// process (`WATCHDOG_PID`, when present, is ours).
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
        if path != nil,
           let text = environment["WATCHDOG_USEC"], let micros = Int64(text), micros > 0,
           environment["WATCHDOG_PID"].map({ Int32($0) == getpid() }) ?? true {
            watchdogInterval = .microseconds(micros)
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether a service manager listens at all.
    public var isActive: Bool { socketPath != nil }

    /// Sends `state` (lines such as `READY=1`) as one datagram.
    /// - Returns: nil when it was sent or nobody listens; otherwise why it
    ///   was not, for the caller to log (a lost READY=1 makes systemd time
    ///   the start out, which the operator must be able to trace).
    @discardableResult
    public func notify(_ state: String) -> String? {
        guard let socketPath else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !pathBytes.isEmpty, pathBytes.count < capacity else {
            return "NOTIFY_SOCKET is \(pathBytes.count) bytes, over the \(capacity - 1) a socket path may have"
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        // An abstract name is exactly its bytes; a path also takes its NUL.
        let length = MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes[0] == 0 ? 0 : 1)
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard descriptor >= 0 else { return "socket(AF_UNIX) failed: \(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        let message = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { bytes in
                    // Never waits: callers run on the event loops, and a
                    // datagram socket whose reader is behind (its queue holds
                    // ten datagrams by default) would block the loop with
                    // every request on it. A full queue drops this message.
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, socklen_t(length))
                }
            }
        }
        guard sent == message.count else {
            return "sending \(state.split(separator: "\n").first ?? "") to NOTIFY_SOCKET \(socketPath) failed: \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// `MONOTONIC_USEC=` of now, which systemd wants beside `RELOADING=1`
    /// to tell this reload from an earlier one.
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
