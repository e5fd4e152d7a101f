// XXH3 from the xxHash headers (Debian libxxhash-dev), compiled into Imago inline: Debian's
// shared library is built for the generic x86-64 target and hashes at a third of the speed.
#ifndef IMAGO_CXXHASH_H
#define IMAGO_CXXHASH_H

#include <stddef.h>
#include <stdint.h>

/// XXH3 64-bit, seed 0.
uint64_t imago_xxh3_64(const void *bytes, size_t count);

#endif
