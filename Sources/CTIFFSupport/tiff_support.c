#include "CTIFFSupport.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Copies up to `size` bytes of `bytes` (`count` long) from `*position` on, and moves it on.
static tmsize_t read_at(const unsigned char *bytes, uint64_t count, uint64_t *position, void *buffer, tmsize_t size) {
    if (size <= 0 || *position >= count) return 0;
    uint64_t available = count - *position;
    uint64_t wanted = (uint64_t)size < available ? (uint64_t)size : available;
    memcpy(buffer, bytes + *position, (size_t)wanted);
    *position += wanted;
    return (tmsize_t)wanted;
}

static tmsize_t source_read(thandle_t handle, void *buffer, tmsize_t size) {
    imago_tiff_source *source = (imago_tiff_source *)handle;
    return read_at(source->bytes, source->count, &source->position, buffer, size);
}

static tmsize_t source_write(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle; (void)buffer; (void)size;
    return -1;
}

/// Moves `*position` to `offset` from the start, the position or the end (`count`); refuses a sum
/// that wraps or lands past `limit` (offsets come from the file when reading).
static toff_t seek_to(uint64_t *position, uint64_t count, uint64_t limit, toff_t offset, int whence) {
    uint64_t base = whence == SEEK_CUR ? *position : whence == SEEK_END ? count : 0;
    if (offset > UINT64_MAX - base || base + offset > limit) return (toff_t)-1;
    *position = base + offset;
    return *position;
}

static toff_t source_seek(thandle_t handle, toff_t offset, int whence) {
    imago_tiff_source *source = (imago_tiff_source *)handle;
    return seek_to(&source->position, source->count, source->count, offset, whence);
}

static int source_close(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t source_size(thandle_t handle) {
    return ((imago_tiff_source *)handle)->count;
}

/// The bytes are in memory already: "mapping" them lets libtiff read strips and tiles in place.
static int source_map(thandle_t handle, void **base, toff_t *size) {
    imago_tiff_source *source = (imago_tiff_source *)handle;
    *base = (void *)source->bytes;
    *size = source->count;
    return 1;
}

static void source_unmap(thandle_t handle, void *base, toff_t size) {
    (void)handle; (void)base; (void)size;
}

/// Keeps the first error; later ones are usually consequences of it.
static int keep_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tiff; (void)module;
    imago_tiff_source *source = (imago_tiff_source *)user_data;
    if (source->message[0] == 0) vsnprintf(source->message, sizeof source->message, format, arguments);
    return 1;
}

/// Warnings are dropped, but for one: libtiff reports a tag it could not read because the file
/// ends first ("IO error during reading of …; tag ignored") as a warning and goes on without it, so
/// a cut file loses its colour map and decodes wrong. That one is kept as an error.
static int keep_io_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tiff; (void)module;
    imago_tiff_source *source = (imago_tiff_source *)user_data;
    char text[sizeof source->message];
    vsnprintf(text, sizeof text, format, arguments);
    if (source->message[0] == 0 && strstr(text, "IO error") != NULL) memcpy(source->message, text, sizeof text);
    return 1;
}

TIFF *imago_tiff_open(imago_tiff_source *source, int64_t max_allocation) {
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (options == NULL) return NULL;
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, (tmsize_t)max_allocation);
    TIFFOpenOptionsSetErrorHandlerExtR(options, keep_error, source);
    TIFFOpenOptionsSetWarningHandlerExtR(options, keep_io_warning, source);
    // Read only; libtiff never writes through the "mapped" bytes in this mode.
    TIFF *tiff = TIFFClientOpenExt("memory", "r", (thandle_t)source, source_read, source_write, source_seek,
                                   source_close, source_size, source_map, source_unmap, options);
    TIFFOpenOptionsFree(options);
    return tiff;
}

