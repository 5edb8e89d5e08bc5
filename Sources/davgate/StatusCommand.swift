import ArgumentParser
import DAVServer
import Foundation
import GatewaySetup
import Logging
import ProviderCore

/// `davgate status`: what a running server reports at `/.davgate/status.json`,
/// for people or (`--json`) for scripts.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show a running server's domains: upstream health, cache use, uploads, conflicts.",
        discussion: """
            Asks the server configured in --config (or --url) as USER, with the password read \
            from standard input: printf '%s' "$PW" | davgate status --user admin --password-stdin
            With --offline it reads the state folder named in --config instead (the server may be \
            stopped): the same figures but the upstream's health and the uploads' progress.
            """
    )

    @OptionGroup var server: ServerOptions
    @Flag(help: "Print the JSON (the server's, as it is).") var json = false
    @Flag(help: "Read the state folder instead of asking the server; works while it is stopped.") var offline = false

    func run() async throws {
        if offline {
            let config = try loadConfig(server.options.config)
            let (domains, instances) = try await Self.readState(config)
            if json {
                let body = try ServerStatus.encoder().encode(OfflineStatus(state: config.server.state.path, domains: domains, instances: instances))
                print(String(decoding: body, as: UTF8.self))
            } else {
                print(Self.describe(domains, instances: instances, header: "davgate state at \(config.server.state.path) (the server was not asked)", offline: true))
            }
            return
        }
        let (body, base) = try await ServerConnection.with(server) { connection in
            (try await connection.send("GET", "/.davgate/status.json"), connection.base)
        }
        if json {
            print(String(decoding: body, as: UTF8.self), terminator: "")
            return
        }
        let status = try ServerStatus.decoder().decode(ServerStatus.self, from: body)
        print(Self.describe(status.domains, instances: status.instances, header: "davgate at \(base), up \(Self.duration(status.uptimeSeconds))", offline: false))
    }

    /// `--json --offline`: the domains, and where they were read.
    struct OfflineStatus: Encodable {
        var state: String
        var domains: [DomainStatus]
        var instances: [InstanceStatus]?
    }

    /// Each configured domain as the index and the cache folder tell it,
    /// and with a shared index the instances on it.
    static func readState(_ config: GatewayConfig) async throws -> (domains: [DomainStatus], instances: [InstanceStatus]?) {
        let index = try await openIndex(config, readingOnly: true, vault: { nil }, logger: Logger(label: "davgate.status"))
        var domains: [DomainStatus] = []
        for domain in config.domains {
            let cacheFolder = config.server.state.appendingPathComponent("cache").appendingPathComponent(domain.name)
            domains.append(try await DomainStatus.read(domain: domain.name, upstream: "\(domain.upstream)", index: index,
                                                       cacheFolder: cacheFolder, health: .notAsked))
        }
        return (domains, index.isShared ? try await index.instances() : nil)
    }

    static func describe(_ domains: [DomainStatus], instances: [InstanceStatus]?, header: String, offline: Bool) -> String {
        var lines = [header]
        if let instances {
            lines.append("")
            lines.append("instances on the shared index: \(instances.filter(\.alive).count) alive")
            lines += instances.map { instance in
                let state = instance.alive ? "alive, \(instance.uploadsRunning) uploads running" : "NOT ALIVE, last seen \(time(instance.lastSeen))"
                return "  \(instance.address) (\(instance.id))\(instance.answering ? " [this one]" : ""): \(state), up since \(time(instance.startedAt))"
            }
        }
        for domain in domains {
            let health: String
            if offline {
                health = "not asked (offline)"
            } else if domain.health.failing {
                health = "FAILING: \(domain.health.lastError ?? "?")" + (domain.health.lastErrorAt.map { " since \(time($0))" } ?? "")
            } else {
                health = domain.health.lastSuccess.map { "ok, last answer \(time($0))" } ?? "not asked yet"
            }
            lines.append("")
            lines.append("\(domain.name): \(domain.upstream)")
            lines.append("  upstream:  \(health)")
            lines.append("  items:     \(domain.items.files) files (\(bytes(domain.items.bytesListed))), \(domain.items.folders) folders, \(domain.items.local) files local")
            lines.append("  states:    \(domain.items.stateSummary)")
            lines.append("  cache:     \(bytes(domain.cache.bytes)) in \(domain.cache.files) files")
            lines.append("  uploads:   \(domain.uploads.inFlight) running, \(domain.uploads.pending) pending (\(bytes(domain.uploads.pendingBytes))), \(domain.uploads.failed.count) failed")
            lines += domain.uploads.queue.map { "    \($0.path): \($0.summary)" }
            if domain.uploads.unlisted > 0 {
                lines.append("    and \(domain.uploads.unlisted) more")
            }
            lines += domain.uploads.failed.map { "    FAILED \($0.path): \($0.error) (\($0.attempts) attempts)" }
            lines.append("  conflicts: \(domain.conflicts.count)")
            lines += domain.conflicts.map { "    \($0.path)" }
        }
        return lines.joined(separator: "\n")
    }

    static func duration(_ seconds: Int) -> String {
        seconds < 120 ? "\(seconds) s" : seconds < 7200 ? "\(seconds / 60) min" : "\(seconds / 3600) h \(seconds % 3600 / 60) min"
    }

    static func time(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    static func bytes(_ count: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: count, countStyle: .file)
    }
}
