// The heavy codec libraries (libjxl, libheif, libavif, libtiff, librsvg with cairo and GLib, FFmpeg, LibRaw) are
// opened with dlopen the first time Imago needs one, not at start: a run that meets only JPEG, PNG
// and WebP loads none of them, and a machine without one still runs, that format answering "not
// available". Each function Imago calls in them is a tiny jump through a pointer filled when its
// library is opened (lazy_symbols.h lists them). On platforms other than Linux on x86-64 or ARM64
// the libraries are linked as usual and every library counts as loaded.
#ifndef IMAGO_CLAZYLIBRARIES_H
#define IMAGO_CLAZYLIBRARIES_H

/// A library loaded on first use.
typedef enum {
    IMAGO_LAZY_JXL = 0,
    IMAGO_LAZY_HEIF = 1,
    IMAGO_LAZY_AVIF = 2,
    IMAGO_LAZY_TIFF = 3,
    IMAGO_LAZY_RSVG = 4,
    IMAGO_LAZY_AVFORMAT = 5,
    IMAGO_LAZY_SWSCALE = 6,
    IMAGO_LAZY_RAW = 7,
} imago_lazy_library;

/// Opens `library` (once, whichever thread asks first) and fills its functions' pointers. Returns 1
/// when every function is there, else 0; the library is then never used. The file opened is the
/// soname Debian installs, or the path in the environment variable IMAGO_LIBRARY_JXL (_HEIF, _AVIF,
/// _TIFF, _RSVG, _AVFORMAT, _SWSCALE, _RAW) when set.
int imago_lazy_load(imago_lazy_library library);

/// Why `library` could not be loaded (dlerror's text, or the missing function), or "" when it was.
const char *imago_lazy_error(imago_lazy_library library);

/// The file `library` is opened from.
const char *imago_lazy_soname(imago_lazy_library library);

/// Whether `library` has been loaded by this process (tests and `imago info` ask).
int imago_lazy_is_loaded(imago_lazy_library library);

#endif