int imago_tiff_read_info(TIFF *tiff, imago_tiff_info *info) {
    memset(info, 0, sizeof *info);
    if (!TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, &info->width)) return 0;
    if (!TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, &info->height)) return 0;
    TIFFGetFieldDefaulted(tiff, TIFFTAG_ORIENTATION, &info->orientation);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &info->bits_per_sample);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &info->samples_per_pixel);
    if (!TIFFGetField(tiff, TIFFTAG_PHOTOMETRIC, &info->photometric)) info->photometric = 0xFFFF;
    uint16_t extra_count = 0;
    uint16_t *extra = NULL;
    if (TIFFGetField(tiff, TIFFTAG_EXTRASAMPLES, &extra_count, &extra) && extra_count > 0 && extra != NULL) {
        info->has_alpha = extra[0] == EXTRASAMPLE_ASSOCALPHA || extra[0] == EXTRASAMPLE_UNASSALPHA;
        info->associated_alpha = extra[0] == EXTRASAMPLE_ASSOCALPHA;
    }
    return 1;
}

int imago_tiff_read_rgba(TIFF *tiff, uint32_t width, uint32_t height, uint32_t *raster, char *message) {
    TIFFRGBAImage image;
    message[0] = 0;
    if (!TIFFRGBAImageOK(tiff, message)) return 0;
    // Stop at the first strip or tile that fails to read: a cut or damaged file is an error, not
    // an image with holes.
    if (!TIFFRGBAImageBegin(&image, tiff, 1, message)) return 0;
    // Rows as stored, top first: the caller applies the orientation, all eight of them (libtiff's
    // RGBA interface only flips, so it cannot turn 5–8).
    image.req_orientation = image.orientation;
    int ok = TIFFRGBAImageGet(&image, raster, width, height);
    TIFFRGBAImageEnd(&image);
    if (!ok && message[0] == 0) snprintf(message, 1024, "the image data could not be read");
    return ok;
}

int imago_tiff_icc_profile(TIFF *tiff, const uint8_t **bytes, uint32_t *count) {
    uint32_t length = 0;
    void *data = NULL;
    if (!TIFFGetField(tiff, TIFFTAG_ICCPROFILE, &length, &data) || data == NULL || length == 0) return 0;
    *bytes = (const uint8_t *)data;
    *count = length;
    return 1;
}

int imago_tiff_is_plain_cmyk(TIFF *tiff) {
    uint16_t photometric = 0, bits = 0, samples = 0, planar = PLANARCONFIG_CONTIG, inkset = INKSET_CMYK;
    if (!TIFFGetField(tiff, TIFFTAG_PHOTOMETRIC, &photometric) || photometric != PHOTOMETRIC_SEPARATED) return 0;
    TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_INKSET, &inkset);
    return bits == 8 && samples == 4 && planar == PLANARCONFIG_CONTIG && inkset == INKSET_CMYK && !TIFFIsTiled(tiff);
}

int imago_tiff_read_cmyk(TIFF *tiff, uint32_t width, uint32_t height, uint8_t *pixels, char *message) {
    message[0] = 0;
    if ((uint64_t)TIFFScanlineSize64(tiff) != (uint64_t)width * 4) {
        snprintf(message, 1024, "unexpected CMYK row size");
        return 0;
    }
    for (uint32_t row = 0; row < height; row++) {
        if (TIFFReadScanline(tiff, pixels + (size_t)row * width * 4, row, 0) < 0) {
            snprintf(message, 1024, "the image data could not be read");
            return 0;
        }
    }
    return 1;
}

