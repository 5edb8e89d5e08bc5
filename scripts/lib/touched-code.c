// A measuring aid for scripts/hot-code, never linked into davgate: loaded
// with LD_PRELOAD, it splits every executable mapping of the process into
// one-page areas before the program starts, so that a page the process
// touches is mapped alone. The kernel otherwise maps up to 64 KiB of a file
// around each page touched (fault-around), and a resident page would not
// say which code ran. Alternate pages get MADV_RANDOM, a flag that keeps
// neighbouring areas from merging and changes nothing else a program sees;
// then every page mapped so far is dropped, to come back when touched.
// Needs vm.max_map_count above one area per page of code.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_MAPPINGS 512

__attribute__((constructor)) static void split_code_mappings(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) return;
    char line[4096];
    unsigned long starts[MAX_MAPPINGS], ends[MAX_MAPPINGS];
    int count = 0;
    while (count < MAX_MAPPINGS && fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char permissions[8], path[2048] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %2047s", &start, &end, permissions, path) < 3) continue;
        // This library and the dynamic loader run now; the rest waits.
        if (permissions[2] != 'x' || path[0] != '/' || strstr(path, "touched-code") || strstr(path, "ld-linux")) continue;
        starts[count] = start;
        ends[count] = end;
        count++;
    }
    fclose(maps);
    for (int i = 0; i < count; i++)
        for (unsigned long page = starts[i] + 4096; page < ends[i]; page += 2 * 4096)
            if (madvise((void *)page, 4096, MADV_RANDOM) != 0) {
                // A half-split profile would name neighbours as code that ran.
                perror("touched-code: madvise (raise vm.max_map_count)");
                abort();
            }
    for (int i = 0; i < count; i++) madvise((void *)starts[i], ends[i] - starts[i], MADV_DONTNEED);
}
