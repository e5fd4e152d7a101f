// See CJPEGDC.h. Written from ITU-T T.81 (the JPEG standard); names follow it: Ss/Se/Ah/Al for a
// scan's spectral selection and successive approximation, H/V for sampling factors.
#include "CJPEGDC.h"

#include <stdlib.h>
#include <string.h>

// Codes up to this many bits are decoded with one table lookup; longer ones (rare) canonically.
#define FAST_BITS 11
#define MAX_SCANS 500 // as TurboJPEG's TJFLAG_LIMITSCANS
#define MAX_COMPONENTS 3

typedef struct {
    // fast[next FAST_BITS bits]: 0 when the code is longer. DC tables: the code and the difference
    // after it (see dc_entry_with_difference). AC tables: the bits to drop and the positions
    // advanced in the block, for the first symbol alone and for it and the next together when
    // both fit in FAST_BITS (see ac_entry).
    uint32_t fast[1 << FAST_BITS];
    int32_t maxcode[18]; // largest code of each length, -1 when none; [17] is a sentinel
    int32_t valoffset[17];
    uint8_t values[256];
    int defined;
} huffman_table;

typedef struct {
    int id, h, v, quant;
    int blocks_wide, blocks_high;   // this component's blocks in a non-interleaved scan
    int stride, rows;               // its block array, padded to whole MCUs
    int16_t *dc;                    // the DC coefficient of each block, as stored (shifted by Al)
    int dc_quant;                   // DC quantizer, latched at the component's first scan
    int has_dc;                     // a first DC scan has been read
} component;

typedef struct {
    const uint8_t *p, *end;
    uint64_t bits;    // next bits of the entropy-coded data, most significant first
    int count;        // how many of `bits` are valid
    int fake_bytes;   // zero bytes fed in at a marker or the end of data
} bit_reader;

typedef struct {
    const uint8_t *data, *end;
    int width, height, progressive, frame_seen;
    int component_count, hmax, vmax, mcus_wide, mcus_high;
    component components[MAX_COMPONENTS];
    int quant_dc[4], quant_defined[4];
    huffman_table dc_tables[4], ac_tables[4];
    int restart_interval;
} decoder;

