/* DELTA_BINARY_PACKED (INT32, INT64), DELTA_LENGTH_BYTE_ARRAY and
 * DELTA_BYTE_ARRAY (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY).
 *
 * DELTA_BINARY_PACKED (parquet-format Encodings.md):
 *   header := <block size> <miniblocks per block> <total values> <first value (zigzag)>
 *   block  := <min delta (zigzag)> <one bit width byte per miniblock> <miniblocks>
 * each miniblock holds block_size / miniblocks deltas (a multiple of 32),
 * bit-packed LSB-first at its width (0..64); value = previous + min delta +
 * packed delta, wrapping as uint64 (INT32 results are the low 32 bits, which
 * is the same as wrapping in 32 bits).  In the last block the miniblocks after
 * the values end may have any width byte and no data; the last miniblock that
 * holds values is padded to full size, though some writers cut the padding,
 * which a standalone DELTA_BINARY_PACKED page tolerates when the values
 * themselves are present.
 *
 * Deltas are unpacked a group of 8 at a time by a width-specialized kernel
 * straight into the output when the caller wants whole groups; a partly
 * consumed group waits in the state's buffer.
 *
 * DELTA_LENGTH_BYTE_ARRAY: lengths as DELTA_BINARY_PACKED, then all bytes
 * concatenated: values are views into the page.  DELTA_BYTE_ARRAY: prefix
 * lengths and suffix lengths (both DELTA_BINARY_PACKED), then the suffixes
 * concatenated; value i = first prefix_i bytes of value i-1 + suffix i.
 * Values with an empty prefix are views into the page; the others are rebuilt
 * into the caller's `storage` arena, one allocation per chunk.  The previous
 * value is also kept in decoder-owned memory so skips and the next read can
 * continue from it whatever the caller does with `storage`. */
#include <stdlib.h>
#include <string.h>

#include "encoding_internal.h"

/* gcc -O2 does not fully unroll the 8-value kernels on its own; unrolled, every
 * shift and mask is a constant. */
#define PQ_UNROLL _Pragma("GCC unroll 8")

/* Values decoded per chunk into stack scratch (lengths, INT32 narrowing). */
#define DELTA_CHUNK 256
/* DELTA_BYTE_ARRAY can describe values far larger than the page (each value
 * repeating a long prefix); one read may rebuild at most this many bytes. */
#define DBA_MAX_REBUILD ((uint64_t)1 << 30)

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v; /* little-endian host: encoding.c refuses others */
}

static inline uint64_t zigzag_decode(uint64_t v) { return (v >> 1) ^ (0 - (v & 1)); }

static int read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out, const char *what,
                     pq_error *err)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        if (p >= end) return PQ_CORRUPT(err, "DELTA_BINARY_PACKED %s truncated", what);
        if (shift > 63) return PQ_CORRUPT(err, "DELTA_BINARY_PACKED %s varint too long", what);
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) break;
    }
    *pp = p;
    *out = v;
    return PQ_OK;
}

/* ------------------------------------------------------------------ unpack kernel */

/* Unpacks 8 values of bw (1..64) bits into out, reading 8 * ceil(bw / 8) bytes
 * from in.  Always inlined with a constant bw so shifts and masks fold. */
static inline __attribute__((always_inline)) void unpack8_u64(const uint8_t *in, uint64_t *out,
                                                              const unsigned bw)
{
    const unsigned words = (bw + 7) / 8;
    uint64_t w[8] = {0}; /* folded away once the loops unroll */
    PQ_UNROLL
    for (unsigned k = 0; k < words; k++) w[k] = load_le64(in + 8 * k);
    const uint64_t mask = bw == 64 ? ~(uint64_t)0 : ((uint64_t)1 << (bw & 63)) - 1;
    PQ_UNROLL
    for (unsigned i = 0; i < 8; i++) {
        const unsigned bit = i * bw, wi = bit / 64, sh = bit % 64;
        uint64_t v = w[wi] >> sh;
        if (sh + bw > 64) v |= w[(wi + 1) & 7] << ((64 - sh) & 63);
        out[i] = v & mask;
    }
}

