#ifndef IMAGO_PROCESS_MEMORY_H
#define IMAGO_PROCESS_MEMORY_H

#include <stddef.h>

/// glibc's heap as mallinfo2 counts it, in bytes: what the server's metrics report so a creep can
/// be told apart (memory in use, freed memory glibc keeps, large blocks mapped on their own).
typedef struct {
    size_t arena;        /* bytes obtained from the system with sbrk and in the other arenas */
    size_t in_use;       /* bytes in use by allocations in the arenas */
    size_t free_held;    /* free bytes the arenas keep */
    size_t mmapped;      /* bytes in blocks mapped on their own (large allocations) */
    size_t releasable;   /* free bytes at the top of the main arena, which malloc_trim could return */
} imago_heap_stats;

/// The numbers now; zeros where the C library is not glibc.
imago_heap_stats imago_heap(void);

/// Gives the free pages glibc's arenas hold back to the system (malloc_trim(0)); 1 if any went,
/// 0 if none or where the C library is not glibc.
int imago_heap_trim(void);

/// Sets glibc's mmap threshold (M_MMAP_THRESHOLD), which also keeps glibc from raising it after a
/// large block is freed; 0 where the C library is not glibc.
int imago_heap_set_mmap_threshold(int bytes);
/// glibc's M_ARENA_MAX: the most arenas threads allocate from (0 on other C libraries).
int imago_heap_set_arena_max(int arenas);
/// glibc's M_TRIM_THRESHOLD: free bytes at an arena's top that free() keeps rather than giving
/// back at once (0 on other C libraries).
int imago_heap_set_trim_threshold(int bytes);

#endif
