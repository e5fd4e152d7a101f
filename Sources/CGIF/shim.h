// giflib (Debian libgif-dev): record-by-record GIF decoding with return codes.
#include <stddef.h>
#include <gif_lib.h>
