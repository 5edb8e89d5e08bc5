import ArgumentParser
import DAVProtocol
import DAVServer
import Foundation
import ProviderCore

/// `davgate trash list|restore|empty DOMAIN`: the domain's trash through
/// the running server's `/.davgate/trash/DOMAIN/` view, as any WebDAV tool
/// could use it.
struct TrashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trash", abstract: "List, restore or purge what was deleted in a domain.",
        subcommands: [TrashList.self, TrashRestore.self, TrashEmpty.self])

    static func href(_ domain: String, _ entry: String? = nil) -> String {
        DAVPath(segments: [".davgate", "trash", domain] + (entry.map { [$0] } ?? [])).href(collection: entry == nil)
    }

    /// Where a MOVE of an entry restores it to its original place.
    static func restoreHref(_ domain: String, _ entry: String) -> String {
        DAVPath(segments: [".davgate", "trash", domain, "restore", entry]).href(collection: false)
    }

    static func entries(of domain: String, on connection: ServerConnection) async throws -> [TrashEntry] {
        let body = try await connection.send("PROPFIND", href(domain), headers: [("Depth", "1")], expecting: [207])
        return try TrashListing.entries(fromMultistatus: Array(body))
    }
}

struct TrashList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The entries of a domain's trash, newest first, with where each was and when it went.")

    @Argument(help: "The domain, e.g. files.") var domain: String
    @OptionGroup var server: ServerOptions

    func run() async throws {
        let entries = try await ServerConnection.with(server) { try await TrashCommand.entries(of: domain, on: $0) }
        if entries.isEmpty { return print("the trash of \(domain) is empty") }
        let dates = ISO8601DateFormatter()
        for entry in entries {
            let size = ByteCountFormatter.string(fromByteCount: entry.size, countStyle: .file)
            let path = "/" + entry.originalPath.joined(separator: "/") + (entry.isFolder ? "/" : "")
            print("\(dates.string(from: entry.deletedAt))  \(size.padding(toLength: 10, withPad: " ", startingAt: 0))  \(path)  [\(entry.name)]"
                  + (entry.deletedBy.map { " by \($0)" } ?? ""))
        }
        print("\(entries.count) entries; restore one with: davgate trash restore \(domain) ENTRY")
    }
}

struct TrashRestore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Put entries back where they were (or, for one entry, at --to).",
        discussion: "--all restores every entry, the most recently deleted first, so a folder comes back before what was in it; entries whose place is taken are skipped and named.")

    @Argument(help: "The domain, e.g. files.") var domain: String
    @Argument(help: "The entries, as `davgate trash list` names them in brackets.") var entries: [String] = []
    @Flag(help: "Restore every entry.") var all = false
    @Option(help: "Where to restore one entry instead, a path in the domain, e.g. /files/Reports/old.txt.") var to: String?
    @OptionGroup var server: ServerOptions

    func validate() throws {
        guard all != !entries.isEmpty else { throw ValidationError("name the entries to restore, or pass --all") }
        if to != nil && (all || entries.count != 1) { throw ValidationError("--to takes exactly one entry") }
    }

    func run() async throws {
        let destination = try to.map(ServerPath.init)
        var skipped: [String] = []
        let restored = try await ServerConnection.with(server) { connection in
            let names = all ? try await TrashCommand.entries(of: domain, on: connection).map(\.name) : entries
            var restored = 0
            for name in names {
                let target = destination?.href ?? TrashCommand.restoreHref(domain, name)
                do {
                    _ = try await connection.send("MOVE", TrashCommand.href(domain, name), headers: [("Destination", connection.base + target)],
                                                  expecting: [201, 204])
                    restored += 1
                } catch let error as ValidationError where all {
                    skipped.append("\(name): \(error.message)")
                }
            }
            return restored
        }
        print("restored \(restored) of \(restored + skipped.count)")
        for line in skipped { print("skipped \(line)") }
        if !skipped.isEmpty { throw ExitCode(1) }
    }
}

struct TrashEmpty: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "empty", abstract: "Destroy entries of a domain's trash for good (all of them unless named).")

    @Argument(help: "The domain, e.g. files.") var domain: String
    @Argument(help: "Only these entries.") var entries: [String] = []
    @OptionGroup var server: ServerOptions

    func run() async throws {
        try await ServerConnection.with(server) { connection in
            if entries.isEmpty {
                _ = try await connection.send("DELETE", TrashCommand.href(domain), expecting: [204])
            }
            for name in entries {
                _ = try await connection.send("DELETE", TrashCommand.href(domain, name), expecting: [204])
            }
        }
        print(entries.isEmpty ? "emptied the trash of \(domain)" : "purged \(entries.count) entries")
    }
}
