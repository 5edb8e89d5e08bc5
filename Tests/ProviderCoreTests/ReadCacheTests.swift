@testable import ProviderCore
import Testing

/// The read cache may serve nothing older than the last write that
/// returned: a read racing a write is not kept, and every write forgets all.
@Suite("ReadCache: nothing older than the last write")
struct ReadCacheTests {
    @Test("a value read while a write ended is served once but not kept")
    func readRacingAWriteIsNotKept() {
        let cache = ReadCache<Int, String>()
        // The write ends while the read is under way (between the cache's
        // look and its store).
        let first = cache.value(for: 1) {
            cache.invalidate()
            return "read before the write committed"
        }
        #expect(first == "read before the write committed")
        let second = cache.value(for: 1) { "read after" }
        #expect(second == "read after", "the racing read was kept")
    }

    @Test("a hit needs no read; a write forgets every key")
    func writeForgetsEverything() {
        let cache = ReadCache<Int, String>()
        _ = cache.values(for: [1, 2]) { keys in Dictionary(uniqueKeysWithValues: keys.map { ($0, "v\($0)") }) }
        let cached = cache.values(for: [1, 2]) { keys in
            Issue.record("read \(keys) though they were cached")
            return [:]
        }
        #expect(cached == [1: "v1", 2: "v2"])
        cache.invalidate()
        var reread: [Int] = []
        _ = cache.values(for: [1, 2]) { keys in
            reread = keys
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, "new") })
        }
        #expect(reread.sorted() == [1, 2])
    }
}

extension ReadCacheTests {
    @Test("a release forgets every key, and a read racing it is not kept")
    func releaseForgetsEverything() {
        let cache = ReadCache<Int, String>()
        _ = cache.values(for: [1, 2]) { keys in Dictionary(uniqueKeysWithValues: keys.map { ($0, "old") }) }
        let racing = cache.value(for: 3) {
            cache.release()
            return "read while released"
        }
        #expect(racing == "read while released")
        var reread: [Int] = []
        _ = cache.values(for: [1, 2, 3]) { keys in
            reread = keys
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, "new") })
        }
        #expect(reread.sorted() == [1, 2, 3])
    }
}