#define PQ_DELTA_CASES(X)                                                                     \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16)     \
    X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30)       \
    X(31) X(32) X(33) X(34) X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44)       \
    X(45) X(46) X(47) X(48) X(49) X(50) X(51) X(52) X(53) X(54) X(55) X(56) X(57) X(58)       \
    X(59) X(60) X(61) X(62) X(63) X(64)

/* Unpacks whole groups; every load must be inside the buffer. */
static void unpack_groups_u64(const uint8_t *in, uint64_t *out, size_t groups, unsigned bw)
{
    switch (bw) {
#define PQ_DELTA_CASE(B)                                                                      \
    case B:                                                                                   \
        for (size_t g = 0; g < groups; g++) unpack8_u64(in + g * (B), out + 8 * g, (B));      \
        break;
        PQ_DELTA_CASES(PQ_DELTA_CASE)
#undef PQ_DELTA_CASE
    default:
        memset(out, 0, groups * 8 * sizeof *out);
        break;
    }
}

/* ------------------------------------------------------------------ DELTA_BINARY_PACKED */

static int dbp_init(pq_delta_state *s, const uint8_t *p, const uint8_t *end, pq_error *err)
{
    memset(s, 0, sizeof *s);
    uint64_t block_size = 0, miniblocks = 0, total = 0, first = 0;
    PQ_TRY(read_uleb(&p, end, &block_size, "block size", err));
    PQ_TRY(read_uleb(&p, end, &miniblocks, "miniblock count", err));
    PQ_TRY(read_uleb(&p, end, &total, "value count", err));
    PQ_TRY(read_uleb(&p, end, &first, "first value", err));
    if (block_size > INT32_MAX)
        return PQ_CORRUPT(err, "DELTA_BINARY_PACKED block size %llu too large",
                          (unsigned long long)block_size);
    if (block_size == 0 || block_size % 128 != 0)
        return PQ_CORRUPT(err, "DELTA_BINARY_PACKED block size %llu is not a multiple of 128",
                          (unsigned long long)block_size);
    if (miniblocks == 0 || block_size % miniblocks != 0 || (block_size / miniblocks) % 32 != 0)
        return PQ_CORRUPT(err, "DELTA_BINARY_PACKED: %llu miniblocks do not split a block of "
                               "%llu into multiples of 32",
                          (unsigned long long)miniblocks, (unsigned long long)block_size);
    if (total > UINT32_MAX)
        return PQ_CORRUPT(err, "DELTA_BINARY_PACKED value count %llu too large",
                          (unsigned long long)total);
    s->p = p;
    s->end = end;
    s->block_size = (uint32_t)block_size;
    s->miniblocks = (uint32_t)miniblocks;
    s->values_per_mini = (uint32_t)(block_size / miniblocks);
    s->total_left = total;
    s->first_pending = total > 0;
    s->last = zigzag_decode(first);
    s->mini_index = s->miniblocks; /* no block loaded */
    return PQ_OK;
}

/* Finds where the stream ends, which is where the next section of a
 * DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY page starts: walks the block
 * headers, counting miniblock data only for miniblocks that hold values. */
static int dbp_find_end(const pq_delta_state *s, const uint8_t **stream_end, pq_error *err)
{
    const uint8_t *p = s->p, *end = s->end;
    uint64_t deltas = s->total_left ? s->total_left - 1 : 0;
    while (deltas) {
        uint64_t min_delta = 0;
        PQ_TRY(read_uleb(&p, end, &min_delta, "min delta", err));
        if (s->miniblocks > (size_t)(end - p))
            return PQ_CORRUPT(err, "DELTA_BINARY_PACKED bit widths truncated");
        const uint8_t *widths = p;
        p += s->miniblocks;
        for (uint32_t k = 0; k < s->miniblocks && deltas; k++) {
            if (widths[k] > 64)
                return PQ_CORRUPT(err, "DELTA_BINARY_PACKED bit width %u out of range (0..64)",
                                  widths[k]);
            size_t bytes = (size_t)s->values_per_mini / 8 * widths[k];
            if (bytes > (size_t)(end - p))
                return PQ_CORRUPT(err, "DELTA_BINARY_PACKED miniblock overruns the page");
            p += bytes;
            deltas -= deltas < s->values_per_mini ? deltas : s->values_per_mini;
        }
    }
    *stream_end = p;
    return PQ_OK;
}

