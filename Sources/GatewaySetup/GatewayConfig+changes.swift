import Foundation
import ProviderCore

/// A setting that differs between two readings of the configuration file.
public struct ConfigChange: Sendable, Equatable, CustomStringConvertible {
    /// The key as written in the file (`log_level`, `upload_delay`), or
    /// `domain` for a domain added or removed.
    public var key: String
    /// The `[[domain]]` it belongs to; nil for `[server]`.
    public var domain: String?
    /// Whether a reload applies it while serving; otherwise it waits for
    /// the next start.
    public var live: Bool

    public var description: String {
        domain.map { "domain \($0): \(key)" } ?? key
    }
}

extension GatewayConfig {
    /// What a reload (SIGHUP) finds changed since `old`, each key marked
    /// with whether it can take effect while serving: logging, the
    /// certificate files, listing TTLs, cache budgets, the journal's upload
    /// settings and who may use a domain can; what the listener, the state
    /// folder or a domain's upstream is made of cannot, nor can the set of
    /// domains.
    public func changes(since old: GatewayConfig) -> [ConfigChange] {
        var changes: [ConfigChange] = []
        func compare<T: Equatable>(_ key: String, _ path: KeyPath<ServerSettings, T>, live: Bool) {
            if old.server[keyPath: path] != server[keyPath: path] { changes.append(ConfigChange(key: key, domain: nil, live: live)) }
        }
        compare("listen", \.host, live: false)
        if !changes.contains(where: { $0.key == "listen" }) { compare("listen", \.port, live: false) }
        compare("tls", \.tls, live: false)
        compare("certificate", \.certificate.path, live: true)
        compare("private_key", \.privateKey.path, live: true)
        compare("state", \.state.path, live: false)
        compare("vault", \.vault.path, live: false)
        compare("users_file", \.usersFile.path, live: false)
        compare("allow_basic_over_http", \.allowBasicOverHTTP, live: false)
        compare("max_xml_body", \.maxXMLBodyBytes, live: false)
        compare("propfind_infinity", \.propfindInfinity, live: false)
        compare("listing_ttl", \.listingTTL, live: true)
        compare("lock_timeout_default", \.lockTimeoutDefault, live: false)
        compare("lock_timeout_max", \.lockTimeoutMax, live: false)
        compare("idle_timeout", \.idleTimeout, live: false)
        compare("header_timeout", \.headerTimeout, live: false)
        compare("log_level", \.logLevel, live: true)
        compare("log_format", \.logFormat, live: true)
        compare("access_log", \.accessLog, live: true)
        compare("shutdown_grace", \.shutdownGrace, live: false)
        compare("realm", \.realm, live: false)
        if old.index != index { changes.append(ConfigChange(key: "[index]", domain: nil, live: false)) }

        let before = Dictionary(old.domains.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(domains.map(\.name))
        for name in before.keys.sorted() where !names.contains(name) {
            changes.append(ConfigChange(key: "domain", domain: name, live: false))
        }
        for domain in domains {
            guard let previous = before[domain.name] else {
                changes.append(ConfigChange(key: "domain", domain: domain.name, live: false))
                continue
            }
            changes += domain.changes(since: previous)
        }
        return changes
    }
}

extension DomainSettings {
    fileprivate func changes(since old: DomainSettings) -> [ConfigChange] {
        var changes: [ConfigChange] = []
        func compare<T: Equatable>(_ key: String, _ path: KeyPath<DomainSettings, T>, live: Bool) {
            if old[keyPath: path] != self[keyPath: path] { changes.append(ConfigChange(key: key, domain: name, live: live)) }
        }
        compare("upstream", \.upstream.identity, live: false)
        compare("listing_ttl", \.listingTTL, live: true)
        compare("refresh_interval", \.refreshInterval, live: true)
        compare("revalidate", \.revalidate, live: false)
        compare("folder_etags", \.folderETags, live: false)
        compare("keep_local", \.keepLocal, live: false)
        compare("cache_budget", \.cacheBudget.maxBytes, live: true)
        compare("min_free_disk", \.cacheBudget.minFreeBytes, live: true)
        compare("write_mode", \.writeMode, live: false)
        compare("mirror_locks", \.mirrorLocks, live: false)
        compare("upload_delay", \.uploads.quietDelay, live: true)
        compare("upload_max_age", \.uploads.maxAge, live: true)
        compare("dirty_budget", \.uploads.dirtyBudget, live: true)
        compare("upload_parallelism", \.uploads.parallelism, live: true)
        compare("credentials", \.credentials, live: false)
        compare("access_group", \.accessGroup, live: false)
        compare("upstream_ca", \.upstreamCA?.path, live: false)
        compare("users", \.users, live: true)
        compare("upstream_file_mode", \.upstreamFileMode, live: false)
        compare("upstream_folder_mode", \.upstreamFolderMode, live: false)
        compare("trash", \.trash.isSome, live: false)
        compare("trash_retention", \.trash?.retention, live: false)
        compare("trash_budget", \.trash?.budget, live: false)
        compare("versions_keep", \.versions.keep, live: false)
        compare("versions_budget", \.versions.budget, live: false)
        return changes
    }
}

extension Optional {
    fileprivate var isSome: Bool { self != nil }
}

extension UpstreamLocation {
    /// The location as a comparable text. File URLs are compared by path:
    /// `URL(fileURLWithPath:)` adds a trailing slash to a folder that
    /// exists, so the same line reads differently before and after the
    /// first start made the folder.
    fileprivate var identity: String {
        switch self {
        case .directory(let url): "file:" + url.path
        case .webdav(let url): url.absoluteString
        case .s3(let location): "s3:\(location)"
        }
    }
}
