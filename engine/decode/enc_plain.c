/* PLAIN decoding for every physical type, and dictionary pages (which are
 * PLAIN-encoded).
 *
 *   BOOLEAN                one bit per value, LSB-first
 *   INT32/INT64/INT96/
 *   FLOAT/DOUBLE           little-endian, fixed width: one memcpy per read
 *   BYTE_ARRAY             4-byte little-endian length, then the bytes
 *   FIXED_LEN_BYTE_ARRAY   type_length bytes each
 *
 * Byte arrays come back as views into the page; nothing is copied. */
#include <string.h>

#include "encoding_internal.h"

static inline uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int pq_plain_init(pq_values_dec *d, pq_error *err)
{
    if (d->type == PQ_FIXED_LEN_BYTE_ARRAY && d->type_length <= 0)
        return PQ_CORRUPT(err, "FIXED_LEN_BYTE_ARRAY with type length %d", (int)d->type_length);
    d->bool_bit = 0;
    return PQ_OK;
}

/* ------------------------------------------------------------------ BOOLEAN */

/* Spreads the 8 bits of b into 8 bytes of 0/1, bit i into byte i: replicate the
 * byte, keep bit i in byte i, then carry any set bit up to the byte's top bit
 * with +0x7f (no carry can cross into the next byte) and shift it down. */
static inline uint64_t spread_bits(uint8_t b)
{
    uint64_t x = (uint64_t)b * 0x0101010101010101ULL;
    x &= 0x8040201008040201ULL;
    x += 0x7f7f7f7f7f7f7f7fULL;
    return (x >> 7) & 0x0101010101010101ULL;
}

static int plain_bool_check(const pq_values_dec *d, size_t n, pq_error *err)
{
    size_t avail_bits = (size_t)(d->end - d->p) * 8 - d->bool_bit;
    if (n > avail_bits)
        return PQ_CORRUPT(err, "PLAIN BOOLEAN data holds %zu more values, %zu requested",
                          avail_bits, n);
    return PQ_OK;
}

static int plain_read_bool(pq_values_dec *d, uint8_t *out, size_t n, pq_error *err)
{
    PQ_TRY(plain_bool_check(d, n, err));
    const uint8_t *q = d->p;
    unsigned bit = d->bool_bit;
    size_t i = 0;
    while (i < n && bit) { /* finish a partly consumed byte */
        out[i++] = (*q >> bit) & 1;
        if (++bit == 8) {
            bit = 0;
            q++;
        }
    }
    for (; n - i >= 8; i += 8) {
        uint64_t spread = spread_bits(*q++);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        spread = __builtin_bswap64(spread);
#endif
        memcpy(out + i, &spread, 8);
    }
    for (; i < n; i++) out[i] = (*q >> bit++) & 1; /* fewer than 8 left: bit stays < 8 */
    if (bit == 8) {
        bit = 0;
        q++;
    }
    d->p = q;
    d->bool_bit = bit;
    return PQ_OK;
}

static int plain_skip_bool(pq_values_dec *d, size_t n, pq_error *err)
{
    PQ_TRY(plain_bool_check(d, n, err));
    size_t bits = d->bool_bit + n;
    d->p += bits / 8;
    d->bool_bit = (uint32_t)(bits % 8);
    return PQ_OK;
}

/* ------------------------------------------------------------------ fixed width */

static int plain_fixed_bytes(const pq_values_dec *d, size_t n, size_t width, size_t *bytes,
                             pq_error *err)
{
    size_t avail = (size_t)(d->end - d->p);
    if (pq_mul_overflows(n, width, bytes) || *bytes > avail)
        return PQ_CORRUPT(err, "PLAIN %s data holds %zu more values, %zu requested",
                          pq_phys_name(d->type), avail / width, n);
    return PQ_OK;
}

/* ------------------------------------------------------------------ BYTE_ARRAY */

static int plain_read_byte_array(pq_values_dec *d, pq_bytes *out, size_t n, pq_error *err)
{
    const uint8_t *q = d->p, *end = d->end;
    for (size_t i = 0; i < n; i++) {
        if (end - q < 4)
            return PQ_CORRUPT(err, "PLAIN BYTE_ARRAY length truncated (value %zu of %zu)", i, n);
        uint32_t len = load_le32(q);
        q += 4;
        if (len > (size_t)(end - q))
            return PQ_CORRUPT(err, "PLAIN BYTE_ARRAY value of %u bytes overruns the page "
                                   "(%zu bytes left)", len, (size_t)(end - q));
        out[i].ptr = q;
        out[i].len = len;
        q += len;
    }
    d->p = q;
    return PQ_OK;
}

