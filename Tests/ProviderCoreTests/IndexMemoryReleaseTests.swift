import Foundation
@testable import ProviderCore
import Testing

/// Giving memory back when the server is quiet (`IndexStore.releaseMemory`)
/// drops page caches, prepared statements and read caches under the
/// index's feet, possibly while a late request reads: reads and writes
/// during and after it must see the same index as before.
@Suite("the index after its memory was released")
struct IndexMemoryReleaseTests {
    @Test("listings, lookups and writes racing releases see every member; a write after them lands")
    func readsAndWritesAcrossReleases() async throws {
        let f = try await Fixture(ttl: 3600)
        defer { f.cleanUp() }
        for i in 0..<120 { try f.write("file \(i)", "f\(i).txt") }
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        #expect(try await f.provider.children(of: root).count == 120)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for _ in 0..<30 {
                    f.provider.index.releaseMemory()
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            for reader in 0..<4 {
                group.addTask {
                    for round in 0..<30 {
                        // The writer below adds new-*.txt meanwhile.
                        let listed = try await f.provider.children(of: root).filter { $0.name.hasPrefix("f") }
                        #expect(listed.count == 120, "reader \(reader), round \(round)")
                        let name = "f\((reader * 31 + round) % 120).txt"
                        #expect(try await f.provider.item(at: [name])?.name == name)
                    }
                }
            }
            group.addTask {
                for i in 0..<10 { _ = try await f.put("new \(i)", at: ["new-\(i).txt"]) }
            }
            try await group.waitForAll()
        }

        f.provider.index.releaseMemory()
        _ = try await f.put("after", at: ["after.txt"])
        #expect(try await f.provider.children(of: root).count == 131)
        #expect(try await f.provider.item(at: ["after.txt"])?.size == 5)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("new-9.txt"), encoding: .utf8) == "new 9")
    }
}
