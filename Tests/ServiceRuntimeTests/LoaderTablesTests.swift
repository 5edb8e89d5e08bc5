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

    @Test("the test binary's relocations and symbol tables are found, paged out, and read again unchanged, by a symbol lookup too",
          .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/pagemap"), "no /proc here"))
    func releasesAndRefaults() throws {
        let span = LoaderTables.span
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        // A Swift test binary has thousands of symbols and relocations.
        #expect(span.count >= 16 * page, "span: \(span.count) bytes")
        #expect(Int(bitPattern: span.baseAddress) % page == 0 && span.count % page == 0)

        // Read them in, so there is something to give back.
        var sum: UInt8 = 0
        for offset in stride(from: 0, to: span.count, by: page) { sum &+= span[offset] }
        let before = try Self.residentPages(span)
        #expect(before == span.count / page, "resident before: \(before) of \(span.count / page) (sum \(sum))")

        #expect(LoaderTables.release() == span.count)
        // Other tests run meanwhile and may look a symbol up: nearly none back.
        let after = try Self.residentPages(span)
        #expect(after * 20 < span.count / page, "resident after: \(after) of \(span.count / page)")

        // The bytes are the file's, unchanged: read again, they sum the same.
        var again: UInt8 = 0
        for offset in stride(from: 0, to: span.count, by: page) { again &+= span[offset] }
        #expect(again == sum)
        // A symbol lookup searches the program's own hash table first.
        let program = try #require(dlopen(nil, RTLD_NOW))
        defer { dlclose(program) }
        #expect(dlsym(program, "malloc") != nil)
    }
}
