// libspng (Debian libspng-dev): PNG decoding with return codes instead of longjmp.
#include <spng.h>
