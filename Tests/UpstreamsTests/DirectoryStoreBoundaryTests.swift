import Foundation
import ProviderCore
import Testing
import Upstreams

#if canImport(Glibc)
import Glibc
#endif

/// The directory store never reaches outside its root (issue 12, item 1),
/// checked on the store itself: every operation, links of every kind, the
/// files a folder may hold that are not files, and a link swapped in while
/// operations run.
@Suite("DirectoryStore stays beneath its root")
struct DirectoryStoreBoundaryTests {
    /// A root with `docs/a.txt`, and beside it (outside) `outside/secret.txt`.
    struct Fixture {
        let base: URL
        var root: URL { base.appendingPathComponent("root") }
        var outside: URL { base.appendingPathComponent("outside") }
        let store: DirectoryStore

        init() throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("beneath-\(UUID().uuidString)")
            let fm = FileManager.default
            try fm.createDirectory(at: base.appendingPathComponent("root/docs"), withIntermediateDirectories: true)
            try fm.createDirectory(at: base.appendingPathComponent("outside"), withIntermediateDirectories: true)
            try Data("a".utf8).write(to: base.appendingPathComponent("root/docs/a.txt"))
            try Data("secret".utf8).write(to: base.appendingPathComponent("outside/secret.txt"))
            store = DirectoryStore(root: base.appendingPathComponent("root"))
        }

