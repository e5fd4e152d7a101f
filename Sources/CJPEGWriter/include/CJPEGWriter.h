// JPEG written through libjpeg's own API (libjpeg-turbo's libjpeg.so), for what TurboJPEG 2.1's
// tjCompress2 cannot ask for: optimised Huffman tables (libvips' `optimize_coding`, imgproxy's
// default), chroma subsampling chosen per call. libjpeg's errors end in longjmp back here, never
// in exit().
#ifndef IMAGO_CJPEGWRITER_H
#define IMAGO_CJPEGWRITER_H

#include <stddef.h>
#include <stdint.h>

/// How `imago_jpeg_write` writes.
typedef struct {
    /// libjpeg quality, 1…100.
    int quality;
    /// Non-zero: a progressive JPEG (jpeg_simple_progression).
    int progressive;
    /// Non-zero: Huffman tables computed for this image (an extra pass, smaller file).
    int optimize_coding;
    /// Non-zero: chroma at full resolution (4:4:4); else 4:2:0.
    int no_subsample;
    /// Non-zero: one grey component (the pixels' red, green and blue are taken to be equal, as in
    /// a one-channel gain map).
    int grayscale;
} imago_jpeg_settings;

/// Writes `height` rows of `width` RGBA pixels (`stride` bytes apart, alpha ignored) as a JPEG in
/// memory allocated by libjpeg's jpeg_mem_dest (`*output`, to be freed with `imago_jpeg_free`).
/// Returns 0, or -1 with libjpeg's message in `error` (at most `error_size` bytes, terminated).
int imago_jpeg_write(const uint8_t *rgba, int width, int height, size_t stride, imago_jpeg_settings settings,
                     uint8_t **output, unsigned long *output_size, char *error, size_t error_size);

/// Frees what `imago_jpeg_write` allocated.
void imago_jpeg_free(uint8_t *output);

#endif