int imago_tiff_is_plain_16bit(TIFF *tiff) {
    uint16_t photometric = 0, bits = 0, samples = 0, planar = PLANARCONFIG_CONTIG, format = SAMPLEFORMAT_UINT;
    if (!TIFFGetField(tiff, TIFFTAG_PHOTOMETRIC, &photometric)) return 0;
    TIFFGetFieldDefaulted(tiff, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &samples);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLEFORMAT, &format);
    if (bits != 16 || planar != PLANARCONFIG_CONTIG || format != SAMPLEFORMAT_UINT || TIFFIsTiled(tiff)) return 0;
    uint16_t extra_count = 0;
    uint16_t *extra = NULL;
    TIFFGetField(tiff, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
    // Associated (premultiplied) alpha is left to the RGBA interface, which unpremultiplies nothing
    // either way; only straight alpha or none is read here.
    if (extra_count > 1 || (extra_count == 1 && (extra == NULL || extra[0] != EXTRASAMPLE_UNASSALPHA))) return 0;
    if (photometric == PHOTOMETRIC_RGB) return samples == 3 + extra_count;
    if (photometric == PHOTOMETRIC_MINISBLACK) return samples == 1 + extra_count;
    return 0;
}

int imago_tiff_read_rgba16(TIFF *tiff, uint32_t width, uint32_t height, uint16_t *pixels, char *message) {
    message[0] = 0;
    uint16_t samples = 0;
    TIFFGetFieldDefaulted(tiff, TIFFTAG_SAMPLESPERPIXEL, &samples);
    if (samples < 1 || samples > 4 || (uint64_t)TIFFScanlineSize64(tiff) != (uint64_t)width * samples * 2) {
        snprintf(message, 1024, "unexpected 16-bit row size");
        return 0;
    }
    // Each row is read into the end of its own output row (4 samples a pixel, the stored row has
    // `samples`), then spread out from the left, so no row buffer is needed.
    for (uint32_t row = 0; row < height; row++) {
        uint16_t *out = pixels + (size_t)row * width * 4;
        uint16_t *in = out + (size_t)width * (4 - samples);
        if (TIFFReadScanline(tiff, in, row, 0) < 0) {
            snprintf(message, 1024, "the image data could not be read");
            return 0;
        }
        for (uint32_t x = 0; x < width; x++) {
            const uint16_t *p = in + (size_t)x * samples;
            uint16_t r, g, b, a = 65535;
            if (samples >= 3) {
                r = p[0], g = p[1], b = p[2];
                if (samples == 4) a = p[3];
            } else {
                r = g = b = p[0];
                if (samples == 2) a = p[1];
            }
            // Pixel x's output (4x..4x+3) never lies past its input (at least (4 - samples)w + x·samples),
            // and every input it overwrites belongs to a pixel already read.
            out[4 * x] = r, out[4 * x + 1] = g, out[4 * x + 2] = b, out[4 * x + 3] = a;
        }
    }
    return 1;
}

// Writing.

static tmsize_t sink_read(thandle_t handle, void *buffer, tmsize_t size) {
    imago_tiff_sink *sink = (imago_tiff_sink *)handle;
    return read_at(sink->bytes, sink->count, &sink->position, buffer, size);
}

/// Appends or overwrites at the position, growing the buffer (doubling) but never past `limit`.
static tmsize_t sink_write(thandle_t handle, void *buffer, tmsize_t size) {
    imago_tiff_sink *sink = (imago_tiff_sink *)handle;
    if (size < 0) return -1;
    uint64_t end = sink->position + (uint64_t)size;
    if (end < sink->position || end > sink->limit) {
        if (sink->message[0] == 0) snprintf(sink->message, sizeof sink->message, "the file would be over %llu bytes", (unsigned long long)sink->limit);
        return -1;
    }
    if (end > sink->capacity) {
        uint64_t capacity = sink->capacity > 0 ? sink->capacity : 65536;
        while (capacity < end) capacity = capacity > UINT64_MAX / 2 ? end : capacity * 2;
        if (capacity > sink->limit) capacity = sink->limit;
        unsigned char *grown = realloc(sink->bytes, (size_t)capacity);
        if (grown == NULL) return -1;
        sink->bytes = grown;
        sink->capacity = capacity;
    }
    // A seek past the end leaves a gap: zeros, as a file would read.
    if (sink->position > sink->count) memset(sink->bytes + sink->count, 0, (size_t)(sink->position - sink->count));
    memcpy(sink->bytes + sink->position, buffer, (size_t)size);
    sink->position = end;
    if (end > sink->count) sink->count = end;
    return size;
}

