// libdeflate (Debian libdeflate-dev): whole-buffer DEFLATE/zlib compression and CRC-32, for PNG output.
#include <libdeflate.h>
