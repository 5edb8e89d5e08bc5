import ArgumentParser
import AsyncHTTPClient
import DAVServer
import Foundation
import GatewaySetup
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOSSL
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

    @OptionGroup var options: ConfigOption
    @Option(help: "The server's base URL; defaults to the config's listen address.") var url: String?
    @Option(help: "The user to ask as.") var user: String = "admin"
    @Flag(help: "Read the password from standard input.") var passwordStdin = false
    @Flag(help: "Print the server's JSON as it is.") var json = false

    func run() async throws {
        let config = try loadConfig(options.config)
        guard passwordStdin, let password = readLine(strippingNewline: true), !password.isEmpty else {
            throw ValidationError("pass --password-stdin and write the password to standard input")
        }
        let base = url ?? defaultURL(config.server)
        var tls = TLSConfiguration.makeClientConfiguration()
        if config.server.tls, FileManager.default.fileExists(atPath: config.server.certificate.path) {
            // davgate's own certificate is the one to trust, not the system's roots.
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(config.server.certificate.path))
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let outcome: Result<Data, any Error>
        do {
            outcome = .success(try await fetchStatus(client, base: base, password: password))
        } catch {
            outcome = .failure(error)
        }
        try await client.shutdown()
        let body = try outcome.get()
        if json {
            print(String(decoding: body, as: UTF8.self), terminator: "")
            return
        }
        print(Self.describe(try ServerStatus.decoder().decode(ServerStatus.self, from: body), at: base))
    }

    private func fetchStatus(_ client: HTTPClient, base: String, password: String) async throws -> Data {
        var request = HTTPClientRequest(url: base.hasSuffix("/") ? base + ".davgate/status.json" : base + "/.davgate/status.json")
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(30))
        } catch {
            throw ValidationError("cannot reach davgate at \(base): \(error); is it running? (davgate serve)")
        }
        let body = Data(buffer: try await response.body.collect(upTo: 16 << 20))
        guard response.status == .ok else {
            throw ValidationError("\(base) answered \(response.status.code): \(String(decoding: body, as: UTF8.self))")
        }
        return body
    }

    private func defaultURL(_ server: ServerSettings) -> String {
        let host = server.host == "0.0.0.0" || server.host == "::" ? "127.0.0.1" : server.host
        return "\(server.tls ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(server.port)"
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
            lines.append("  uploads:   \(domain.uploads.inFlight) running")
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
