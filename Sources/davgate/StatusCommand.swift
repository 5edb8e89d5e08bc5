import ArgumentParser
import DAVServer
import Foundation
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
            """
    )

    @OptionGroup var server: ServerOptions
    @Flag(help: "Print the server's JSON as it is.") var json = false

    func run() async throws {
        let (body, base) = try await ServerConnection.with(server) { connection in
            (try await connection.send("GET", "/.davgate/status.json"), connection.base)
        }
        if json {
            print(String(decoding: body, as: UTF8.self), terminator: "")
            return
        }
        print(Self.describe(try ServerStatus.decoder().decode(ServerStatus.self, from: body), at: base))
    }

    static func describe(_ status: ServerStatus, at base: String) -> String {
        var lines = ["davgate at \(base), up \(duration(status.uptimeSeconds))"]
        for domain in status.domains {
            let health: String
            if domain.health.failing {
                health = "FAILING: \(domain.health.lastError ?? "?")" + (domain.health.lastErrorAt.map { " since \(time($0))" } ?? "")
            } else {
                health = domain.health.lastSuccess.map { "ok, last answer \(time($0))" } ?? "not asked yet"
            }
            lines.append("")
            lines.append("\(domain.name): \(domain.upstream)")
            lines.append("  upstream:  \(health)")
            lines.append("  items:     \(domain.items.files) files (\(bytes(domain.items.bytesListed))), \(domain.items.folders) folders, \(domain.items.materialized) files local")
            lines.append("  cache:     \(bytes(domain.cache.bytes)) in \(domain.cache.files) files")
            lines.append("  uploads:   \(domain.uploads.inFlight) running, \(domain.uploads.pending) pending (\(bytes(domain.uploads.pendingBytes))), \(domain.uploads.failed.count) failed")
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
