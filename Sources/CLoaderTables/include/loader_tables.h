#ifndef DAVGATE_LOADER_TABLES_H
#define DAVGATE_LOADER_TABLES_H

#include <stddef.h>

/// Where the running program's dynamic loader tables are mapped: its
/// relocations, dynamic symbols and their names, hash and versions, the
/// pages wholly inside them. `length` is 0 when they cannot be told
/// (no /proc/self/exe or not the running program's file, not ELF, text
/// relocations, not inside one read-only segment).
struct davgate_loader_tables {
    void *start;
    size_t length;
};

struct davgate_loader_tables davgate_find_loader_tables(void);

/// Drops those pages from the process's resident set (MADV_DONTNEED on a
/// read-only file mapping: the page cache keeps them, a later reader, such
/// as dladdr, faults them back in). Returns the bytes advised (resident or
/// not), 0 if none.
size_t davgate_release_loader_tables(void);

/// The pages wholly inside the running program's executable segment (its
/// code, and what the linker put beside it: read-only data, unwind
/// tables); length 0 when there is none or it was written to (text
/// relocations).
struct davgate_loader_tables davgate_find_code(void);

/// Drops those pages from the process's resident set, as above: what runs
/// next faults its pages back in from the page cache. Returns the bytes
/// advised, 0 if none.
size_t davgate_release_code(void);

#endif
