import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// Every client connection open now, so a stop can end the ones still busy
/// when its grace runs out.
///
/// Cancelling the server's task is not enough for that: a response body
/// being written to a slow reader, or a request body arriving slowly, waits
/// on the connection and never looks at its task's cancellation, so a
/// single slow download would hold a stop past any deadline (found by
/// `ServiceTests.gracefulStop`). Closing the channel fails those waits at
/// once, and the handlers clean up as for any cut connection: a PUT's
/// partial body is removed, a download ends short, and Content-Length tells
/// the client it was cut.
final class OpenConnections: Sendable {
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    var count: Int { channels.withLockedValue { $0.count } }

    /// A handler for one connection's pipeline that keeps it listed while
    /// it is open.
    func tracker() -> Tracker { Tracker(registry: self) }

    /// Closes every connection still open.
    func closeAll() {
        let open = channels.withLockedValue { channels in
            defer { channels.removeAll() }
            return Array(channels.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    final class Tracker: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = NIOAny
        private let registry: OpenConnections

        init(registry: OpenConnections) {
            self.registry = registry
        }

        func handlerAdded(context: ChannelHandlerContext) {
            let channel = context.channel
            registry.channels.withLockedValue { $0[ObjectIdentifier(channel)] = channel }
        }

        func channelInactive(context: ChannelHandlerContext) {
            let id = ObjectIdentifier(context.channel)
            registry.channels.withLockedValue { _ = $0.removeValue(forKey: id) }
            context.fireChannelInactive()
        }
    }
}

/// The end of a stop's grace, as a service of the server's group: when the
/// group gives up waiting and cancels everything, the connections still
/// open are closed, so their requests end now instead of whenever their
/// clients finish. Listed first, it is the last to be told of a graceful
/// stop, and then simply returns.
struct ConnectionCutter: Service, CustomStringConvertible {
    let connections: OpenConnections
    let logger: Logger

    func run() async throws {
        let connections = connections
        let logger = logger
        await withTaskCancellationHandler {
            try? await gracefulShutdown()
        } onCancel: {
            let open = connections.count
            if open > 0 { logger.notice("stop: the grace is over; closing the \(open) connections still open") }
            connections.closeAll()
        }
    }

    var description: String { "ConnectionCutter" }
}