static toff_t sink_seek(thandle_t handle, toff_t offset, int whence) {
    imago_tiff_sink *sink = (imago_tiff_sink *)handle;
    return seek_to(&sink->position, sink->count, sink->limit, offset, whence);
}

static toff_t sink_size(thandle_t handle) {
    return ((imago_tiff_sink *)handle)->count;
}

static int sink_map(thandle_t handle, void **base, toff_t *size) {
    (void)handle; (void)base; (void)size;
    return 0;
}

static int sink_keep_error(TIFF *tiff, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tiff; (void)module;
    imago_tiff_sink *sink = (imago_tiff_sink *)user_data;
    if (sink->message[0] == 0) vsnprintf(sink->message, sizeof sink->message, format, arguments);
    return 1;
}

static int sink_drop_warning(TIFF *tiff, void *user_data, const char *module, const char *format, va_list arguments) {
    (void)tiff; (void)user_data; (void)module; (void)format; (void)arguments;
    return 1;
}

int imago_tiff_write_rgba(imago_tiff_sink *sink, const uint8_t *pixels, uint32_t width, uint32_t height, int has_alpha,
                          const uint8_t *icc, uint32_t icc_count) {
    if (width == 0 || height == 0 || width > UINT32_MAX / 4) return 0;
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (options == NULL) return 0;
    TIFFOpenOptionsSetErrorHandlerExtR(options, sink_keep_error, sink);
    TIFFOpenOptionsSetWarningHandlerExtR(options, sink_drop_warning, sink);
    TIFF *tiff = TIFFClientOpenExt("memory", "w", (thandle_t)sink, sink_read, sink_write, sink_seek, source_close, sink_size,
                                   sink_map, source_unmap, options);
    TIFFOpenOptionsFree(options);
    if (tiff == NULL) return 0;
    uint16_t samples = has_alpha ? 4 : 3;
    uint32_t row_bytes = width * samples;
    uint32_t rows_per_strip = row_bytes >= 65536 ? 1 : 65536 / row_bytes;
    int ok = TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, width) && TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, height)
        && TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, 8) && TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, samples)
        && TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_RGB) && TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG)
        && TIFFSetField(tiff, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT)
        && TIFFSetField(tiff, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE) && TIFFSetField(tiff, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL)
        && TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, rows_per_strip)
        && TIFFSetField(tiff, TIFFTAG_XRESOLUTION, 72.0) && TIFFSetField(tiff, TIFFTAG_YRESOLUTION, 72.0)
        && TIFFSetField(tiff, TIFFTAG_RESOLUTIONUNIT, RESUNIT_INCH);
    if (ok && has_alpha) {
        uint16_t extra = EXTRASAMPLE_UNASSALPHA;
        ok = TIFFSetField(tiff, TIFFTAG_EXTRASAMPLES, 1, &extra);
    }
    if (ok && icc != NULL && icc_count > 0) ok = TIFFSetField(tiff, TIFFTAG_ICCPROFILE, icc_count, icc);
    unsigned char *row = ok ? malloc(row_bytes) : NULL;
    ok = ok && row != NULL;
    for (uint32_t y = 0; ok && y < height; y++) {
        const uint8_t *from = pixels + (size_t)y * width * 4;
        unsigned char *to = row;
        for (uint32_t x = 0; x < width; x++, from += 4) {
            *to++ = from[0];
            *to++ = from[1];
            *to++ = from[2];
            if (has_alpha) *to++ = from[3];
        }
        ok = TIFFWriteScanline(tiff, row, y, 0) >= 0;
    }
    free(row);
    ok = ok && TIFFWriteDirectory(tiff);
    TIFFClose(tiff);
    return ok && sink->message[0] == 0;
}

void imago_tiff_sink_free(imago_tiff_sink *sink) {
    free(sink->bytes);
    sink->bytes = NULL;
    sink->count = sink->capacity = sink->position = 0;
}
