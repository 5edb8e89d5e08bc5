import CSQLiteTuning
import Foundation
@testable import ProviderCore
import Testing

/// A statement inside a transaction keeps the pages it changed in a
/// statement journal, to undo that statement alone. SQLite moves it to a
/// temporary file in /var/tmp past 64 KiB by default: a cold listing of
/// 10,000 files then made 51,880 pwrite(2) calls on the system disk
/// (issue 14). davgate keeps them in memory (`PRAGMA temp_store`).
@Suite("Statement journals stay in memory")
struct StatementJournalTests {
    @Test("a listing of 10,000 new files, the same listing again and its sweep send no statement journal to a file")
    func listingOfTenThousand() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let index = opened.index
        let entries = (0..<10_000).map {
            UpstreamEntry(name: "file \($0).bin", isFolder: false, size: Int64($0), modified: Date(), version: "v\($0)")
        }
        let before = davgate_sqlite_statement_journal_files()
        _ = try await index.applyListingPage(folder: opened.root.id, domain: "d", entries: entries, pass: 1, namespace: nil)
        _ = try await index.finishListing(folder: opened.root.id, pass: 1, version: nil, namespace: nil)
        _ = try await index.applyListingPage(folder: opened.root.id, domain: "d", entries: Array(entries.dropLast(100)), pass: 2,
                                             namespace: nil)
        #expect(try await index.finishListing(folder: opened.root.id, pass: 2, version: nil, namespace: nil).count == 100)
        #expect(davgate_sqlite_statement_journal_files() == before)
        #expect(try await index.children(of: opened.root.id, after: nil, limit: 20_000).count == 9_900)
    }
}
