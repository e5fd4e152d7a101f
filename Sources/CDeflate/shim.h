// libdeflate (Debian libdeflate-dev): whole-buffer DEFLATE, the PNG encoder's compressor. At zlib's
// level numbers it writes about the same sizes 2–3 times faster than zlib (BENCHMARKS.md).
#include <libdeflate.h>