static int plain_skip_byte_array(pq_values_dec *d, size_t n, pq_error *err)
{
    const uint8_t *q = d->p, *end = d->end;
    for (size_t i = 0; i < n; i++) {
        if (end - q < 4)
            return PQ_CORRUPT(err, "PLAIN BYTE_ARRAY length truncated (value %zu of %zu)", i, n);
        uint32_t len = load_le32(q);
        q += 4;
        if (len > (size_t)(end - q))
            return PQ_CORRUPT(err, "PLAIN BYTE_ARRAY value of %u bytes overruns the page "
                                   "(%zu bytes left)", len, (size_t)(end - q));
        q += len;
    }
    d->p = q;
    return PQ_OK;
}

/* ------------------------------------------------------------------ dispatch */

int pq_plain_read(pq_values_dec *d, void *out, size_t n, pq_error *err)
{
    size_t bytes;
    switch (d->type) {
    case PQ_BOOLEAN:
        return plain_read_bool(d, out, n, err);
    case PQ_INT32:
    case PQ_INT64:
    case PQ_INT96:
    case PQ_FLOAT:
    case PQ_DOUBLE:
        /* the typed output arrays have exactly the PLAIN layout (little-endian host) */
        PQ_TRY(plain_fixed_bytes(d, n, pq_phys_width(d->type, 0), &bytes, err));
        memcpy(out, d->p, bytes);
        d->p += bytes;
        return PQ_OK;
    case PQ_BYTE_ARRAY:
        return plain_read_byte_array(d, out, n, err);
    case PQ_FIXED_LEN_BYTE_ARRAY: {
        const size_t width = (size_t)d->type_length;
        PQ_TRY(plain_fixed_bytes(d, n, width, &bytes, err));
        pq_bytes *o = out;
        const uint8_t *q = d->p;
        for (size_t i = 0; i < n; i++, q += width) {
            o[i].ptr = q;
            o[i].len = (uint32_t)width;
        }
        d->p += bytes;
        return PQ_OK;
    }
    }
    return PQ_CORRUPT(err, "PLAIN: unknown physical type %d", (int)d->type);
}

int pq_plain_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    size_t bytes;
    switch (d->type) {
    case PQ_BOOLEAN:
        return plain_skip_bool(d, n, err);
    case PQ_BYTE_ARRAY:
        return plain_skip_byte_array(d, n, err);
    case PQ_INT32:
    case PQ_INT64:
    case PQ_INT96:
    case PQ_FLOAT:
    case PQ_DOUBLE:
    case PQ_FIXED_LEN_BYTE_ARRAY:
        PQ_TRY(plain_fixed_bytes(d, n, pq_phys_width(d->type, d->type_length), &bytes, err));
        d->p += bytes;
        return PQ_OK;
    }
    return PQ_CORRUPT(err, "PLAIN: unknown physical type %d", (int)d->type);
}

/* ------------------------------------------------------------------ dictionary pages */

int pq_dict_decode(pq_dict *dict, pq_phys type, int32_t type_length, const uint8_t *p, size_t len,
                   uint32_t num_values, pq_arena *arena, pq_error *err)
{
    memset(dict, 0, sizeof *dict);
    dict->type = type;
    dict->type_length = type_length;
    /* Reject a count the page cannot hold before allocating for it, so a
     * corrupt header cannot ask for gigabytes. */
    size_t min_bits_per_value;
    switch (type) {
    case PQ_BOOLEAN: min_bits_per_value = 1; break;
    case PQ_BYTE_ARRAY: min_bits_per_value = 32; break;
    default: min_bits_per_value = 8 * pq_phys_width(type, type_length); break;
    }
    if (min_bits_per_value && (uint64_t)num_values * min_bits_per_value > (uint64_t)len * 8)
        return PQ_CORRUPT(err, "dictionary page of %zu bytes cannot hold %u %s values", len,
                          num_values, pq_phys_name(type));

    pq_values_dec d;
    PQ_TRY(pq_values_init(&d, PQ_ENC_PLAIN, type, type_length, p, len, num_values, NULL, err));
    size_t esz = pq_value_size(type);
    void *values = pq_arena_alloc(arena, num_values ? (size_t)num_values * esz : 1);
    if (!values) {
        pq_values_free(&d);
        return pq_fail(err, PQ_E_NOMEM, "out of memory for a dictionary of %u values",
                       num_values);
    }
    int rc = pq_values_read(&d, values, num_values, NULL, err);
    pq_values_free(&d);
    if (rc != PQ_OK) {
        pq_error_prefix(err, "dictionary page: ");
        return PQ_ERR;
    }
    dict->n = num_values;
    dict->values = values;
    return PQ_OK;
}
