#ifndef CTIFFSUPPORT_H
#define CTIFFSUPPORT_H

#include <stddef.h>
#include <stdint.h>
#include <tiffio.h>

/// In-memory bytes libtiff reads through, and the first error it reported (libtiff's open,
/// read and conversion routines report through a handler rather than a return value).
typedef struct imago_tiff_source {
    const unsigned char *bytes;
    uint64_t count;
    uint64_t position;
    char message[256];
} imago_tiff_source;

/// What the current directory declares. `orientation` is the TIFF Orientation tag (1–8, as EXIF).
typedef struct imago_tiff_info {
    uint32_t width;
    uint32_t height;
    uint16_t orientation;
    uint16_t bits_per_sample;
    uint16_t samples_per_pixel;
    uint16_t photometric;
    int has_alpha;
    int associated_alpha;
} imago_tiff_info;

/// Opens `source` for reading with no single allocation above `max_allocation` bytes; the first
/// error, or warning of bytes missing, is kept in `source->message` (nothing is printed). NULL when
/// the header is unreadable; a message left after opening or reading means the file is damaged.
TIFF *imago_tiff_open(imago_tiff_source *source, int64_t max_allocation);

/// Fills `info` from the current directory; 0 when a required tag is missing.
int imago_tiff_read_info(TIFF *tiff, imago_tiff_info *info);

/// Decodes the current directory into `raster` (width × height RGBA8, rows as stored, top first,
/// orientation not applied, alpha premultiplied as libtiff's RGBA interface gives it). 0 on
/// failure, with the reason in `message` (1,024 bytes).
int imago_tiff_read_rgba(TIFF *tiff, uint32_t width, uint32_t height, uint32_t *raster, char *message);

/// The current directory's ICC profile (tag 34675), which libtiff holds; 0 when it has none.
int imago_tiff_icc_profile(TIFF *tiff, const uint8_t **bytes, uint32_t *count);

/// Whether the current directory is 8-bit CMYK in strips, samples contiguous: what
/// imago_tiff_read_cmyk reads, so it goes through its colour profile rather than libtiff's naive
/// conversion.
int imago_tiff_is_plain_cmyk(TIFF *tiff);

/// Reads such a directory's CMYK samples (0 = no ink) into `pixels` (width × height × 4, rows as
/// stored). 0 on failure, with the reason in `message` (1,024 bytes).
int imago_tiff_read_cmyk(TIFF *tiff, uint32_t width, uint32_t height, uint8_t *pixels, char *message);

/// Whether the current directory is 16-bit unsigned RGB or gray, with straight alpha or none, in
/// strips, samples contiguous: what imago_tiff_read_rgba16 reads, so a colour conversion starts from
/// 16 bits rather than libtiff's 8.
int imago_tiff_is_plain_16bit(TIFF *tiff);

/// Reads such a directory into `pixels` (width × height × 4 samples in the machine's byte order:
/// RGBA, gray as R = G = B, 65535 alpha when it has none; rows as stored). 0 on failure, with the
/// reason in `message` (1,024 bytes).
int imago_tiff_read_rgba16(TIFF *tiff, uint32_t width, uint32_t height, uint16_t *pixels, char *message);

/// A growable in-memory file libtiff writes to, which never grows past `limit` bytes, and the
/// first error libtiff reported. Zero it, set `limit`, and free it with imago_tiff_sink_free.
typedef struct imago_tiff_sink {
    unsigned char *bytes;
    uint64_t count;
    uint64_t capacity;
    uint64_t position;
    uint64_t limit;
    char message[256];
} imago_tiff_sink;

/// Writes `pixels` (width × height RGBA8, straight alpha) as one TIFF page into `sink`: RGB, or
/// RGBA with unassociated alpha when `has_alpha`; deflate with the horizontal predictor in strips
/// of about 64 KiB; the ICC profile when `icc` is given. 1 on success (the file in `sink->bytes`,
/// `sink->count` bytes); 0 on failure, with the reason in `sink->message` when libtiff gave one.
int imago_tiff_write_rgba(imago_tiff_sink *sink, const uint8_t *pixels, uint32_t width, uint32_t height, int has_alpha,
                          const uint8_t *icc, uint32_t icc_count);

/// Frees what `sink` holds.
void imago_tiff_sink_free(imago_tiff_sink *sink);

#endif
