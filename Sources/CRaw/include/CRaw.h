// Camera RAW files through LibRaw (Debian's libraw_r, opened on first use by CLazyLibraries): what
// a file declares, its embedded preview, and its picture developed (demosaiced) to 8-bit sRGB.
// The bytes stay the caller's: LibRaw reads them in place, and every call below is made while they
// are alive. Sizes are checked against the caller's limits before LibRaw allocates for them, and a
// deadline is checked at each of LibRaw's stages (its progress callback) and in every read LibRaw
// makes (raw_stream.cpp), which then stops it.
#ifndef IMAGO_CRAW_H
#define IMAGO_CRAW_H

#include <stddef.h>
#include <stdint.h>

/// An open RAW file.
typedef struct imago_raw imago_raw;

/// What a caller allows.
typedef struct {
    /// Most pixels of the sensor's data (raw width × height).
    int64_t max_pixels;
    /// Most bytes LibRaw may hold for one develop (its raw buffer and working image).
    int64_t max_bytes;
    /// CLOCK_MONOTONIC nanoseconds after which LibRaw is stopped; 0 for none.
    int64_t deadline_ns;
} imago_raw_limits;

/// What a RAW file declares.
typedef struct {
    /// The picture's size as developed at full size, before turning.
    int32_t width, height;
    /// The sensor data's size.
    int32_t raw_width, raw_height;
    /// LibRaw's flip: 0 upright, 3 turned 180°, 5 turned 90° counter-clockwise, 6 clockwise.
    int32_t flip;
    /// Colour channels of the sensor (3 for RGB Bayer, 4 for CMYG or RGBE).
    int32_t colors;
    /// Whether the file is a DNG.
    int32_t is_dng;
    /// Whether the file declares an embedded preview (its kind is known once read).
    int32_t has_preview;
    /// The preview's size as declared (0 when the file does not say).
    int32_t preview_width, preview_height;
    /// The preview's length in bytes.
    int64_t preview_length;
    /// The camera.
    char make[64], model[64];
    /// The shot: ISO speed, exposure in seconds, f-number, focal length in mm; 0 when not known.
    float iso, shutter, aperture, focal_length;
    /// When it was taken, seconds since 1970 (0 when not known).
    int64_t timestamp;
} imago_raw_info;

enum {
    IMAGO_RAW_FAILED = -1,
    IMAGO_RAW_TOO_LARGE = -2,
    IMAGO_RAW_TIMED_OUT = -3,
    IMAGO_RAW_NO_PREVIEW = -4,
};

/// Opens `size` bytes at `data` (kept alive by the caller until imago_raw_close). 0, or a status
/// with `message` filled.
int imago_raw_open(imago_raw **out, const void *data, size_t size, const imago_raw_limits *limits, char *message, size_t capacity);

/// What the file declares.
void imago_raw_describe(imago_raw *raw, imago_raw_info *info);

/// The embedded preview's bytes, `length` of them, valid until imago_raw_close: `format` 1 for a
/// JPEG as stored, 2 for `width × height` 8-bit RGB. IMAGO_RAW_NO_PREVIEW when there is none Imago reads.
int imago_raw_preview(imago_raw *raw, const unsigned char **bytes, size_t *length, int32_t *format, int32_t *width, int32_t *height,
                      char *message, size_t capacity);

/// Bytes LibRaw holds to develop the picture (half: at half size), from what the file declares.
int64_t imago_raw_develop_bytes(imago_raw *raw, int half);

/// Develops the picture (demosaic at full size, or half: each 2×2 of the sensor one pixel) with the
/// camera's white balance to 8-bit sRGB, turned by the file's flip when `turn`: `width × height`
/// RGB at `rgb`, valid until imago_raw_close.
int imago_raw_develop(imago_raw *raw, int half, int turn, const unsigned char **rgb, int32_t *width, int32_t *height, char *message,
                      size_t capacity);

/// Closes the file and frees what LibRaw holds.
void imago_raw_close(imago_raw *raw);

#endif
