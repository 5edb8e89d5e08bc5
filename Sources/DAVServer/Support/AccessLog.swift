import Hummingbird
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// `access_log = true`: one line per request at info, written once the
/// body has gone out (or was cut), with what an operator greps for and a
/// shipper indexes: method, path, status, bytes sent, duration, user,
/// client address; the request id comes with the request's logger.
///
/// With the log off the response is passed through untouched, so the
/// default costs nothing; with it on the body is wrapped to count its bytes.
struct AccessLog {
    let method: String
    let target: String
    let start: ContinuousClock.Instant
    let context: DAVRequestContext

    /// The response with its line to follow its body.
    func attach(to response: Response, user: String) -> Response {
        var response = response
        let body = response.body
        let status = response.status.code
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            let counter = NIOLockedValueBox<Int64>(0)
            let counting = CountingBodyWriter(base: writer, sent: counter)
            do {
                try await body.write(counting)
            } catch {
                write(status: status, bytes: counter.withLockedValue { $0 }, user: user, cut: true)
                throw error
            }
            write(status: status, bytes: counter.withLockedValue { $0 }, user: user, cut: false)
        }
        return response
    }

    private func write(status: Int, bytes: Int64, user: String, cut: Bool) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = (Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
        var metadata: Logger.Metadata = [
            "method": .string(method),
            "path": .string(target),
            "status": .stringConvertible(status),
            "bytes": .stringConvertible(bytes),
            "duration_ms": .stringConvertible((milliseconds * 1000).rounded() / 1000),
            "user": .string(user.isEmpty ? "-" : user),
            "client": .string(context.remoteAddress),
        ]
        if cut { metadata["cut"] = .stringConvertible(true) }
        context.logger.info("\(method) \(target) \(status)\(cut ? " (cut)" : "")", metadata: metadata)
    }
}

/// Passes a body through and counts the bytes the connection took.
private struct CountingBodyWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let sent: NIOLockedValueBox<Int64>

    mutating func write(_ buffer: ByteBuffer) async throws {
        let count = buffer.readableBytes
        try await base.write(buffer)
        sent.withLockedValue { $0 += Int64(count) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}
