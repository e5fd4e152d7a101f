#define XXH_INLINE_ALL
#include <xxhash.h>

#include "CXXHash.h"

uint64_t imago_xxh3_64(const void *bytes, size_t count) {
    return XXH3_64bits(bytes, count);
}
