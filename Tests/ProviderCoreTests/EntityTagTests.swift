import Foundation
import Testing

@testable import ProviderCore

/// An item's ETag is what clients keep between sessions: the byte-written
/// form must spell exactly what `String(_:radix:)` did before it.
@Suite struct EntityTagTests {
    private func item(id: Int64, version: Int64, tree: Int64, folder: Bool) -> Item {
        Item(id: id, domain: "d", parentID: 1, name: "n", kind: folder ? .folder : .file, size: 0, modified: Date(), created: Date(),
             contentVersion: version, upstreamVersion: nil, cachedVersion: nil, executable: false, listedAt: nil, treeVersion: tree)
    }

    private func expected(id: Int64, version: Int64, tree: Int64, folder: Bool) -> String {
        let hex = { (v: Int64) in String(v, radix: 16) }
        return folder ? "\"\(hex(id))-\(hex(version))-\(hex(tree))\"" : "\"\(hex(id))-\(hex(version))\""
    }

    @Test(arguments: [Int64(0), 1, 9, 10, 15, 16, 255, 0x1234_5678, 0x0fff_ffff_ffff_ffff, .max, -1, -16, .min])
    func spellsEveryValueAsRadix16(value: Int64) {
        for folder in [false, true] {
            let a = item(id: value, version: 7, tree: value, folder: folder)
            #expect(a.etag == expected(id: value, version: 7, tree: value, folder: folder))
            let b = item(id: 42, version: value, tree: 3, folder: folder)
            #expect(b.etag == expected(id: 42, version: value, tree: 3, folder: folder))
        }
    }
}
