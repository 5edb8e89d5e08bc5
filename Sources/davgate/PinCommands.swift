import ArgumentParser
import DAVProtocol
import DAVServer
import DAVXML
import Foundation
import ProviderCore

#if canImport(Glibc)
import Glibc
#endif

/// `davgate pin PATH`: keep a file or a folder's files on the gateway
/// (PROPPATCH of `g:content-policy` to `eager`), and watch the fetch with a
/// progress bar.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Fetch a file or everything below a folder now, and keep it through eviction.",
        discussion: "PATH is the path on the server, e.g. /files/Reports/. Waits for the fetch, with a progress bar; --no-wait returns at once."
    )

    @Argument(help: "The path on the server, e.g. /files/Reports/.") var path: String
    @OptionGroup var server: ServerOptions
    @Flag(inversion: .prefixedNo, help: "Wait for the content, showing progress.") var wait = true

    func run() async throws {
        let target = try ServerPath(path)
        try await ServerConnection.with(server) { connection in
            _ = try await connection.send("PROPPATCH", target.href, body: PinnedProperty.set, expecting: [207])
            guard wait else { return }
            let bar = ProgressLine(label: "pinning \(path)")
            while true {
                let progress = try await PinnedProperty.progress(of: target.href, on: connection)
                bar.show(done: progress.cached, of: progress.bytes, detail: "\(progress.localFiles) of \(progress.files) files")
                if progress.localFiles == progress.files { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            bar.finish()
        }
    }
}

/// `davgate unpin PATH`: the item inherits its folder's policy again, so
/// eviction may take the content (unless that policy is eager too).
struct UnpinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin", abstract: "Let eviction take a pinned file or folder's content again.")

    @Argument(help: "The path on the server, e.g. /files/Reports/.") var path: String
    @OptionGroup var server: ServerOptions

    func run() async throws {
        let target = try ServerPath(path)
        try await ServerConnection.with(server) { connection in
            _ = try await connection.send("PROPPATCH", target.href, body: PinnedProperty.remove, expecting: [207])
        }
        print("unpinned \(path)")
    }
}

/// `davgate evict PATH`: back to placeholders now.
struct EvictCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evict",
        abstract: "Free the local content of a file or of everything below a folder; it is fetched again on the next read.",
        discussion: "Eager (pinned), locked and currently read files are left alone, and counted.")

    @Argument(help: "The path on the server, e.g. /files/Reports/.") var path: String
    @OptionGroup var server: ServerOptions

    func run() async throws {
        let target = try ServerPath(path)
        let body = try await ServerConnection.with(server) { connection in
            try await connection.send("POST", "/.davgate/evict" + target.href)
        }
        let report = try ServerStatus.decoder().decode(Provider.EvictionReport.self, from: body)
        print("evicted \(path): \(report.evictedFiles) files, \(ByteCountFormatter.string(fromByteCount: report.evictedBytes, countStyle: .file)); \(report.keptFiles) kept (eager, locked or being read)")
    }
}

/// A path on the server as typed (`/files/Reports/`), percent-encoded once.
struct ServerPath {
    let href: String

    init(_ typed: String) throws {
        let segments = typed.split(separator: "/").map(String.init)
        guard !segments.isEmpty, !segments.contains("."), !segments.contains("..") else {
            throw ValidationError("expected a path on the server such as /files/Reports/, got \(typed.debugDescription)")
        }
        href = DAVPath(segments: segments).href(collection: typed.hasSuffix("/"))
    }
}

/// The content policy `eager` as `davgate pin` sets it, and how far a pinned path's content is local.
enum PinnedProperty {
    static let namespace = Provider.namespace
    static let set = """
        <D:propertyupdate xmlns:D="DAV:" xmlns:g="\(namespace)"><D:set><D:prop><g:content-policy>eager</g:content-policy></D:prop></D:set></D:propertyupdate>
        """
    static let remove = """
        <D:propertyupdate xmlns:D="DAV:" xmlns:g="\(namespace)"><D:remove><D:prop><g:content-policy/></D:prop></D:remove></D:propertyupdate>
        """
    static let ask = """
        <D:propfind xmlns:D="DAV:" xmlns:g="\(namespace)"><D:prop><D:resourcetype/><D:getcontentlength/><g:bytes-cached/></D:prop></D:propfind>
        """

    struct Progress {
        var files = 0, localFiles = 0
        var bytes: Int64 = 0, cached: Int64 = 0
    }

    /// Walks the path with PROPFIND Depth 1, folder by folder.
    static func progress(of href: String, on connection: ServerConnection) async throws -> Progress {
        var progress = Progress()
        var folders = [href]
        var seen = Set<String>()
        while let folder = folders.popLast() {
            seen.insert(folder)
            let body = try await connection.send("PROPFIND", folder, headers: [("Depth", "1")], body: ask, expecting: [207])
            let root = try XMLDocumentParser.parse(Array(body))
            for response in root.elements where response.name == XMLName("DAV:", "response") {
                guard let responseHref = response.first(XMLName("DAV:", "href"))?.text else { continue }
                let props = response.elements.filter { $0.name == XMLName("DAV:", "propstat") }
                    .compactMap { $0.first(XMLName("DAV:", "prop")) }.flatMap(\.elements)
                if props.contains(where: { $0.name == XMLName("DAV:", "resourcetype") && !$0.elements.isEmpty }) {
                    if !seen.contains(responseHref) && responseHref != folder { folders.append(responseHref) }
                    continue
                }
                let size = props.first { $0.name == XMLName("DAV:", "getcontentlength") }.flatMap { Int64($0.text) } ?? 0
                let cached = props.first { $0.name == XMLName(namespace, "bytes-cached") }.flatMap { Int64($0.text) } ?? 0
                progress.files += 1
                progress.bytes += size
                progress.cached += min(cached, size)
                if cached >= size { progress.localFiles += 1 }
            }
        }
        return progress
    }
}

/// A progress bar on standard error: redrawn in place on a terminal, a line
/// every five seconds otherwise (logs, CI).
final class ProgressLine {
    let label: String
    let terminal = isatty(STDERR_FILENO) != 0
    var lastLine = Date.distantPast

    init(label: String) { self.label = label }

    func show(done: Int64, of total: Int64, detail: String) {
        let fraction = total > 0 ? Double(done) / Double(total) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let line = "\(label) [\(String(repeating: "#", count: filled))\(String(repeating: "-", count: width - filled))] "
            + "\(Int(fraction * 100))% \(ByteCountFormatter.string(fromByteCount: done, countStyle: .file)) of "
            + "\(ByteCountFormatter.string(fromByteCount: total, countStyle: .file)), \(detail)"
        if terminal {
            FileHandle.standardError.write(Data(("\r" + line).utf8))
        } else if Date().timeIntervalSince(lastLine) >= 5 || fraction >= 1 {
            FileHandle.standardError.write(Data((line + "\n").utf8))
            lastLine = Date()
        }
    }

    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
