#ifndef DAVGATE_RESOLVE_BENEATH_H
#define DAVGATE_RESOLVE_BENEATH_H

#include <sys/types.h>

/// O_PATH (Linux), which Swift's Glibc module hides behind _GNU_SOURCE; the
/// C file checks it against the system's value.
#define DAVGATE_O_PATH 010000000

/// Opens `path` (relative, no leading slash) below the folder `root` so that
/// nothing outside it can ever be reached: symbolic links are followed only
/// while they stay beneath `root`; absolute links, `..` above it and
/// /proc-style magic links fail with EXDEV or ELOOP. The kernel checks every
/// step of the walk (openat2(2), RESOLVE_BENEATH), so a link swapped in
/// between a check and the open cannot lead out.
///
/// Where the kernel lacks openat2 (before Linux 5.6, or a seccomp filter
/// refuses it) every component is opened with O_NOFOLLOW from `root`
/// instead: stricter (no link is followed at all), never looser.
///
/// Returns a descriptor opened with `flags | O_CLOEXEC`, or -1 with errno.
int davgate_open_beneath(int root, const char *path, int flags, mode_t mode);

/// renameat2(2) with RENAME_NOREPLACE: fails with EEXIST instead of
/// replacing what is at the destination, atomically. EINVAL where the file
/// system cannot do it.
int davgate_rename_noreplace(int from_dir, const char *from_name, int to_dir, const char *to_name);

#endif