static uint64_t load_be64(const uint8_t *p) {
    uint64_t value;
    memcpy(&value, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    value = __builtin_bswap64(value);
#endif
    return value;
}

// The byte-at-a-time refill: stuffed 0xFF 0x00 pairs become 0xFF; at a marker or at the end, zero
// bytes are fed and counted, and the position stays at the marker.
__attribute__((always_inline)) static inline void refill_slowly(bit_reader *r) {
    while (r->count < 56) {
        uint64_t byte = 0;
        if (r->p < r->end && *r->p != 0xFF) {
            byte = *r->p++;
        } else if (r->end - r->p >= 2 && r->p[1] == 0x00) {
            byte = 0xFF;
            r->p += 2;
        } else {
            r->fake_bytes++;
        }
        r->bits |= byte << (56 - r->count);
        r->count += 8;
    }
}

// Tops `bits` up to 56–63 valid bits. The common case (eight bytes ahead, none of them 0xFF) is a
// load, a test and two adds.
__attribute__((always_inline)) static inline void refill(bit_reader *r) {
    if (__builtin_expect(r->end - r->p >= 8, 1)) {
        uint64_t word = load_be64(r->p);
        uint64_t inverted = ~word;
        // Take as many whole bytes as fit. The bits of the next, partial byte land below `count`
        // too; they are the same bits the next refill ORs in.
        if (__builtin_expect(((inverted - 0x0101010101010101ULL) & ~inverted & 0x8080808080808080ULL) == 0, 1)) {
            r->bits |= word >> r->count;
            r->p += (63 - r->count) >> 3;
            r->count |= 56;
            return;
        }
    }
    refill_slowly(r);
}

__attribute__((always_inline)) static inline void drop(bit_reader *r, int n) {
    r->bits <<= n;
    r->count -= n;
}

// Whether the data ran out (a marker or the end) before the bits decoded so far.
__attribute__((always_inline)) static inline int read_past_data(const bit_reader *r) {
    return r->fake_bytes * 8 > r->count;
}

// A value of `size` bits as T.81's EXTEND: the upper half positive, the lower half negative.
static inline int extend(int value, int size) {
    return size == 0 ? 0 : value < (1 << (size - 1)) ? value - (1 << size) + 1 : value;
}

static inline int receive_extend(bit_reader *r, int size) {
    if (size == 0) return 0;
    int value = (int)(r->bits >> (64 - size));
    drop(r, size);
    return extend(value, size);
}

// A DC table entry for a code and the value after it together: bits to drop | 0x80 | the
// difference << 16. (Without 0x80: the code's length | the value's size << 8.)
static uint32_t dc_entry_with_difference(int bits, int difference) {
    return (uint32_t)bits | 0x80 | (uint32_t)(uint16_t)(int16_t)difference << 16;
}

// The symbol of a code longer than FAST_BITS, and its length; 0 length for an invalid code.
static int decode_slow(const huffman_table *t, const bit_reader *r, int *length) {
    for (int l = FAST_BITS + 1; l <= 16; l++) {
        int32_t code = (int32_t)(r->bits >> (64 - l));
        if (code <= t->maxcode[l]) {
            int index = t->valoffset[l] + code;
            if (index < 0 || index > 255) break;
            *length = l;
            return t->values[index];
        }
    }
    *length = 0;
    return 0;
}

// An AC symbol's bits (code length + size of the value that follows) and the positions it
// advances in the block: run + 1; 16 for ZRL (run 15, size 0); 64 for an end of block.
static void ac_symbol(int symbol, int length, int *bits, int *advance) {
    int run = symbol >> 4, size = symbol & 15;
    *bits = length + size;
    *advance = size ? run + 1 : (run == 15 ? 16 : 64);
}

// first bits | first advance << 5 | both bits << 12 | both advance << 17 (both = first when the
// second symbol does not fit or the first ends the block).
static uint32_t ac_entry(int bits1, int advance1, int bits, int advance) {
    return (uint32_t)bits1 | (uint32_t)advance1 << 5 | (uint32_t)bits << 12 | (uint32_t)advance << 17;
}

static int build_table(huffman_table *t, int is_ac, const uint8_t counts[16], const uint8_t *values, int total) {
    memset(t, 0, sizeof *t);
    memcpy(t->values, values, (size_t)total);
    // Canonical codes (T.81 Annex C); lengths and symbols of the short ones for the fast table.
    int code = 0, k = 0;
    uint8_t short_length[1 << FAST_BITS] = {0}, short_symbol[1 << FAST_BITS];
    for (int l = 1; l <= 16; l++) {
        int n = counts[l - 1];
        t->valoffset[l] = k - code;
        t->maxcode[l] = n ? code + n - 1 : -1;
        for (int i = 0; i < n; i++, k++, code++) {
            if (code + 1 >= (1 << l)) return 0; // more codes than this length holds (all ones is not a code)
            if (l > FAST_BITS) continue;
            int symbol = values[k];
            if (!is_ac && symbol > 11) return 0; // DC differences have at most 11 bits in 8-bit JPEG
            int shift = FAST_BITS - l;
            for (int fill = 0; fill < (1 << shift); fill++) {
                short_length[(code << shift) | fill] = (uint8_t)l;
                short_symbol[(code << shift) | fill] = (uint8_t)symbol;
            }
        }
        code <<= 1;
    }
    t->maxcode[17] = 0x7fffffff;
    for (int i = 0; i < total; i++)
        if (is_ac && (values[i] & 15) > 10) return 0; // AC values have at most 10 bits in 8-bit JPEG
    for (int index = 0; index < (1 << FAST_BITS); index++) {
        int l = short_length[index];
        if (!l) continue;
        if (!is_ac) {
            int size = short_symbol[index];
            if (l + size <= FAST_BITS) {
                int value = (index >> (FAST_BITS - l - size)) & ((1 << size) - 1);
                t->fast[index] = dc_entry_with_difference(l + size, extend(value, size));
            } else {
                t->fast[index] = (uint32_t)(l | size << 8);
            }
            continue;
        }
        int bits1, advance1;
        ac_symbol(short_symbol[index], l, &bits1, &advance1);
        int bits = bits1, advance = advance1;
        if (advance1 < 64 && bits1 < FAST_BITS) {
            int rest = (index << bits1) & ((1 << FAST_BITS) - 1), l2 = short_length[rest];
            int bits2, advance2;
            if (l2) {
                ac_symbol(short_symbol[rest], l2, &bits2, &advance2);
                if (bits1 + bits2 <= FAST_BITS) {
                    bits += bits2;
                    advance += advance2;
                }
            }
        }
        t->fast[index] = ac_entry(bits1, advance1, bits, advance);
    }
    t->defined = 1;
    return 1;
}

static int read16(const uint8_t *p) { return p[0] << 8 | p[1]; }

static imago_jpeg_dc_status read_dqt(decoder *d, const uint8_t *p, int length) {
    while (length > 0) {
        int precision = p[0] >> 4, id = p[0] & 15;
        int size = 1 + 64 * (precision ? 2 : 1);
        if (precision > 1 || id > 3 || length < size) return IMAGO_JPEG_DC_DAMAGED;
        d->quant_dc[id] = precision ? read16(p + 1) : p[1];
        d->quant_defined[id] = 1;
        p += size;
        length -= size;
    }
    return IMAGO_JPEG_DC_OK;
}

static imago_jpeg_dc_status read_dht(decoder *d, const uint8_t *p, int length) {
    while (length > 0) {
        if (length < 17) return IMAGO_JPEG_DC_DAMAGED;
        int kind = p[0] >> 4, id = p[0] & 15, total = 0;
        if (kind > 1 || id > 3) return IMAGO_JPEG_DC_DAMAGED;
        for (int i = 0; i < 16; i++) total += p[1 + i];
        if (total > 256 || length < 17 + total) return IMAGO_JPEG_DC_DAMAGED;
        huffman_table *t = kind ? &d->ac_tables[id] : &d->dc_tables[id];
        if (!build_table(t, kind, p + 1, p + 17, total)) return IMAGO_JPEG_DC_DAMAGED;
        p += 17 + total;
        length -= 17 + total;
    }
    return IMAGO_JPEG_DC_OK;
}

static imago_jpeg_dc_status read_sof(decoder *d, const uint8_t *p, int length) {
    if (d->frame_seen || length < 6) return IMAGO_JPEG_DC_DAMAGED;
    d->frame_seen = 1;
    if (p[0] != 8) return IMAGO_JPEG_DC_UNSUPPORTED;
    int height = read16(p + 1), width = read16(p + 3), count = p[5];
    if (height == 0) return IMAGO_JPEG_DC_UNSUPPORTED; // height given later by DNL
    if (width != d->width || height != d->height) return IMAGO_JPEG_DC_DAMAGED;
    if (count != 1 && count != 3) return IMAGO_JPEG_DC_UNSUPPORTED;
    if (length < 6 + 3 * count) return IMAGO_JPEG_DC_DAMAGED;
    d->component_count = count;
    d->hmax = d->vmax = 1;
    for (int i = 0; i < count; i++) {
        component *c = &d->components[i];
        c->id = p[6 + 3 * i];
        c->h = p[7 + 3 * i] >> 4;
        c->v = p[7 + 3 * i] & 15;
        c->quant = p[8 + 3 * i];
        if (c->h < 1 || c->h > 4 || c->v < 1 || c->v > 4 || c->quant > 3) return IMAGO_JPEG_DC_DAMAGED;
        if (c->h > d->hmax) d->hmax = c->h;
        if (c->v > d->vmax) d->vmax = c->v;
    }
    d->mcus_wide = (width + 8 * d->hmax - 1) / (8 * d->hmax);
    d->mcus_high = (height + 8 * d->vmax - 1) / (8 * d->vmax);
    for (int i = 0; i < count; i++) {
        component *c = &d->components[i];
        // Replication needs whole ratios (libjpeg-turbo handles the rest).
        if (d->hmax % c->h || d->vmax % c->v) return IMAGO_JPEG_DC_UNSUPPORTED;
        int samples_wide = (width * c->h + d->hmax - 1) / d->hmax;
        int samples_high = (height * c->v + d->vmax - 1) / d->vmax;
        c->blocks_wide = (samples_wide + 7) / 8;
        c->blocks_high = (samples_high + 7) / 8;
        c->stride = d->mcus_wide * c->h;
        c->rows = d->mcus_high * c->v;
        c->dc = calloc((size_t)c->stride * (size_t)c->rows, sizeof(int16_t));
        if (!c->dc) return IMAGO_JPEG_DC_UNSUPPORTED;
    }
    return IMAGO_JPEG_DC_OK;
}

// Skips the entropy-coded data from `p` to the next marker that is not a restart marker.
static const uint8_t *skip_entropy_data(const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        const uint8_t *ff = memchr(p, 0xFF, (size_t)(end - p));
        if (!ff || ff + 1 >= end) return end;
        uint8_t next = ff[1];
        if (next != 0x00 && next != 0xFF && (next < 0xD0 || next > 0xD7)) return ff;
        p = ff + 1;
    }
    return end;
}

