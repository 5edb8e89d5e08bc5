import Dispatch
import Foundation
import GRDB
import NIOConcurrencyHelpers
@testable import ProviderCore
import Synchronization
import Testing

/// Write-back commits that queue for one fsync share one transaction
/// (`SQLiteIndex+batch`): nothing is acknowledged before it is committed
/// and synced, the commits that join it read one another's rows, everyone
/// else reads only what is committed, and a failed commit fails every
/// write in it and leaves nothing of them behind.
@Suite("write-back commits sharing a transaction", .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
struct CommitBatchTests {
    /// A write-back provider whose uploads wait, with its root listed, and
    /// its SQLite index.
    func fixture() async throws -> (Fixture, SQLiteIndex) {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        _ = try await f.provider.root()
        return (f, try #require(f.provider.index as? SQLiteIndex))
    }

    /// Whether a read-only connection, which sees only what is committed,
    /// finds `name` below the domain's root.
    func committed(_ index: SQLiteIndex, _ name: String) throws -> Bool {
        try index.lookups.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item WHERE name = ? AND parent_id IS NOT NULL)", arguments: [name]) ?? false
        }
    }

    /// The next round of the fsync keeps the batch open until `count` more
    /// writes joined it (10 s at most), so that they share it whatever the
    /// machine's pace.
    func holdRound(_ index: SQLiteIndex, untilJoined count: Int) {
        let wanted = index.batchCounts.joined + count
        index.batch.withLockedValue { batch in
            batch.beforeRoundCommits = {
                let deadline = ContinuousClock.now + .seconds(10)
                while index.batchCounts.joined < wanted, ContinuousClock.now < deadline { usleep(1000) }
            }
        }
    }

    @Test("concurrent PUTs share one transaction, and each is committed before its answer")
    func sharedAndCommittedBeforeTheAnswer() async throws {
        let (f, index) = try await fixture()
        defer { f.cleanUp() }
        let before = index.batchCounts
        let count = 48
        holdRound(index, untilJoined: count)
        let unseen = try await withThrowingTaskGroup(of: String?.self) { group in
            for n in 0..<count {
                group.addTask {
                    let name = "f\(n).txt"
                    _ = try await f.put("body \(n)", at: [name], inline: true)
                    // Answered: a connection that sees only commits finds it.
                    return try committed(index, name) ? nil : name
                }
            }
            return try await group.reduce(into: [String]()) { if let name = $1 { $0.append(name) } }
        }
        #expect(unseen.isEmpty, "answered before committed: \(unseen)")
        let after = index.batchCounts
        #expect(after.joined - before.joined == count, "every PUT joined a batch")
        #expect(after.committed - before.committed == 1, "one transaction for all of them")
        let open = index.batchOpen.load(ordering: .acquiring)
        #expect(!open, "nothing left uncommitted")
        #expect(try await f.provider.index.journal(domain: "files").count == count)
    }

    @Test("PUTs of one new name in one transaction: each sees the one before it, so one item results and none fails")
    func sameNewNameAtOnce() async throws {
        let (f, index) = try await fixture()
        defer { f.cleanUp() }
        let before = index.batchCounts
        holdRound(index, untilJoined: 24)
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<24 {
                group.addTask { try await f.provider.write(try f.request("writer \(n)", at: ["same.txt"], inline: true)).created }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(created == 1, "one PUT created the item, the others replaced it")
        #expect(index.batchCounts.committed - before.committed == 1, "the PUTs shared one transaction")
        let root = try await f.provider.root()
        let members = try await f.provider.index.children(of: root.id, after: nil, limit: 100)
        #expect(members.map(\.name) == ["same.txt"])
    }

    @Test("PUTs into several folders in one transaction raise each folder, and each above it, to the newest change below it, readable once committed")
    func treeVersionsOfABatch() async throws {
        let (f, index) = try await fixture()
        defer { f.cleanUp() }
        let folders: [ItemPath] = [["a"], ["a", "b"], ["a", "b", "c"], ["d"]]
        for folder in folders { _ = try await f.provider.makeFolder(at: folder) }
        let versions = { @Sendable in
            var found: [Int64] = [try await f.provider.root().treeVersion]
            for folder in folders { found.append(try #require(try await f.provider.item(at: folder)).treeVersion) }
            return found
        }
        let before = try await versions()
        let batches = index.batchCounts.committed
        let targets: [ItemPath] = [["a", "b", "c"], ["d"], ["a"], ["a", "b", "c"], ["d"], ["a", "b"]]
        holdRound(index, untilJoined: targets.count * 4)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<(targets.count * 4) {
                group.addTask { _ = try await f.put("body \(n)", at: targets[n % targets.count] + ["f\(n).txt"], inline: true) }
            }
            try await group.waitForAll()
        }
        #expect(index.batchCounts.committed - batches == 1, "the PUTs shared one transaction")
        let (wrong, _) = try TreeVersionTests.disagreements(index)
        #expect(wrong.isEmpty, "\(wrong)")
        let after = try await versions()
        for (i, (old, new)) in zip(before, after).enumerated() { #expect(new > old, "folder \(i) of the root and \(folders)") }
    }

    @Test("a change that does not join the batch (MKCOL) reads it committed: racing PUTs of the same names, each name is one file or one folder, and every refusal is the provider's")
    func othersReadTheBatchCommitted() async throws {
        let (f, _) = try await fixture()
        defer { f.cleanUp() }
        let unexpected = NIOLockedValueBox<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<40 {
                let name = "n\(n)"
                group.addTask {
                    do { _ = try await f.put("file \(n)", at: [name], inline: true) } catch is ProviderError {} catch {
                        unexpected.withLockedValue { $0.append("PUT \(name): \(error)") }
                    }
                }
                group.addTask {
                    do { _ = try await f.provider.makeFolder(at: [name]) } catch is ProviderError {} catch {
                        unexpected.withLockedValue { $0.append("MKCOL \(name): \(error)") }
                    }
                }
            }
            try await group.waitForAll()
        }
        let errors = unexpected.withLockedValue { $0 }
        #expect(errors.isEmpty, "errors that are not the provider's refusals: \(errors.prefix(3))")
        let root = try await f.provider.root()
        #expect(try await f.provider.index.children(of: root.id, after: nil, limit: 100).count == 40)
    }

    struct InjectedFailure: Error {}

    @Test("a batch whose commit fails fails every PUT in it: nothing is acknowledged, no row stays, and the next PUTs commit")
    func failedCommitFailsEveryWrite() async throws {
        let (f, index) = try await fixture()
        defer { f.cleanUp() }
        holdRound(index, untilJoined: 16)
        index.batch.withLockedValue { $0.failNextCommit = { throw InjectedFailure() } }
        let acknowledged = try await withThrowingTaskGroup(of: String?.self) { group in
            for n in 0..<16 {
                group.addTask {
                    do {
                        _ = try await f.put("lost \(n)", at: ["lost\(n).txt"], inline: true)
                        return "lost\(n).txt"
                    } catch is InjectedFailure {
                        return nil
                    }
                }
            }
            return try await group.reduce(into: [String]()) { if let name = $1 { $0.append(name) } }
        }
        #expect(acknowledged.isEmpty, "acknowledged from a lost batch: \(acknowledged)")
        for n in 0..<16 { #expect(try !committed(index, "lost\(n).txt")) }
        #expect(try await f.provider.index.journal(domain: "files").isEmpty, "no journal row of a lost write")
        #expect(try await f.provider.item(at: ["lost0.txt"]) == nil)
        _ = try await f.put("after", at: ["after.txt"], inline: true)
        #expect(try committed(index, "after.txt"))
    }

    @Test("a lost overwrite of a file the cache holds leaves the cache file with the bytes the index describes")
    func lostOverwriteKeepsTheFile() async throws {
        let (f, index) = try await fixture()
        defer { f.cleanUp() }
        let item = try await f.put("old bytes", at: ["kept.txt"], inline: true)
        let read = try await f.provider.contents(of: item, at: ["kept.txt"])
        withExtendedLifetime(read.lease) {}
        #expect(f.provider.cache.hasFile(for: item.id), "the read made the cache file")

        index.batch.withLockedValue { $0.failNextCommit = { throw InjectedFailure() } }
        await #expect(throws: InjectedFailure.self) { _ = try await f.put("lost bytes", at: ["kept.txt"], inline: true) }
        #expect(try String(contentsOfFile: f.provider.cache.path(for: item.id), encoding: .utf8) == "old bytes")
        let now = try #require(try await f.provider.item(at: ["kept.txt"]))
        #expect(now.size == Int64("old bytes".utf8.count))
        let again = try await f.provider.contents(of: now, at: ["kept.txt"])
        defer { withExtendedLifetime(again.lease) {} }
        #expect(try String(contentsOf: again.file, encoding: .utf8) == "old bytes")
    }

    @Test("a lock granted inside a batch holds off the next PUT while the batch is open, though a reader outside it found none, and is seen by all once committed")
    func lockInBatchOutlivesTheMemo() async throws {
        let (f, index) = try await fixture()
        defer { f.cleanUp() }
        #expect(try await !f.provider.hasLiveLocks())
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        index.batch.withLockedValue { batch in
            batch.beforeRoundCommits = {
                holding.signal()
                _ = release.wait(timeout: .now() + 10)
            }
        }
        let locking = Task {
            try await f.provider.createLockedEmptyFile(at: ["locked.txt"], conditions: .unconditional, depthInfinity: false, exclusive: true,
                                                       ownerXML: nil, principal: "admin", timeout: 600)
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                _ = holding.wait(timeout: .now() + 10)
                done.resume()
            }
        }
        let open = index.batchOpen.load(ordering: .acquiring)
        #expect(open, "the lock waits in the open batch")
        #expect(try await !f.provider.hasLiveLocks(), "not committed: a reader outside the batch sees no lock")
        // The next write-back PUT joins the batch: it sees the lock, and
        // without its token it is refused, whatever that reader found.
        await #expect(throws: ProviderError.self) { _ = try await f.put("not the lock holder's", at: ["locked.txt"], inline: true) }
        release.signal()
        let granted = try #require(try await locking.value)
        #expect(try await f.provider.hasLiveLocks(), "committed: the memo of none is gone")
        #expect(try await f.provider.lock(token: granted.lock.token) != nil)
    }
}
