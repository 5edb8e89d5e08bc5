import Foundation
import ProviderCore

import Users

/// Everything the HTTP layer needs, assembled by the executable from the
/// configuration; the server itself reads no files of its own.
public struct DAVServerSettings: Sendable {
    public var host: String
    public var port: Int
    /// PEM paths; nil serves plain HTTP (tests, or behind a TLS proxy).
    public var tls: (certificate: String, privateKey: String)?
    public var domains: [String: Provider]
    /// Who may use each domain: user -> permission. A domain without an
    /// entry is open to every user, read and write.
    public var permissions: [String: [String: DomainPermission]]
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

    public init(host: String, port: Int, tls: (certificate: String, privateKey: String)?, domains: [String: Provider],
                permissions: [String: [String: DomainPermission]] = [:], users: UserStore, realm: String = "davgate", allowBasicOverHTTP: Bool = false,
                maxXMLBodyBytes: Int = 1 << 20, propfindInfinity: Bool = false,
                lockTimeoutDefault: Int = 600, lockTimeoutMax: Int = 604_800,
                idleTimeout: Duration = .seconds(60), headerTimeout: Duration = .seconds(20)) {
        self.host = host
        self.port = port
        self.tls = tls
        self.domains = domains
        self.permissions = permissions
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
        guard let grants = permissions[domain] else { return .readWrite }
        return grants[user]
    }
}
