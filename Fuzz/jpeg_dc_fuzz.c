// libFuzzer harness for Imago's DC-only JPEG decoder (Sources/CJPEGDC), run by `make fuzz-jpeg-dc`
// under ASan and UBSan, seeded with the shared corpus's JPEGs. The frame size comes from
// TurboJPEG's header reader, as in JPEGDecoder; a stream whose header it refuses still goes to the
// DC decoder with a guessed size, which must then refuse it cleanly.
#include <stdint.h>
#include <stdlib.h>
#include <turbojpeg.h>

#include "CJPEGDC.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static tjhandle handle;
    if (!handle) handle = tjInitDecompress();
    int width = 64, height = 64, subsampling, colorspace;
    if (tjDecompressHeader3(handle, data, (unsigned long)size, &width, &height, &subsampling, &colorspace) != 0 && width <= 0)
        width = height = 64;
    if (width <= 0 || height <= 0 || (long long)width * height > 100000000LL) return 0;
    size_t bytes = (size_t)((width + 7) / 8) * (size_t)((height + 7) / 8) * 4;
    uint8_t *rgba = malloc(bytes);
    if (!rgba) return 0;
    imago_jpeg_dc_status status = imago_jpeg_decode_dc(data, size, width, height, rgba);
    if (status != IMAGO_JPEG_DC_OK && status != IMAGO_JPEG_DC_UNSUPPORTED && status != IMAGO_JPEG_DC_DAMAGED) abort();
    free(rgba);
    return 0;
}
