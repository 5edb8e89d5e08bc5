import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// What every HTTP upstream (WebDAV, S3) shares: the client's settings,
/// transport failures in `UpstreamError` terms, bodies read and dropped,
/// byte ranges and writes at offsets.
enum HTTPUpstream {
    /// The client a store uses: the shared one it was given, or its own
    /// (then also returned as the owner that shuts it down with the last
    /// copy of the store), with the TLS settings that trust `extraTrustRoot`.
    static func client(_ shared: HTTPClient?, trusting extraTrustRoot: URL?, timeouts: (connect: Duration, read: Duration))
        throws -> (HTTPClient, ClientOwner?, TLSConfiguration?) {
        let tls = try extraTrustRoot.map(tlsConfiguration(trusting:))
        if let shared { return (shared, nil, tls) }
        let own = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration(tls: tls, timeouts: timeouts))
        return (own, ClientOwner(own), tls)
    }

    /// The system's roots plus the configured PEM (an extra CA, or a
    /// self-signed server certificate, which then is its own anchor).
    static func tlsConfiguration(trusting pem: URL) throws -> TLSConfiguration {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(pem.path)
        } catch {
            throw WebDAVStoreConfigurationError.unreadableTrustRoot(path: pem.path, reason: "\(error)")
        }
        guard !certificates.isEmpty else {
            throw WebDAVStoreConfigurationError.unreadableTrustRoot(path: pem.path, reason: "no certificate in the file")
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [.certificates(certificates)]
        return tls
    }

    /// The store's own client: pooled, never redirected, with connect and
    /// idle-read (and idle-write) timeouts. A refused connection fails the request at once
    /// rather than retrying until the connect timeout: the core answers 503
    /// and serves what it has, which beats a client waiting ten seconds.
    static func clientConfiguration(tls: TLSConfiguration?,
                                    timeouts: (connect: Duration, read: Duration)) -> HTTPClient.Configuration {
        var pool = HTTPClient.Configuration.ConnectionPool()
        pool.retryConnectionEstablishment = false
        // Below Apache's default KeepAliveTimeout (5 s): davgate closes an
        // idle connection before the upstream does, so no request is ever
        // sent on a connection the server is closing that instant (seen as
        // "the upstream closed the connection" in the contract suite).
        pool.idleTimeout = .seconds(4)
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(timeouts.connect), read: TimeAmount(timeouts.read),
                           write: TimeAmount(timeouts.read)),
            connectionPool: pool,
            decompression: .disabled)
        // HTTP/1.1 even where h2 is offered: one transfer per pooled
        // connection, no stream flow-control window throttling a large file.
        configuration.httpVersion = .http1Only
        return configuration
    }

    /// A failure below HTTP in `UpstreamError` terms: timeouts, TLS, and
    /// anything that kept a connection from being made or kept.
    /// Cancellation stays cancellation.
    static func transportError(_ error: any Error) -> any Error {
        switch error {
        case is UpstreamError, is CancellationError:
            return error
        case let error as HTTPClientError:
            switch error {
            case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
                 .getConnectionFromPoolTimeout:
                return UpstreamError.timeout
            case .cancelled, .requestStreamCancelled:
                return CancellationError()
            case .remoteConnectionClosed:
                return UpstreamError.unavailable("the upstream closed the connection")
            default:
                return UpstreamError.unavailable("\(error)")
            }
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError:
            return UpstreamError.forbidden("TLS: \(error)")
        case let error as ChannelError:
            if case .connectTimeout = error { return UpstreamError.timeout }
            // A pooled connection the upstream had closed: this write never left.
            if case .ioOnClosedChannel = error { return UpstreamError.unreachable("\(error)") }
            return UpstreamError.unavailable("\(error)")
        case let error as IOError where [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode):
            return UpstreamError.unreachable(error.description)
        case let error as IOError:
            return UpstreamError.unavailable(error.description)
        case let error as NIOConnectionError:
            // Refused, or no address answered: the request never left.
            return UpstreamError.unreachable("\(error)")
        default:
            return UpstreamError.unavailable("\(error)")
        }
    }

    /// Reads and drops a body of an answer we do not need, up to 1 MiB;
    /// beyond that the connection is closed instead of read to the end.
    static func discard(_ body: HTTPClientResponse.Body) async {
        var seen = 0
        do {
            for try await chunk in body {
                seen += chunk.readableBytes
                if seen > 1 << 20 { return }
            }
        } catch {
            // Nothing to salvage from a body we were throwing away.
        }
    }

    /// A partial answer's Content-Range, when it has one that covers the
    /// first byte `asked` for: one that starts later leaves a hole before
    /// it, which readers following the fetch would be served as content.
    static func partialContent(_ headers: HTTPHeaders, asked: ClosedRange<Int64>) -> (start: Int64, end: Int64, total: Int64?)? {
        guard let parsed = headers.first(name: "Content-Range").flatMap(contentRange), parsed.start <= asked.lowerBound
        else { return nil }
        return parsed
    }

    /// `bytes 4-9/16` (RFC 9110 section 14.4); total nil for `*`.
    static func contentRange(_ value: String) -> (start: Int64, end: Int64, total: Int64?)? {
        let parts = value.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let rangeAndTotal = parts[1].split(separator: "/", maxSplits: 1)
        let bounds = rangeAndTotal[0].split(separator: "-", maxSplits: 1)
        guard rangeAndTotal.count == 2, bounds.count == 2,
              let start = Int64(bounds[0]), let end = Int64(bounds[1]), start <= end
        else { return nil }
        return (start, end, Int64(rangeAndTotal[1]))
    }
}

/// The store's own HTTP client, shut down when the last copy of the store
/// lets go of it: the client insists on an explicit shutdown, and a store is
/// a value that callers copy freely.
final class ClientOwner: Sendable {
    let client: HTTPClient

    init(_ client: HTTPClient) { self.client = client }

    deinit {
        // Harmless after an explicit shutdown (it then reports "already shut down").
        client.shutdown(queue: .global()) { _ in }
    }
}
