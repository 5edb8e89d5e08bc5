import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP/1.1 server that answers every request with bytes made
/// by a closure from the request head, then closes the connection: for the
/// answers real servers do not give on demand (200 to a Range, odd hrefs).
final class CannedHTTPServer: Sendable {
    private let socket: LoopbackSocket
    /// The heads of the requests seen so far.
    let requests = NIOLockedValueBox<[String]>([])
    var port: Int { socket.port }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/dav/")! }

    init(respond: @escaping @Sendable (_ head: String) -> String) throws {
        let socket = try LoopbackSocket(listen: true)
        self.socket = socket
        let requests = requests
        Thread.detachNewThread {
            while true {
                let client = accept(socket.fd, nil, nil)
                if client < 0 { return }
                let head = Self.readRequest(client)
                requests.withLockedValue { $0.append(head) }
                let answer = Array(respond(head).utf8)
                var sent = 0
                while sent < answer.count {
                    let n = answer.withUnsafeBytes { send(client, $0.baseAddress! + sent, answer.count - sent, Int32(MSG_NOSIGNAL)) }
                    if n <= 0 { break }
                    sent += n
                }
                close(client)
            }
        }
    }

    /// A complete answer with `Connection: close`.
    static func answer(_ status: String, headers: [String: String] = [:], body: String = "") -> String {
        var text = "HTTP/1.1 \(status)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n" + body
    }

    /// Reads a request head and as much body as its Content-Length says.
    private static func readRequest(_ fd: Int32) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var headEnd: Int?
        var wanted = Int.max
        while data.count < wanted {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
            if headEnd == nil, let end = data.indices.dropLast(3).first(where: { data[$0..<$0 + 4] == [13, 10, 13, 10] }) {
                headEnd = end + 4
                let head = String(decoding: data[0..<end], as: UTF8.self)
                let length = head.split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                wanted = end + 4 + length
            }
        }
        return String(decoding: data[0..<(headEnd ?? data.count)], as: UTF8.self)
    }

    /// Stops accepting (wakes the accepting thread) and frees the port.
    func stop() {
        shutdown(socket.fd, Int32(SHUT_RDWR))
    }
}
