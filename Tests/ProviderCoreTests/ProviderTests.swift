import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A provider over a real SQLite index and a real folder, in a temp dir.
struct Fixture {
    let root: URL
    let upstream: URL
    let store: FaultyStore
    let provider: Provider
    /// Opens a provider as this fixture's settings make it: over the index
    /// file reopened, the same cache folder and the same store (`restarted`).
    private let open: @Sendable () async throws -> Provider

    init(ttl: TimeInterval = 0, writeMode: WriteMode = .through, uploads: UploadPolicy = UploadPolicy(), trash: TrashPolicy? = nil,
         versions: VersionPolicy? = nil, uploadExpiry: TimeInterval = 86_400) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pc-\(UUID().uuidString)")
        self.root = root
        upstream = root.appendingPathComponent("upstream")
        try FileManager.default.createDirectory(at: upstream, withIntermediateDirectories: true)
        let store = FaultyStore(root: upstream)
        self.store = store
        open = {
            let index = try await TestIndex.open(in: root)
            return try Provider(domain: "files", store: store, index: index, cacheFolder: root.appendingPathComponent("cache"),
                                listingTTL: ttl, writeMode: writeMode, uploads: uploads, trash: trash, versions: versions,
                                uploadExpiry: uploadExpiry, logger: Logger(label: "test"))
        }
        provider = try await open()
    }

    /// A new provider over the same index file, cache folder and upstream,
    /// as davgate's next start opens them (`provider` is not to be used
    /// beside it).
    func restarted() async throws -> Provider { try await open() }

    func write(_ text: String, _ name: String) throws {
        try text.write(to: upstream.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// A PUT of `text`; `inline`, its bytes handed over for the journal
    /// without a file, as the server does with a small write-back body.
    func put(_ text: String, at path: ItemPath, inline: Bool = false) async throws -> Item {
        try await provider.write(try request(text, at: path, inline: inline)).item
    }

    /// The request of a PUT of `text`, its body in a write file (`inline`:
    /// in the request alone).
    func request(_ text: String, at path: ItemPath, inline: Bool = false) throws -> WriteRequest {
        let file = provider.newWriteFile()
        if !inline { try text.write(to: file, atomically: false, encoding: .utf8) }
        return WriteRequest(path: path, file: file, size: Int64(text.utf8.count), conditions: .unconditional,
                            content: inline ? Data(text.utf8) : nil)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }
}

@Suite("Provider core over a real index and directory")
struct ProviderTests {
    @Test("a listing read before a write-back upload landed and delivered after it does not set the file back: the next write is no conflict with our own upload")
    func staleListingAfterUpload() async throws {
        let f = try await Fixture(ttl: 0, writeMode: .back, uploads: UploadPolicy(quietDelay: 0))
        defer { f.cleanUp() }
        try f.write("v0", "a.txt")
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        _ = try await f.put("v1", at: ["a.txt"])
        f.store.listLinger.withLockedValue { $0 = .milliseconds(1500) }
        async let refreshed = f.provider.refreshIfStale(try await f.provider.root())   // reads v0, answers late
        try await Task.sleep(for: .milliseconds(200))
        let uploader = Task { await f.provider.runUploads() }
        defer { uploader.cancel() }
        while try await f.provider.index.pendingUploads(domain: "files") > 0 { try await Task.sleep(for: .milliseconds(50)) }
        _ = try await refreshed
        f.store.listLinger.withLockedValue { $0 = .zero }

        let upstream = try #require(try await f.store.stat(["a.txt"]))
        let item = try #require(try await f.provider.index.child(of: root.id, named: "a.txt"))
        #expect(item.upstreamVersion == upstream.version, "the index knows the version davgate uploaded")
        _ = try await f.put("v2", at: ["a.txt"])
        while try await f.provider.index.pendingUploads(domain: "files") > 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path) == ["a.txt"], "no conflict copy")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "v2")
    }

    @Test("a MOVE or COPY onto a file written here and never uploaded, refused by the upstream, keeps that file: bytes, row and journal")
    func failedOverwriteKeepsTheLocalWrite() async throws {
        let f = try await Fixture(ttl: 60, writeMode: .back)
        defer { f.cleanUp() }
        try f.write("upstream b", "b.txt")
        _ = try await f.put("ours, never uploaded", at: ["a.txt"])
        for operation in ["move", "copy"] {
            f.store.failing.withLockedValue { $0 = [operation: .unreachable("refused")] }
            await #expect(throws: ProviderError.upstream(.unreachable("refused"))) {
                if operation == "move" {
                    _ = try await f.provider.move(from: ["b.txt"], to: ["a.txt"], overwrite: true)
                } else {
                    _ = try await f.provider.copy(from: ["b.txt"], to: ["a.txt"], recursive: false, overwrite: true)
                }
            }
            let a = try #require(try await f.provider.item(at: ["a.txt"]), "\(operation): the destination is still here")
            #expect(a.dirty)
            #expect(try String(contentsOf: try await f.provider.contents(of: a, at: ["a.txt"]).file, encoding: .utf8) == "ours, never uploaded")
            #expect(try await f.provider.index.pendingUploads(domain: "files") == 1, "\(operation): its upload still waits")
            #expect(try await f.provider.item(at: ["b.txt"]) != nil)
        }
        f.store.failing.withLockedValue { $0 = [:] }
        _ = try await f.provider.move(from: ["b.txt"], to: ["a.txt"], overwrite: true)
        let a = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(try String(contentsOf: try await f.provider.contents(of: a, at: ["a.txt"]).file, encoding: .utf8) == "upstream b")
        #expect(try await f.provider.index.pendingUploads(domain: "files") == 0, "the replaced write's upload went with it")
    }

    @Test("listing creates placeholders without fetching content")
    func placeholders() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        for i in 0..<20 { try f.write("file \(i)", "f\(i).txt") }
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        let children = try await f.provider.children(of: root)
        #expect(children.count == 20)
        #expect(children.allSatisfy { !$0.isMaterialized && $0.size > 0 })
        #expect(f.store.fetchCount.withLockedValue { $0 } == 0)
    }

    @Test("concurrent first reads of a placeholder share one fetch")
    func singleFlight() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        try f.write("shared content", "shared.txt")
        f.store.fetchDelay.withLockedValue { $0 = .milliseconds(200) }
        let item = try #require(try await f.provider.item(at: ["shared.txt"]))
        let contents = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let (_, url, _) = try await f.provider.contents(of: item, at: ["shared.txt"])
                    return try String(contentsOf: url, encoding: .utf8)
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(contents.count == 16)
        #expect(contents.allSatisfy { $0 == "shared content" })
        #expect(f.store.fetchCount.withLockedValue { $0 } == 1)
        // Later reads come from the cache while the version is unchanged.
        let again = try #require(try await f.provider.item(at: ["shared.txt"]))
        #expect(again.isMaterialized)
        _ = try await f.provider.contents(of: again, at: ["shared.txt"])
        #expect(f.store.fetchCount.withLockedValue { $0 } == 1)
    }

    @Test("a failed fetch leaves a placeholder and no partial content")
    func failedFetch() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        try f.write("content", "a.txt")
        let item = try #require(try await f.provider.item(at: ["a.txt"]))
        f.store.failing.withLockedValue { $0["fetch"] = .unavailable("injected") }
        await #expect(throws: ProviderError.upstream(.unavailable("injected"))) {
            _ = try await f.provider.contents(of: item, at: ["a.txt"])
        }
        let after = try #require(try await f.provider.item(at: ["a.txt"]))
        #expect(!after.isMaterialized)
        #expect(!f.provider.cache.hasFile(for: item.id))
        let temporary = try FileManager.default.contentsOfDirectory(atPath: f.provider.cache.folder.appendingPathComponent("tmp").path)
        #expect(temporary.isEmpty)
    }

    @Test("an upstream failure during a write leaves index and upstream as they were")
    func failedUpload() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let original = try await f.put("original", at: ["doc.txt"])
        f.store.failing.withLockedValue { $0["upload"] = .noSpace }
        await #expect(throws: ProviderError.upstream(.noSpace)) {
            _ = try await f.put("replacement", at: ["doc.txt"])
        }
        let after = try #require(try await f.provider.item(at: ["doc.txt"]))
        #expect(after.etag == original.etag)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("doc.txt"), encoding: .utf8) == "original")
        let (_, url, _) = try await f.provider.contents(of: after, at: ["doc.txt"])
        #expect(try String(contentsOf: url, encoding: .utf8) == "original")
        // A new file that fails upstream leaves no index row either.
        await #expect(throws: ProviderError.self) { _ = try await f.put("x", at: ["new.txt"]) }
        #expect(try await f.provider.item(at: ["new.txt"]) == nil)
    }

    @Test("failed MKCOL, MOVE and DELETE upstream change nothing in the index")
    func failedNamespaceChanges() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        _ = try await f.put("x", at: ["a.txt"])
        f.store.failing.withLockedValue { $0 = ["makeFolder": .io("injected"), "move": .io("injected"), "delete": .io("injected")] }
        await #expect(throws: ProviderError.self) { _ = try await f.provider.makeFolder(at: ["dir"]) }
        await #expect(throws: ProviderError.self) { _ = try await f.provider.move(from: ["a.txt"], to: ["b.txt"], overwrite: false) }
        await #expect(throws: ProviderError.self) { try await f.provider.delete(at: ["a.txt"]) }
        #expect(try await f.provider.item(at: ["dir"]) == nil)
        #expect(try await f.provider.item(at: ["b.txt"]) == nil)
        #expect(try await f.provider.item(at: ["a.txt"]) != nil)
    }

    @Test("move keeps identity and dead properties; copy duplicates them")
    func moveAndCopy() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        _ = try await f.provider.makeFolder(at: ["dir"])
        let file = try await f.put("data", at: ["dir", "a.txt"])
        try await f.provider.changeProperties(of: file, [.set(DeadProperty(namespace: "urn:x", name: "p", xml: "<x0:p xmlns:x0=\"urn:x\">v</x0:p>"))])
        let copied = try await f.provider.copy(from: ["dir"], to: ["dir2"], recursive: true, overwrite: false)
        #expect(!copied.replaced)
        let copy = try #require(try await f.provider.item(at: ["dir2", "a.txt"]))
        #expect(try await f.provider.deadProperties(of: copy).map(\.name) == ["p"])
        let moved = try await f.provider.move(from: ["dir", "a.txt"], to: ["b.txt"], overwrite: false)
        #expect(moved.item.id == file.id)
        #expect(try await f.provider.deadProperties(of: moved.item).map(\.name) == ["p"])
        #expect(try await f.provider.item(at: ["dir", "a.txt"]) == nil)
    }

    @Test("exclusive locks conflict, shared locks coexist, locks survive reopening the index")
    func locks() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let folder = try await f.provider.makeFolder(at: ["dir"])
        let file = try await f.put("x", at: ["dir", "a.txt"])
        let deep = try await f.provider.createLock(on: folder, depthInfinity: true, exclusive: true, ownerXML: nil, principal: "alice", timeout: 600)
        await #expect(throws: LockError.self) {
            _ = try await f.provider.createLock(on: file, depthInfinity: false, exclusive: false, ownerXML: nil, principal: "bob", timeout: 600)
        }
        #expect(try await f.provider.locks(covering: file).map(\.token) == [deep.token])
        try await f.provider.unlock(token: deep.token)
        let s1 = try await f.provider.createLock(on: file, depthInfinity: false, exclusive: false, ownerXML: nil, principal: "a", timeout: 600)
        let s2 = try await f.provider.createLock(on: file, depthInfinity: false, exclusive: false, ownerXML: nil, principal: "b", timeout: nil)
        #expect(Set(try await f.provider.locks(covering: file).map(\.token)) == [s1.token, s2.token])
        let reopened = try await TestIndex.open(in: f.root)
        #expect(try await reopened.store.lock(token: s2.token)?.principal == "b")
    }
}

@Suite("conflict copy names")
struct ConflictNameTests {
    @Test("the extension stays last; names without one, and dot files, keep their whole name", arguments: [
        ("report.pdf", "report (conflicted copy 2026-11-22 093015).pdf"),
        ("archive.tar.gz", "archive.tar (conflicted copy 2026-11-22 093015).gz"),
        ("Makefile", "Makefile (conflicted copy 2026-11-22 093015)"),
        (".profile", ".profile (conflicted copy 2026-11-22 093015)"),
    ])
    func names(name: String, expected: String) {
        let date = Date(timeIntervalSince1970: 1_795_339_815)  // 2026-11-22 09:30:15 UTC
        #expect(Provider.conflictName(for: name, at: date) == expected)
        #expect(Provider.conflictOriginal(ofName: expected) == name, "a copy's name tells its file's")
    }
}
