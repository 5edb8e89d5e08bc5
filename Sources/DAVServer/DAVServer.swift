import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

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

    /// Runs until cancelled (SIGINT/SIGTERM through service lifecycle).
    /// `onListening` receives the bound port (useful with port 0).
    /// - Parameter services: background work that runs in the server's
    ///   service group: started with it, and on SIGINT/SIGTERM shut down
    ///   gracefully after the server has stopped taking requests (a group
    ///   stops its services last first, and the server is added last), each
    ///   awaited before this returns.
    public func run(services: [any Service] = [], onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let responder = DAVResponder(settings: settings, secure: settings.tls != nil)
        // One guard per connection: the header timeout and the answers to
        // broken framing (RequestHeadGuard); Hummingbird's idle timeout
        // closes silent connections and stalled bodies.
        let headerTimeout = TimeAmount(settings.headerTimeout)
        let http1 = HTTPServerBuilder.http1(configuration: .init(
            additionalChannelHandlers: [RequestHeadGuard(headerTimeout: headerTimeout, logger: logger)],
            idleTimeout: TimeAmount(settings.idleTimeout),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: RequestHeadGuard.maxHeadBytes,
                                            maxHeaderListSize: RequestHeadGuard.maxHeadBytes,
                                            maxHeaderFieldCount: RequestHeadGuard.maxHeaderFields)
        ))
        let server: HTTPServerBuilder
        if let tls = settings.tls {
            let chain = try NIOSSLCertificate.fromPEMFile(tls.certificate).map { NIOSSLCertificateSource.certificate($0) }
            let key = try NIOSSLPrivateKey(file: tls.privateKey, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            server = try .tls(http1, tlsConfiguration: configuration)
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
        try await app.runService()
    }
}
