// libjpeg-turbo's TurboJPEG 2.1 API (Debian libturbojpeg0-dev): return codes, no longjmp.
#include <stddef.h>
#include <turbojpeg.h>
