#ifndef DAVGATE_PAGE_CACHE_STATE_H
#define DAVGATE_PAGE_CACHE_STATE_H

#include <stdint.h>

/// The number of the open file's pages in the page cache that are dirty
/// (written, not yet on the disk), from cachestat(2) (Linux 6.5); -1 with
/// errno set when the kernel has no cachestat or the call fails.
/// Tests read it to see that a file was fsynced: right after a write, its
/// pages stay dirty for the kernel's expiry (30 s by default) unless an
/// fsync wrote them.
int64_t davgate_dirty_pages(int fd);

/// 1 when `path` is on tmpfs (whose pages are never written back, so
/// never read as clean), 0 when not, -1 when statfs(2) fails.
int davgate_on_tmpfs(const char *path);

#endif
