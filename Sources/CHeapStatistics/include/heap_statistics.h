#ifndef DAVGATE_HEAP_STATISTICS_H
#define DAVGATE_HEAP_STATISTICS_H

#include <stddef.h>

/// The bytes the process's allocations hold now: glibc's `mallinfo2`,
/// in use in its arenas plus its mmapped blocks. 0 where there is no
/// mallinfo2 (not glibc).
size_t davgate_heap_in_use(void);

/// The process's resident anonymous memory (heap, stacks, anonymous maps)
/// in bytes, from /proc/self/statm (resident minus file-backed pages);
/// 0 when it cannot be read.
size_t davgate_resident_anonymous(void);

#endif
