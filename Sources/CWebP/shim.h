// libwebp (Debian libwebp-dev): still decode with scaling, animation through the demux API, encode.
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
