import DavgateTestSupport
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOPosix
import NIOSSL

/// Sends exactly the bytes a client would, over TLS (trusting davgate's own
/// certificate) or plain TCP, and reads the answer until the server closes.
/// For what AsyncHTTPClient will not send: a PUT with neither a body nor
/// `Content-Length` (gvfs), lower-case percent-encoding kept byte for byte
/// (cadaver, davfs2), odd header spellings.
enum RawHTTP {
    struct Reply: CustomStringConvertible {
        var status: Int
        var headers: [(String, String)]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        var description: String { "\(status) \(headers) \(text)" }
    }

    struct Malformed: Error, CustomStringConvertible {
        var raw: String
        var description: String { "malformed HTTP response: \(raw.prefix(500))" }
    }

    /// `head` is the request line and header lines without the final blank
    /// line; `Host`, `Connection: close` and (unless `auth` is false) Basic
    /// credentials are added.
    static func send(_ server: DavgateProcess, _ head: [String], body: Data = Data(), auth: Bool = true) async throws -> Reply {
        var lines = head
        lines.append("Host: 127.0.0.1:\(server.port)")
        lines.append("Connection: close")
        if auth {
            lines.append("Authorization: Basic " + Data("admin:\(server.adminPassword)".utf8).base64EncodedString())
        }
        var request = Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        request.append(body)
        let raw = try await exchange(server, request)
        return try parse(raw)
    }

    /// A TLS client context that trusts davgate's own certificate.
    static func clientTLS(trusting server: DavgateProcess) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(server.certificate.path))
        return try NIOSSLContext(configuration: configuration)
    }

    private static func exchange(_ server: DavgateProcess, _ request: Data) async throws -> Data {
        let collector = Collector()
        let sslContext = server.tls ? try clientTLS(trusting: server) : nil
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: nil)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(collector)
                }
            }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: server.port).get()
        try await channel.writeAndFlush(ByteBuffer(data: request)).get()
        return try await withThrowingTaskGroup(of: Data.self) { group in
            group.addTask { try await collector.done.futureResult.get() }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                throw CancellationError()
            }
            defer { group.cancelAll(); channel.close(promise: nil) }
            return try await group.next()!
        }
    }

    private final class Collector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let done: EventLoopPromise<Data>
        private var data = Data()

        init() {
            done = MultiThreadedEventLoopGroup.singleton.any().makePromise()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            if let bytes = buffer.readBytes(length: buffer.readableBytes) { self.data.append(contentsOf: bytes) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            done.succeed(data)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A TLS close without close_notify after a complete answer is fine.
            if !data.isEmpty, error is NIOSSLError { context.close(promise: nil); return }
            done.fail(error)
            context.close(promise: nil)
        }
    }

    static func parse(_ raw: Data) throws -> Reply {
        guard let split = raw.range(of: Data("\r\n\r\n".utf8)) else { throw Malformed(raw: String(decoding: raw, as: UTF8.self)) }
        let headText = String(decoding: raw[..<split.lowerBound], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Malformed(raw: headText) }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Data(raw[split.upperBound...])
        let reply = Reply(status: status, headers: headers, body: body)
        if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
            body = try dechunk(body)
        } else if let length = reply.header("Content-Length").flatMap(Int.init), body.count > length {
            body = body.prefix(length)
        }
        return Reply(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ data: Data) throws -> Data {
        var out = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw Malformed(raw: String(decoding: data, as: UTF8.self)) }
            if size == 0 { break }
            let start = lineEnd.upperBound
            out.append(rest[start..<start + size])
            rest = rest[(start + size + 2)...]
        }
        return out
    }
}
