import ArgumentParser
import Foundation
import GatewaySetup
import Logging
import ProviderCore

/// `davgate domain ...`: the File Provider's domain management.
struct DomainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "domain",
        abstract: "Manage the served domains.",
        subcommands: [Reset.self, List.self]
    )

    /// The File Provider's log-out: forget everything local about a domain.
    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drop a domain's cache, placeholders, locks and dead properties; the upstream is left untouched.",
            discussion: "The next request lists the upstream afresh. Stop the server first or expect its clients' locks to vanish."
        )
        @Argument(help: "The domain's name.") var name: String
        @Flag(help: "Do not ask for confirmation.") var yes = false
        @Flag(help: "Also drop writes not uploaded yet (write-back); without it, reset refuses while any are pending.")
        var discardUploads = false
        @OptionGroup var options: ConfigOption

        func run() async throws {
            let config = try loadConfig(options.config)
            guard let domain = config.domains.first(where: { $0.name == name }) else {
                throw ValidationError("no domain named \(name) in \(config.file.path)")
            }
            let index = try await openIndex(config, vault: { nil }, logger: Logger(label: "davgate.domain"))
            let cache = config.server.state.appendingPathComponent("cache").appendingPathComponent(name)
            // What `davgate status --offline` reads too.
            let uploads = try await DomainStatus.read(domain: name, upstream: "\(domain.upstream)", index: index,
                                                      cacheFolder: cache, health: .notAsked).uploads
            if uploads.pending > 0 && !discardUploads {
                let paths = (uploads.failed.map(\.path) + uploads.queue.map(\.path)).prefix(10)
                throw ValidationError("""
                    domain \(name) holds \(uploads.pending) files (\(uploads.pendingBytes) bytes) written here and \
                    not uploaded yet: \(paths.joined(separator: ", "))\(uploads.pending > 10 ? ", ..." : ""). Start the server and let \
                    them upload (davgate status shows them), or pass --discard-uploads to lose them.
                    """)
            }
            if !yes {
                guard isatty(STDIN_FILENO) != 0 else {
                    throw ValidationError("refusing to reset \(name) without confirmation; pass --yes")
                }
                print("Reset domain \(name)? Its cache, placeholders, locks and dead properties are dropped. [y/N] ", terminator: "")
                guard let answer = readLine(), answer.lowercased().hasPrefix("y") else {
                    say("Nothing was changed.")
                    return
                }
            }
            let items = try await Provider.reset(domain: name, index: index, cacheFolder: cache)
            say("Reset domain \(name): \(items) items forgotten, cache \(cache.path) removed; the upstream was not touched.")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the configured domains and their upstreams.")
        @OptionGroup var options: ConfigOption

        func run() throws {
            for domain in try loadConfig(options.config).domains {
                print("\(domain.name)\t\(domain.upstream)")
            }
        }
    }
}
