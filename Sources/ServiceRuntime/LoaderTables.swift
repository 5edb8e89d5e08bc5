import CLoaderTables

/// The dynamic loader's tables in davgate's own binary: its relocations,
/// symbols and their names, read at start and, with the binary bound at
/// start (`-z now`, as the package links it), not again.
///
/// Why: the package's binary carries 155,000 relative relocations (3.6 MiB:
/// Swift's metadata is made of pointers, and gold cannot pack them as lld's
/// `-z pack-relative-relocs` would) and exports every Swift symbol (the
/// static stdlib's link arguments add `-export-dynamic`), whose table the
/// runtime's start scans whole (`dladdr`, to find its own path). Those
/// 6.8 MiB stayed resident for the life of the server, a seventh of issue
/// 14's 48 MiB bound. Dropping the pages keeps them in the page cache, and
/// anything that reads them later (a `dladdr` in a crash report) faults
/// them back in.
public enum LoaderTables {
    /// Drops the tables' pages from the resident set; returns the bytes
    /// given back, 0 where they cannot be told apart from the code (not
    /// ELF, text relocations, no /proc).
    @discardableResult
    public static func release() -> Int {
        Int(davgate_release_loader_tables())
    }

    /// Where the tables are mapped (length 0 when they cannot be told).
    public static var span: UnsafeRawBufferPointer {
        let tables = davgate_loader_tables()
        return UnsafeRawBufferPointer(start: tables.start, count: tables.length)
    }
}
