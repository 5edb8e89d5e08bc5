import CLoaderTables

/// The dynamic loader's tables in davgate's own binary: its relocations,
/// symbols and their names, read at start and, with the binary bound at
/// start (`-z now`, as the package links it), seldom again: a lazily bound
/// build, a `dlsym` or a `dlopen` reads parts of them back, which costs a
/// page fault each and nothing else.
///
/// Why: the package's binary carries 155,000 relative relocations (3.6 MiB:
/// Swift's metadata is made of pointers, and gold cannot pack them as lld's
/// `-z pack-relative-relocs` would) and exports every Swift symbol (the
/// static stdlib's link arguments add `-export-dynamic`), whose table the
/// runtime's start scans whole (`dladdr`, to find its own path). Up to 6.8
/// MiB of them stayed resident for the life of the server, against issue
/// 14's 48 MiB bound; dropping them took the binary's resident pages at
/// start from 25.2 to 19.6 MiB. The page cache keeps them, and anything
/// that reads them later (a `dladdr` in a crash report) faults them back in.
public enum LoaderTables {
    /// Drops the tables' pages from the resident set; returns the bytes
    /// advised (their span, resident or not), 0 where they cannot be told
    /// apart from the rest (not ELF, text relocations, no /proc, not in one
    /// read-only segment).
    @discardableResult
    public static func release() -> Int {
        Int(davgate_release_loader_tables())
    }

    /// Drops the program's code from the resident set, once start-up is
    /// done; returns the bytes advised (0: none, see `codeSpan`). What
    /// serves requests faults its pages back in within the first ones;
    /// what only ran at start (the command line, the configuration, the
    /// certificates, the index's migrations, the first listing) stays out.
    ///
    /// Why: the hot code is laid out first (scripts/hot-code), but code run
    /// once is spread over the binary, and the kernel maps 64 KiB around
    /// each page touched. In 3,000 small PUTs after start 14.7 MiB of the
    /// binary's code stayed resident; released after start, 11.4.
    /// A debugger's breakpoints or uprobes set in the code before the
    /// release are private pages and go with it: attach after start.
    @discardableResult
    public static func releaseCode() -> Int {
        Int(davgate_release_code())
    }

    /// Where the program's code is mapped (length 0 when it cannot be told).
    public static var codeSpan: UnsafeRawBufferPointer {
        let code = davgate_find_code()
        return UnsafeRawBufferPointer(start: code.start, count: code.length)
    }

    /// Where the tables are mapped (length 0 when they cannot be told).
    public static var span: UnsafeRawBufferPointer {
        let tables = davgate_find_loader_tables()
        return UnsafeRawBufferPointer(start: tables.start, count: tables.length)
    }
}
