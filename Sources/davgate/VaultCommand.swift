import ArgumentParser
import DurableFiles
import Foundation
import GatewaySetup
import Vault

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `davgate vault ...`: the encrypted credentials file (davgate's keychain).
///
/// Secrets never go on the command line (argv is visible to every local user in `ps`): `set` reads
/// the secret from standard input and `get` prints it only with `--reveal`. The vault is unlocked
/// by `--key-file`, else `DAVGATE_VAULT_PASSPHRASE`, else a prompt without echo on a terminal.
struct VaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Manage the encrypted vault of upstream credentials.",
        discussion: """
            The vault is unlocked with --key-file PATH (32 raw bytes, mode 0600), else the \
            DAVGATE_VAULT_PASSPHRASE environment variable, else a passphrase typed at a \
            terminal prompt. Secrets are read from standard input, never from arguments.
            """,
        subcommands: [Init.self, SetEntry.self, Get.self, List.self, Remove.self, Rekey.self, ExportPublic.self]
    )

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an empty vault; never overwrites an existing one.")
        @OptionGroup var options: VaultOptions

        func run() throws {
            let file = try options.vaultFile(creatingFolder: true)
            let key = try options.keySource(confirmingNew: true)
            _ = try Vault.create(at: file, key: key)
            say("Created the vault \(file.path) (\(key.kind)).")
        }
    }

    /// `vault set` (named so as not to shadow Swift's `Set`).
    struct SetEntry: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Add or replace an entry; the secret is read from standard input.",
            discussion: "All of standard input is the secret, less one trailing newline: printf '%s' \"$TOKEN\" | davgate vault set SERVICE ACCOUNT --group G"
        )
        @Argument(help: "The service, e.g. the upstream's host name.") var service: String
        @Argument(help: "The account at that service.") var account: String
        @Option(help: "The access group (the domains with this access_group may read it).") var group: String
        @Option(help: "A human-readable label.") var label: String?
        @OptionGroup var options: VaultOptions

        func run() throws {
            var vault = try options.openVault()
            let secret = try readSecret()
            let created = try vault.set(service: service, account: account, group: group, label: label, secret: secret)
            try vault.save()
            say("\(created ? "Added" : "Replaced") \(service) / \(account) in group \(group).")
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an entry; the secret only with --reveal.")
        @Argument(help: "The service.") var service: String
        @Argument(help: "The account.") var account: String
        @Option(help: "The access group.") var group: String
        @Flag(help: "Also print the secret.") var reveal = false
        @OptionGroup var options: VaultOptions

        func run() throws {
            let vault = try options.openVault()
            guard let entry = vault.entry(service: service, account: account, group: group) else {
                throw VaultCommandError("no entry \(service) / \(account) in group \(group)")
            }
            say("service:  \(entry.service)")
            say("account:  \(entry.account)")
            say("group:    \(entry.group)")
            if let label = entry.label { say("label:    \(label)") }
            say("created:  \(timestamp(entry.created))")
            say("modified: \(timestamp(entry.modified))")
            if !reveal {
                say("secret:   (hidden; add --reveal to print it)")
            } else if let text = entry.secret.stringValue {
                say("secret:   \(text)")
            } else {
                say("secret (base64): \(entry.secret.withUnsafeBytes { Data($0).base64EncodedString() })")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the entries (group, service, account, label, modified); never the secrets.")
        @Option(help: "Only this access group.") var group: String?
        @OptionGroup var options: VaultOptions

        func run() throws {
            let vault = try options.openVault()
            let entries = group.map { vault.entries(inGroup: $0) } ?? vault.entries
            for entry in entries {
                say([entry.group, entry.service, entry.account, entry.label ?? "-", timestamp(entry.modified)].joined(separator: "\t"))
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an entry.")
        @Argument(help: "The service.") var service: String
        @Argument(help: "The account.") var account: String
        @Option(help: "The access group.") var group: String
        @OptionGroup var options: VaultOptions

        func run() throws {
            var vault = try options.openVault()
            guard vault.remove(service: service, account: account, group: group) else {
                throw VaultCommandError("no entry \(service) / \(account) in group \(group)")
            }
            try vault.save()
            say("Removed \(service) / \(account) from group \(group).")
        }
    }

    struct Rekey: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change what unlocks the vault.",
            discussion: """
                The new key is --new-key-file PATH, else DAVGATE_VAULT_NEW_PASSPHRASE, else a \
                passphrase typed twice at a terminal prompt.
                """
        )
        @Option(help: "Unlock with this key file from now on (32 raw bytes, mode 0600).") var newKeyFile: String?
        @OptionGroup var options: VaultOptions

        func run() throws {
            var vault = try options.openVault()
            let newKey: VaultKeySource
            if let newKeyFile {
                newKey = .keyFile(URL(fileURLWithPath: newKeyFile))
            } else if let phrase = environment("DAVGATE_VAULT_NEW_PASSPHRASE") {
                newKey = .passphrase(phrase)
            } else if isatty(STDIN_FILENO) == 1 {
                newKey = .passphrase(try promptTwice("New vault passphrase: "))
            } else {
                throw VaultCommandError(
                    "no new key: pass --new-key-file PATH, set DAVGATE_VAULT_NEW_PASSPHRASE, or run on a terminal to be prompted")
            }
            try vault.rekey(to: newKey)
            try vault.save()
            say("Rekeyed the vault \(vault.file.path) (\(newKey.kind)).")
        }
    }

    struct ExportPublic: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-public",
            abstract: "Print the entries' non-secret fields as JSON.")
        @OptionGroup var options: VaultOptions

        /// The public face of an entry: everything but the secret.
        struct PublicEntry: Encodable {
            var service: String
            var account: String
            var group: String
            var label: String?
            var created: Date
            var modified: Date
        }

        func run() throws {
            let vault = try options.openVault()
            let entries = vault.entries.map {
                PublicEntry(service: $0.service, account: $0.account, group: $0.group, label: $0.label, created: $0.created, modified: $0.modified)
            }
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            say(String(decoding: try encoder.encode(entries), as: UTF8.self))
        }
    }
}

