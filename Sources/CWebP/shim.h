// libwebp (Debian libwebp-dev): still decode with scaling, animation through the demux API, encode,
// animated encode through the mux library's WebPAnimEncoder.
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <webp/mux.h>
