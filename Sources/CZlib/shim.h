// zlib (Debian zlib1g-dev): DEFLATE with the strategy PNG's filtered rows want, and CRC-32.
#include <zlib.h>

// deflateInit2 is a macro; this starts a raw DEFLATE stream (no zlib header or trailer, which the
// PNG encoder writes itself around the strips it compresses in parallel) with Z_FILTERED, the
// strategy zlib offers for PNG's filtered rows, and the largest memory level.
static inline int imago_deflate_init_raw(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 9, Z_FILTERED);
}
