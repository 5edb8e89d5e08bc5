import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A DELETE moves into the domain's trash upstream; the trash is hidden
/// from every listing, refused as a target, restored from, purged and
/// expired, and read back from the upstream by a gateway that never saw
/// the DELETE (issue 17).
@Suite("Trash")
struct TrashTests {
    private let fm = FileManager.default

    private func trashFolder(_ f: Fixture) -> URL { f.upstream.appendingPathComponent(TrashLayout.folder.joined(separator: "/")) }
    private let trashPath = TrashLayout.folder.joined(separator: "/")

    private func upstreamNames(_ f: Fixture, _ folder: String = "") throws -> [String] {
        try fm.contentsOfDirectory(atPath: f.upstream.appendingPathComponent(folder).path).sorted()
    }

    @Test("a deleted file goes to the trash upstream with its bytes, and nothing lists, resolves or accepts the trash folder")
    func deleteKeepsTheFile() async throws {
        let f = try await Fixture(trash: TrashPolicy())
        defer { f.cleanUp() }
        try f.write("precious", "a.txt")
        try await f.provider.delete(at: ["a.txt"], by: "alice")
        #expect(try upstreamNames(f) == [TrashLayout.reservedName])
        let entries = try await f.provider.trashEntries()
        let entry = try #require(entries.first)
        #expect(entries.count == 1)
        #expect(entry.originalPath == ["a.txt"] && entry.size == 8 && entry.deletedBy == "alice" && !entry.isFolder)
        #expect(try String(contentsOf: trashFolder(f).appendingPathComponent(entry.name), encoding: .utf8) == "precious")
        #expect(try upstreamNames(f, trashPath) == [entry.name, entry.name + ".info"])

        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        #expect(try await f.provider.children(of: root).isEmpty)
        #expect(try await f.provider.item(at: [TrashLayout.reservedName]) == nil)
        #expect(try await f.provider.item(at: [TrashLayout.reservedName, entry.name]) == nil)
        await #expect(throws: ProviderError.nameRefused(.reserved(name: TrashLayout.reservedName))) {
            _ = try await f.provider.makeFolder(at: [TrashLayout.reservedName])
        }
        await #expect(throws: ProviderError.nameRefused(.reserved(name: TrashLayout.reservedName))) {
            _ = try await f.put("x", at: [TrashLayout.reservedName, "x.txt"])
        }
        try f.write("other", "b.txt")
        await #expect(throws: ProviderError.nameRefused(.reserved(name: TrashLayout.reservedName))) {
            _ = try await f.provider.move(from: ["b.txt"], to: [TrashLayout.reservedName], overwrite: true)
        }
        #expect(try upstreamNames(f) == [TrashLayout.reservedName, "b.txt"])
    }

    @Test("a restore puts a file back where it was, with the folders on the way made again, and never over anything")
    func restoreRecreatesFolders() async throws {
        let f = try await Fixture(trash: TrashPolicy())
        defer { f.cleanUp() }
        try fm.createDirectory(at: f.upstream.appendingPathComponent("docs/sub"), withIntermediateDirectories: true)
        try f.write("x", "docs/sub/x.txt")
        try f.write("y", "docs/y.txt")
        try await f.provider.delete(at: ["docs", "sub", "x.txt"])
        try await f.provider.delete(at: ["docs"])
        let entries = try await f.provider.trashEntries()
        #expect(entries.map(\.originalPath) == [["docs"], ["docs", "sub", "x.txt"]])
        #expect(try upstreamNames(f) == [TrashLayout.reservedName])

        let x = try #require(entries.first { $0.originalPath.last == "x.txt" })
        let restored = try await f.provider.restoreFromTrash(x.name)
        #expect(restored.name == "x.txt")
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/sub/x.txt"), encoding: .utf8) == "x")
        #expect(try await f.provider.item(at: ["docs", "sub", "x.txt"]) != nil)

        let docs = try #require(entries.first { $0.isFolder })
        await #expect(throws: ProviderError.exists) { _ = try await f.provider.restoreFromTrash(docs.name) }
        _ = try await f.provider.restoreFromTrash(docs.name, to: ["docs-restored"])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs-restored/y.txt"), encoding: .utf8) == "y")
        #expect(try await f.provider.item(at: ["docs-restored", "y.txt"]) != nil)
        #expect(try await f.provider.trashEntries().isEmpty)
        #expect(try upstreamNames(f, trashPath).isEmpty, "a sidecar was left behind")
        await #expect(throws: ProviderError.notFound) { _ = try await f.provider.restoreFromTrash(docs.name) }
    }

    @Test("a gateway with a new index reads the trash back from the upstream, sidecars and all")
    func lostGateway() async throws {
        let f = try await Fixture(trash: TrashPolicy())
        defer { f.cleanUp() }
        try fm.createDirectory(at: f.upstream.appendingPathComponent("docs"), withIntermediateDirectories: true)
        try f.write("report", "docs/report.txt")
        try await f.provider.delete(at: ["docs", "report.txt"], by: "bob")
        // An entry some older tool left without a sidecar.
        try "loose".write(to: trashFolder(f).appendingPathComponent("loose.txt.d1700000000000"), atomically: true, encoding: .utf8)

        let index = try await TestIndex.open("second", in: f.root)
        let second = try Provider(domain: "files", store: f.store, index: index, cacheFolder: f.root.appendingPathComponent("second-cache"),
                                  listingTTL: 0, trash: TrashPolicy(), logger: Logger(label: "test"))
        let entries = try await second.trashEntries()
        #expect(entries.map(\.originalPath) == [["docs", "report.txt"], ["loose.txt"]])
        #expect(entries.first?.deletedBy == "bob")
        #expect(entries.last?.deletedAt == Date(timeIntervalSince1970: 1_700_000_000))
        _ = try await second.restoreFromTrash(try #require(entries.first).name)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("docs/report.txt"), encoding: .utf8) == "report")
        // The first gateway sees the restore once its view is compared again.
        #expect(try await f.provider.trashEntries().map(\.originalName) == ["loose.txt"])
    }

    @Test("an edit written back but not yet uploaded goes to the trash with the bytes the client wrote last")
    func writeBackEditKeepsItsBytes() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600), trash: TrashPolicy())
        defer { f.cleanUp() }
        try f.write("as uploaded", "report.txt")
        _ = try await f.provider.item(at: ["report.txt"])
        _ = try await f.put("edited, not yet uploaded", at: ["report.txt"])
        try await f.provider.delete(at: ["report.txt"])
        let entry = try #require(try await f.provider.trashEntries().first)
        #expect(try String(contentsOf: trashFolder(f).appendingPathComponent(entry.name), encoding: .utf8) == "edited, not yet uploaded")
        #expect(try await f.provider.index.pendingUploads(domain: "files") == 0)
    }

    @Test("a file that never reached the upstream (an editor's lock or swap file) is deleted here, with the upstream down, and not kept")
    func neverUploadedIsNotKept() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600), trash: TrashPolicy())
        defer { f.cleanUp() }
        _ = try await f.put("lock", at: [".~lock.report.odt#"])
        f.store.failing.withLockedValue { failing in
            for operation in ["list", "stat", "fetch", "upload", "makeFolder", "delete", "move", "copy"] {
                failing[operation] = .unreachable("down for the test")
            }
        }
        try await f.provider.delete(at: [".~lock.report.odt#"])
        #expect(try await f.provider.item(at: [".~lock.report.odt#"]) == nil)
        #expect(try await f.provider.index.pendingUploads(domain: "files") == 0)
        f.store.failing.withLockedValue { $0 = [:] }
        #expect(try await f.provider.trashEntries().isEmpty)
        #expect(try upstreamNames(f).isEmpty)
    }

    @Test("an upstream that refuses the trash for good (full, forbidden) still deletes as asked; one that is down fails the DELETE")
    func trashRefused() async throws {
        let f = try await Fixture(trash: TrashPolicy())
        defer { f.cleanUp() }
        try f.write("one", "one.txt")
        try f.write("two", "two.txt")
        _ = try await f.provider.item(at: ["one.txt"])
        f.store.failing.withLockedValue { $0 = ["upload": .noSpace] }
        try await f.provider.delete(at: ["one.txt"])
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("one.txt").path))
        f.store.failing.withLockedValue { $0 = ["move": .unreachable("down for the test")] }
        await #expect(throws: ProviderError.upstream(.unreachable("down for the test"))) { try await f.provider.delete(at: ["two.txt"]) }
        #expect(FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("two.txt").path))
        #expect(try await f.provider.item(at: ["two.txt"]) != nil, "the index still has what the upstream still has")
        f.store.failing.withLockedValue { $0 = [:] }
        #expect(try await f.provider.trashEntries().isEmpty)
        #expect(try upstreamNames(f, trashPath).isEmpty, "a sidecar was left behind")
    }

    @Test("purging removes entries and their sidecars upstream; expiry purges the too old, then the oldest past the budget")
    func purgeAndExpiry() async throws {
        let f = try await Fixture(trash: TrashPolicy(retention: 3600, budget: 250))
        defer { f.cleanUp() }
        for n in 0..<4 {
            try f.write(String(repeating: "\(n)", count: 100), "f\(n).txt")
            try await f.provider.delete(at: ["f\(n).txt"])
        }
        // Newest first: f3 and f2 fit in 250 bytes, f1 and f0 do not (each
        // DELETE also starts an expiry in the background; this one waits
        // for those and then finds nothing or the rest to purge).
        try await f.provider.expireTrash()
        #expect(Set(try await f.provider.trashEntries().map(\.originalName)) == ["f2.txt", "f3.txt"])
        #expect(try upstreamNames(f, trashPath).count == 4)

        try await f.provider.expireTrash(now: Date() + 3601)
        #expect(try await f.provider.trashEntries().isEmpty)
        #expect(try upstreamNames(f, trashPath).isEmpty)

        try f.write("a", "a.txt")
        try f.write("b", "b.txt")
        try await f.provider.delete(at: ["a.txt"])
        try await f.provider.delete(at: ["b.txt"])
        let a = try #require(try await f.provider.trashEntries().first { $0.originalName == "a.txt" })
        #expect(try await f.provider.purgeTrash([a.name]) == [a.name])
        await #expect(throws: ProviderError.notFound) { try await f.provider.purgeTrash([a.name]) }
        #expect(try await f.provider.purgeTrash().count == 1)
        #expect(try upstreamNames(f, trashPath).isEmpty)
    }

    @Test("over another davgate (which keeps its own trash), a DELETE deletes there plainly")
    func upstreamKeepsItsOwn() async throws {
        let f = try await Fixture(trash: TrashPolicy())
        defer { f.cleanUp() }
        f.store.davgate.withLockedValue { $0 = true }
        try f.write("x", "x.txt")
        try await f.provider.delete(at: ["x.txt"])
        #expect(try upstreamNames(f).isEmpty)
        #expect(try await f.provider.trashEntries().isEmpty)
    }

    @Test("a PUT into a folder racing its DELETE either lands in the trash with the folder or is refused, never lost in between")
    func putRacingDelete() async throws {
        for round in 0..<10 {
            let f = try await Fixture(trash: TrashPolicy())
            defer { f.cleanUp() }
            try fm.createDirectory(at: f.upstream.appendingPathComponent("docs"), withIntermediateDirectories: true)
            try f.write("old", "docs/old.txt")
            _ = try await f.provider.item(at: ["docs", "old.txt"])
            async let put: Bool = { () async -> Bool in (try? await f.put("new \(round)", at: ["docs", "new.txt"])) != nil }()
            try await f.provider.delete(at: ["docs"])
            let written = await put
            let entry = try #require(try await f.provider.trashEntries().first)
            let inTrash = trashFolder(f).appendingPathComponent(entry.name).appendingPathComponent("new.txt")
            if written && !fm.fileExists(atPath: f.upstream.appendingPathComponent("docs/new.txt").path) {
                #expect(try String(contentsOf: inTrash, encoding: .utf8) == "new \(round)", "an acknowledged PUT was lost")
            }
            #expect(fm.fileExists(atPath: trashFolder(f).appendingPathComponent(entry.name).appendingPathComponent("old.txt").path))
        }
    }
}
