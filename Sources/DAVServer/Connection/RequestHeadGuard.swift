import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Sits on every connection between the HTTP/1.1 codec and the responder
/// (Hummingbird's `additionalChannelHandlers`) and guards what comes before a
/// request reaches the responder:
///
/// - the header timeout (``RequestHeadDeadline``): a connection that has not
///   completed its TLS handshake and request head in time is closed, with
///   `408 Request Timeout` when part of a head had arrived;
/// - framing errors of the HTTP decoder (request smuggling with
///   `Content-Length` and `Transfer-Encoding`, two lengths, a negative or
///   non-numeric length, oversized heads, bad tokens) and heads it lets
///   through that RFC 9112 refuses (a last transfer coding other than
///   chunked, a second Host): answered with the precise status and a
///   `DAV:error` body, logged once; nothing after a broken frame can be
///   trusted, so nothing more is read and the connection is closed.
///
/// Hummingbird's own answer to a parse error is a bare 400 logged at debug;
/// this handler answers first and swallows the error.
final class RequestHeadGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let headerTimeout: TimeAmount
    private let logger: Logger
    private var deadline = RequestHeadDeadline()
    private var timer: Scheduled<Void>?
    /// A head was refused: nothing more is read from this connection.
    private var isRefusing = false
    /// The refusal to send once the requests before it are answered.
    private var pendingRefusal: DAVError?

    init(headerTimeout: TimeAmount, logger: Logger) {
        self.headerTimeout = headerTimeout
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { perform(deadline.connected(), context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        perform(deadline.closed(), context: context)
    }

    func channelActive(context: ChannelHandlerContext) {
        perform(deadline.connected(), context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        perform(deadline.closed(), context: context)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isRefusing else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if let refusal = Self.refusal(forHead: head) {
                refuse(refusal, context: context)
                return
            }
            perform(deadline.headRead(), context: context)
        case .body:
            break
        case .end:
            deadline.endRead()
        }
        context.fireChannelRead(data)
    }

    /// Fired after every read that delivered plaintext (NIOSSL fires it only
    /// then), whether or not the decoder could make a part of it yet: the
    /// first bytes of a later request on a kept-alive connection.
    func channelReadComplete(context: ChannelHandlerContext) {
        perform(deadline.bytesArrived(), context: context)
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        deadline.responseEnded()
        context.write(data, promise: promise)
        if let refusal = pendingRefusal, deadline.isBetweenRequests {
            pendingRefusal = nil
            answer(refusal, closing: .output, context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // After a refused head, the rest of the stream is not read: its
        // errors are no one's concern.
        guard !isRefusing else { return }
        guard let refusal = Self.refusal(for: error) else {
            context.fireErrorCaught(error)
            return
        }
        switch deadline.parseFailed() {
        case .forward:
            context.fireErrorCaught(error)
        case .ignore:
            break
        case .answerAndClose:
            refuse(refusal, context: context)
        }
    }

    /// Refuses what the decoder failed on or let through: it never reaches
    /// the responder, nothing after it is read, and the answer goes out
    /// after those of the requests before it (pipelined ones), then the
    /// connection closes.
    private func refuse(_ refusal: DAVError, context: ChannelHandlerContext) {
        isRefusing = true
        perform(deadline.closed(), context: context)
        if deadline.isBetweenRequests {
            answer(refusal, closing: .output, context: context)
        } else {
            pendingRefusal = refusal
        }
    }

    private func perform(_ action: RequestHeadDeadline.Action, context: ChannelHandlerContext) {
        switch action {
        case .arm:
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: headerTimeout) { [self] in
                timer = nil
                timedOut(context: context)
            }
        case .disarm:
            timer?.cancel()
            timer = nil
        case .none:
            break
        }
    }

    private func timedOut(context: ChannelHandlerContext) {
        let seconds = Double(headerTimeout.nanoseconds) / 1e9
        switch deadline.timedOut() {
        case .answerAndClose:
            answer(DAVError(.init(code: 408, reasonPhrase: "Request Timeout"),
                            "the request head was not complete within \(seconds) seconds (header_timeout); connection closed"),
                   closing: .all, context: context)
        case .close:
            logger.debug("connection from \(Self.client(context)) closed: no request within \(seconds) seconds (header_timeout)")
            context.close(promise: nil)
        case .none:
            break
        }
    }

    /// Writes `error` as a whole response with `Connection: close`, logs it
    /// once, and closes once it is on the wire: the whole connection after a
    /// timeout (the client is slow or gone; a TLS peer gets at most NIOSSL's
    /// shutdown timeout to answer close_notify), only our side after a
    /// refused request, as Hummingbird does for parse errors, so the client
    /// surely reads the answer; the rest of what it sends is discarded and
    /// the connection ends when it closes, or after the idle timeout.
    private func answer(_ error: DAVError, closing mode: CloseMode, context: ChannelHandlerContext) {
        logger.info("\(Self.client(context)) -> \(error.status.code): \(error.message)")
        ServerMetrics.request(method: "", status: error.status.code)
        var body = ByteBuffer()
        body.writeString(error.renderedBody())
        var head = HTTPResponse(status: error.status)
        head.headerFields[.contentType] = "application/xml; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(mode: mode, promise: nil)
        }
    }

    private static func client(_ context: ChannelHandlerContext) -> String {
        context.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The answer to a head whose framing the decoder accepted but HTTP/1.1
    /// does not (RFC 9112): nil for a sound head.
    static func refusal(forHead head: HTTPRequest) -> DAVError? {
        // Section 6.3 rule 4: a request whose last transfer coding is not
        // chunked has no determinable length; 400 and close. llhttp lets the
        // head through and fails only inside the body, after a handler that
        // reads no body (DELETE) would have acted.
        let codings = head.headerFields[values: .transferEncoding]
            .flatMap { $0.split(separator: ",") }
            .map { String($0.filter { $0 != " " && $0 != "\t" }).lowercased() }
        if let last = codings.last, last != "chunked" {
            return DAVError(.badRequest, "Transfer-Encoding must end in chunked, got \"\(codings.joined(separator: ", "))\" (RFC 9112 section 6.3)")
        }
        // Section 3.2: more than one Host is 400. The first became the
        // authority; any left among the fields are extra ones.
        if head.headerFields[Self.host] != nil {
            return DAVError(.badRequest, "more than one Host field (RFC 9112 section 3.2)")
        }
        return nil
    }

    private static let host = HTTPField.Name("Host")!

    /// The answer to an error of the HTTP/1.1 decoder (NIO's llhttp) or of
    /// the conversion of its head to HTTP types; nil for other errors (a
    /// reset connection, TLS), which are not the client's request.
    static func refusal(for error: any Error) -> DAVError? {
        if error is HTTP1TypeConversionError {
            return DAVError(.badRequest, "invalid request line: the method is not an HTTP token")
        }
        guard let error = error as? HTTPParserError else { return nil }
        switch error {
        case .headerOverflow:
            return DAVError(.init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                            "the request line and header fields are over \(Self.maxHeadBytes / 1024) KiB or \(Self.maxHeaderFields) fields")
        case .unexpectedContentLength:
            return DAVError(.badRequest, "Content-Length given twice, or together with Transfer-Encoding (RFC 9112 section 6.3); send exactly one framing")
        case .invalidContentLength:
            return DAVError(.badRequest, "Content-Length is not a single non-negative decimal number (RFC 9110 section 8.6)")
        case .invalidChunkSize:
            return DAVError(.badRequest, "invalid chunk size in a chunked body")
        case .invalidURL:
            return DAVError(.badRequest, "invalid request target")
        case .invalidVersion:
            return DAVError(.init(code: 505, reasonPhrase: "HTTP Version Not Supported"), "only HTTP/1.0 and HTTP/1.1 are spoken here")
        case .invalidMethod:
            return DAVError(.badRequest, "unknown or malformed method in the request line")
        case .invalidHeaderToken, .invalidConstant, .lfExpected, .strictModeAssertion:
            return DAVError(.badRequest, "malformed request line or header field")
        case .invalidEOFState:
            return DAVError(.badRequest, "the connection ended inside a request")
        default:
            // llhttp reports a Transfer-Encoding whose last coding is not
            // chunked as .unknown (RFC 9112 section 6.3 rule 4: 400).
            return DAVError(.badRequest, "malformed request framing (\(error)); Transfer-Encoding must end in chunked")
        }
    }

    /// The HTTP decoder's limits (Hummingbird's defaults, set explicitly in
    /// `DAVServer`): the request line counts toward the head's bytes.
    static let maxHeadBytes = 80 * 1024
    static let maxHeaderFields = 1000
}

@available(*, unavailable)
extension RequestHeadGuard: Sendable {}
