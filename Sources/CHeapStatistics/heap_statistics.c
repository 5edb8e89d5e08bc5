#include "heap_statistics.h"

#include <stdio.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

size_t davgate_heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
#else
    return 0;
#endif
}

size_t davgate_resident_anonymous(void) {
    FILE *statm = fopen("/proc/self/statm", "re");
    if (statm == NULL) return 0;
    unsigned long size = 0, resident = 0, shared = 0;
    int read = fscanf(statm, "%lu %lu %lu", &size, &resident, &shared);
    fclose(statm);
    if (read != 3 || shared > resident) return 0;
    return (size_t)(resident - shared) * (size_t)sysconf(_SC_PAGESIZE);
}
