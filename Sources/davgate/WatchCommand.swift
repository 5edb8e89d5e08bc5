import ArgumentParser
import DAVProtocol
import Foundation
import ProviderCore
import Upstreams

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
            let store = try connection.store(at: target.href)
            let folder = try DAVPath.parse(requestTarget: target.href).path
            var token = ""
            if let saved {
                token = saved
            } else if !once {
                guard let now = try await ask(store, { try await store.feedPosition() }) else {
                    throw ValidationError("\(path) has no DAV:sync-token: is it a folder on a davgate server?")
                }
                token = now
            }
            while true {
                let page: UpstreamChanges
                do {
                    page = try await ask(store) { try await store.changes(since: token, limit: Self.pageSize, infinite: !oneLevel) }
                } catch UpstreamFeedError.positionRefused where !token.isEmpty {
                    FileHandle.standardError.write(Data("""
                        davgate watch: the server no longer remembers position \(token) (compacted, or another \
                        server's); starting over: every member below \(path) is printed as changed.\n
                        """.utf8))
                    token = ""
                    continue
                }
                print(page, below: folder)
                token = page.position
                if let tokenFile { try Self.save(token, to: tokenFile) }
                if page.more { continue }
                if once { return }
                try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            }
        }
    }

    /// Runs one request to the server, saying in the error what failed.
    private func ask<T>(_ store: WebDAVStore, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch UpstreamFeedError.unsupported {
            throw ValidationError("\(store.baseURL.absoluteString) offers no change feed: is it a folder on a davgate server?")
        } catch let error as UpstreamError {
            throw ValidationError("\(store.baseURL.absoluteString): \(error)")
        }
    }

    /// Writes a batch with one write, so that a reader of a pipe never sees
    /// half a line. `folder`: the watched folder's path on the server.
    private func print(_ page: UpstreamChanges, below folder: DAVPath) {
        var out = ""
        func line(_ change: String, _ relative: ItemPath, entry: UpstreamEntry?) {
            let isFolder = entry?.isFolder ?? false
            let href = DAVPath(segments: folder.segments + relative).href(collection: isFolder)
            let path = "/" + (folder.segments + relative).joined(separator: "/") + (isFolder ? "/" : "")
            guard json else {
                out += "\(change) \(path)\n"
                return
            }
            var object: [String: Any] = ["change": change, "path": path, "href": href, "folder": isFolder]
            if let entry {
                object["etag"] = entry.version
                if !entry.isFolder { object["size"] = entry.size }
            }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            out += String(decoding: data, as: UTF8.self) + "\n"
        }
        for (relative, entry) in page.present { line("changed", relative, entry: entry) }
        for relative in page.removed { line("removed", relative, entry: nil) }
        if !out.isEmpty { FileHandle.standardOutput.write(Data(out.utf8)) }
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
