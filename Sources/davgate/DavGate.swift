import ArgumentParser

/// The davgate command line: one subcommand per job (started by `Entrypoint`).
struct DavGate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "davgate",
        abstract: "A TLS WebDAV gateway that serves upstream storage the File Provider way.",
        discussion: """
            Every upstream file appears at once as a placeholder; content is fetched on \
            first read and kept in a local cache; writes land durably and are uploaded; \
            WebDAV locks coordinate writers.
            """,
        subcommands: [Serve.self, StatusCommand.self, PinCommand.self, UnpinCommand.self, EvictCommand.self, WatchCommand.self, TrashCommand.self, VersionsCommand.self, RestoreCommand.self,
                      UserCommand.self, DomainCommand.self, VaultCommand.self]
    )
}

/// `--config`, shared by every subcommand that reads the configuration.
struct ConfigOption: ParsableArguments {
    @Option(name: .long, help: "The configuration file (TOML); relative paths in it resolve against its folder.")
    var config: String = "conf/davgate.toml"
}
