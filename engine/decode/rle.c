/* RLE / bit-packed hybrid decoding (levels, dictionary indices, RLE booleans),
 * the deprecated BIT_PACKED level encoding, and data page v1 level sections.
 *
 * Format (parquet-format Encodings.md):
 *   run := varint header; header & 1 == 0: RLE run of (header >> 1) copies of a
 *          value stored in ceil(bit_width / 8) little-endian bytes;
 *          header & 1 == 1: (header >> 1) groups of 8 values bit-packed LSB-first,
 *          bit_width bytes per group.
 *
 * Speed: a bit-packed run is unpacked a whole group of 8 values per step by a
 * kernel specialized (through an always-inlined body and a switch) for each bit
 * width, so shifts and masks are constants.  The kernel loads the group as
 * 64-bit little-endian words, which may read up to 7 bytes past the group; the
 * fast path is used only where those bytes are inside the buffer, and groups
 * near the end go through a zero-padded copy instead.
 *
 * Tolerance: writers pad the last bit-packed run to whole groups, and some
 * truncate the padding.  Like arrow-rs and parquet-cpp, a run is accepted as
 * long as the values actually requested are present in the bytes; the run is
 * clamped to the values the remaining bytes hold.  A zero header (fastparquet
 * pads pages with zero bytes) ends the data. */
#include <string.h>

#include "encoding.h"

/* gcc -O2 does not fully unroll the 8-value kernels on its own; unrolled, every
 * shift and mask is a constant. */
#define PQ_UNROLL _Pragma("GCC unroll 8")

static const uint8_t empty_input[1];

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* ------------------------------------------------------------------ unpack kernels */

/* Unpacks one group of 8 values of bw (1..32) bits into out (uint32_t when
 * wide, else uint16_t).  Reads 8 * ceil(bw / 8) bytes from in.  Always inlined
 * with constant bw and wide, so every index, shift and mask folds. */
static inline __attribute__((always_inline)) void unpack8(const uint8_t *in, void *out,
                                                          const unsigned bw, const int wide)
{
    const unsigned words = (bw + 7) / 8; /* 8 * bw bits in 64-bit words */
    uint64_t w[4] = {0}; /* folded away once the loops unroll */
    PQ_UNROLL
    for (unsigned k = 0; k < words; k++) w[k] = load_le64(in + 8 * k);
    const uint64_t mask = ((uint64_t)1 << bw) - 1;
    PQ_UNROLL
    for (unsigned i = 0; i < 8; i++) {
        const unsigned bit = i * bw, wi = bit / 64, sh = bit % 64;
        uint64_t v = w[wi] >> sh;
        if (sh + bw > 64) v |= w[wi + 1] << (64 - sh);
        v &= mask;
        if (wide)
            ((uint32_t *)out)[i] = (uint32_t)v;
        else
            ((uint16_t *)out)[i] = (uint16_t)v;
    }
}

#define PQ_UNPACK_CASES(X)                                                                    \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)     \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30)       \
    X(31) X(32)

/* Unpacks `groups` whole groups; every load must be inside the buffer, i.e.
 * in + (groups - 1) * bw + 8 * ceil(bw / 8) <= end. */
static inline __attribute__((always_inline)) void unpack_groups(const uint8_t *in, void *out,
                                                                size_t groups, int bw,
                                                                const int wide)
{
    const size_t esz = wide ? 4 : 2;
    uint8_t *o = out;
    switch (bw) {
#define PQ_UNPACK_CASE(B)                                                                     \
    case B:                                                                                   \
        for (size_t g = 0; g < groups; g++) unpack8(in + g * (B), o + g * 8 * esz, (B), wide); \
        break;
        PQ_UNPACK_CASES(PQ_UNPACK_CASE)
#undef PQ_UNPACK_CASE
    default: /* bit width 0: every value is 0 */
        memset(out, 0, groups * 8 * esz);
        break;
    }
}

static void unpack_groups_u32(const uint8_t *in, uint32_t *out, size_t groups, int bw)
{
    unpack_groups(in, out, groups, bw, 1);
}

