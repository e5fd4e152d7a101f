#include "CProcessMemory.h"
#include <stdlib.h> /* defines __GLIBC__ on glibc */

#if defined(__GLIBC__)
#include <malloc.h>

imago_heap_stats imago_heap(void) {
    struct mallinfo2 info = mallinfo2();
    imago_heap_stats stats = { info.arena, info.uordblks, info.fordblks, info.hblkhd, info.keepcost };
    return stats;
}

int imago_heap_trim(void) { return malloc_trim(0); }

int imago_heap_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }
int imago_heap_set_arena_max(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
int imago_heap_set_trim_threshold(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes); }
#else
imago_heap_stats imago_heap(void) {
    imago_heap_stats stats = { 0, 0, 0, 0, 0 };
    return stats;
}

int imago_heap_trim(void) { return 0; }

int imago_heap_set_mmap_threshold(int bytes) {
    (void)bytes;
    return 0;
}

int imago_heap_set_arena_max(int arenas) {
    (void)arenas;
    return 0;
}

int imago_heap_set_trim_threshold(int bytes) {
    (void)bytes;
    return 0;
}
#endif
