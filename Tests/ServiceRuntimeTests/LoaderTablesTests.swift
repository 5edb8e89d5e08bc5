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

    @Test("the test binary's relocations and symbol tables are found, paged out, and read back unchanged, by a symbol lookup too",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/pagemap"), "no /proc here"))
    func releasesAndRefaults() throws {
        let span = LoaderTables.span
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        // A Swift test binary has thousands of symbols and relocations.
        try #require(span.count >= 16 * page, "span: \(span.count) bytes")
        #expect(Int(bitPattern: span.baseAddress) % page == 0 && span.count % page == 0)

        // Read in whole (so there is something to give back) and kept.
        let before = Array(span)
        let resident = try Self.residentPages(span)
        #expect(resident == span.count / page, "resident before: \(resident) of \(span.count / page)")

        #expect(LoaderTables.release() == span.count)
        // Tests running meanwhile bind functions lazily in this debug build,
        // and each lookup faults in up to 16 neighbouring pages: most of the
        // span stays out.
        let after = try Self.residentPages(span)
        #expect(after * 2 < resident, "resident after: \(after) of \(span.count / page)")

        // Read again, every byte is the file's as before.
        #expect(Array(span) == before)
        // A symbol lookup searches the program's own hash table first.
        let program = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(program) }
        #expect(dlsym(program, "malloc") != nil)
    }

    @Test("the test binary's code is found, paged out, and still runs and reads the same",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/pagemap"), "no /proc here"))
    func releasesCode() throws {
        let span = LoaderTables.codeSpan
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        try #require(span.count >= 64 * page, "code: \(span.count) bytes")
        // Read in whole (so there is something to give back), kept to
        // compare.
        let before = Array(span)
        let resident = try Self.residentPages(span)
        #expect(resident == span.count / page, "resident before: \(resident) of \(span.count / page)")

        // This test's own code is in the span: it goes on running after.
        #expect(LoaderTables.releaseCode() == span.count)
        let after = try Self.residentPages(span)
        // The code running meanwhile (this test, others beside it) faults
        // its pages back, 16 at a time: most of the span stays out.
        #expect(after * 2 < resident, "resident after: \(after) of \(span.count / page)")
        #expect(Array(span) == before)
    }
}