        func link(_ name: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent(name).path, withDestinationPath: target)
        }

        func outsideNames() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: outside.path).sorted()
        }

        func local(_ text: String) throws -> URL {
            let url = base.appendingPathComponent("local-\(UUID().uuidString)")
            try Data(text.utf8).write(to: url)
            return url
        }

        func cleanUp() { try? FileManager.default.removeItem(at: base) }
    }

    static func fails<T>(_ body: () async throws -> T) async -> UpstreamError? {
        do {
            _ = try await body()
            return nil
        } catch let error as UpstreamError {
            return error
        } catch {
            return .io("\(error)")
        }
    }

    @Test("links out of the root (absolute, climbing, to a file) are hidden and every operation through them fails")
    func escapingLinks() async throws {
        let f = try Fixture()
        defer { f.cleanUp() }
        try f.link("abs", to: f.outside.path)
        try f.link("climb", to: "../outside")
        try f.link("secret.txt", to: f.outside.appendingPathComponent("secret.txt").path)
        // Absolute links are never followed, even to a place inside.
        try f.link("abs-inside", to: f.root.appendingPathComponent("docs").path)

        #expect(try await f.store.list([]).map(\.name).sorted() == ["docs"])
        for link in ["abs", "climb", "abs-inside"] {
            #expect(try await f.store.stat([link]) == nil)
            #expect(await Self.fails { try await f.store.list([link]) } == .notFound)
            #expect(try await f.store.stat([link, "secret.txt"]) == nil)
            let fetched = f.base.appendingPathComponent("fetched-\(link)")
            #expect(await Self.fails { try await f.store.fetch([link, "secret.txt"], into: fetched) } == .notFound)
            #expect(!FileManager.default.fileExists(atPath: fetched.path))
            #expect(await Self.fails { try await f.store.upload(try f.local("planted"), to: [link, "planted.txt"]) } == .conflict)
            #expect(await Self.fails { try await f.store.makeFolder([link, "made"]) } == .notFound)
            #expect(await Self.fails { try await f.store.delete([link, "secret.txt"]) } == .conflict)
            #expect(await Self.fails { try await f.store.move(["docs", "a.txt"], to: [link, "a.txt"]) } == .conflict)
            #expect(await Self.fails { try await f.store.copy(["docs"], to: [link, "docs"], recursive: true) } == .conflict)
            #expect(await Self.fails { try await f.store.copy([link], to: ["copied-\(link)"], recursive: true) } == .notFound)
        }
        #expect(try await f.store.stat(["secret.txt"]) == nil)
        #expect(await Self.fails { try await f.store.fetch(["secret.txt"], into: f.base.appendingPathComponent("s")) } == .notFound)
        #expect(await Self.fails { try await f.store.upload(try f.local("x"), to: ["secret.txt"], expecting: .absent) } == .versionMismatch,
                "a hidden link still occupies its name")

        #expect(try f.outsideNames() == ["secret.txt"])
        #expect(try String(contentsOf: f.outside.appendingPathComponent("secret.txt"), encoding: .utf8) == "secret")
        #expect(FileManager.default.fileExists(atPath: f.root.appendingPathComponent("docs/a.txt").path))

        // Removing the link removes the link, never its target.
        try await f.store.delete(["climb"])
        #expect(try f.outsideNames() == ["secret.txt"])
    }

    @Test("links inside are followed; a link to an ancestor is hidden; COPY of a folder with links terminates and leaves escaping links out")
    func insideLinksAndCycles() async throws {
        let f = try Fixture()
        defer { f.cleanUp() }
        try f.link("alias", to: "docs")
        try f.link("docs/up", to: "..")
        try f.link("docs/self", to: ".")
        try f.link("docs/out", to: "../../outside")
        try f.link("docs/to-copy", to: "../copy")   // a link to the destination of the copy below

        #expect(try await f.store.list([]).map(\.name).sorted() == ["alias", "docs"])
        #expect(try await f.store.stat(["alias"])?.isFolder == true)
        #expect(try await f.store.list(["alias"]).map(\.name).sorted() == ["a.txt"])
        #expect(try await f.store.list(["docs"]).map(\.name).sorted() == ["a.txt"], "cycles, the escape and the dangling link are hidden")
        #expect(try await f.store.stat(["docs", "up"]) == nil)

        _ = try await f.store.upload(try f.local("via alias"), to: ["alias", "b.txt"])
        #expect(try String(contentsOf: f.root.appendingPathComponent("docs/b.txt"), encoding: .utf8) == "via alias")

        _ = try await f.store.copy(["docs"], to: ["copy"], recursive: true)
        let copied = try FileManager.default.contentsOfDirectory(atPath: f.root.appendingPathComponent("copy").path).sorted()
        #expect(copied == ["a.txt", "b.txt"], "only what a listing shows is copied")
    }

    @Test("FIFOs, sockets and devices are not part of the share, and naming one does not hang")
    func specialFiles() async throws {
        let f = try Fixture()
        defer { f.cleanUp() }
        #expect(mkfifo(f.root.appendingPathComponent("pipe").path, 0o644) == 0)
        #expect(try await f.store.list([]).map(\.name) == ["docs"])
        #expect(try await f.store.stat(["pipe"]) == nil)
        #expect(await Self.fails { try await f.store.fetch(["pipe"], into: f.base.appendingPathComponent("p")) } == .notFound)
    }

    @Test("a folder holding a name that is not UTF-8 is deleted whole")
    func undecodableNames() async throws {
        let f = try Fixture()
        defer { f.cleanUp() }
        let folder = f.root.appendingPathComponent("docs").path
        // "bad-" and the byte 0xFF, which no UTF-8 text holds.
        var raw = Array((folder + "/bad-").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
        let made = open(&raw, O_CREAT | O_WRONLY, 0o644)
        #expect(made >= 0)
        close(made)
        #expect(try await f.store.list(["docs"]).map(\.name) == ["a.txt"], "an unaddressable name is not listed")
        try await f.store.delete(["docs"])
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test("a folder swapped for a link out of the root while writes run never lets one land outside")
    func swappedLinkRace() async throws {
        let f = try Fixture()
        defer { f.cleanUp() }
        let swap = f.root.appendingPathComponent("swap").path
        let parked = f.root.appendingPathComponent("parked").path
        let target = f.outside.path
        #expect(mkdir(swap, 0o755) == 0)
        let stop = ManagedAtomicFlag()
        // Flips `swap` between a real folder and a link to `outside`, as fast as it can.
        let flipper = Thread {
            while !stop.isSet {
                rename(swap, parked)
                symlink(target, swap)
                unlink(swap)
                rename(parked, swap)
            }
        }
        flipper.start()
        let local = try f.local("planted")
        for round in 0..<400 {
            _ = try? await f.store.upload(local, to: ["swap", "f\(round).txt"])
            _ = try? await f.store.makeFolder(["swap", "d\(round)"])
            _ = try? await f.store.list(["swap"])
            _ = try? await f.store.copy(["docs", "a.txt"], to: ["swap", "c\(round).txt"], recursive: false)
            _ = try? await f.store.move(["swap", "f\(round).txt"], to: ["swap", "m\(round).txt"])
        }
        stop.set()
        while !flipper.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        #expect(try f.outsideNames() == ["secret.txt"], "nothing was ever created outside the root")
        #expect(try FileManager.default.contentsOfDirectory(atPath: swap).count > 0, "the writes did run, into the real folder")
    }
}

/// A flag set once from one thread and read from another.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