/* Starts the next miniblock, reading a block header first when needed. */
static int dbp_next_mini(pq_delta_state *s, pq_error *err)
{
    if (s->mini_index >= s->miniblocks) {
        uint64_t min_delta = 0;
        PQ_TRY(read_uleb(&s->p, s->end, &min_delta, "min delta", err));
        if (s->miniblocks > (size_t)(s->end - s->p))
            return PQ_CORRUPT(err, "DELTA_BINARY_PACKED bit widths truncated");
        s->min_delta = zigzag_decode(min_delta);
        s->widths = s->p;
        s->p += s->miniblocks;
        s->mini_index = 0;
    }
    uint32_t w = s->widths[s->mini_index++];
    if (w > 64) return PQ_CORRUPT(err, "DELTA_BINARY_PACKED bit width %u out of range (0..64)", w);
    s->mini_width = w;
    s->mini_p = s->p;
    s->mini_left = s->values_per_mini;
    size_t bytes = (size_t)s->values_per_mini / 8 * w;
    size_t avail = (size_t)(s->end - s->p);
    /* a cut final miniblock is checked group by group as it is decoded */
    s->p += bytes < avail ? bytes : avail;
    return PQ_OK;
}

/* Decodes `groups` groups of the current miniblock into out as values (the
 * running prefix sum).  `needed` values of them will be returned; a final group
 * cut short by the page's end is accepted if those values' bits are present. */
static int dbp_decode_groups(pq_delta_state *s, uint64_t *out, size_t groups, size_t needed,
                             pq_error *err)
{
    const unsigned w = s->mini_width;
    const size_t load_bytes = 8 * (((size_t)w + 7) / 8);
    const uint8_t *in = s->mini_p;
    size_t avail = (size_t)(s->end - in);
    size_t fast = groups;
    if (w && (size_t)w * groups + (load_bytes - w) > avail) {
        fast = avail >= load_bytes ? (avail - load_bytes) / w + 1 : 0;
        if (fast > groups) fast = groups;
    }
    unpack_groups_u64(in, out, fast, w);
    for (size_t g = fast; g < groups; g++) {
        uint8_t padded[72] = {0};
        size_t off = g * w;
        size_t have = off < avail ? avail - off : 0;
        if (have > w) have = w;
        size_t group_needed = needed > g * 8 ? needed - g * 8 : 0;
        if (group_needed > 8) group_needed = 8;
        if (have * 8 < group_needed * w)
            return PQ_CORRUPT(err, "DELTA_BINARY_PACKED miniblock data truncated");
        if (have) memcpy(padded, in + off, have);
        unpack_groups_u64(padded, out + 8 * g, 1, w);
    }
    size_t used = groups * w;
    s->mini_p += used < avail ? used : avail;
    s->mini_left -= (uint32_t)(groups * 8);

    uint64_t last = s->last;
    const uint64_t min_delta = s->min_delta;
    for (size_t i = 0; i < groups * 8; i++) {
        last += min_delta + out[i];
        out[i] = last;
    }
    s->last = last;
    return PQ_OK;
}