// Consumes a restart marker at the reader's position, after the interval's last MCU.
__attribute__((always_inline)) static inline int restart(bit_reader *r) {
    if (read_past_data(r)) return 0;
    const uint8_t *p = r->p;
    while (p < r->end && *p == 0xFF && p + 1 < r->end && p[1] == 0xFF) p++;
    if (r->end - p < 2 || p[0] != 0xFF || p[1] < 0xD0 || p[1] > 0xD7) return 0;
    r->p = p + 2;
    r->bits = 0;
    r->count = 0;
    r->fake_bytes = 0;
    return 1;
}

typedef struct {
    int count, ss, se, ah, al;
    component *components[4];
    const huffman_table *dc[4], *ac[4];
} scan;

// What a scan holds for a block: DC and AC (sequential), a progressive DC first scan or a DC
// refinement (one more bit).
typedef enum { SCAN_SEQUENTIAL, SCAN_DC_FIRST, SCAN_DC_REFINE } scan_kind;

// One block of a scan: its DC coefficient into `slot`, its AC codes (sequential) walked past.
__attribute__((always_inline)) static inline int decode_block(bit_reader *r, const scan *s, scan_kind kind, int i, int16_t *slot, int *predictor) {
    refill(r);
    if (kind != SCAN_DC_REFINE) {
        const huffman_table *t = s->dc[i];
        uint32_t entry = t->fast[r->bits >> (64 - FAST_BITS)];
        int difference;
        if (entry & 0x80) {
            drop(r, (int)entry & 31);
            difference = (int16_t)(entry >> 16);
        } else {
            int length, size;
            if (entry) {
                length = (int)entry & 31;
                size = (int)(entry >> 8) & 15;
            } else {
                size = decode_slow(t, r, &length);
                if (!length || size > 11) return 0;
            }
            drop(r, length);
            difference = receive_extend(r, size);
        }
        // Kept to 16 bits, as libjpeg's coefficients are: damaged data cannot overflow it.
        *predictor = (int16_t)(*predictor + difference);
        *slot = (int16_t)(*predictor * (1 << s->al));
    } else {
        if (r->bits >> 63) *slot |= (int16_t)(1 << s->al);
        drop(r, 1);
    }
    if (kind != SCAN_SEQUENTIAL) return 1;
    const huffman_table *t = s->ac[i];
    for (int k = 1;;) {
        if (r->count < 26) refill(r);
        uint32_t entry = t->fast[r->bits >> (64 - FAST_BITS)];
        if (entry) {
            int advance = (int)(entry >> 17);
            if (k + advance < 64) { // both symbols inside the block
                drop(r, (int)(entry >> 12) & 31);
                k += advance;
                continue;
            }
            // The block ends with the second symbol or, if the first reaches its end, the first.
            int advance1 = (int)(entry >> 5) & 127;
            drop(r, k + advance1 < 64 ? (int)(entry >> 12) & 31 : (int)entry & 31);
            return 1;
        }
        int length, symbol = decode_slow(t, r, &length), bits, advance;
        if (!length) return 0;
        ac_symbol(symbol, length, &bits, &advance);
        drop(r, bits);
        k += advance;
        if (k >= 64) return 1;
    }
}

