import DavgateTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOPosix
import NIOSSL

/// One connection to davgate that the test drives byte by byte and keeps
/// open as long as it likes: for what a well-behaved client never does
/// (smuggling, half-sent heads, bodies cut short, connections held idle).
/// It records everything the server sends and when the server closed.
final class RawConnection: Sendable {
    private let channel: any Channel
    private let recorder: Recorder
    /// When the connection (and its TLS handshake) was established.
    let openedAt = ContinuousClock.now

    /// Connects to `server`: over TLS when the server speaks it and `tls` is
    /// true (the handshake runs at once), else plain TCP, which on a TLS port
    /// is a client that never starts its handshake.
    static func open(_ server: DavgateProcess, tls: Bool = true) async throws -> RawConnection {
        let recorder = Recorder()
        let sslContext = server.tls && tls ? try RawHTTP.clientTLS(trusting: server) : nil
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHandler(recorder)
                }
            }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: server.port).get()
        return RawConnection(channel: channel, recorder: recorder)
    }

    private init(channel: any Channel, recorder: Recorder) {
        self.channel = channel
        self.recorder = recorder
    }

    func send(_ text: String) async throws {
        try await send(Data(text.utf8))
    }

    /// Sends `bytes`; fails (closing the connection) when they are not all
    /// taken within `limit`: a server that stops reading a request makes
    /// the test fail with this error instead of hanging it (a write waits
    /// for the socket's room for as long as the server leaves none).
    func send(_ bytes: Data, within limit: TimeAmount = .seconds(60)) async throws {
        let stalled = NIOLockedValueBox(false)
        let channel = channel
        let timer = channel.eventLoop.scheduleTask(in: limit) {
            stalled.withLockedValue { $0 = true }
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        do {
            try await channel.writeAndFlush(ByteBuffer(data: bytes)).get()
        } catch where stalled.withLockedValue({ $0 }) {
            throw SendStalled(bytes: bytes.count, limit: limit)
        }
    }

    /// A send the server did not take within its limit.
    struct SendStalled: Error, CustomStringConvertible {
        let bytes: Int
        let limit: TimeAmount
        var description: String {
            "the server took not all of \(bytes) bytes within \(limit.nanoseconds / 1_000_000_000) s (it stopped reading the request)"
        }
    }

    /// Half-closes: the server reads the end of the stream, the answer can
    /// still arrive (plain TCP only; TLS sends close_notify and closes).
    func finishSending() async throws {
        try await channel.close(mode: .output).get()
    }

    /// Everything received so far.
    var received: Data { recorder.data }
    var isClosedByServer: Bool { recorder.isClosed }
    /// When the server's close arrived; nil while open.
    var closedAt: ContinuousClock.Instant? { recorder.closedAt }

    /// Waits until the server has closed the connection; false when it is
    /// still open at the deadline.
    func closedByServer(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if recorder.isClosed { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return recorder.isClosed
    }

    /// Waits until a complete response (head and Content-Length body) has
    /// arrived or the server closed, and parses the first response.
    func response(within limit: Duration) async throws -> RawHTTP.Reply {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let reply = try? RawHTTP.parse(recorder.data), Self.isComplete(reply, in: recorder.data) { return reply }
            if recorder.isClosed { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try RawHTTP.parse(recorder.data)
    }

    /// The responses in what was received, in order (Content-Length or
    /// chunked framing).
    var responses: [RawHTTP.Reply] {
        RawHTTP.responses(in: recorder.data)
    }

    private static func isComplete(_ reply: RawHTTP.Reply, in data: Data) -> Bool {
        guard let length = reply.header("Content-Length").flatMap(Int.init) else { return true }
        return reply.body.count >= length
    }

    /// Closes from the client side.
    func close() {
        channel.close(promise: nil)
    }

    private final class Recorder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let state = NIOLockedValueBox((data: Data(), closedAt: ContinuousClock.Instant?.none))

        var data: Data { state.withLockedValue { $0.data } }
        var isClosed: Bool { closedAt != nil }
        var closedAt: ContinuousClock.Instant? { state.withLockedValue { $0.closedAt } }

        private func markClosed() {
            let now = ContinuousClock.now
            state.withLockedValue { if $0.closedAt == nil { $0.closedAt = now } }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let bytes = buffer.readData(length: buffer.readableBytes) ?? Data()
            state.withLockedValue { $0.data.append(bytes) }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // The server's half of the stream ended: as good as closed for a
            // client that sends nothing more.
            if case ChannelEvent.inputClosed = event { markClosed() }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            markClosed()
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A TLS close without close_notify, a reset: the server is gone.
            markClosed()
            context.close(promise: nil)
        }
    }
}

extension RawHTTP {
    /// Every response in `data`, in order; stops at the first incomplete one.
    static func responses(in data: Data) -> [Reply] {
        var replies: [Reply] = []
        var rest = data[...]
        while let split = rest.range(of: Data("\r\n\r\n".utf8)), let reply = try? parse(Data(rest)) {
            var end = split.upperBound
            if let length = reply.header("Content-Length").flatMap(Int.init) {
                guard rest.distance(from: end, to: rest.endIndex) >= length else { break }
                end = rest.index(end, offsetBy: length)
            } else if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
                let tail = rest[end...]
                if tail.starts(with: Data("0\r\n\r\n".utf8)) {
                    end = tail.index(tail.startIndex, offsetBy: 5)
                } else if let last = tail.range(of: Data("\r\n0\r\n\r\n".utf8)) {
                    end = last.upperBound
                } else {
                    break
                }
            } else {
                end = rest.endIndex
            }
            replies.append(reply)
            rest = rest[end...]
        }
        return replies
    }
}
