import Foundation
import ServiceRuntime
import Testing

/// The loader's tables leave the resident set, and come back for whoever
/// reads them.
@Suite struct LoaderTablesTests {
    /// Pages of `span` mapped into this process now, from /proc/self/pagemap
    /// (bit 63: present; readable without privileges).
    static func residentPages(_ span: UnsafeRawBufferPointer) throws -> Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = Int(bitPattern: span.baseAddress) / page, count = span.count / page
        let map = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/pagemap"))
        defer { try? map.close() }
        try map.seek(toOffset: UInt64(first * 8))
        let entries = try #require(try map.read(upToCount: count * 8))
        return stride(from: 0, to: entries.count, by: 8).count { offset in
            entries[entries.startIndex + offset + 7] & 0x80 != 0
        }
    }

    /// Reads `span` in whole (so there is something to give back), has
    /// `release` give it back, and checks that most of it left the
    /// resident set and that it reads the same bytes again. Tests running
    /// meanwhile fault pages back (a lazily bound function in this debug
    /// build, the code they run), up to 16 neighbours each: most stay out.
    static func pagesOutAndBack(_ span: UnsafeRawBufferPointer, _ release: () -> Int) throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        #expect(Int(bitPattern: span.baseAddress) % page == 0 && span.count % page == 0)
        let before = Array(span)
        let resident = try residentPages(span)
        #expect(resident == span.count / page, "resident before: \(resident) of \(span.count / page)")
        #expect(release() == span.count)
        let after = try residentPages(span)
        #expect(after * 2 < resident, "resident after: \(after) of \(span.count / page)")
        #expect(Array(span) == before)
    }

    @Test("the test binary's relocations and symbol tables are found, paged out, and read back unchanged, by a symbol lookup too",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/pagemap"), "no /proc here"))
    func releasesAndRefaults() throws {
        let span = LoaderTables.span
        // A Swift test binary has thousands of symbols and relocations.
        try #require(span.count >= 16 * Int(sysconf(Int32(_SC_PAGESIZE))), "span: \(span.count) bytes")
        try Self.pagesOutAndBack(span) { LoaderTables.release() }
        // A symbol lookup searches the program's own hash table first.
        let program = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(program) }
        #expect(dlsym(program, "malloc") != nil)
    }

    @Test("the test binary's code is found, paged out, and still runs and reads the same",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/pagemap"), "no /proc here"))
    func releasesCode() throws {
        let span = LoaderTables.codeSpan
        try #require(span.count >= 64 * Int(sysconf(Int32(_SC_PAGESIZE))), "code: \(span.count) bytes")
        // This test's own code is in the span: it goes on running after.
        try Self.pagesOutAndBack(span) { LoaderTables.releaseCode() }
    }
}