// Every block of a scan, MCU by MCU. A non-interleaved scan (one component) is the component's own
// blocks in raster order, one per MCU; an interleaved one has each component's H × V blocks per MCU.
// Returns 0 for damaged data.
__attribute__((always_inline)) static inline int decode_blocks(const decoder *d, const scan *s, bit_reader *r, scan_kind kind) {
    int mcus_wide = d->mcus_wide, mcus_high = d->mcus_high;
    // The MCU's blocks in order: which of the scan's components, where in the MCU, and the MCU's
    // size in that component's blocks.
    int blocks = 0, index[10], row_offset[10], column_offset[10], mcu_wide[10], mcu_high[10];
    if (s->count == 1) {
        mcus_wide = s->components[0]->blocks_wide;
        mcus_high = s->components[0]->blocks_high;
        index[0] = row_offset[0] = column_offset[0] = 0;
        mcu_wide[0] = mcu_high[0] = 1;
        blocks = 1;
    } else {
        for (int i = 0; i < s->count; i++)
            for (int v = 0; v < s->components[i]->v; v++)
                for (int h = 0; h < s->components[i]->h; h++, blocks++) {
                    index[blocks] = i;
                    row_offset[blocks] = v;
                    column_offset[blocks] = h;
                    mcu_wide[blocks] = s->components[i]->h;
                    mcu_high[blocks] = s->components[i]->v;
                }
    }
    int predictors[4] = {0};
    int interval = d->restart_interval, left = interval;
    int16_t *slots[10];
    for (int my = 0; my < mcus_high; my++) {
        for (int b = 0; b < blocks; b++) {
            const component *c = s->components[index[b]];
            slots[b] = c->dc + (size_t)(my * mcu_high[b] + row_offset[b]) * (size_t)c->stride + column_offset[b];
        }
        for (int mx = 0; mx < mcus_wide; mx++) {
            if (interval && left-- == 0) {
                if (!restart(r)) return 0;
                memset(predictors, 0, sizeof predictors);
                left = interval - 1;
            }
            for (int b = 0; b < blocks; b++) {
                if (!decode_block(r, s, kind, index[b], slots[b], &predictors[index[b]])) return 0;
                slots[b] += mcu_wide[b];
            }
        }
    }
    return 1;
}

