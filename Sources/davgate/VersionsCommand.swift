import ArgumentParser
import DAVProtocol
import DAVServer
import Foundation
import ProviderCore

/// `davgate versions PATH`: a file's earlier contents, newest first,
/// numbered as `davgate restore --version N` takes them.
struct VersionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "versions", abstract: "List the earlier contents of a file, newest first.")

    @Argument(help: "The file's path on the server, e.g. /files/Reports/q3.txt.") var path: String
    @OptionGroup var server: ServerOptions

    static func href(_ path: ServerPath, _ id: String? = nil) -> String {
        "/.davgate/versions" + path.href + (id.map { "/" + $0 } ?? "")
    }

    static func versions(of path: ServerPath, on connection: ServerConnection) async throws -> [FileVersion] {
        let body = try await connection.send("PROPFIND", href(path), headers: [("Depth", "1")], expecting: [207])
        return try VersionListing.versions(fromMultistatus: Array(body))
    }

    func run() async throws {
        let target = try ServerPath(path)
        let versions = try await ServerConnection.with(server) { try await Self.versions(of: target, on: $0) }
        if versions.isEmpty { return print("\(path) has no earlier versions") }
        let dates = ISO8601DateFormatter()
        for (number, version) in versions.enumerated() {
            let size = ByteCountFormatter.string(fromByteCount: version.size, countStyle: .file)
            let conflict = version.isConflictCopy ? "  conflict copy: \(version.id)" : ""
            print("\(String(number + 1).padding(toLength: 4, withPad: " ", startingAt: 0)) \(dates.string(from: version.savedAt))  \(size)\(conflict)")
        }
        print("restore one with: davgate restore \(path) --version N")
    }
}

/// `davgate restore PATH --version N`: that content written back over the
/// file (the current content becomes a version in turn).
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Write an earlier version of a file back over it (or to --to).")

    @Argument(help: "The file's path on the server, e.g. /files/Reports/q3.txt.") var path: String
    @Option(help: "Which version, as `davgate versions` numbers them (1 is the newest).") var version: Int
    @Option(help: "Write it to this path in the same domain instead.") var to: String?
    @OptionGroup var server: ServerOptions

    func run() async throws {
        let target = try ServerPath(path)
        let destination = try ServerPath(to ?? path)
        try await ServerConnection.with(server) { connection in
            let versions = try await VersionsCommand.versions(of: target, on: connection)
            guard versions.indices.contains(version - 1) else {
                throw ValidationError("\(path) has \(versions.count) versions; pass --version 1 to \(versions.count)")
            }
            _ = try await connection.send("COPY", VersionsCommand.href(target, versions[version - 1].id),
                                          headers: [("Destination", connection.base + destination.href)], expecting: [201, 204])
        }
        print("restored version \(version) of \(path)" + (to.map { " to \($0)" } ?? ""))
    }
}