/* Reads n values (as uint64, wrapped) into out. */
static int dbp_read_u64(pq_delta_state *s, uint64_t *out, size_t n, pq_error *err)
{
    if (n > s->total_left)
        return PQ_CORRUPT(err, "DELTA_BINARY_PACKED data holds %llu more values, %zu requested",
                          (unsigned long long)s->total_left, n);
    size_t done = 0;
    if (n && s->first_pending) {
        out[done++] = s->last;
        s->first_pending = false;
        s->total_left--;
    }
    while (done < n) {
        size_t want = n - done;
        if (s->buf_pos < s->buf_len) {
            size_t m = s->buf_len - s->buf_pos;
            if (m > want) m = want;
            memcpy(out + done, s->buf + s->buf_pos, m * sizeof *out);
            s->buf_pos += (uint32_t)m;
            s->total_left -= m;
            done += m;
            continue;
        }
        if (s->mini_left == 0) PQ_TRY(dbp_next_mini(s, err));
        if (want >= 8) {
            size_t groups = want / 8;
            if (groups > s->mini_left / 8) groups = s->mini_left / 8;
            PQ_TRY(dbp_decode_groups(s, out + done, groups, groups * 8, err));
            s->total_left -= groups * 8;
            done += groups * 8;
        } else {
            size_t real = s->total_left < 8 ? (size_t)s->total_left : 8;
            PQ_TRY(dbp_decode_groups(s, s->buf, 1, real, err));
            s->buf_pos = 0;
            s->buf_len = (uint32_t)real;
        }
    }
    return PQ_OK;
}

/* Reads n values truncated to 32 bits. */
static int dbp_read_i32(pq_delta_state *s, int32_t *out, size_t n, pq_error *err)
{
    uint64_t chunk[DELTA_CHUNK];
    while (n) {
        size_t m = n < DELTA_CHUNK ? n : DELTA_CHUNK;
        PQ_TRY(dbp_read_u64(s, chunk, m, err));
        for (size_t i = 0; i < m; i++) out[i] = (int32_t)(uint32_t)chunk[i];
        out += m;
        n -= m;
    }
    return PQ_OK;
}

