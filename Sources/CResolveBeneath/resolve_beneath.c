#define _GNU_SOURCE
#include "resolve_beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(DAVGATE_O_PATH == O_PATH, "O_PATH differs on this platform");

/// 1 once openat2 proved missing, so the fallback is not retried per call.
static atomic_int openat2_missing = 0;

/// The fallback walk: each folder component opened with O_NOFOLLOW from the
/// previous one; the last with the caller's flags plus O_NOFOLLOW.
static int open_walking(int root, const char *path, int flags, mode_t mode) {
    char buffer[4096];
    size_t length = strlen(path);
    if (length >= sizeof buffer) { errno = ENAMETOOLONG; return -1; }
    memcpy(buffer, path, length + 1);

    int current = dup(root);
    if (current < 0) return -1;
    char *component = buffer;
    for (;;) {
        while (*component == '/') component++;
        char *slash = strchr(component, '/');
        int last = slash == NULL;
        if (!last) *slash = '\0';
        if (strcmp(component, "..") == 0) { close(current); errno = EXDEV; return -1; }
        int next;
        if (last) {
            const char *name = *component ? component : ".";
            next = openat(current, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
        } else if (*component == '\0' || strcmp(component, ".") == 0) {
            component = slash + 1;
            continue;
        } else {
            next = openat(current, component, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        int saved = errno;
        close(current);
        if (next < 0) { errno = saved == ELOOP ? EXDEV : saved; return -1; }
        if (last) return next;
        current = next;
        component = slash + 1;
    }
}

int davgate_open_beneath(int root, const char *path, int flags, mode_t mode) {
    if (!atomic_load(&openat2_missing)) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (unsigned long long)(flags | O_CLOEXEC);
        how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, root, *path ? path : ".", &how, sizeof how);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return (int)fd;
        if (errno == EPERM) {
            // EPERM is also a real answer (O_NOATIME, a sealed file): only a
            // seccomp refusal of the call itself means "missing"; probe it.
            struct open_how probe;
            memset(&probe, 0, sizeof probe);
            probe.flags = O_PATH | O_CLOEXEC;
            probe.resolve = RESOLVE_BENEATH;
            long check = syscall(SYS_openat2, root, ".", &probe, sizeof probe);
            if (check >= 0) { close((int)check); errno = EPERM; return -1; }
            if (errno != ENOSYS && errno != EPERM) { errno = EPERM; return -1; }
        }
        atomic_store(&openat2_missing, 1);
    }
    return open_walking(root, path, flags, mode);
}

int davgate_rename_noreplace(int from_dir, const char *from_name, int to_dir, const char *to_name) {
    return renameat2(from_dir, from_name, to_dir, to_name, RENAME_NOREPLACE);
}