static imago_jpeg_dc_status decode_scan(decoder *d, const uint8_t *header, int length, const uint8_t **next) {
    if (!d->frame_seen || length < 1) return IMAGO_JPEG_DC_DAMAGED;
    scan s = {0};
    s.count = header[0];
    if (s.count < 1 || s.count > 4 || length != 4 + 2 * s.count) return IMAGO_JPEG_DC_DAMAGED;
    const uint8_t *tail = header + 1 + 2 * s.count;
    s.ss = tail[0];
    s.se = tail[1];
    s.ah = tail[2] >> 4;
    s.al = tail[2] & 15;
    int blocks_per_mcu = 0;
    for (int i = 0; i < s.count; i++) {
        int id = header[1 + 2 * i], tables = header[2 + 2 * i];
        if ((tables >> 4) > 3 || (tables & 15) > 3) return IMAGO_JPEG_DC_DAMAGED;
        component *c = NULL;
        for (int j = 0; j < d->component_count; j++)
            if (d->components[j].id == id) c = &d->components[j];
        if (!c) return IMAGO_JPEG_DC_DAMAGED;
        s.components[i] = c;
        s.dc[i] = &d->dc_tables[tables >> 4];
        s.ac[i] = &d->ac_tables[tables & 15];
        blocks_per_mcu += c->h * c->v;
    }
    if (s.count > 1 && blocks_per_mcu > 10) return IMAGO_JPEG_DC_DAMAGED;

    const uint8_t *data = header + length;
    if (d->progressive) {
        if (s.ss > 63 || s.se > 63 || s.ah > 13 || s.al > 13) return IMAGO_JPEG_DC_DAMAGED;
        if (s.ss != 0) { // an AC scan: nothing here for 1/8 scale
            *next = skip_entropy_data(data, d->end);
            return IMAGO_JPEG_DC_OK;
        }
        if (s.se != 0) return IMAGO_JPEG_DC_DAMAGED;
    } else {
        if (s.ss != 0 || s.se != 63 || s.ah != 0 || s.al != 0) return IMAGO_JPEG_DC_DAMAGED;
    }
    for (int i = 0; i < s.count; i++) {
        component *c = s.components[i];
        if (s.ah == 0 && !s.dc[i]->defined) return IMAGO_JPEG_DC_DAMAGED;
        if (s.se != 0 && !s.ac[i]->defined) return IMAGO_JPEG_DC_DAMAGED;
        if (s.ah != 0 && !c->has_dc) return IMAGO_JPEG_DC_DAMAGED;
        if (!c->has_dc) {
            if (!d->quant_defined[c->quant]) return IMAGO_JPEG_DC_DAMAGED;
            c->dc_quant = d->quant_dc[c->quant];
        }
    }

    bit_reader r = {.p = data, .end = d->end};
    int decoded = s.se != 0 ? decode_blocks(d, &s, &r, SCAN_SEQUENTIAL)
                : s.ah == 0 ? decode_blocks(d, &s, &r, SCAN_DC_FIRST)
                : decode_blocks(d, &s, &r, SCAN_DC_REFINE);
    if (!decoded) return IMAGO_JPEG_DC_DAMAGED;
    if (read_past_data(&r)) return IMAGO_JPEG_DC_DAMAGED;
    for (int i = 0; i < s.count; i++) s.components[i]->has_dc = 1;
    *next = skip_entropy_data(r.p, d->end);
    return IMAGO_JPEG_DC_OK;
}

