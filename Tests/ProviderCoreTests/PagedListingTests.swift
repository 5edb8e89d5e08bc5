import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// Listings that arrive in pages (S3's 1,000 keys a page) are applied page
/// by page, and only once every page is in are the names none of them
/// named removed.
@Suite("Listings in pages")
struct PagedListingTests {
    @Test("every page's names become placeholders, and names gone upstream go once all pages are in")
    func pagesApplyAndSweep() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        f.store.listPageSize.withLockedValue { $0 = 3 }
        for n in 0..<10 { try f.write("file \(n)", "f\(n)") }
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        #expect(f.store.pagesDelivered.withLockedValue { $0 } == [3, 3, 3, 1])
        #expect(try await f.provider.children(of: root).map(\.name) == (0..<10).map { "f\($0)" })

        // Gone upstream: one from the first page, one from the last.
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("f0"))
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("f9"))
        try f.write("new", "g")
        try await f.provider.refreshIfStale(try await f.provider.root())
        #expect(try await f.provider.children(of: root).map(\.name) == (1..<9).map { "f\($0)" } + ["g"])
    }

    @Test("a namespace change here between two pages stops the refresh: later pages, read before the change, are not applied, nothing is removed, and the next read lists again")
    func changeBetweenPagesStopsTheRefresh() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        for n in 0..<6 { try f.write("file \(n)", "f\(n)") }
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        let listedBefore = try await f.provider.index.item(id: root.id)?.listedAt
        let f5 = try #require(try await f.provider.index.child(of: root.id, named: "f5"))

        // Upstream, f0 goes. The listing is read whole, then handed over in
        // pages; between the first two, a client deletes f5 here, which the
        // last page (read before the deletion) still names.
        try FileManager.default.removeItem(at: f.upstream.appendingPathComponent("f0"))
        f.store.listPageSize.withLockedValue { $0 = 2 }
        // What a DELETE does to the index and the namespace clock, done here
        // because a real one waits for the listing this hook runs inside.
        let (provider, upstream) = (f.provider, f.upstream)
        let deleted = NIOLockedFlag()
        f.store.betweenPages.withLockedValue {
            $0 = {
                guard deleted.set() else { return }
                provider.namespaceClock.tick()
                _ = try await provider.index.delete(id: f5.id)
                try FileManager.default.removeItem(at: upstream.appendingPathComponent("f5"))
            }
        }
        try await f.provider.refreshIfStale(try await f.provider.root())
        let afterStopped = try await f.provider.children(of: root).map(\.name)
        #expect(!afterStopped.contains("f5"), "a page read before the deletion does not bring it back")
        #expect(afterStopped.contains("f0"), "nothing removed by a refresh the change interrupted")
        #expect(try await f.provider.index.item(id: root.id)?.listedAt == listedBefore, "not recorded as listed")

        f.store.betweenPages.withLockedValue { $0 = nil }
        try await f.provider.refreshIfStale(try #require(try await f.provider.index.item(id: root.id)))
        #expect(try await f.provider.children(of: root).map(\.name) == ["f1", "f2", "f3", "f4"])
    }
}

/// Set once, by the first caller.
final class NIOLockedFlag: Sendable {
    private let value = NIOLockedValueBox(false)
    /// True for the caller that set it.
    func set() -> Bool { value.withLockedValue { was in defer { was = true }; return !was } }
    var isSet: Bool { value.withLockedValue { $0 } }
}