/// Where the vault is and what unlocks it, shared by every `vault` subcommand.
struct VaultOptions: ParsableArguments {
    @OptionGroup var config: ConfigOption
    @Option(help: "The vault file (default: [server] vault in the configuration, else vault.dgv in the state folder).") var vault: String?
    @Option(help: "Unlock with this key file (32 raw bytes, mode 0600) instead of a passphrase.") var keyFile: String?

    /// The vault's path: `--vault`, else `[server] vault` of `--config` (by default `vault.dgv`
    /// in the state folder).
    func vaultFile(creatingFolder: Bool = false) throws -> URL {
        if let vault { return URL(fileURLWithPath: vault) }
        let file = try loadConfig(config.config).server.vault
        if creatingFolder {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        return file
    }

    /// The key: `--key-file`, else `DAVGATE_VAULT_PASSPHRASE`, else a prompt on a terminal
    /// (typed twice for a new vault); refuses rather than waiting on a pipe that will not answer.
    func keySource(confirmingNew: Bool = false) throws -> VaultKeySource {
        if let keyFile { return .keyFile(URL(fileURLWithPath: keyFile)) }
        if let phrase = environment("DAVGATE_VAULT_PASSPHRASE") { return .passphrase(phrase) }
        guard isatty(STDIN_FILENO) == 1 else {
            throw VaultCommandError(
                "no key for the vault: set DAVGATE_VAULT_PASSPHRASE, pass --key-file PATH, or run on a terminal to be prompted")
        }
        return .passphrase(confirmingNew ? try promptTwice("New vault passphrase: ") : try prompt("Vault passphrase: "))
    }

    func openVault() throws -> Vault {
        let file = try vaultFile()
        return try Vault.open(at: file, key: try keySource())
    }
}

/// A refusal of the command itself; printed as `Error: <message>`, exit status 1.
struct VaultCommandError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension VaultKeySource {
    /// How the vault is unlocked, for messages (never the key itself).
    var kind: String {
        switch self {
        case .passphrase: "unlocked with a passphrase"
        case .keyFile(let file): "unlocked with the key file \(file.path)"
        }
    }
}

/// A non-empty environment variable.
private func environment(_ name: String) -> String? {
    guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
    return value
}

private func timestamp(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// The secret for `vault set`: all of standard input less one trailing newline, read without echo
/// when standard input is a terminal.
private func readSecret() throws -> VaultSecret {
    var bytes: [UInt8]
    if isatty(STDIN_FILENO) == 1 {
        bytes = Array(try prompt("Secret: ").utf8)
    } else {
        bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    }
    defer { wipe(&bytes) }
    guard !bytes.isEmpty else {
        throw VaultCommandError("no secret on standard input; e.g. printf '%s' \"$TOKEN\" | davgate vault set SERVICE ACCOUNT --group G")
    }
    return VaultSecret(bytes: bytes)
}

/// Asks twice for a new passphrase and insists that both match.
private func promptTwice(_ text: String) throws -> String {
    let first = try prompt(text)
    guard try prompt("Again: ") == first else { throw VaultCommandError("the two passphrases differ; nothing was changed") }
    return first
}

/// Reads one line from the terminal on standard input with echo off (what `getpass` does), the
/// prompt on standard error so that standard output stays clean for scripts.
private func prompt(_ text: String) throws -> String {
    var saved = termios()
    guard tcgetattr(STDIN_FILENO, &saved) == 0 else { throw VaultCommandError("standard input is not a terminal") }
    var quiet = saved
    quiet.c_lflag &= ~tcflag_t(ECHO)
    quiet.c_lflag |= tcflag_t(ECHONL)
    FileHandle.standardError.write(Data(text.utf8))
    guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0 else { throw VaultCommandError("cannot turn off the terminal's echo") }
    defer { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let count = read(STDIN_FILENO, &byte, 1)
        if count < 0, errno == EINTR { continue }
        if count <= 0 || byte == UInt8(ascii: "\n") { break }
        line.append(byte)
    }
    defer { wipe(&line) }
    if line.last == UInt8(ascii: "\r") { line.removeLast() }
    return String(decoding: line, as: UTF8.self)
}

/// Zeroes secret bytes before they are freed (DurableFiles' `zeroize`).
private func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { zeroize($0) }
}
