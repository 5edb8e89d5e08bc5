import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import UnixSignals

/// The WebDAV server: Hummingbird's HTTP/1.1 server, over TLS unless told
/// otherwise, with one responder that translates every request into
/// provider calls.
public struct DAVServer: Sendable {
    public let settings: DAVServerSettings
    public let logger: Logger

    public init(settings: DAVServerSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Runs until SIGTERM or SIGINT, then stops gracefully: no new
    /// connections, the requests in flight and the `services` given time to
    /// finish up to `settings.shutdownGrace`, and whatever still runs then
    /// is cancelled (a cut body leaves nothing behind, as a cut connection
    /// does; the journal keeps what was acknowledged).
    /// - Parameters:
    ///   - services: background work in the application's own group: started
    ///     with the server and stopped after it has stopped taking requests
    ///     (a group stops its services last first, and the server is added
    ///     last), each awaited before this returns.
    ///   - companions: services beside the application, told of a stop
    ///     before it (the service manager's notifications, the reload
    ///     signal), last first.
    ///   - onListening: receives the bound port (useful with port 0).
    public func run(services: [any Service] = [], companions: [any Service] = [],
                    onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let responder = DAVResponder(settings: settings, secure: settings.certificate != nil)
        // One guard per connection: the header timeout and the answers to
        // broken framing (RequestHeadGuard); Hummingbird's idle timeout
        // closes silent connections and stalled bodies.
        let headerTimeout = TimeAmount(settings.headerTimeout)
        let connections = OpenConnections()
        let http1 = HTTPServerBuilder.http1(configuration: .init(
            additionalChannelHandlers: [RequestHeadGuard(headerTimeout: headerTimeout, logger: logger), connections.tracker()],
            idleTimeout: TimeAmount(settings.idleTimeout),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: RequestHeadGuard.maxHeadBytes,
                                            maxHeaderListSize: RequestHeadGuard.maxHeadBytes,
                                            maxHeaderFieldCount: RequestHeadGuard.maxHeaderFields)
        ))
        let server: HTTPServerBuilder
        if let certificate = settings.certificate {
            server = try .tls(http1, tlsConfiguration: certificate.serverConfiguration())
        } else {
            server = http1
        }
        let app = Application(
            responder: responder,
            server: server,
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "davgate"),
            services: services,
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        // Hummingbird's `runService` waits for a stop without end: one slow
        // download would hold a restart for as long as it lasts. Here the
        // grace ends it: the group cancels every service, and the cutter
        // closes the connections that cancellation alone would not end.
        let cutter = ConnectionCutter(connections: connections, logger: logger)
        var configuration = ServiceGroupConfiguration(services: [cutter, app] + companions,
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = settings.shutdownGrace
        try await ServiceGroup(configuration: configuration).run()
    }
}
