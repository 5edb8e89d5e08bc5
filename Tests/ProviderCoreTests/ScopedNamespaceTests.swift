import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A write and an upload alter one folder's members: a listing of another
/// folder that runs meanwhile is applied, one of the same folder is not
/// (issue 14: during a burst of writes, every listing anywhere in the
/// domain was thrown away and read again at the next request).
///
/// A shared index keeps one clock for the domain across instances: there
/// any change still stops every listing (`sharedClockIsWhole`).
@Suite("namespace changes confined to a folder")
struct ScopedNamespaceTests {
    /// Whether the index's own clock stops a listing of any folder.
    static let sharedClockIsWhole = TestIndex.usesPostgres

    // MARK: the clock

    /// What another task sees while the caller runs a change (the change's
    /// own readings leave it out).
    private static func outside<T: Sendable>(_ body: @Sendable () -> T) async -> T {
        await NamespaceClock.outsideChange { body() }
    }

    @Test("a change confined to one folder leaves readings of others undisturbed, and disturbs its own folder's and the whole domain's")
    func confinedChange() async {
        let clock = NamespaceClock()
        let a = clock.read(folder: 1), b = clock.read(folder: 2), domain = clock.read()
        await clock.change {
            #expect(await !Self.outside { clock.undisturbed(since: a) }, "not confined yet: it may touch anything")
            #expect(clock.undisturbed(since: a), "the change's own listings do not count it")
            clock.confine(to: .folder(2))
            #expect(await Self.outside { clock.undisturbed(since: a) })
            #expect(await !Self.outside { clock.undisturbed(since: b) })
            #expect(await Self.outside { clock.read(folder: 1).isQuiet })
            #expect(await !Self.outside { clock.read(folder: 2).isQuiet })
            #expect(await !Self.outside { clock.read().isQuiet })
        }
        #expect(clock.undisturbed(since: a))
        #expect(!clock.undisturbed(since: b))
        #expect(!clock.undisturbed(since: domain))
    }

    @Test("a change started confined to a folder (a write's, to the folder its path had) disturbs no other; moved before its first effect, it reaches the new folder only")
    func startedConfined() async {
        let clock = NamespaceClock()
        let a = clock.read(folder: 1), b = clock.read(folder: 2), c = clock.read(folder: 3)
        await clock.change(confinedTo: .folder(2)) {
            #expect(await Self.outside { clock.undisturbed(since: a) })
            #expect(await !Self.outside { clock.undisturbed(since: b) })
            clock.confine(to: .folder(3))
            #expect(await Self.outside { clock.undisturbed(since: b) })
            #expect(await !Self.outside { clock.undisturbed(since: c) })
        }
        #expect(clock.undisturbed(since: a))
        #expect(clock.undisturbed(since: b))
        #expect(!clock.undisturbed(since: c))
    }

    @Test("a change that never confines itself disturbs every reading taken before it or while it ran")
    func unconfinedChange() async {
        let clock = NamespaceClock()
        let before = clock.read(folder: 1)
        await clock.change {
            #expect(await !Self.outside { clock.read(folder: 1).isQuiet })
        }
        #expect(!clock.undisturbed(since: before))
    }

    @Test("an upload's tick disturbs its folder only; a tick of everything, every folder")
    func ticks() {
        let clock = NamespaceClock()
        let a = clock.read(folder: 1), b = clock.read(folder: 2)
        clock.tick(.folder(2))
        #expect(clock.undisturbed(since: a))
        #expect(!clock.undisturbed(since: b))
        #expect(!clock.unchanged(since: a), "the domain-wide check still sees it")
        clock.tick()
        #expect(!clock.undisturbed(since: a))
    }

    @Test("past the folders it remembers, the clock forgets them as one change of everything")
    func forgetsAsEverything() {
        let clock = NamespaceClock()
        let a = clock.read(folder: 1)
        for id in 2..<Int64(NamespaceClock.foldersRemembered + 3) { clock.tick(.folder(id)) }
        #expect(!clock.undisturbed(since: a))
        let later = clock.read(folder: 1)
        clock.tick(.folder(2))
        #expect(clock.undisturbed(since: later))
    }

