#include "page_cache_state.h"

#include <errno.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

/// cachestat(2)'s structures (linux/mman.h), which Debian 12's headers
/// predate.
struct davgate_cachestat_range {
    uint64_t off;
    uint64_t len;
};

struct davgate_cachestat {
    uint64_t nr_cache;
    uint64_t nr_dirty;
    uint64_t nr_writeback;
    uint64_t nr_evicted;
    uint64_t nr_recently_evicted;
};

int64_t davgate_dirty_pages(int fd) {
    struct davgate_cachestat_range range = {0, 0};   /* len 0: to the end */
    struct davgate_cachestat stat = {0};
    if (syscall(__NR_cachestat, fd, &range, &stat, 0) != 0) return -1;
    return (int64_t)(stat.nr_dirty + stat.nr_writeback);
}

int davgate_on_tmpfs(const char *path) {
    struct statfs fs;
    if (statfs(path, &fs) != 0) return -1;
    return fs.f_type == TMPFS_MAGIC ? 1 : 0;
}
