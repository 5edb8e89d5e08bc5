import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// A listing refresh that begins while a namespace change runs here must
/// not apply what it read: the change may have reached the upstream but
/// not the index yet (found by 2,000 racing LOCKs of new names over the
/// shared index: a placeholder the change's own insert collided with, and
/// a lock on an item the listing's sweep had removed).
@Suite("listings that begin while the namespace changes")
struct ListingDuringChangeTests {
    @Test("a refresh begun after a PUT reached the upstream and before the index recorded it changes nothing; the PUT lands as one item")
    func refreshBetweenUploadAndRecord() async throws {
        let f = try await Fixture(ttl: 0)
        defer { f.cleanUp() }
        let root = try await f.provider.root()
        _ = try await f.provider.refreshIfStale(root)
        let provider = f.provider
        let refreshed = NIOLockedFlag()
        f.store.afterUpload.withLockedValue {
            $0 = { path in
                guard path == ["new.txt"], refreshed.set() else { return }
                // The upstream holds new.txt; the index does not yet. Another
                // client's request: a task of its own, not the write's.
                _ = try await Task.detached { try await provider.refreshIfStale(try await provider.root()) }.value
            }
        }
        let written = try await f.put("ours", at: ["new.txt"])
        #expect(refreshed.isSet, "the refresh ran inside the write")
        let listed = try await f.provider.index.children(of: root.id)
        #expect(listed.map(\.name) == ["new.txt"])
        #expect(listed.first?.id == written.id, "one item, the write's")
        #expect(try await f.provider.index.item(id: written.id)?.state == .materialized)
    }
}
