import DAVServer
import Foundation
import GatewaySetup
import Logging
import NIOConcurrencyHelpers
import ProviderCore
import ServiceRuntime
import Users

/// What a reload (SIGHUP, `systemctl reload`) does: reads the configuration
/// file again and applies what can change while serving, all of it or none.
///
/// Everything that can fail is done before anything is applied: the file
/// must load and check as at start, and the certificate pair it names must
/// read and match. A refused reload leaves the running configuration in
/// force and says why in the log. What changed but can only take effect at
/// the next start (the listener, the state folder, a domain's upstream, the
/// set of domains) is named in one warning.
final class Reloader: Sendable {
    private let configPath: String
    private let running: NIOLockedValueBox<GatewayConfig>
    private let output: LogOutput
    private let certificate: ServerCertificate?
    private let providers: [String: Provider]
    private let live: LiveServerSettings
    private let users: UserStore
    private let logger: Logger

    init(configPath: String, running: GatewayConfig, output: LogOutput, certificate: ServerCertificate?,
         providers: [String: Provider], live: LiveServerSettings, users: UserStore, logger: Logger) {
        self.configPath = configPath
        self.running = NIOLockedValueBox(running)
        self.output = output
        self.certificate = certificate
        self.providers = providers
        self.live = live
        self.users = users
        self.logger = logger
    }

    func reload() async {
        let old = running.withLockedValue { $0 }
        let new: GatewayConfig
        do {
            new = try GatewayConfig.load(from: URL(fileURLWithPath: configPath))
        } catch {
            logger.error("reload refused, the running configuration stays in force: \(error)")
            return
        }
        // Restart-only settings keep their running values; only what is
        // applied below becomes the running configuration.
        let changes = new.changes(since: old)
        do {
            let fingerprint = try certificate?.reload(certificate: new.server.certificate.path, privateKey: new.server.privateKey.path)
            if let fingerprint { logger.info("reload: certificate \(new.server.certificate.path), SHA-256 fingerprint \(fingerprint), for new connections") }
        } catch {
            logger.error("reload refused, the running configuration stays in force: \(error)")
            return
        }
        do {
            let count = try users.reload()
            logger.debug("reload: \(count) users in \(users.file.path)")
        } catch {
            // The users file is checked once a second anyway; its damage is
            // not the configuration's, so the rest still applies.
            logger.error("reload: the users file could not be read, the users stay as they were: \(error)")
        }
        output.level = Logger.Level(rawValue: new.server.logLevel) ?? output.level
        output.format = LogFormat(rawValue: new.server.logFormat) ?? output.format
        live.accessLog = new.server.accessLog
        live.permissions = Self.permissions(of: new.domains.filter { providers[$0.name] != nil })
        for domain in new.domains {
            providers[domain.name]?.retune(ProviderTuning(listingTTL: domain.listingTTL, budget: domain.cacheBudget, uploads: domain.uploads,
                                                                  refreshInterval: domain.refreshInterval))
        }
        running.withLockedValue { running in
            running.server.logLevel = new.server.logLevel
            running.server.logFormat = new.server.logFormat
            running.server.accessLog = new.server.accessLog
            running.server.listingTTL = new.server.listingTTL
            running.server.certificate = new.server.certificate
            running.server.privateKey = new.server.privateKey
            for index in running.domains.indices {
                guard let domain = new.domains.first(where: { $0.name == running.domains[index].name }) else { continue }
                running.domains[index].listingTTL = domain.listingTTL
                running.domains[index].cacheBudget = domain.cacheBudget
                running.domains[index].uploads = domain.uploads
                running.domains[index].users = domain.users
            }
        }
        let applied = changes.filter(\.live).map(\.description)
        let waiting = changes.filter { !$0.live }.map(\.description)
        // The "reloaded" line comes last: it is the one that says the reload is
        // over, and scripts (and the tests) wait for it before reading the rest.
        if !waiting.isEmpty {
            logger.warning("reload: changed in \(configPath) but used only from the next start (restart davgate for them): \(waiting.joined(separator: ", "))")
        }
        logger.notice("reloaded \(configPath): \(applied.isEmpty ? "no live setting changed" : "applied " + applied.joined(separator: ", "))")
    }

    /// Who may use each domain, from its `users` table; a domain without one
    /// is open to every user.
    static func permissions(of domains: [DomainSettings]) -> [String: [String: DomainPermission]] {
        var permissions: [String: [String: DomainPermission]] = [:]
        for domain in domains {
            guard let users = domain.users else { continue }
            permissions[domain.name] = users.mapValues { $0 == .readOnly ? .readOnly : .readWrite }
        }
        return permissions
    }
}
