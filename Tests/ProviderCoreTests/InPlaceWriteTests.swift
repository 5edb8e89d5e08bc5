import Foundation
import GRDB
import NIOConcurrencyHelpers
@testable import ProviderCore
import Synchronization
import Testing

/// `SQLiteIndex.smallWrite` runs a write of a few rows on the calling
/// thread when the writer is idle, and queues it when another write runs:
/// an event loop must never wait for someone else's transaction. A lookup
/// reads on the idle writer's connection, and elsewhere when it is busy.
@Suite("small index writes in place")
struct InPlaceWriteTests {
    /// A write that makes `change` and then holds the writer until the
    /// returned semaphore is signalled; returns once it holds it.
    private func holdWriter(_ index: SQLiteIndex, _ change: @escaping @Sendable (Database) throws -> Void = { _ in })
        async throws -> (Task<Void, any Error>, DispatchSemaphore) {
        let entered = NIOLockedValueBox(false)
        let release = DispatchSemaphore(value: 0)
        let long = Task {
            try await index.write { db in
                try change(db)
                entered.withLockedValue { $0 = true }
                release.wait()
            }
        }
        while !entered.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
        return (long, release)
    }

    @Test("with the writer idle, a small write runs on the caller's thread, and commits")
    func idleWriteRunsInPlace() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        let before = index.inPlaceWrites.load(ordering: .relaxed)
        let caller = pthread_self()
        let ran = try await index.smallWrite { _ in pthread_self() }
        #expect(pthread_equal(ran, caller) != 0, "the write ran on another thread")
        let listed = Date(timeIntervalSince1970: 1_700_000_000)
        try await index.markListed(id: root.id, at: listed)
        #expect(index.inPlaceWrites.load(ordering: .relaxed) == before + 2)
        #expect(try await index.item(id: root.id)?.listedAt == listed)
    }

    @Test("a small write that finds another write running is queued behind it, not run in place")
    func busyWriterQueues() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        let (long, release) = try await holdWriter(index)
        let before = index.inPlaceWrites.load(ordering: .relaxed)
        let ranSmall = NIOLockedValueBox(false)
        let small = Task {
            try await index.smallWrite { db in
                ranSmall.withLockedValue { $0 = true }
                try db.execute(sql: "UPDATE item SET listed_at = 42 WHERE id = ?", arguments: [root.id])
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!ranSmall.withLockedValue { $0 }, "the small write ran while the long one held the writer")
        release.signal()
        try await long.value
        try await small.value
        #expect(ranSmall.withLockedValue { $0 })
        #expect(index.inPlaceWrites.load(ordering: .relaxed) == before, "the small write ran in place behind a busy writer")
        #expect(try await index.item(id: root.id)?.listedAt == Date(timeIntervalSince1970: 42))
    }

    @Test("with the writer idle, a lookup reads on the writer's connection and sees its last commit")
    func idleLookupReadsOnWriter() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        let listed = Date(timeIntervalSince1970: 1_700_000_000)
        try await index.markListed(id: root.id, at: listed)
        let before = index.lookupsOnWriter.load(ordering: .relaxed)
        #expect(try await index.item(id: root.id)?.listedAt == listed)
        #expect(index.lookupsOnWriter.load(ordering: .relaxed) == before + 1, "the lookup did not read on the idle writer")
    }

    @Test("a lookup while a write holds the writer reads on another connection, without waiting for it")
    func lookupBesideBusyWriterDoesNotWait() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        let (long, release) = try await holdWriter(index) { db in
            try db.execute(sql: "UPDATE item SET listed_at = 42 WHERE id = ?", arguments: [root.id])
        }
        let before = index.lookupsOnWriter.load(ordering: .relaxed)
        // Answered while the write still holds the writer (it is released
        // only after), from the last commit: not the write's own change.
        let seen = try await index.item(id: root.id)
        #expect(seen != nil)
        #expect(seen?.listedAt != Date(timeIntervalSince1970: 42), "the lookup saw an uncommitted change")
        #expect(index.lookupsOnWriter.load(ordering: .relaxed) == before, "the lookup read on the busy writer")
        release.signal()
        try await long.value
        #expect(try await index.item(id: root.id)?.listedAt == Date(timeIntervalSince1970: 42))
    }

    @Test("small writes racing from many tasks, some in place and some queued, all commit")
    func racingSmallWritesAllCommit() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        let count = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<count {
                group.addTask {
                    let entry = UpstreamEntry(name: "f\(i)", isFolder: false, size: Int64(i), modified: Date(), version: "v\(i)")
                    _ = try await index.insertItem(entry, parent: root.id, domain: "d", cachedVersion: nil, listed: true,
                                                   checksum: nil, conflictCopy: false)
                }
                if i % 3 == 0 {
                    // Long writes beside them, which always queue.
                    group.addTask { _ = try await index.write { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") } }
                }
            }
            try await group.waitForAll()
        }
        let children = try await index.children(of: root.id, after: nil, limit: count + 10)
        #expect(children.count == count)
        #expect(Set(children.map(\.name)) == Set((0..<count).map { "f\($0)" }))
    }
}
