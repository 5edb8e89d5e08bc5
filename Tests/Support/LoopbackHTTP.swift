import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 request to a server on a loopback port, over a plain socket,
/// with exactly the headers given (plus Host, Content-Length and
/// `Connection: close` when missing): for control endpoints and for requests
/// whose every header a test must choose, such as a signed S3 request.
public enum LoopbackHTTP {
    public struct Response: Sendable {
        public let status: Int
        public let headers: [(name: String, value: String)]
        public let body: Data

        /// The first header of that name, in any case.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends the request and reads the answer to the end of the connection,
    /// on a thread of its own (see ``onOwnThread(_:)``), with a 30 s limit
    /// for each read and write.
    public static func send(port: Int, method: String, target: String, headers: [(name: String, value: String)] = [],
                            body: Data = Data()) async throws -> Response {
        try await onOwnThread { try exchange(port: port, method: method, target: target, headers: headers, body: body) }
    }

    private static func exchange(port: Int, method: String, target: String, headers: [(name: String, value: String)],
                                 body: Data) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var limit = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = LoopbackSocket.address(port: UInt16(port))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): errno \(errno)") }

        var all = headers
        func has(_ name: String) -> Bool { all.contains { $0.name.lowercased() == name } }
        if !has("host") { all.insert(("Host", "127.0.0.1:\(port)"), at: 0) }
        if !has("content-length"), !has("transfer-encoding"), !body.isEmpty || method == "PUT" || method == "POST" {
            all.append(("Content-Length", "\(body.count)"))
        }
        if !has("connection") { all.append(("Connection", "close")) }
        var request = Data("\(method) \(target) HTTP/1.1\r\n".utf8)
        for (name, value) in all { request.append(Data("\(name): \(value)\r\n".utf8)) }
        request.append(Data("\r\n".utf8))
        request.append(body)
        try request.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = Glibc.send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
                sent += n
            }
        }

        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0, errno == EINTR { continue }
            if n < 0, received.isEmpty { throw Failure(description: "recv: errno \(errno)") }
            if n <= 0 { break }  // the end, or a reset after a complete answer
            received.append(contentsOf: buffer[0..<n])
        }
        return try parse(received, method: method)
    }

    static func parse(_ data: Data, method: String) throws -> Response {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no complete answer: \(String(decoding: data, as: UTF8.self))")
        }
        let lines = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Failure(description: "bad status line \(lines[0])")
        }
        let headers: [(name: String, value: String)] = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Data(data[end.upperBound...])
        let response = Response(status: status, headers: headers, body: Data())
        if method == "HEAD" || status == 204 || status == 304 {
            body = Data()
        } else if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            body = try dechunk(body)
        } else if let length = response.header("content-length").flatMap(Int.init), length <= body.count {
            body = body.prefix(length)
        }
        return Response(status: status, headers: headers, body: body)
    }

    static func dechunk(_ data: Data) throws -> Data {
        var out = Data(), rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[rest.startIndex..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first.map(String.init) ?? "", radix: 16) else {
                throw Failure(description: "bad chunk size \(sizeText)")
            }
            if size == 0 { return out }
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size + 2 else { throw Failure(description: "chunk cut short") }
            out.append(rest[start..<rest.index(start, offsetBy: size)])
            rest = rest[rest.index(start, offsetBy: size + 2)...]
        }
        throw Failure(description: "chunked body cut short")
    }
}
