import Foundation
import GRDB
@testable import ProviderCore
import Testing

/// Folders' tree versions, raised once per commit (`SQLiteIndex+treeVersions`):
/// after every kind of change each folder's version is the newest change at
/// or below it, as the per-change trigger it replaced made it.
@Suite("folder tree versions raised at commit", .disabled(if: TestIndex.usesPostgres, "a shared index raises them by a trigger"))
struct TreeVersionTests {
    /// The folders whose tree version is not the sequence number of the
    /// newest change in them or in a folder below them now, each as its name,
    /// its version and that number; and how many folders have one at all.
    static func disagreements(_ index: SQLiteIndex) throws -> (wrong: [String], raised: Int) {
        try index.lookups.read { db in
            let rows = try Row.fetchAll(db, sql: """
                WITH RECURSIVE below(folder, id) AS (
                    SELECT id, id FROM item WHERE is_folder = 1
                    UNION ALL
                    SELECT below.folder, item.id FROM item JOIN below ON item.parent_id = below.id WHERE item.is_folder = 1)
                SELECT item.name, item.tree_version,
                       COALESCE((SELECT MAX(seq) FROM change WHERE parent_id IN (SELECT id FROM below WHERE folder = item.id)), 0)
                FROM item WHERE item.is_folder = 1
                """)
            let wrong = rows.compactMap { row -> String? in
                let (name, version, newest): (String, Int64, Int64) = (row[0], row[1], row[2])
                return version == newest ? nil : "'\(name)': \(version), newest change below \(newest)"
            }
            return (wrong, rows.count(where: { ($0[1] as Int64) > 0 }))
        }
    }

    @Test("every kind of change, one transaction each, leaves each folder at the newest change below it")
    func eachChange() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let index = try #require(f.provider.index as? SQLiteIndex)
        let steps: [(String, () async throws -> Void)] = [
            ("folders", { for folder in [["a"], ["a", "b"], ["a", "b", "c"], ["d"]] { _ = try await f.provider.makeFolder(at: folder) } }),
            ("files at every depth", {
                for path in [["top.txt"], ["a", "x.txt"], ["a", "b", "c", "y.txt"], ["a", "b", "c", "z.txt"], ["d", "w.txt"]] {
                    _ = try await f.put("body", at: path)
                }
            }),
            ("an edit deep down", { _ = try await f.put("edited", at: ["a", "b", "c", "y.txt"]) }),
            ("a dead property", {
                let x = try #require(try await f.provider.item(at: ["a", "x.txt"]))
                try await f.provider.changeProperties(of: x, [.set(DeadProperty(namespace: "urn:x", name: "p", xml: "<x0:p xmlns:x0=\"urn:x\">v</x0:p>"))])
            }),
            ("a folder moved to another branch", { _ = try await f.provider.move(from: ["a", "b", "c"], to: ["d", "c"], overwrite: false) }),
            ("a file removed", { try await f.provider.delete(at: ["d", "c", "z.txt"]) }),
            ("a folder with files removed", { try await f.provider.delete(at: ["d", "c"]) }),
        ]
        for (what, step) in steps {
            try await step()
            let wrong = try Self.disagreements(index).wrong
            #expect(wrong.isEmpty, "\(what): \(wrong)")
        }
        let raised = try Self.disagreements(index).raised
        #expect(raised == 4, "the root, a, a/b and d have versions")
    }

    @Test("an index a newer davgate brought up to date is refused: this one would leave what the newer one relies on undone")
    func newerIndexRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tv-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("index.sqlite")
        _ = try SQLiteIndex(file: file)
        _ = try SQLiteIndex(file: file)   // reopened by the same version: fine
        let newer = try DatabaseQueue(path: file.path)
        try newer.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: a newer davgate')") }
        try newer.close()
        #expect(throws: MetadataIndex.IndexTooNewError.self) { _ = try SQLiteIndex(file: file) }
    }
}
