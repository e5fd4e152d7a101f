#include "CResample.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Sums start at half of one (1 << 13) and are shifted by 14; each product is at most
// 255 × 32767 in magnitude, and the weights of one position add up to 2^14 with their negative
// lobes under 0.3 × 2^14, so every sum fits 32 bits (the bound Resampler.swift writes down).
#define IMAGO_PRECISION 14

static inline uint8_t clamp_sample(int32_t sum) {
    sum >>= IMAGO_PRECISION;
    return sum < 0 ? 0 : sum > 255 ? 255 : (uint8_t)sum;
}

#if defined(__SSE2__)
// Two 16-bit weights in every 32-bit lane, as pmaddwd pairs them.
static inline __m128i weight_pair(int16_t first, int16_t second) {
    return _mm_set1_epi32((int32_t)(((uint32_t)(uint16_t)second << 16) | (uint16_t)first));
}

static inline __m128i load_pixel(const uint8_t *pixel) {
    int32_t value;
    memcpy(&value, pixel, 4);
    return _mm_cvtsi32_si128(value);
}
#endif

void imago_resample_rows(const uint8_t *in, size_t in_width, size_t height, uint8_t *out, size_t out_width,
                         const int32_t *starts, const int32_t *counts, const int16_t *weights, size_t taps) {
    for (size_t y = 0; y < height; y++) {
        const uint8_t *row = in + y * in_width * 4;
        uint8_t *target = out + y * out_width * 4;
        for (size_t x = 0; x < out_width; x++) {
            const uint8_t *pixel = row + (size_t)starts[x] * 4;
            const int16_t *weight = weights + x * taps;
            const int32_t count = counts[x];
#if defined(__SSE2__)
            const __m128i zero = _mm_setzero_si128();
            __m128i sum = _mm_set1_epi32(1 << (IMAGO_PRECISION - 1));
            int32_t tap = 0;
            for (; tap + 1 < count; tap += 2) {
                // r0 r1 g0 g1 b0 b1 a0 a1 in 16 bits, times w0 w1 pairwise: four channel sums.
                __m128i pair = _mm_unpacklo_epi8(load_pixel(pixel + tap * 4), load_pixel(pixel + tap * 4 + 4));
                sum = _mm_add_epi32(sum, _mm_madd_epi16(_mm_unpacklo_epi8(pair, zero), weight_pair(weight[tap], weight[tap + 1])));
            }
            if (tap < count) {
                __m128i single = _mm_unpacklo_epi8(load_pixel(pixel + tap * 4), zero);
                sum = _mm_add_epi32(sum, _mm_madd_epi16(_mm_unpacklo_epi16(single, zero), weight_pair(weight[tap], 0)));
            }
            sum = _mm_srai_epi32(sum, IMAGO_PRECISION);
            sum = _mm_packus_epi16(_mm_packs_epi32(sum, sum), zero);
            int32_t packed = _mm_cvtsi128_si32(sum);
            memcpy(target + x * 4, &packed, 4);
#else
            int32_t sums[4] = {1 << (IMAGO_PRECISION - 1), 1 << (IMAGO_PRECISION - 1), 1 << (IMAGO_PRECISION - 1), 1 << (IMAGO_PRECISION - 1)};
            for (int32_t tap = 0; tap < count; tap++) {
                for (int channel = 0; channel < 4; channel++) sums[channel] += (int32_t)pixel[tap * 4 + channel] * weight[tap];
            }
            for (int channel = 0; channel < 4; channel++) target[x * 4 + channel] = clamp_sample(sums[channel]);
#endif
        }
    }
}

void imago_resample_columns(const uint8_t *in, size_t row_bytes, uint8_t *out, size_t out_height,
                            const int32_t *starts, const int32_t *counts, const int16_t *weights, size_t taps) {
    for (size_t y = 0; y < out_height; y++) {
        const uint8_t *first = in + (size_t)starts[y] * row_bytes;
        const int16_t *weight = weights + y * taps;
        const int32_t count = counts[y];
        uint8_t *target = out + y * row_bytes;
        size_t index = 0;
#if defined(__SSE2__)
        const __m128i zero = _mm_setzero_si128();
        for (; index + 16 <= row_bytes; index += 16) {
            __m128i sums[4];
            for (int part = 0; part < 4; part++) sums[part] = _mm_set1_epi32(1 << (IMAGO_PRECISION - 1));
            int32_t tap = 0;
            for (; tap < count; tap += 2) {
                // Two rows' bytes interleaved, widened to 16 bits, times w0 w1 pairwise: 16 sums.
                const __m128i a = _mm_loadu_si128((const __m128i *)(first + (size_t)tap * row_bytes + index));
                const int last = tap + 1 >= count;
                const __m128i b = last ? zero : _mm_loadu_si128((const __m128i *)(first + (size_t)(tap + 1) * row_bytes + index));
                const __m128i pair = weight_pair(weight[tap], last ? 0 : weight[tap + 1]);
                const __m128i low = _mm_unpacklo_epi8(a, b), high = _mm_unpackhi_epi8(a, b);
                sums[0] = _mm_add_epi32(sums[0], _mm_madd_epi16(_mm_unpacklo_epi8(low, zero), pair));
                sums[1] = _mm_add_epi32(sums[1], _mm_madd_epi16(_mm_unpackhi_epi8(low, zero), pair));
                sums[2] = _mm_add_epi32(sums[2], _mm_madd_epi16(_mm_unpacklo_epi8(high, zero), pair));
                sums[3] = _mm_add_epi32(sums[3], _mm_madd_epi16(_mm_unpackhi_epi8(high, zero), pair));
            }
            for (int part = 0; part < 4; part++) sums[part] = _mm_srai_epi32(sums[part], IMAGO_PRECISION);
            const __m128i packed = _mm_packus_epi16(_mm_packs_epi32(sums[0], sums[1]), _mm_packs_epi32(sums[2], sums[3]));
            _mm_storeu_si128((__m128i *)(target + index), packed);
        }
#endif
        for (; index < row_bytes; index++) {
            int32_t sum = 1 << (IMAGO_PRECISION - 1);
            for (int32_t tap = 0; tap < count; tap++) sum += (int32_t)first[(size_t)tap * row_bytes + index] * weight[tap];
            target[index] = clamp_sample(sum);
        }
    }
}
