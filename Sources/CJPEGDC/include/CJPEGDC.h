// A JPEG decoder for one job: the image at 1/8 scale, one pixel per 8×8 block, from the DC
// coefficients alone. libjpeg-turbo's 1/8 scale still decodes every AC coefficient; this decoder
// skips them (baseline: Huffman codes walked, values never formed; progressive: AC scans never
// entropy-decoded), which is most of the work in a large photo.
#ifndef IMAGO_CJPEGDC_H
#define IMAGO_CJPEGDC_H

#include <stddef.h>
#include <stdint.h>

/// What `imago_jpeg_decode_dc` did.
typedef enum {
    /// Every pixel written.
    IMAGO_JPEG_DC_OK = 0,
    /// The stream uses what this decoder leaves to libjpeg-turbo: arithmetic coding, 12-bit or
    /// lossless frames, a height given by DNL, a component count other than 1 or 3, sampling
    /// factors that are not whole multiples of each other, more than 500 scans.
    IMAGO_JPEG_DC_UNSUPPORTED = 1,
    /// The stream is damaged or truncated before its DC coefficients are complete.
    IMAGO_JPEG_DC_DAMAGED = 2,
} imago_jpeg_dc_status;

/// Decodes the JPEG in `data` at 1/8 scale into `rgba`: ceil(width / 8) × ceil(height / 8) pixels,
/// 4 bytes each, alpha 255. `width` and `height` are the frame's size as already read from its
/// header; a frame of another size is refused as damaged. One component is gray; three are YCbCr
/// (the caller sends RGB-coded files elsewhere). Pixel values are those of libjpeg's 1×1 inverse DCT,
/// and the YCbCr conversion is libjpeg's, so full-resolution-chroma files match libjpeg-turbo's
/// 1/8 output exactly; subsampled chroma is replicated (libjpeg-turbo uses its AC coefficients).
imago_jpeg_dc_status imago_jpeg_decode_dc(const uint8_t *data, size_t size, int width, int height, uint8_t *rgba);

#endif