static void unpack_groups_u16(const uint8_t *in, uint16_t *out, size_t groups, int bw)
{
    unpack_groups(in, out, groups, bw, 0);
}

/* Unpacks groups starting at in, using the fast kernel while its over-reads stay
 * inside [in, end) and a zero-padded copy for the rest.  The caller guarantees
 * that the groups' own bytes (groups * bw) are present, except that the last
 * group may be short (a truncated final run): its missing bits read as 0. */
static void unpack_checked(const uint8_t *in, const uint8_t *end, void *out, size_t groups,
                           int bw, int wide)
{
    const size_t esz = wide ? 4 : 2;
    const size_t load_bytes = 8 * (((size_t)bw + 7) / 8);
    size_t fast = 0;
    if (bw == 0) {
        fast = groups;
    } else if ((size_t)(end - in) >= load_bytes) {
        fast = ((size_t)(end - in) - load_bytes) / (size_t)bw + 1;
        if (fast > groups) fast = groups;
    }
    if (fast) {
        if (wide)
            unpack_groups_u32(in, out, fast, bw);
        else
            unpack_groups_u16(in, out, fast, bw);
    }
    for (size_t g = fast; g < groups; g++) {
        uint8_t padded[40] = {0};
        const uint8_t *src = in + g * (size_t)bw;
        size_t avail = src < end ? (size_t)(end - src) : 0;
        if (avail > (size_t)bw) avail = (size_t)bw;
        if (avail) memcpy(padded, src, avail);
        void *dst = (uint8_t *)out + g * 8 * esz;
        if (wide)
            unpack_groups_u32(padded, dst, 1, bw);
        else
            unpack_groups_u16(padded, dst, 1, bw);
    }
}

/* ------------------------------------------------------------------ RLE hybrid */

int pq_bit_width(uint32_t max_value)
{
    return max_value ? 32 - __builtin_clz(max_value) : 0;
}

int pq_rle_init(pq_rle_dec *d, const uint8_t *p, size_t len, int bit_width, pq_error *err)
{
    memset(d, 0, sizeof *d);
    if (bit_width < 0 || bit_width > 32)
        return PQ_CORRUPT(err, "RLE bit width %d out of range (0..32)", bit_width);
    if (!p) {
        p = empty_input; /* keeps pointer arithmetic defined for an empty input */
        len = 0;
    }
    d->p = p;
    d->end = p + len;
    d->packed_p = p;
    d->bit_width = bit_width;
    d->group_pos = 8;
    return PQ_OK;
}