static imago_jpeg_dc_status read_stream(decoder *d) {
    const uint8_t *p = d->data;
    if (d->end - p < 2 || p[0] != 0xFF || p[1] != 0xD8) return IMAGO_JPEG_DC_DAMAGED;
    p += 2;
    int scans = 0;
    for (;;) {
        // Fill bytes (0xFF) may precede a marker.
        while (p < d->end && *p == 0xFF && p + 1 < d->end && p[1] == 0xFF) p++;
        if (d->end - p < 2 || p[0] != 0xFF) break;
        int marker = p[1];
        p += 2;
        if (marker == 0xD9) break;                          // EOI
        if (marker >= 0xD0 && marker <= 0xD7) continue;     // a stray restart marker
        if (d->end - p < 2) break;
        int length = read16(p);
        if (length < 2 || d->end - p < length) return IMAGO_JPEG_DC_DAMAGED;
        const uint8_t *segment = p + 2;
        int size = length - 2;
        imago_jpeg_dc_status status = IMAGO_JPEG_DC_OK;
        p += length;
        switch (marker) {
        case 0xC0: case 0xC1: status = read_sof(d, segment, size); break;
        case 0xC2: d->progressive = 1; status = read_sof(d, segment, size); break;
        case 0xC3: case 0xC5: case 0xC6: case 0xC7: case 0xC9: case 0xCA: case 0xCB: case 0xCD: case 0xCE: case 0xCF:
            return IMAGO_JPEG_DC_UNSUPPORTED; // lossless, hierarchical or arithmetic-coded
        case 0xC4: status = read_dht(d, segment, size); break;
        case 0xDB: status = read_dqt(d, segment, size); break;
        case 0xDD:
            if (size < 2) return IMAGO_JPEG_DC_DAMAGED;
            d->restart_interval = read16(segment);
            break;
        case 0xDA:
            if (++scans > MAX_SCANS) return IMAGO_JPEG_DC_UNSUPPORTED;
            status = decode_scan(d, segment, size, &p);
            break;
        default: break; // APPn, COM and the rest carry nothing needed here
        }
        if (status != IMAGO_JPEG_DC_OK) return status;
    }
    if (!d->frame_seen) return IMAGO_JPEG_DC_DAMAGED;
    for (int i = 0; i < d->component_count; i++)
        if (!d->components[i].has_dc) return IMAGO_JPEG_DC_DAMAGED;
    return IMAGO_JPEG_DC_OK;
}

