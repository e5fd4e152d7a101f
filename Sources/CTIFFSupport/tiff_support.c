#include "CTIFFSupport.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static tmsize_t source_read(thandle_t handle, void *buffer, tmsize_t size) {
    imago_tiff_source *source = (imago_tiff_source *)handle;
    if (size <= 0 || source->position >= source->count) return 0;
    uint64_t available = source->count - source->position;
    uint64_t wanted = (uint64_t)size < available ? (uint64_t)size : available;
    memcpy(buffer, source->bytes + source->position, (size_t)wanted);
    source->position += wanted;
    return (tmsize_t)wanted;
}

static tmsize_t source_write(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle; (void)buffer; (void)size;
    return -1;
}

static toff_t source_seek(thandle_t handle, toff_t offset, int whence) {
    imago_tiff_source *source = (imago_tiff_source *)handle;
    uint64_t base = whence == SEEK_CUR ? source->position : whence == SEEK_END ? source->count : 0;
    // Offsets come from the file: refuse a sum that wraps or lands past the end.
    if (offset > UINT64_MAX - base || base + offset > source->count) return (toff_t)-1;
    source->position = base + offset;
    return source->position;
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