    // MARK: through the provider

    /// Folders A and B listed, then a new file in B upstream; B is stale.
    private static func twoFolders(_ f: Fixture) async throws {
        for folder in ["A", "B"] {
            try FileManager.default.createDirectory(at: f.upstream.appendingPathComponent(folder), withIntermediateDirectories: true)
            try "old".write(to: f.upstream.appendingPathComponent("\(folder)/old.txt"), atomically: true, encoding: .utf8)
        }
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        for folder in ["A", "B"] { try await f.provider.refreshIfStale(try #require(try await f.provider.item(at: [folder]))) }
        try "new".write(to: f.upstream.appendingPathComponent("B/new.txt"), atomically: true, encoding: .utf8)
    }

    /// Lists B, running `meanwhile` after the upstream answered and before
    /// the listing is applied; returns B's members after and whether B's
    /// listing was recorded.
    private static func listB(_ f: Fixture, meanwhile: @escaping @Sendable () async throws -> Void) async throws -> (names: [String], recorded: Bool) {
        let ran = NIOLockedFlag()
        f.store.afterList.withLockedValue {
            $0 = { folder in
                guard folder == ["B"], ran.set() else { return }
                // Another client's request: a task of its own.
                try await Task.detached { try await meanwhile() }.value
            }
        }
        let b = try #require(try await f.provider.item(at: ["B"]))
        try await f.provider.refreshIfStale(b)
        #expect(ran.isSet, "the change ran while B was listed")
        let after = try #require(try await f.provider.index.item(id: b.id))
        return (try await f.provider.children(of: after).map(\.name), after.listedAt != b.listedAt)
    }

    @Test("a PUT into another folder while a folder is listed: the listing is applied", arguments: [WriteMode.back, .through])
    func writeElsewhere(mode: WriteMode) async throws {
        let f = try await Fixture(ttl: 0, writeMode: mode, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try await Self.twoFolders(f)
        let listed = try await Self.listB(f) { _ = try await f.put("ours", at: ["A", "put.txt"]) }
        #expect(listed.names == (Self.sharedClockIsWhole ? ["old.txt"] : ["new.txt", "old.txt"]))
        #expect(listed.recorded == !Self.sharedClockIsWhole)
        #expect(try await f.provider.children(of: try #require(try await f.provider.item(at: ["A"]))).map(\.name).contains("put.txt"))
    }

    @Test("a PUT into the folder being listed: the listing is not applied, the next read lists again", arguments: [WriteMode.back, .through])
    func writeInTheSameFolder(mode: WriteMode) async throws {
        let f = try await Fixture(ttl: 0, writeMode: mode, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try await Self.twoFolders(f)
        let listed = try await Self.listB(f) { _ = try await f.put("ours", at: ["B", "put.txt"]) }
        #expect(listed.names == ["old.txt", "put.txt"], "what the listing read before the write is not applied")
        #expect(!listed.recorded)
        f.store.afterList.withLockedValue { $0 = nil }
        try await f.provider.refreshIfStale(try #require(try await f.provider.item(at: ["B"])))
        let names = try await f.provider.children(of: try #require(try await f.provider.item(at: ["B"]))).map(\.name)
        #expect(names == ["new.txt", "old.txt", "put.txt"])
    }

    @Test("an upload finishing in another folder while a folder is listed leaves the listing; one in the same folder stops it")
    func uploadFinishing() async throws {
        for (folder, applied) in [("A", !Self.sharedClockIsWhole), ("B", false)] {
            let f = try await Fixture(ttl: 0, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
            defer { f.cleanUp() }
            try await Self.twoFolders(f)
            let written = try await f.put("ours", at: [folder, "up.txt"])
            let listed = try await Self.listB(f) { try await f.provider.flushUploads(under: written) }
            #expect(FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent("\(folder)/up.txt").path), "uploaded")
            #expect(listed.recorded == applied, "upload into \(folder)")
            #expect(listed.names.contains("new.txt") == applied, "upload into \(folder)")
        }
    }

    @Test("a MKCOL in another folder while a folder is listed leaves the listing; one in the same folder stops it")
    func makeFolder() async throws {
        for (folder, applied) in [("A", !Self.sharedClockIsWhole), ("B", false)] {
            let f = try await Fixture(ttl: 0)
            defer { f.cleanUp() }
            try await Self.twoFolders(f)
            let listed = try await Self.listB(f) { _ = try await f.provider.makeFolder(at: [folder, "sub"]) }
            #expect(listed.recorded == applied, "MKCOL in \(folder)")
            #expect(listed.names.contains("new.txt") == applied, "MKCOL in \(folder)")
        }
    }

    @Test("a PUT's change is confined from its start: a listing of another folder completed while the PUT resolves its target (listing its own folder) is applied")
    func confinedWhileResolving() async throws {
        let f = try await Fixture(ttl: 0, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try await Self.twoFolders(f)
        // A known as a folder and never listed: the PUT's commit lists it,
        // under the coordination, before it knows its target.
        try FileManager.default.createDirectory(at: f.upstream.appendingPathComponent("C"), withIntermediateDirectories: true)
        try await f.provider.refreshIfStale(try await f.provider.root())
        let c = try #require(try await f.provider.item(at: ["C"]))
        #expect(c.listedAt == nil)
        let b = try #require(try await f.provider.item(at: ["B"]))
        let (provider, ran) = (f.provider, NIOLockedFlag())
        f.store.afterList.withLockedValue {
            $0 = { folder in
                guard folder == ["C"], ran.set() else { return }
                _ = try await Task.detached { try await provider.refreshIfStale(b) }.value
            }
        }
        _ = try await f.put("ours", at: ["C", "put.txt"])
        #expect(ran.isSet, "B was listed while the PUT resolved its target")
        let after = try #require(try await f.provider.index.item(id: b.id))
        #expect((after.listedAt != b.listedAt) == !Self.sharedClockIsWhole)
        #expect(try await f.provider.children(of: after).map(\.name).contains("new.txt") == !Self.sharedClockIsWhole)
    }

    @Test("a PUT whose folder changed before its turn counts as a change of everything while it resolves its target")
    func startedInAnotherFolder() async throws {
        let f = try await Fixture(ttl: 60, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try await Self.twoFolders(f)
        let (clock, provider) = (f.provider.namespaceClock, f.provider)
        let a = try #require(try await f.provider.item(at: ["A"]))
        let b = try #require(try await f.provider.item(at: ["B"]))
        try await clock.change(confinedTo: .folder(b.id)) {
            #expect(await Self.outside { clock.read(folder: a.id).isQuiet })
            // Started in B (its path's folder then); A's now.
            _ = try await provider.writeTarget(["A", "x.txt"], look: nil, startedIn: b.id)
            #expect(await !Self.outside { clock.read(folder: a.id).isQuiet }, "widened to everything")
        }
        try await clock.change(confinedTo: .folder(a.id)) {
            _ = try await provider.writeTarget(["A", "x.txt"], look: nil, startedIn: a.id)
            #expect(await Self.outside { clock.read(folder: b.id).isQuiet }, "the same folder: still confined")
        }
    }

    @Test("a refresh keeps a folder gone upstream while a write waits for upload below it", .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
    func sweepKeepsWaitingWrites() async throws {
        let f = try await Fixture(ttl: 0, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try await Self.twoFolders(f)
        let written = try await f.put("ours", at: ["A", "put.txt"])
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("A"))
        try await f.provider.refreshIfStale(try await f.provider.root())
        #expect(try await f.provider.index.item(id: written.id)?.dirty == true, "the answered write is still here")
        #expect(try await f.provider.index.pendingUploads(domain: "files") == 1)
        #expect(try await f.provider.item(at: ["B"]) != nil)
    }

    @Test("a DELETE elsewhere while a folder is listed still stops the listing: it is not confined")
    func deleteElsewhere() async throws {
        let f = try await Fixture(ttl: 0, writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        try await Self.twoFolders(f)
        let listed = try await Self.listB(f) { try await f.provider.delete(at: ["A", "old.txt"]) }
        #expect(!listed.recorded)
        #expect(!listed.names.contains("new.txt"))
    }
}
