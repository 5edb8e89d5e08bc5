import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bound `AF_UNIX` datagram socket, as systemd binds the one it names in
/// `NOTIFY_SOCKET`: a test plays the service manager and reads what davgate
/// tells it. `name` is a path, or `@name` in Linux's abstract namespace.
///
/// Like systemd, it reads all the time, on a thread of its own: a socket
/// left unread fills after ten datagrams, and the test would then measure
/// its own neglect.
public final class NotifySocket: @unchecked Sendable {
    public let name: String
    private let descriptor: Int32
    private let path: String?
    private let inbox = Inbox()

    /// What the reading thread shares with the socket (not the socket
    /// itself, which the thread would then keep alive).
    private final class Inbox: @unchecked Sendable {
        let condition = NSCondition()
        var queue: [String] = []
        var closed = false
    }

    public init(name: String) throws {
        self.name = name
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        self.descriptor = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(length)) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        path = abstract ? nil : name
        let inbox = inbox
        Thread { Self.readAll(descriptor, into: inbox) }.start()
    }

    private static func readAll(_ descriptor: Int32, into inbox: Inbox) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            inbox.condition.lock()
            let stop = inbox.closed
            inbox.condition.unlock()
            if stop { return }
            guard ready == 1 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count >= 0 else { continue }
            inbox.condition.lock()
            inbox.queue.append(String(decoding: buffer[..<count], as: UTF8.self))
            inbox.condition.broadcast()
            inbox.condition.unlock()
        }
    }

    /// The next datagram, or nil when none came within `timeout`.
    public func receive(timeout: Duration = .seconds(5)) -> String? {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        while inbox.queue.isEmpty {
            guard inbox.condition.wait(until: deadline) else { return nil }
        }
        return inbox.queue.removeFirst()
    }

    /// Every datagram until one satisfies `until` (included) or `timeout`
    /// passes without it.
    public func receive(until: (String) -> Bool, timeout: Duration = .seconds(30)) -> [String] {
        let deadline = ContinuousClock.now + timeout
        var received: [String] = []
        while ContinuousClock.now < deadline {
            guard let message = receive(timeout: .milliseconds(200)) else { continue }
            received.append(message)
            if until(message) { break }
        }
        return received
    }

    deinit {
        inbox.condition.lock()
        inbox.closed = true
        inbox.condition.unlock()
        // The reader sees `closed` within its 100 ms poll and returns.
        usleep(150_000)
        close(descriptor)
        if let path { unlink(path) }
    }
}
