import Foundation
import NIOConcurrencyHelpers
import ProviderCore
import Users

/// Everything the HTTP layer needs, assembled by the executable from the
/// configuration; the server itself reads no files of its own.
public struct DAVServerSettings: Sendable {
    public var host: String
    public var port: Int
    /// The certificate presented, reloadable; nil serves plain HTTP (tests,
    /// or behind a TLS proxy).
    public var certificate: ServerCertificate?
    public var domains: [String: Provider]
    /// What a reload may change while the server runs; shared by every
    /// copy of these settings.
    public let live: LiveServerSettings
    public var users: UserStore
    public var realm: String
    public var allowBasicOverHTTP: Bool
    public var maxXMLBodyBytes: Int
    public var propfindInfinity: Bool
    public var lockTimeoutDefault: Int
    public var lockTimeoutMax: Int
    /// How long a connection may be silent: between requests, and while a
    /// request body has stopped arriving. Then it is closed.
    public var idleTimeout: Duration
    /// How long the TLS handshake and a request head may take, from the
    /// connection's start or a later request's first byte; a connection
    /// still short of a complete head then is closed (408 when part of a
    /// head had arrived). Keeps slow clients (slowloris) from holding
    /// connections.
    public var headerTimeout: Duration
    /// The metrics in Prometheus' text format, for `/.davgate/metrics`; nil
    /// when the executable bootstrapped no Prometheus backend.
    public var metricsText: (@Sendable () -> String)?
    /// When the server started, for the status page.
    public var startedAt = Date()
    /// How long a stop (SIGTERM, SIGINT) lets requests in flight and the
    /// uploads they started finish before they are cut.
    public var shutdownGrace: Duration = .seconds(10)
    /// Where Nextcloud chunked uploads are kept (`ChunkedUploadExchange`);
    /// nil: the server takes none.
    public var chunkUploads: ChunkFolders?
    /// With a shared index: the instances on it, for the status.
    public var instances: (@Sendable () async throws -> [InstanceStatus])?
    /// This instance's id among them.
    public var instanceID: String?

    public init(host: String, port: Int, certificate: ServerCertificate?, domains: [String: Provider],
                permissions: [String: [String: DomainPermission]] = [:], accessLog: Bool = false,
                users: UserStore, realm: String = "davgate", allowBasicOverHTTP: Bool = false,
                maxXMLBodyBytes: Int = 1 << 20, propfindInfinity: Bool = false,
                lockTimeoutDefault: Int = 600, lockTimeoutMax: Int = 604_800,
                idleTimeout: Duration = .seconds(60), headerTimeout: Duration = .seconds(20)) {
        self.host = host
        self.port = port
        self.certificate = certificate
        self.domains = domains
        self.live = LiveServerSettings(permissions: permissions, accessLog: accessLog)
        self.users = users
        self.realm = realm
        self.allowBasicOverHTTP = allowBasicOverHTTP
        self.maxXMLBodyBytes = maxXMLBodyBytes
        self.propfindInfinity = propfindInfinity
        self.lockTimeoutDefault = lockTimeoutDefault
        self.lockTimeoutMax = lockTimeoutMax
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
    }
}

/// What a user may do in a domain.
public enum DomainPermission: Sendable, Equatable {
    case readWrite
    case readOnly
}

extension DAVServerSettings {
    /// The user's permission in a domain; nil when the domain is not theirs
    /// to see (answered 404, so its existence is not revealed).
    func permission(of user: String, in domain: String) -> DomainPermission? {
        guard let grants = live.permissions[domain] else { return .readWrite }
        return grants[user]
    }
}

/// The server settings a reload changes in place (SIGHUP): who may use
/// which domain, and whether every request is logged. One reference shared
/// by all copies of `DAVServerSettings`, read per request under a lock
/// that is never held for longer than a copy.
public final class LiveServerSettings: Sendable {
    private struct Values {
        var permissions: [String: [String: DomainPermission]]
        var accessLog: Bool
    }
    private let values: NIOLockedValueBox<Values>

    init(permissions: [String: [String: DomainPermission]], accessLog: Bool) {
        values = NIOLockedValueBox(Values(permissions: permissions, accessLog: accessLog))
    }

    /// Who may use each domain: user -> permission. A domain without an
    /// entry is open to every user, read and write.
    public var permissions: [String: [String: DomainPermission]] {
        get { values.withLockedValue { $0.permissions } }
        set { values.withLockedValue { $0.permissions = newValue } }
    }

    /// `access_log`: one line per request at info (method, path, status,
    /// bytes, duration, user, client, request id).
    public var accessLog: Bool {
        get { values.withLockedValue { $0.accessLog } }
        set { values.withLockedValue { $0.accessLog = newValue } }
    }
}
