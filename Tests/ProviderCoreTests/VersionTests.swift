import Foundation
import Logging
@testable import ProviderCore
import Testing

/// An overwrite keeps what the upstream held as a version, through either
/// write mode and through a MOVE or COPY onto the file; versions follow a
/// MOVE, are pruned past `versions_keep`, and a restore writes one back
/// while the content it replaces becomes a version in turn (issue 17).
@Suite("File versions")
struct VersionTests {
    private func fixture(_ writeMode: WriteMode = .through, keep: Int = 10) async throws -> Fixture {
        try await Fixture(writeMode: writeMode, uploads: UploadPolicy(quietDelay: 3600), versions: VersionPolicy(keep: keep))
    }

    private func contents(_ f: Fixture, _ path: ItemPath) async throws -> [String] {
        var result: [String] = []
        for version in try await f.provider.versions(of: path) {
            let file = try await f.provider.versionContents(of: path, id: version.id)
            result.append(try String(contentsOf: file, encoding: .utf8))
            f.provider.discardWrite(file)
        }
        return result
    }

    @Test("an overwrite keeps the upstream's previous content, in both write modes", arguments: WriteMode.allCases)
    func overwriteKeepsPrevious(writeMode: WriteMode) async throws {
        let f = try await fixture(writeMode)
        defer { f.cleanUp() }
        try f.write("first", "a.txt")
        _ = try await f.provider.item(at: ["a.txt"])
        _ = try await f.put("second", at: ["a.txt"])
        _ = try await f.put("third", at: ["a.txt"])
        try await f.provider.flushAllUploads()
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "third")
        // Write-back uploads only the newest edit: what the upstream held
        // before it is the one version.
        #expect(try await contents(f, ["a.txt"]) == (writeMode == .through ? ["second", "first"] : ["first"]))
        let root = try await f.provider.root()
        try await f.provider.refreshIfStale(root)
        #expect(try await f.provider.children(of: root).map(\.name) == ["a.txt"], "the versions folder shows")
        _ = try await f.put("new", at: ["new.txt"])
        try await f.provider.flushAllUploads()
        #expect(try await f.provider.versions(of: ["new.txt"]).isEmpty, "a new file has no earlier content")
    }

    @Test("versions past versions_keep are removed, oldest first")
    func pruned() async throws {
        let f = try await fixture(keep: 2)
        defer { f.cleanUp() }
        try f.write("v1", "a.txt")
        _ = try await f.provider.item(at: ["a.txt"])
        for n in 2...5 { _ = try await f.put("v\(n)", at: ["a.txt"]) }
        #expect(try await contents(f, ["a.txt"]) == ["v4", "v3"])
    }

    @Test("a restore writes a version back, and what it replaced becomes a version")
    func restore() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        try f.write("good", "report.txt")
        _ = try await f.provider.item(at: ["report.txt"])
        _ = try await f.put("", at: ["report.txt"])
        let good = try #require(try await f.provider.versions(of: ["report.txt"]).first)
        let outcome = try await f.provider.restoreVersion(of: ["report.txt"], id: good.id)
        #expect(!outcome.created && outcome.item.size == 4)
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("report.txt"), encoding: .utf8) == "good")
        #expect(try await contents(f, ["report.txt"]) == ["", "good"])
        _ = try await f.provider.restoreVersion(of: ["report.txt"], id: good.id, to: ["copy of report.txt"])
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("copy of report.txt"), encoding: .utf8) == "good")
    }

    @Test("a MOVE or COPY onto a file keeps it as a version; versions stay with the path when the file moves away (Word's save)")
    func moves() async throws {
        let f = try await fixture()
        defer { f.cleanUp() }
        try f.write("saved before", "doc.txt")
        try f.write("the new save", ".doc.txt.tmp")
        _ = try await f.provider.item(at: ["doc.txt"])
        // An editor's save: a temporary file renamed over the original.
        _ = try await f.provider.move(from: [".doc.txt.tmp"], to: ["doc.txt"], overwrite: true)
        #expect(try await contents(f, ["doc.txt"]) == ["saved before"])
        // Word's save: the document renamed away, the new one written in its place.
        _ = try await f.provider.move(from: ["doc.txt"], to: ["~WRL0001.tmp"], overwrite: false)
        _ = try await f.put("Word's new save", at: ["doc.txt"])
        try await f.provider.delete(at: ["~WRL0001.tmp"])
        #expect(try await contents(f, ["doc.txt"]) == ["saved before"], "the document's history stays with its name")
        #expect(try await f.provider.versions(of: ["~WRL0001.tmp"]).isEmpty)
        try f.write("copied over", "source.txt")
        _ = try await f.provider.copy(from: ["source.txt"], to: ["doc.txt"], recursive: false, overwrite: true)
        #expect(try await contents(f, ["doc.txt"]) == ["Word's new save", "saved before"])
    }

    @Test("an upload retried after a lost answer, or based on a stale version, keeps no version of the wrong content")
    func retriesAndStaleBasis() async throws {
        let f = try await fixture(.back)
        defer { f.cleanUp() }
        try f.write("upstream v1", "a.txt")
        let listed = try #require(try await f.provider.item(at: ["a.txt"]))
        let basis = try #require(listed.upstreamVersion)
        try await f.provider.keepVersion(of: ["a.txt"], basis: basis)
        try await f.provider.keepVersion(of: ["a.txt"], basis: basis)
        #expect(try await contents(f, ["a.txt"]) == ["upstream v1"], "kept once however often its upload is tried")
        try await Task.sleep(for: .milliseconds(20))
        try f.write("changed upstream by someone else", "a.txt")
        try await f.provider.keepVersion(of: ["a.txt"], basis: "not what the upstream holds")
        #expect(try await contents(f, ["a.txt"]) == ["upstream v1"], "a stale basis conflicts and replaces nothing: no version")
    }

    @Test("with versions off nothing is kept and nothing is made upstream")
    func off() async throws {
        let f = try await Fixture()
        defer { f.cleanUp() }
        try f.write("first", "a.txt")
        _ = try await f.provider.item(at: ["a.txt"])
        _ = try await f.put("second", at: ["a.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.upstream.path) == ["a.txt"])
        #expect(try await f.provider.versions(of: ["a.txt"]).isEmpty)
    }

    @Test("a conflict copy is listed among the file's versions: read, restored over the file, deleted like a file")
    func conflictCopyIsAVersion() async throws {
        let f = try await fixture(.back)
        defer { f.cleanUp() }
        try f.write("base", "a.txt")
        _ = try await f.provider.item(at: ["a.txt"])
        // Our edit is journaled; the upstream moves on before it is
        // uploaded, so the upload keeps it beside theirs.
        _ = try await f.put("ours", at: ["a.txt"])
        try f.write("theirs, longer", "a.txt")
        try await f.provider.flushAllUploads()
        let names = try FileManager.default.contentsOfDirectory(atPath: f.upstream.path)
        let copy = try #require(names.first { $0.hasPrefix("a (conflicted copy ") }, "\(names)")
        // A file merely named like a conflict copy of it is not one.
        try f.write("lookalike", "a (conflicted copy 2020-01-01 000000).txt")
        let listed = try await f.provider.versions(of: ["a.txt"])
        #expect(listed.map(\.id) == [copy] && listed.first?.isConflictCopy == true && listed.first?.size == 4, "\(listed)")
        let read = try await f.provider.versionContents(of: ["a.txt"], id: copy)
        #expect(try String(contentsOf: read, encoding: .utf8) == "ours")
        f.provider.discardWrite(read)
        _ = try await f.provider.restoreVersion(of: ["a.txt"], id: copy)
        try await f.provider.flushAllUploads()
        #expect(try String(contentsOf: f.upstream.appendingPathComponent("a.txt"), encoding: .utf8) == "ours")
        #expect(try await contents(f, ["a.txt"]).contains("theirs, longer"), "what the restore replaced is a version")
        try await f.provider.deleteVersion(of: ["a.txt"], id: copy)
        #expect(!FileManager.default.fileExists(atPath: f.upstream.appendingPathComponent(copy).path))
        #expect(try await f.provider.versions(of: ["a.txt"]).allSatisfy { !$0.isConflictCopy })
    }

    @Test("versions_budget purges the domain's oldest versions first and keeps each file's newest")
    func budget() async throws {
        let f = try await Fixture(writeMode: .through, uploads: UploadPolicy(quietDelay: 3600), versions: VersionPolicy(keep: 10, budget: 36))
        defer { f.cleanUp() }
        // c's one version is the domain's oldest, and the newest of c.
        try f.write("c-0000000", "c.txt")
        _ = try await f.provider.item(at: ["c.txt"])
        _ = try await f.put("c-9999999", at: ["c.txt"])
        try await Task.sleep(for: .milliseconds(5))
        try f.write("a-0000000", "a.txt")
        try f.write("b-0000000", "b.txt")
        _ = try await f.provider.item(at: ["a.txt"])
        // Versions of 9 bytes each, oldest first: a-0000000, b-0000000,
        // a-1111111, b-2222222, a-3333333.
        for (n, name) in ["a", "b", "a", "b", "a"].enumerated() {
            _ = try await f.put("\(name)-\(String(repeating: String(n + 1), count: 7))", at: ["\(name).txt"])
            try await Task.sleep(for: .milliseconds(5))
        }
        // The writes queued expiry passes of their own; this one finds the domain within its budget.
        try await Task.sleep(for: .milliseconds(300))
        _ = try await f.provider.expireVersions()
        // 54 bytes over a budget of 36: a-0000000 and b-0000000 go; c's only
        // version stays, and the pass stops once within the budget.
        let a = try await contents(f, ["a.txt"]), b = try await contents(f, ["b.txt"]), c = try await contents(f, ["c.txt"])
        #expect(a == ["a-3333333", "a-1111111"] && b == ["b-2222222"] && c == ["c-0000000"], "\(a) \(b) \(c)")
    }
}
