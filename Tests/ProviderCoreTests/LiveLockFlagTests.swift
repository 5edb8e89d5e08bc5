import Foundation
import NIOConcurrencyHelpers
@testable import ProviderCore
import Testing

/// `hasLiveLocks` remembers "no lock" so that reads and writes skip lock
/// lookups; a write's lock check relies on it, so a lock inserted while
/// such reads run must be seen the moment its insert returns.
@Suite("the remembered absence of locks")
struct LiveLockFlagTests {
    @Test("a lock inserted while lockless reads run is seen once its insert returns, every time")
    func lockSeenAfterInsert() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let item = try await f.put("locked", at: ["a.txt"])
        let index = f.provider.index
        let ancestry = try await index.ancestry(of: item.id)
        for round in 0..<200 {
            #expect(try await !index.hasLiveLocks())
            let stop = NIOLockedValueBox(false)
            let readers = (0..<2).map { _ in
                // Yielding: `hasLiveLocks` does not suspend, and a bare loop
                // of it would hold the cooperative pool's thread.
                Task {
                    while !stop.withLockedValue({ $0 }) {
                        _ = try? await index.hasLiveLocks()
                        await Task.yield()
                    }
                }
            }
            let lock = Lock(token: "urn:uuid:round-\(round)", itemID: item.id, depthInfinity: false, exclusive: true,
                            ownerXML: nil, principal: "alice", timeout: 600, expires: Date().addingTimeInterval(600))
            try await index.insertLock(lock, ancestry: ancestry)
            let seen = try await index.hasLiveLocks()
            let covering = try await f.provider.locks(covering: item)
            stop.withLockedValue { $0 = true }
            for reader in readers { await reader.value }
            #expect(seen, "round \(round): the lock was inserted and hasLiveLocks says none")
            #expect(covering.map(\.token) == [lock.token], "round \(round)")
            #expect(try await index.removeLock(token: lock.token))
            if !seen { break }
        }
    }
}
