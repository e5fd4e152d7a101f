// The inner loops of Imago's resampler (Processing/Resampler.swift) for 8-bit RGBA: the same
// fixed-point sums, with x86's pmaddwd (16 × 16 → 32-bit multiply-add, SSE2) where the Swift
// loops got a 32-bit multiply emulated in four instructions. Scalar C elsewhere. The caller checks
// every size: starts[i] + counts[i] lie within the input, counts[i] <= taps.
#ifndef IMAGO_CRESAMPLE_H
#define IMAGO_CRESAMPLE_H

#include <stddef.h>
#include <stdint.h>

/// Each of `height` rows: `in_width` RGBA pixels in, `out_width` out; output pixel x mixes input
/// pixels starts[x] ..< starts[x] + counts[x] with weights[x * taps ...] (14-bit fixed point).
void imago_resample_rows(const uint8_t *in, size_t in_width, size_t height, uint8_t *out, size_t out_width,
                         const int32_t *starts, const int32_t *counts, const int16_t *weights, size_t taps);

/// Each of `out_height` output rows of `row_bytes` bytes mixes input rows starts[y] ..<
/// starts[y] + counts[y] with weights[y * taps ...].
void imago_resample_columns(const uint8_t *in, size_t row_bytes, uint8_t *out, size_t out_height,
                            const int32_t *starts, const int32_t *counts, const int16_t *weights, size_t taps);

#endif
