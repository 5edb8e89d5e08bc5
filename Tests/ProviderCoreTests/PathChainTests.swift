import Foundation
@testable import ProviderCore
import Testing

/// A path's chain is read in one statement, its names handed to SQLite as a
/// JSON array (`SQLiteIndex.chainQuery`): names that mean something in JSON
/// or in a JSON path must come back as they were written.
@Suite("A path's chain, in one read")
struct PathChainTests {
    static let awkward = [#"say "hi""#, #"back\slash"#, "$[0]", #"["x"]"#, "caf\u{E9} \u{1F600}", "a,b", "'single'"]

    @Test("every folder and the file on a path of awkward names, root first, in both write modes", arguments: WriteMode.allCases)
    func awkwardNames(writeMode: WriteMode) async throws {
        let f = try await Fixture(ttl: 60, writeMode: writeMode)
        defer { f.cleanUp() }
        var folder: ItemPath = []
        for name in Self.awkward.dropLast() {
            folder.append(name)
            _ = try await f.provider.makeFolder(at: folder)
        }
        let file = folder + [Self.awkward.last!]
        _ = try await f.put("deep", at: file)
        let chain = try await f.provider.index.chain(domain: "files", path: file)
        #expect(chain.map(\.name) == [""] + file)
        #expect(chain.dropLast().allSatisfy(\.isFolder) && chain.last?.isFolder == false)
        #expect(try await f.provider.item(at: file)?.name == Self.awkward.last)
    }

    @Test("the chain stops at the first missing name, and at a file")
    func stops() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        _ = try await f.provider.makeFolder(at: ["a"])
        _ = try await f.put("x", at: ["a", "f.txt"])
        #expect(try await f.provider.index.chain(domain: "files", path: ["a", "missing", "f.txt"]).map(\.name) == ["", "a"])
        #expect(try await f.provider.index.chain(domain: "files", path: ["a", "f.txt", "below"]).map(\.name) == ["", "a", "f.txt"])
        #expect(try await f.provider.index.chain(domain: "files", path: []).map(\.name) == [""])
        #expect(try await f.provider.index.chain(domain: "other", path: ["a"]).isEmpty, "a domain without a root has no chain")
    }

    @Test("the JSON array of names SQLite reads decodes to the same names, control characters too (an upstream may list them)")
    func jsonArray() throws {
        let names = Self.awkward + ["tab\there", "bell\u{7}", "new\nline", ""]
        let decoded = try JSONSerialization.jsonObject(with: Data(SQLiteIndex.jsonArray(names).utf8)) as? [String]
        #expect(decoded == names)
    }

    @Test("hex digits of a digest, as the checksums store them")
    func hex() {
        #expect([0xa9, 0x99, 0x3e, 0x36, 0x47, 0x06, 0x81, 0x6a].hexEncoded() == "a9993e364706816a")
        #expect([0x00, 0x0f, 0xf0, 0xff].hexEncoded(uppercase: true) == "000FF0FF")
        #expect([UInt8]().hexEncoded() == "")
    }
}
