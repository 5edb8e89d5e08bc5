import Foundation
import ProviderCore
import Testing
import Upstreams

/// Names kept local never reach the wrapped store, yet appear in one tree.
@Suite("KeepLocalStore: macOS metadata files stay local")
struct KeepLocalStoreTests {
    struct Fixture {
        let root: URL
        let store: KeepLocalStore
        var upstream: URL { root.appendingPathComponent("upstream") }
        var local: URL { root.appendingPathComponent("local") }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("keep-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root.appendingPathComponent("upstream"), withIntermediateDirectories: true)
            store = try KeepLocalStore(wrapping: DirectoryStore(root: root.appendingPathComponent("upstream")),
                                       folder: root.appendingPathComponent("local"), patterns: ["._*", ".DS_Store"])
        }

        func file(_ text: String) throws -> URL {
            let url = root.appendingPathComponent("src-\(UUID().uuidString)")
            try text.write(to: url, atomically: true, encoding: .utf8)
            return url
        }

        func exists(_ base: URL, _ path: String) -> Bool {
            FileManager.default.fileExists(atPath: base.appendingPathComponent(path).path)
        }
    }

    @Test("kept names land in the local folder, other names upstream; listings merge; folders carry their kept files along")
    func keptFiles() async throws {
        let f = try Fixture()
        defer { try? FileManager.default.removeItem(at: f.root) }
        #expect(f.store.keepsLocal("._report.pdf") && f.store.keepsLocal(".DS_Store"))
        #expect(!f.store.keepsLocal("report.pdf") && !f.store.keepsLocal(".hidden"))

        _ = try await f.store.makeFolder(["docs"])
        _ = try await f.store.upload(try f.file("pdf"), to: ["docs", "report.pdf"])
        _ = try await f.store.upload(try f.file("apple double"), to: ["docs", "._report.pdf"])
        _ = try await f.store.upload(try f.file("finder"), to: ["docs", ".DS_Store"])
        #expect(f.exists(f.upstream, "docs/report.pdf"))
        #expect(!f.exists(f.upstream, "docs/._report.pdf") && !f.exists(f.upstream, "docs/.DS_Store"), "never uploaded")
        #expect(f.exists(f.local, "docs/._report.pdf") && f.exists(f.local, "docs/.DS_Store"))
        #expect(Set(try await f.store.list(["docs"]).map(\.name)) == ["report.pdf", "._report.pdf", ".DS_Store"])
        // One that someone put upstream directly is hidden: the local one is the truth.
        try "upstream's".write(to: f.upstream.appendingPathComponent("docs/._other"), atomically: true, encoding: .utf8)
        #expect(!(try await f.store.list(["docs"]).map(\.name)).contains("._other"))

        _ = try await f.store.move(["docs"], to: ["papers"])
        #expect(f.exists(f.local, "papers/.DS_Store") && !f.exists(f.local, "docs"), "the kept files follow their folder")
        _ = try await f.store.copy(["papers"], to: ["copy"], recursive: true)
        #expect(f.exists(f.local, "copy/._report.pdf") && f.exists(f.upstream, "copy/report.pdf"))
        // Renamed to an ordinary name, a kept file goes upstream (and the other way round).
        _ = try await f.store.move(["papers", "._report.pdf"], to: ["papers", "notes.txt"])
        #expect(f.exists(f.upstream, "papers/notes.txt") && !f.exists(f.local, "papers/._report.pdf"))
        _ = try await f.store.move(["papers", "report.pdf"], to: ["papers", "._hidden"])
        #expect(f.exists(f.local, "papers/._hidden") && !f.exists(f.upstream, "papers/report.pdf"))
        try await f.store.delete(["papers"])
        #expect(!f.exists(f.local, "papers") && !f.exists(f.upstream, "papers"), "a folder takes its kept files with it")
    }
}