/* Reads the next run header.  `done` / `n` only feed the error message. */
static int rle_next_run(pq_rle_dec *d, size_t done, size_t n, pq_error *err)
{
    const int bw = d->bit_width;
    for (;;) {
        if (d->p >= d->end)
            return PQ_CORRUPT(err, "RLE data ends after %zu of %zu values", done, n);
        uint64_t header = 0;
        unsigned shift = 0;
        for (;;) {
            if (d->p >= d->end || shift > 63)
                return PQ_CORRUPT(err, "RLE run header truncated or too long");
            uint8_t b = *d->p++;
            header |= (uint64_t)(b & 0x7f) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        if (header == 0) { /* zero padding after the last run */
            d->p = d->end;
            continue;
        }
        size_t avail = (size_t)(d->end - d->p);
        if (header & 1) {
            uint64_t groups = header >> 1;
            if (groups > UINT32_MAX / 8)
                return PQ_CORRUPT(err, "bit-packed run of %llu groups is too long",
                                  (unsigned long long)groups);
            uint64_t count = groups * 8;
            uint64_t bytes = groups * (uint64_t)bw;
            d->packed_p = d->p;
            d->group_pos = 8;
            if (bytes <= avail) {
                d->packed_left = (uint32_t)count;
                d->p += bytes;
            } else {
                /* a final run cut short: keep the values its bytes hold */
                uint64_t present = (uint64_t)avail * 8 / (uint64_t)bw;
                d->packed_left = (uint32_t)(present < count ? present : count);
                d->p = d->end;
            }
            if (d->packed_left) return PQ_OK;
        } else {
            uint64_t count = header >> 1;
            if (count > UINT32_MAX)
                return PQ_CORRUPT(err, "RLE run of %llu values is too long",
                                  (unsigned long long)count);
            size_t vbytes = ((size_t)bw + 7) / 8;
            if (vbytes > avail) return PQ_CORRUPT(err, "RLE run value truncated");
            uint32_t v = 0;
            for (size_t i = 0; i < vbytes; i++) v |= (uint32_t)d->p[i] << (8 * i);
            d->p += vbytes;
            if (bw < 32 && (v >> bw) != 0)
                return PQ_CORRUPT(err, "RLE run value %u does not fit in %d bits", v, bw);
            d->rle_value = v;
            d->rle_left = (uint32_t)count;
            return PQ_OK;
        }
    }
}

/* Unpacks the next group of the bit-packed run into d->group. */
static void rle_buffer_group(pq_rle_dec *d)
{
    const size_t bw = (size_t)d->bit_width;
    unpack_checked(d->packed_p, d->end, d->group, 1, (int)bw, 1);
    size_t avail = (size_t)(d->end - d->packed_p);
    d->packed_p += bw < avail ? bw : avail;
    d->group_pos = 0;
}

/* Shared body of read_u32 / read_u16, specialized by the constant `wide`. */
static inline __attribute__((always_inline)) int rle_read(pq_rle_dec *d, void *out, size_t n,
                                                          const int wide, pq_error *err)
{
    uint32_t *o32 = out;
    uint16_t *o16 = out;
    const size_t bw = (size_t)d->bit_width;
    size_t done = 0;
    while (done < n) {
        size_t want = n - done;
        if (d->rle_left) {
            size_t m = want < d->rle_left ? want : d->rle_left;
            uint32_t v = d->rle_value;
            if (wide) {
                for (size_t i = 0; i < m; i++) o32[done + i] = v;
            } else {
                for (size_t i = 0; i < m; i++) o16[done + i] = (uint16_t)v;
            }
            d->rle_left -= (uint32_t)m;
            done += m;
        } else if (d->packed_left) {
            if (d->group_pos < 8) {
                size_t m = 8 - d->group_pos;
                if (m > d->packed_left) m = d->packed_left;
                if (m > want) m = want;
                const uint32_t *g = d->group + d->group_pos;
                if (wide) {
                    for (size_t i = 0; i < m; i++) o32[done + i] = g[i];
                } else {
                    for (size_t i = 0; i < m; i++) o16[done + i] = (uint16_t)g[i];
                }
                d->group_pos += (uint32_t)m;
                d->packed_left -= (uint32_t)m;
                done += m;
            } else if (want >= 8 && d->packed_left >= 8) {
                size_t groups = (want < d->packed_left ? want : d->packed_left) / 8;
                void *dst = wide ? (void *)(o32 + done) : (void *)(o16 + done);
                unpack_checked(d->packed_p, d->end, dst, groups, (int)bw, wide);
                d->packed_p += groups * bw;
                d->packed_left -= (uint32_t)(groups * 8);
                done += groups * 8;
            } else {
                rle_buffer_group(d);
            }
        } else {
            PQ_TRY(rle_next_run(d, done, n, err));
        }
    }
    return PQ_OK;
}

int pq_rle_read_u32(pq_rle_dec *d, uint32_t *out, size_t n, pq_error *err)
{
    return rle_read(d, out, n, 1, err);
}

int pq_rle_read_u16(pq_rle_dec *d, uint16_t *out, size_t n, pq_error *err)
{
    if (d->bit_width > 16)
        return pq_fail(err, PQ_E_USAGE, "RLE bit width %d too wide for 16-bit output",
                       d->bit_width);
    return rle_read(d, out, n, 0, err);
}

int pq_rle_skip(pq_rle_dec *d, size_t n, pq_error *err)
{
    const size_t bw = (size_t)d->bit_width;
    size_t done = 0;
    while (done < n) {
        size_t want = n - done;
        if (d->rle_left) {
            size_t m = want < d->rle_left ? want : d->rle_left;
            d->rle_left -= (uint32_t)m;
            done += m;
        } else if (d->packed_left) {
            if (d->group_pos < 8) {
                size_t m = 8 - d->group_pos;
                if (m > d->packed_left) m = d->packed_left;
                if (m > want) m = want;
                d->group_pos += (uint32_t)m;
                d->packed_left -= (uint32_t)m;
                done += m;
            } else if (want >= 8 && d->packed_left >= 8) {
                /* whole groups are skipped without unpacking; their bytes are
                 * present because packed_left was clamped to them */
                size_t groups = (want < d->packed_left ? want : d->packed_left) / 8;
                d->packed_p += groups * bw;
                d->packed_left -= (uint32_t)(groups * 8);
                done += groups * 8;
            } else {
                rle_buffer_group(d);
            }
        } else {
            PQ_TRY(rle_next_run(d, done, n, err));
        }
    }
    return PQ_OK;
}

bool pq_rle_is_one_run(const pq_rle_dec *d, uint32_t value, size_t n)
{
    pq_rle_dec peek = *d;
    pq_error ignore;
    if (!peek.rle_left && !peek.packed_left && rle_next_run(&peek, 0, n, &ignore) != PQ_OK)
        return false;
    return !peek.packed_left && peek.rle_left >= n && peek.rle_value == value;
}

/* ------------------------------------------------------------------ BIT_PACKED levels */

int pq_bitpacked_levels_read(const uint8_t *p, size_t len, int bit_width, uint16_t *out, size_t n,
                             pq_error *err)
{
    if (bit_width < 0 || bit_width > 16)
        return PQ_CORRUPT(err, "BIT_PACKED level bit width %d out of range (0..16)", bit_width);
    size_t bits;
    if (pq_mul_overflows(n, (size_t)bit_width, &bits))
        return PQ_CORRUPT(err, "BIT_PACKED level count %zu too large", n);
    size_t need = bits / 8 + (bits % 8 != 0);
    if (need > len)
        return PQ_CORRUPT(err, "BIT_PACKED levels need %zu bytes, %zu present", need, len);
    if (bit_width == 0) {
        memset(out, 0, n * sizeof *out);
        return PQ_OK;
    }
    /* MSB-first: the first value occupies the high bits of the first byte. */
    const unsigned bw = (unsigned)bit_width;
    const uint32_t mask = ((uint32_t)1 << bw) - 1;
    uint32_t acc = 0;
    unsigned nbits = 0;
    const uint8_t *q = p;
    for (size_t i = 0; i < n; i++) {
        while (nbits < bw) {
            acc = (acc << 8) | *q++;
            nbits += 8;
        }
        nbits -= bw;
        out[i] = (uint16_t)((acc >> nbits) & mask);
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ data page v1 levels */

int pq_levels_v1_read(pq_encoding enc, const uint8_t *p, size_t len, int max_level, uint16_t *out,
                      size_t n, size_t *consumed, bool *all_max, pq_error *err)
{
    *consumed = 0;
    if (all_max) *all_max = false;
    if (max_level < 0 || max_level > 0xffff)
        return pq_fail(err, PQ_E_USAGE, "max level %d out of range", max_level);
    if (max_level == 0) { /* such a page has no level section at all */
        memset(out, 0, n * sizeof *out);
        return PQ_OK;
    }
    if (!p) {
        p = empty_input;
        len = 0;
    }
    const int bw = pq_bit_width((uint32_t)max_level);
    if (enc == PQ_ENC_RLE) {
        if (len < 4) return PQ_CORRUPT(err, "RLE levels: length prefix truncated");
        uint32_t rlen = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                        (uint32_t)p[3] << 24;
        if (rlen > len - 4)
            return PQ_CORRUPT(err, "RLE levels: length %u overruns the page (%zu bytes left)",
                              rlen, len - 4);
        pq_rle_dec d;
        PQ_TRY(pq_rle_init(&d, p + 4, rlen, bw, err));
        *consumed = 4 + (size_t)rlen;
        if (all_max && pq_rle_is_one_run(&d, (uint32_t)max_level, n)) {
            *all_max = true;
            return PQ_OK;
        }
        if (pq_rle_read_u16(&d, out, n, err) != PQ_OK) {
            pq_error_prefix(err, "levels: ");
            *consumed = 0;
            return PQ_ERR;
        }
    } else if (enc == PQ_ENC_BIT_PACKED) {
        PQ_TRY(pq_bitpacked_levels_read(p, len, bw, out, n, err));
        *consumed = (n * (size_t)bw + 7) / 8;
    } else {
        return pq_fail(err, PQ_E_UNSUPPORTED, "level encoding %s not supported",
                       pq_encoding_name(enc));
    }
    /* A level above the maximum fits in the bit width when max_level is not
     * 2^bw - 1; reject it here so callers can index by level safely. */
    if ((uint32_t)max_level != ((uint32_t)1 << bw) - 1) {
        uint16_t top = 0;
        for (size_t i = 0; i < n; i++) top = out[i] > top ? out[i] : top;
        if (top > max_level)
            return PQ_CORRUPT(err, "level %u exceeds the maximum level %d", top, max_level);
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ encoder */

static void put_varint(uint8_t **p, uint64_t v)
{
    while (v >= 0x80) {
        *(*p)++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *(*p)++ = (uint8_t)v;
}

/* Whether v[i..i+8) are one value (a run worth an RLE header). */
static inline bool run_of_8(const uint32_t *v, size_t n, size_t i)
{
    if (n - i < 8) return false;
    for (size_t k = 1; k < 8; k++)
        if (v[i + k] != v[i]) return false;
    return true;
}

/* Appends the packed group(s) v[from..from+8*groups) (values past n are 0). */
static void pack_groups(uint8_t **p, const uint32_t *v, size_t n, size_t from, size_t groups, int bw)
{
    size_t bytes = groups * (size_t)bw;
    memset(*p, 0, bytes);
    uint8_t *out = *p;
    size_t bit = 0;
    for (size_t i = from; i < from + groups * 8; i++, bit += (size_t)bw) {
        uint64_t x = i < n ? v[i] : 0;
        size_t byte = bit / 8, sh = bit % 8;
        x <<= sh;
        for (size_t k = 0; x && k < 8; k++, x >>= 8) out[byte + k] |= (uint8_t)x;
    }
    *p += bytes;
}

size_t pq_rle_encode_bound(size_t n, int bit_width)
{
    /* Each 8 values are a bit-packed group (bit_width bytes, a header byte
     * at most) or part of an RLE run (a header and a value per 8 or more). */
    size_t groups = n / 8 + 1;
    size_t value_bytes = (size_t)(bit_width + 7) / 8;
    return groups * (1 + (size_t)bit_width) + groups * (10 + value_bytes) + 16;
}

int pq_rle_encode(const uint32_t *v, size_t n, int bit_width, pq_buf *out)
{
    if (bit_width < 0 || bit_width > 32) return -1;
    if (pq_buf_reserve(out, pq_rle_encode_bound(n, bit_width))) return -1;
    uint8_t *p = (uint8_t *)out->data + out->len;
    const size_t value_bytes = (size_t)(bit_width + 7) / 8;
    size_t i = 0;
    while (i < n) {
        if (run_of_8(v, n, i)) {
            size_t j = i + 8;
            while (j < n && v[j] == v[i]) j++;
            put_varint(&p, (uint64_t)(j - i) << 1);
            uint32_t x = v[i];
            for (size_t k = 0; k < value_bytes; k++, x >>= 8) *p++ = (uint8_t)x;
            i = j;
            continue;
        }
        /* Bit-packed groups until a run of 8 starts at a group boundary
         * (at most 63 groups: a one-byte header). */
        size_t from = i, groups = 0;
        while (i < n && groups < 63 && (groups == 0 || !run_of_8(v, n, i))) {
            i += 8;
            groups++;
        }
        if (i > n) i = n;
        put_varint(&p, (uint64_t)groups << 1 | 1);
        pack_groups(&p, v, n, from, groups, bit_width);
    }
    out->len = (size_t)((char *)p - out->data);
    return 0;
}
