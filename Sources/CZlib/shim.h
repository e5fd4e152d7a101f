// zlib (Debian zlib1g-dev): DEFLATE with the run-length strategy a photo's filtered PNG rows
// want, and CRC-32.
#include <zlib.h>

// deflateInit2 is a macro; this starts a zlib stream with Z_RLE (matches at distance 1 only) and
// the largest memory level, whose larger blocks fit the literals' codes more closely.
static inline int imago_deflate_init_rle(z_streamp stream) {
    return deflateInit2(stream, 6, Z_DEFLATED, 15, 9, Z_RLE);
}
