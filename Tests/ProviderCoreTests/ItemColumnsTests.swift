import Foundation
import GRDB
@testable import ProviderCore
import Testing

/// `ItemColumns`: items read straight from a statement's columns, stepping
/// it with SQLite's own calls, must read every column as written, end the
/// read when they stop early, and report a failing step.
@Suite("items read from a statement's columns")
struct ItemColumnsTests {
    private func entry(_ name: String, folder: Bool = false, size: Int64 = 0, version: String = "v") -> UpstreamEntry {
        UpstreamEntry(name: name, isFolder: folder, size: size, modified: Date(timeIntervalSince1970: 1_700_000_123.25),
                      version: version, executable: !folder)
    }

    @Test("every column reads as written: NULLs, non-ASCII names, a checksum only for its own content version")
    func columnsReadAsWritten() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        #expect(root.parentID == nil)
        #expect(root.isFolder)
        #expect(root.name.isEmpty)
        #expect(root.domain == "d")
        #expect(root.listedAt == nil)
        #expect(root.state == .folder)

        let name = "Grüße 📁 \"quoted\""
        let folder = try await index.insertItem(entry(name, folder: true), parent: root.id, domain: "d", cachedVersion: nil,
                                                listed: true, checksum: nil, conflictCopy: false)
        let file = try await index.insertItem(entry("ü.txt", size: 1234, version: "v1"), parent: folder.id, domain: "d",
                                              cachedVersion: "v1", listed: false, checksum: "sha1:abc", conflictCopy: false)
        let read = try #require(try await index.child(of: folder.id, named: "ü.txt"))
        #expect(read.id == file.id)
        #expect(read.domain == "d")
        #expect(read.parentID == folder.id)
        #expect(read.name == "ü.txt")
        #expect(!read.isFolder)
        #expect(read.size == 1234)
        #expect(read.modified == Date(timeIntervalSince1970: 1_700_000_123.25))
        #expect(read.contentVersion == 1)
        #expect(read.upstreamVersion == "v1")
        #expect(read.cachedVersion == "v1")
        #expect(read.executable)
        #expect(read.listedAt == nil)
        #expect(read.checksum == "sha1:abc")
        #expect(read.state == .materialized)

        let readFolder = try #require(try await index.item(id: folder.id))
        #expect(readFolder.name == name)
        #expect(readFolder.isFolder)
        #expect(readFolder.listedAt != nil)
        #expect(readFolder.upstreamVersion == "v")
        #expect(readFolder.treeVersion > 0, "the file's arrival raised its folder's version")

        // New content without a checksum: the old one is not this version's.
        let changed = try await index.updateContent(id: file.id, entry: entry("ü.txt", size: 99, version: "v2"),
                                                    event: .upstreamChanged, checksum: nil)
        #expect(changed.contentVersion == 2)
        #expect(changed.checksum == nil)
        #expect(changed.cachedVersion == nil)

        // The chain reads the same items, root first.
        let chain = try await index.chain(domain: "d", path: [name, "ü.txt"])
        #expect(chain.map(\.id) == [root.id, folder.id, file.id])
        #expect(chain.last?.size == 99)
    }

    @Test("a read stopped at its first row ends its snapshot: the connection sees the next commit")
    func earlyStopEndsTheRead() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        for i in 0..<5 {
            try await index.insertItem(entry("f\(i)"), parent: root.id, domain: "d", cachedVersion: nil, listed: true,
                                       checksum: nil, conflictCopy: false)
        }
        var configuration = Configuration()
        configuration.readonly = true
        let reader = try DatabaseQueue(path: opened.file.path, configuration: configuration)
        let pool = index.pool
        let (first, again) = try await reader.unsafeRead { db in
            let first = try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? ORDER BY name").item([root.id])
            try pool.write { db in
                try db.execute(sql: "UPDATE item SET name = 'a-new' WHERE parent_id = ? AND name = 'f4'", arguments: [root.id])
            }
            // Another statement on the same connection, in the same access:
            // it would read in the first one's snapshot had that one not
            // been reset.
            let again = try db.cachedStatement(sql: "SELECT \(Item.columns) FROM item WHERE parent_id = ? AND name = ?").item([root.id, "a-new"])
            return (first, again)
        }
        #expect(first?.name == "f0")
        #expect(again != nil, "the first read's snapshot was still held")
    }

    @Test("a step that fails throws the database's error, and the statement serves the next read")
    func failingStepThrows() async throws {
        let opened = try await TemporarySQLiteIndex.open()
        defer { opened.cleanUp() }
        let (index, root) = (opened.index, opened.root)
        let file = try await index.insertItem(entry("f"), parent: root.id, domain: "d", cachedVersion: nil, listed: true,
                                              checksum: nil, conflictCopy: false)
        // The second row overflows an integer while it is stepped to.
        let sql = "SELECT \(Item.columns), CASE WHEN id = ? THEN abs(-9223372036854775807 - 1) ELSE 0 END FROM item ORDER BY id"
        try await index.pool.read { db in
            var seen: [Int64] = []
            #expect(throws: DatabaseError.self) {
                try db.cachedStatement(sql: sql).forEachItem([file.id]) { item, _ in
                    seen.append(item.id)
                    return true
                }
            }
            #expect(seen == [root.id])
            // Arguments that do not fit the statement are refused, not bound as NULL.
            #expect(throws: DatabaseError.self) { try db.cachedStatement(sql: sql).items([]) }
            let after = try db.cachedStatement(sql: sql).items([-1])
            #expect(after.map(\.id) == [root.id, file.id])
        }
    }
}