static inline uint8_t clamp(int value) { return value < 0 ? 0 : value > 255 ? 255 : (uint8_t)value; }

// Row `y` of the output as one component's samples, each block's sample repeated to fill its share
// of the row: the value libjpeg's 1×1 inverse DCT makes of the block's DC coefficient.
static void component_row(const decoder *d, const component *c, int y, int width, uint8_t *row) {
    const int16_t *blocks = c->dc + (size_t)(y / (d->vmax / c->v)) * (size_t)c->stride;
    int repeat = d->hmax / c->h, quant = c->dc_quant;
    if (repeat == 1) {
        for (int x = 0; x < width; x++) row[x] = clamp(((blocks[x] * quant + 4) >> 3) + 128);
    } else if (repeat == 2) {
        for (int x = 0; x + 1 < width; x += 2) row[x] = row[x + 1] = clamp(((blocks[x / 2] * quant + 4) >> 3) + 128);
        if (width % 2) row[width - 1] = clamp(((blocks[width / 2] * quant + 4) >> 3) + 128);
    } else {
        for (int x = 0; x < width; x++) row[x] = clamp(((blocks[x / repeat] * quant + 4) >> 3) + 128);
    }
}

static int write_pixels(const decoder *d, uint8_t *rgba) {
    int width = (d->width + 7) / 8, height = (d->height + 7) / 8;
    uint8_t *rows = malloc((size_t)width * 3);
    if (!rows) return 0;
    uint8_t *luma = rows, *blue = rows + width, *red = rows + 2 * width;
    // libjpeg's YCbCr to RGB (jdcolor.c): 16-bit fixed point, rounded the same way.
    const int one_half = 1 << 15;
    const int fix_1_402 = 91881, fix_1_772 = 116130, fix_0_714 = 46802, fix_0_344 = 22554;
    for (int y = 0; y < height; y++) {
        component_row(d, &d->components[0], y, width, luma);
        if (d->component_count == 1) {
            for (int x = 0; x < width; x++, rgba += 4) {
                rgba[0] = rgba[1] = rgba[2] = luma[x];
                rgba[3] = 255;
            }
            continue;
        }
        component_row(d, &d->components[1], y, width, blue);
        component_row(d, &d->components[2], y, width, red);
        for (int x = 0; x < width; x++, rgba += 4) {
            int l = luma[x], b = blue[x] - 128, r = red[x] - 128;
            rgba[0] = clamp(l + ((fix_1_402 * r + one_half) >> 16));
            rgba[1] = clamp(l + ((-fix_0_344 * b + -fix_0_714 * r + one_half) >> 16));
            rgba[2] = clamp(l + ((fix_1_772 * b + one_half) >> 16));
            rgba[3] = 255;
        }
    }
    free(rows);
    return 1;
}

imago_jpeg_dc_status imago_jpeg_decode_dc(const uint8_t *data, size_t size, int width, int height, uint8_t *rgba) {
    if (width <= 0 || height <= 0) return IMAGO_JPEG_DC_DAMAGED;
    decoder *d = calloc(1, sizeof *d);
    if (!d) return IMAGO_JPEG_DC_UNSUPPORTED;
    d->data = data;
    d->end = data + size;
    d->width = width;
    d->height = height;
    imago_jpeg_dc_status status = read_stream(d);
    if (status == IMAGO_JPEG_DC_OK && !write_pixels(d, rgba)) status = IMAGO_JPEG_DC_UNSUPPORTED;
    for (int i = 0; i < MAX_COMPONENTS; i++) free(d->components[i].dc);
    free(d);
    return status;
}
