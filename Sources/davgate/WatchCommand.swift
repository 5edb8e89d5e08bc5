import ArgumentParser
import DAVXML
import Foundation

/// `davgate watch PATH`: inotifywait for a WebDAV tree. Follows the change
/// feed of a folder (RFC 6578 sync-collection, which davgate answers from
/// its index) and prints each change as it happens.
///
/// With `--token-file` it resumes where it stopped: the token is saved
/// after the changes it covers are printed, so a restart misses nothing
/// (and, if it was killed between the two, prints the last page again).
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each change below a folder as it happens, from davgate's change feed.",
        discussion: """
            Lines read "changed PATH" (created, modified, moved here, properties set) and \
            "removed PATH" (deleted, moved away; a folder's removal covers what it held). \
            --json prints one object per line instead: change, path, href, folder, etag, size. \
            Without a saved token it starts from now; with --token-file it resumes from the \
            file and keeps it current. If the server no longer remembers the token (its feed \
            keeps 30 days), every member is printed again as changed, and a line on standard \
            error says so.
            """)

    @Argument(help: "A folder on the server, e.g. /files/Reports/.") var path: String
    @OptionGroup var server: ServerOptions
    @Flag(help: "One JSON object per change and line, for scripts.") var json = false
    @Option(help: "Where to keep the position: read at start, rewritten after each printed batch.") var tokenFile: String?
    @Flag(help: "Only the folder's own members, not everything below.") var oneLevel = false
    @Option(help: "Seconds between asks when nothing changed.") var interval: Double = 1
    @Flag(help: "Print what changed since the saved token (or everything, without one) and exit.") var once = false

    static let pageSize = 1000

    func validate() throws {
        guard interval >= 0.05 else { throw ValidationError("--interval must be at least 0.05 seconds") }
        if once, tokenFile == nil { throw ValidationError("--once prints what changed since a saved token: pass --token-file") }
    }

    func run() async throws {
        let target = try ServerPath(path.hasSuffix("/") ? path : path + "/")
        let saved = try tokenFile.flatMap(Self.readToken)
        try await ServerConnection.with(server) { connection in
            var token = ""
            if let saved {
                token = saved
            } else if !once {
                token = try await currentToken(of: target.href, on: connection)
            }
            while true {
                let (status, body) = try await connection.exchange(
                    "REPORT", target.href, headers: [("Content-Type", "application/xml"), ("Depth", "0")],
                    body: SyncFeedPage.request(since: token, infinite: !oneLevel, limit: Self.pageSize))
                if status == 403, String(decoding: body, as: UTF8.self).contains("valid-sync-token"), !token.isEmpty {
                    FileHandle.standardError.write(Data("""
                        davgate watch: the server no longer remembers position \(token) (compacted, or another \
                        server's); starting over: every member below \(path) is printed as changed.\n
                        """.utf8))
                    token = ""
                    continue
                }
                guard status == 207 else {
                    throw ValidationError("REPORT \(connection.base)\(target.href) answered \(status): \(String(decoding: body, as: UTF8.self))")
                }
                let page = try SyncFeedPage(multistatus: body, requestHref: target.href)
                print(page.changes)
                token = page.token
                if let tokenFile { try Self.save(token, to: tokenFile) }
                if page.truncated { continue }
                if once { return }
                try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            }
        }
    }

    /// The collection's `DAV:sync-token`: the feed's position now.
    private func currentToken(of href: String, on connection: ServerConnection) async throws -> String {
        let ask = "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:sync-token/></D:prop></D:propfind>"
        let body = try await connection.send("PROPFIND", href, headers: [("Depth", "0")], body: ask, expecting: [207])
        let root = try XMLDocumentParser.parse(Array(body))
        guard let token = root.first(.dav("response"))?.elements.first(where: { $0.name == .dav("propstat") })?
            .first(.dav("prop"))?.first(.dav("sync-token"))?.text, !token.isEmpty
        else { throw ValidationError("\(path) has no DAV:sync-token: is it a folder on a davgate server?") }
        return token
    }

    /// Writes a batch with one write, so that a reader of a pipe never sees half a line.
    private func print(_ changes: [SyncFeedPage.Change]) {
        guard !changes.isEmpty else { return }
        var out = ""
        for change in changes {
            if json {
                var object: [String: Any] = ["change": change.kind.rawValue, "path": change.path, "href": change.href, "folder": change.isFolder]
                if let etag = change.etag { object["etag"] = etag }
                if let size = change.size { object["size"] = size }
                let line = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
                out += String(decoding: line, as: UTF8.self) + "\n"
            } else {
                out += "\(change.kind.rawValue) \(change.path)\n"
            }
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    private static func readToken(_ file: String) throws -> String? {
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    /// Replaces the file in one rename, so that a crash leaves the old
    /// position or the new one, never half of either.
    private static func save(_ token: String, to file: String) throws {
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
    }
}