static int dbp_skip(pq_delta_state *s, size_t n, pq_error *err)
{
    /* every delta must still be unpacked: the values after depend on it */
    uint64_t chunk[DELTA_CHUNK];
    while (n) {
        size_t m = n < DELTA_CHUNK ? n : DELTA_CHUNK;
        PQ_TRY(dbp_read_u64(s, chunk, m, err));
        n -= m;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ byte-array variants */

static int dlba_init(pq_values_dec *d, pq_error *err)
{
    PQ_TRY(dbp_init(&d->delta, d->p, d->end, err));
    const uint8_t *lengths_end;
    PQ_TRY(dbp_find_end(&d->delta, &lengths_end, err));
    d->delta.end = lengths_end;
    d->bytes_p = lengths_end;
    d->bytes_end = d->end;
    return PQ_OK;
}

static int bad_length(int32_t len, const char *what, pq_error *err)
{
    return PQ_CORRUPT(err, "%s: negative length %d", what, (int)len);
}

/* Reads (out != NULL) or skips n values of a DELTA_LENGTH_BYTE_ARRAY page. */
static int dlba_read(pq_values_dec *d, pq_bytes *out, size_t n, pq_error *err)
{
    int32_t lens[DELTA_CHUNK];
    const uint8_t *q = d->bytes_p;
    while (n) {
        size_t m = n < DELTA_CHUNK ? n : DELTA_CHUNK;
        PQ_TRY(dbp_read_i32(&d->delta, lens, m, err));
        for (size_t i = 0; i < m; i++) {
            int32_t len = lens[i];
            if (len < 0) return bad_length(len, "DELTA_LENGTH_BYTE_ARRAY", err);
            if ((size_t)len > (size_t)(d->bytes_end - q))
                return PQ_CORRUPT(err, "DELTA_LENGTH_BYTE_ARRAY value of %d bytes overruns the "
                                       "page (%zu bytes left)", (int)len,
                                  (size_t)(d->bytes_end - q));
            if (out) out[i] = (pq_bytes){q, (uint32_t)len};
            q += len;
        }
        if (out) out += m;
        n -= m;
        d->bytes_p = q;
    }
    return PQ_OK;
}

static int dba_init(pq_values_dec *d, pq_error *err)
{
    const uint8_t *prefixes_end, *suffixes_end;
    PQ_TRY(dbp_init(&d->delta, d->p, d->end, err));
    PQ_TRY(dbp_find_end(&d->delta, &prefixes_end, err));
    d->delta.end = prefixes_end;
    PQ_TRY(dbp_init(&d->delta2, prefixes_end, d->end, err));
    PQ_TRY(dbp_find_end(&d->delta2, &suffixes_end, err));
    d->delta2.end = suffixes_end;
    d->bytes_p = suffixes_end;
    d->bytes_end = d->end;
    d->last_len = 0;
    return PQ_OK;
}

/* Makes the decoder-owned previous value able to hold len bytes, keeping its
 * contents. */
static int dba_reserve_last(pq_values_dec *d, uint64_t len, pq_error *err)
{
    if (len <= d->last_cap) return PQ_OK;
    uint64_t cap = d->last_cap ? d->last_cap : 64;
    while (cap < len) cap *= 2;
    if (cap > UINT32_MAX) cap = UINT32_MAX;
    uint8_t *p = realloc(d->last_value, (size_t)cap);
    if (!p) return pq_fail(err, PQ_E_NOMEM, "out of memory for a %llu-byte value",
                           (unsigned long long)len);
    d->last_value = p;
    d->last_cap = (uint32_t)cap;
    return PQ_OK;
}

/* Decodes the next m prefix and suffix lengths and validates them against the
 * previous value's length chain and the suffix bytes left.  Sets *rebuilt to
 * the bytes the values with a non-empty prefix need. */
static int dba_lengths(pq_values_dec *d, int32_t *pre, int32_t *suf, size_t m, uint64_t *rebuilt,
                       pq_error *err)
{
    PQ_TRY(dbp_read_i32(&d->delta, pre, m, err));
    PQ_TRY(dbp_read_i32(&d->delta2, suf, m, err));
    uint64_t prev_len = d->last_len, suffix_bytes = 0, need = 0;
    for (size_t i = 0; i < m; i++) {
        if (pre[i] < 0) return bad_length(pre[i], "DELTA_BYTE_ARRAY prefix", err);
        if (suf[i] < 0) return bad_length(suf[i], "DELTA_BYTE_ARRAY suffix", err);
        if ((uint64_t)pre[i] > prev_len)
            return PQ_CORRUPT(err, "DELTA_BYTE_ARRAY prefix length %d exceeds the previous "
                                   "value's length %llu", (int)pre[i],
                              (unsigned long long)prev_len);
        uint64_t len = (uint64_t)pre[i] + (uint64_t)suf[i];
        if (d->type == PQ_FIXED_LEN_BYTE_ARRAY && len != (uint64_t)d->type_length)
            return PQ_CORRUPT(err, "DELTA_BYTE_ARRAY value of %llu bytes in a "
                                   "FIXED_LEN_BYTE_ARRAY(%d) column",
                              (unsigned long long)len, (int)d->type_length);
        suffix_bytes += (uint64_t)suf[i];
        if (pre[i] > 0) need += len;
        prev_len = len;
    }
    if (suffix_bytes > (uint64_t)(d->bytes_end - d->bytes_p))
        return PQ_CORRUPT(err, "DELTA_BYTE_ARRAY suffixes overrun the page (%llu bytes, %zu "
                               "left)", (unsigned long long)suffix_bytes,
                          (size_t)(d->bytes_end - d->bytes_p));
    *rebuilt = need;
    return PQ_OK;
}

static int dba_read(pq_values_dec *d, pq_bytes *out, size_t n, pq_arena *storage, pq_error *err)
{
    int32_t pre[DELTA_CHUNK], suf[DELTA_CHUNK];
    const uint8_t *prev = d->last_value;
    uint32_t prev_len = d->last_len;
    uint64_t rebuilt_total = 0;
    while (n) {
        size_t m = n < DELTA_CHUNK ? n : DELTA_CHUNK;
        uint64_t need;
        PQ_TRY(dba_lengths(d, pre, suf, m, &need, err));
        uint8_t *dst = NULL;
        if (need) {
            rebuilt_total += need;
            if (rebuilt_total > DBA_MAX_REBUILD)
                return pq_fail(err, PQ_E_UNSUPPORTED,
                               "DELTA_BYTE_ARRAY values rebuild to more than %llu bytes in one "
                               "read", (unsigned long long)DBA_MAX_REBUILD);
            if (!storage)
                return pq_fail(err, PQ_E_USAGE, "DELTA_BYTE_ARRAY read needs a storage arena");
            dst = pq_arena_alloc(storage, (size_t)need);
            if (!dst) return pq_fail(err, PQ_E_NOMEM, "out of memory rebuilding values");
        }
        const uint8_t *q = d->bytes_p;
        for (size_t i = 0; i < m; i++) {
            uint32_t p_len = (uint32_t)pre[i], s_len = (uint32_t)suf[i];
            if (p_len == 0) { /* nothing shared: the suffix in the page is the value */
                out[i] = (pq_bytes){q, s_len};
                prev = q;
            } else {
                memcpy(dst, prev, p_len);
                memcpy(dst + p_len, q, s_len);
                out[i] = (pq_bytes){dst, p_len + s_len};
                prev = dst;
                dst += p_len + s_len;
            }
            prev_len = p_len + s_len;
            q += s_len;
        }
        d->bytes_p = q;
        d->last_len = prev_len; /* dba_lengths checks the next prefix against it */
        out += m;
        n -= m;
    }
    /* keep the last value for the next read or skip: `storage` may be reset */
    if (prev != d->last_value && prev_len) {
        PQ_TRY(dba_reserve_last(d, prev_len, err));
        memcpy(d->last_value, prev, prev_len);
    }
    return PQ_OK;
}

static int dba_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    int32_t pre[DELTA_CHUNK], suf[DELTA_CHUNK];
    while (n) {
        size_t m = n < DELTA_CHUNK ? n : DELTA_CHUNK;
        uint64_t need;
        PQ_TRY(dba_lengths(d, pre, suf, m, &need, err));
        const uint8_t *q = d->bytes_p;
        for (size_t i = 0; i < m; i++) {
            uint32_t len = (uint32_t)pre[i] + (uint32_t)suf[i];
            PQ_TRY(dba_reserve_last(d, len, err));
            if (suf[i]) memcpy(d->last_value + pre[i], q, (size_t)suf[i]);
            d->last_len = len;
            q += suf[i];
        }
        d->bytes_p = q;
        n -= m;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ dispatch */

int pq_delta_init(pq_values_dec *d, pq_error *err)
{
    switch (d->enc) {
    case PQ_ENC_DELTA_BINARY_PACKED: return dbp_init(&d->delta, d->p, d->end, err);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return dlba_init(d, err);
    case PQ_ENC_DELTA_BYTE_ARRAY: return dba_init(d, err);
    default: return pq_fail(err, PQ_E_USAGE, "not a delta encoding");
    }
}

int pq_delta_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err)
{
    switch (d->enc) {
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (d->type == PQ_INT64) return dbp_read_u64(&d->delta, out, n, err);
        return dbp_read_i32(&d->delta, out, n, err);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return dlba_read(d, out, n, err);
    case PQ_ENC_DELTA_BYTE_ARRAY: return dba_read(d, out, n, storage, err);
    default: return pq_fail(err, PQ_E_USAGE, "not a delta encoding");
    }
}

int pq_delta_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    switch (d->enc) {
    case PQ_ENC_DELTA_BINARY_PACKED: return dbp_skip(&d->delta, n, err);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return dlba_read(d, NULL, n, err);
    case PQ_ENC_DELTA_BYTE_ARRAY: return dba_skip(d, n, err);
    default: return pq_fail(err, PQ_E_USAGE, "not a delta encoding");
    }
}
