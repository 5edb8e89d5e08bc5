import Foundation
import GRDB
import NIOConcurrencyHelpers
import Synchronization
@testable import ProviderCore
import Testing

/// Write-back commits that queue for one fsync share one transaction
/// (`SQLiteIndex+batch`): nothing is acknowledged before it is committed
/// and synced, the commits that join it read one another's rows, everyone
/// else reads only what is committed, and a failed commit fails every
/// write in it.
@Suite("write-back commits sharing a transaction", .disabled(if: TestIndex.usesPostgres, "a shared index refuses write-back"))
struct CommitBatchTests {
    func sqlite(_ f: Fixture) throws -> SQLiteIndex {
        try #require(f.provider.index as? SQLiteIndex)
    }

    /// Whether a read-only connection, which sees only what is committed,
    /// finds `name` at the domain's root.
    func committed(_ index: SQLiteIndex, _ name: String) throws -> Bool {
        try index.lookups.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM item WHERE name = ? AND parent_id IS NOT NULL)", arguments: [name]) ?? false
        }
    }

    @Test("concurrent PUTs share transactions, and each is committed before its answer")
    func sharedAndCommittedBeforeTheAnswer() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let index = try sqlite(f)
        _ = try await f.provider.root()
        let before = index.batchCounts
        let count = 48
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
        #expect(after.committed - before.committed < count, "some batch held more than one PUT")
        let open = index.batchOpen.load(ordering: .acquiring)
        #expect(!open, "nothing left uncommitted")
        #expect(try await f.provider.index.journal(domain: "files").count == count)
    }

    @Test("PUTs of one new name at once: each sees the one before it in the open batch, so one item results and none fails")
    func sameNewNameAtOnce() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let index = try sqlite(f)
        _ = try await f.provider.root()
        let before = index.batchCounts
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<24 {
                group.addTask { try await f.provider.write(try f.request("writer \(n)", at: ["same.txt"], inline: true)).created }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(created == 1, "one PUT created the item, the others replaced it")
        #expect(index.batchCounts.committed - before.committed < 24, "the PUTs shared batches")
        let root = try await f.provider.root()
        let members = try await f.provider.index.children(of: root.id, after: nil, limit: 100)
        #expect(members.map(\.name) == ["same.txt"])
    }

    @Test("a change that does not join the batch (MKCOL) reads it committed: racing PUTs of the same names, each name is one file or one folder, and every refusal is the provider's")
    func othersReadTheBatchCommitted() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        _ = try await f.provider.root()
        let unexpected = NIOLockedValueBox<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<40 {
                let name = "n\(n)"
                group.addTask {
                    do { _ = try await f.put("file \(n)", at: [name], inline: true) } catch let error as ProviderError {
                        _ = error
                    } catch {
                        unexpected.withLockedValue { $0.append("PUT \(name): \(error)") }
                    }
                }
                group.addTask {
                    do { _ = try await f.provider.makeFolder(at: [name]) } catch let error as ProviderError {
                        _ = error
                    } catch {
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

    @Test("a batch whose commit fails fails every PUT in it: nothing is acknowledged, no row stays, and the next PUTs commit")
    func failedCommitFailsEveryWrite() async throws {
        let f = try await Fixture(writeMode: .back, uploads: UploadPolicy(quietDelay: 3600))
        defer { f.cleanUp() }
        let index = try sqlite(f)
        _ = try await f.provider.root()
        struct InjectedFailure: Error {}
        index.batch.withLockedValue { $0.failNextCommit = { throw InjectedFailure() } }
        let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            for n in 0..<16 {
                group.addTask {
                    let name = "lost\(n).txt"
                    do {
                        _ = try await f.put("lost \(n)", at: [name], inline: true)
                        return (name, true)
                    } catch is InjectedFailure {
                        return (name, false)
                    }
                }
            }
            return try await group.reduce(into: [(String, Bool)]()) { $0.append($1) }
        }
        let failed = outcomes.filter { !$0.1 }.map(\.0)
        #expect(!failed.isEmpty, "the first batch failed")
        for (name, acknowledged) in outcomes {
            #expect(try committed(index, name) == acknowledged, "\(name): acknowledged \(acknowledged)")
        }
        let journal = try await f.provider.index.journal(domain: "files")
        #expect(journal.count == outcomes.count - failed.count, "no journal row of a failed write")
        _ = try await f.put("after", at: ["after.txt"], inline: true)
        #expect(try committed(index, "after.txt"))
        #expect(try await f.provider.item(at: [failed[0]]) == nil)
    }
}
