import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bound `AF_UNIX` datagram socket, as systemd binds the one it names in
/// `NOTIFY_SOCKET`: a test plays the service manager and reads what davgate
/// tells it. `name` is a path, or `@name` in Linux's abstract namespace.
public final class NotifySocket: @unchecked Sendable {
    public let name: String
    private let descriptor: Int32
    private let path: String?

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
    }

    /// The next datagram, or nil when none came within `timeout`.
    public func receive(timeout: Duration = .seconds(5)) -> String? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&poller, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
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
        close(descriptor)
        if let path { unlink(path) }
    }
}
