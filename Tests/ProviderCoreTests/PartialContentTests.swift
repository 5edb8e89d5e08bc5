import Foundation
import NIOConcurrencyHelpers
import ProviderCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Partial content fetching: a range read of a placeholder fetches that
/// range only, and a whole read afterwards only the gaps.
@Suite("Provider: partial content of placeholders")
struct PartialContentTests {
    /// Reads `range` of what `content` serves, as the GET handler would.
    func read(_ content: Provider.Content, _ range: ClosedRange<Int64>) async throws -> String {
        guard case .download(let download) = content else {
            Issue.record("a placeholder is served through a download")
            return ""
        }
        _ = try await download.bytes(beyond: range.upperBound)
        let fd = try download.openForReading()
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: range.count)
        let n = pread(fd, &buffer, buffer.count, off_t(range.lowerBound))
        return String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self)
    }

    /// 100 letters upstream as doc.txt, listed: a placeholder.
    func alphabetPlaceholder(in f: Fixture) async throws -> (text: String, item: Item) {
        let text = String((0..<100).map { Character(UnicodeScalar(UInt8(65 + $0 % 26))) })
        try f.write(text, "doc.txt")
        return (text, try #require(try await f.provider.item(at: ["doc.txt"])))
    }

    @Test("a range fetches only itself, is served again from the cache, and a whole read fetches only the gaps")
    func rangeThenWhole() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let (text, item) = try await alphabetPlaceholder(in: f)

        let part = try await f.provider.openContents(of: item, at: ["doc.txt"], range: 10...19)
        #expect(try await read(part, 10...19) == String(Array(text)[10...19]))
        let again = try await f.provider.openContents(of: item, at: ["doc.txt"], range: 12...15)
        #expect(try await read(again, 12...15) == String(Array(text)[12...15]))
        #expect(f.store.fetchedRanges.withLockedValue { $0 } == [10...19], "the second range came from the sparse file")

        let (fetched, file, _) = try await f.provider.contents(of: item, at: ["doc.txt"])
        #expect(try String(contentsOf: file, encoding: .utf8) == text)
        #expect(fetched.isMaterialized)
        #expect(f.store.fetchedRanges.withLockedValue { $0 } == [10...19, 0...9, 20...99], "only the gaps")
    }

    @Test("a range whose end was fetched before is served whole once its start is in")
    func rangeEndingInFetchedBytes() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        let (text, item) = try await alphabetPlaceholder(in: f)
        let first = try await f.provider.openContents(of: item, at: ["doc.txt"], range: 10...19)
        #expect(try await read(first, 10...19) == String(Array(text)[10...19]))

        // 5...9 is fetched; 10...15 is in the file already. A GET's body asks
        // the download for every byte of its range, and must get them all.
        guard case .download(let download) = try await f.provider.openContents(of: item, at: ["doc.txt"], range: 5...15) else {
            Issue.record("a placeholder is served through a download")
            return
        }
        #expect(try await download.bytes(upTo: 16) >= 16, "the download ended at the fetched gap, before the range's end")
        #expect(try await read(.download(download), 5...15) == String(Array(text)[5...15]))
        #expect(f.store.fetchedRanges.withLockedValue { $0 } == [10...19, 5...9])
    }

    @Test("a range of a file changed since its listing is refused, and the index learns the new version")
    func changedUpstream() async throws {
        let f = try await Fixture(ttl: 60)
        defer { f.cleanUp() }
        try f.write("version one, listed", "doc.txt")
        let listed = try #require(try await f.provider.item(at: ["doc.txt"]))
        try f.write("version two, longer than the first", "doc.txt")

        guard case .download(let download) = try await f.provider.openContents(of: listed, at: ["doc.txt"], range: 0...3) else {
            Issue.record("a placeholder is served through a download")
            return
        }
        await #expect(throws: ProviderError.self) { _ = try await download.head() }
        _ = try? await download.result()
        let learned = try #require(try await f.provider.item(at: ["doc.txt"]))
        #expect(learned.size == 34)
        #expect(learned.etag != listed.etag)
        let retried = try await f.provider.openContents(of: learned, at: ["doc.txt"], range: 0...6)
        #expect(try await read(retried, 0...6) == "version")
    }
}
