/* The values decoder: checks that an encoding applies to a physical type,
 * then dispatches Init / Read / Skip to the encoding family (enc_plain.c,
 * enc_dict.c, enc_delta.c, enc_bss.c).  RLE-encoded booleans are small enough
 * to live here.
 *
 * Read and Skip are all-or-nothing: asking for more values than the page has
 * left, or than its bytes hold, is PQ_E_CORRUPT.  After an error the decoder
 * must not be used again (only freed). */
#include <stdlib.h>
#include <string.h>

#include "encoding_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pqfs decoders copy PLAIN little-endian values straight into typed arrays"
#endif

static const uint8_t empty_page[1];

size_t pq_value_size(pq_phys type)
{
    switch (type) {
    case PQ_BOOLEAN: return sizeof(uint8_t);
    case PQ_INT32: return sizeof(int32_t);
    case PQ_INT64: return sizeof(int64_t);
    case PQ_INT96: return sizeof(pq_int96);
    case PQ_FLOAT: return sizeof(float);
    case PQ_DOUBLE: return sizeof(double);
    case PQ_BYTE_ARRAY:
    case PQ_FIXED_LEN_BYTE_ARRAY: return sizeof(pq_bytes);
    }
    return 0;
}

/* ------------------------------------------------------------------ RLE booleans */

/* A 4-byte little-endian length, then the RLE hybrid with bit width 1. */
static int rle_bool_init(pq_values_dec *d, pq_error *err)
{
    size_t len = (size_t)(d->end - d->p);
    if (len < 4) return PQ_CORRUPT(err, "RLE BOOLEAN page: length prefix truncated");
    uint32_t rlen = (uint32_t)d->p[0] | (uint32_t)d->p[1] << 8 | (uint32_t)d->p[2] << 16 |
                    (uint32_t)d->p[3] << 24;
    if (rlen > len - 4)
        return PQ_CORRUPT(err, "RLE BOOLEAN page: length %u overruns the page (%zu bytes)", rlen,
                          len - 4);
    return pq_rle_init(&d->rle, d->p + 4, rlen, 1, err);
}

static int rle_bool_read(pq_values_dec *d, uint8_t *out, size_t n, pq_error *err)
{
    uint32_t chunk[512];
    while (n) {
        size_t m = n < 512 ? n : 512;
        PQ_TRY(pq_rle_read_u32(&d->rle, chunk, m, err));
        for (size_t i = 0; i < m; i++) out[i] = (uint8_t)chunk[i];
        out += m;
        n -= m;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ dispatch */

/* Does `enc` apply to values of `type`?  Returns PQ_OK, or fails naming why. */
static int check_encoding(pq_encoding enc, pq_phys type, pq_error *err)
{
    bool ok;
    switch (enc) {
    case PQ_ENC_PLAIN:
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY:
        ok = true;
        break;
    case PQ_ENC_RLE:
        ok = type == PQ_BOOLEAN;
        break;
    case PQ_ENC_DELTA_BINARY_PACKED:
        ok = type == PQ_INT32 || type == PQ_INT64;
        break;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        ok = type == PQ_BYTE_ARRAY;
        break;
    case PQ_ENC_DELTA_BYTE_ARRAY:
        ok = type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
        break;
    case PQ_ENC_BYTE_STREAM_SPLIT:
        ok = type == PQ_INT32 || type == PQ_INT64 || type == PQ_FLOAT || type == PQ_DOUBLE ||
             type == PQ_FIXED_LEN_BYTE_ARRAY;
        break;
    case PQ_ENC_BIT_PACKED:
    case PQ_ENC_GROUP_VAR_INT:
    default:
        return pq_fail(err, PQ_E_UNSUPPORTED, "value encoding %s (%d) not supported",
                       pq_encoding_name(enc), (int)enc);
    }
    if ((unsigned)type > PQ_FIXED_LEN_BYTE_ARRAY)
        return PQ_CORRUPT(err, "unknown physical type %d", (int)type);
    if (!ok)
        return PQ_CORRUPT(err, "encoding %s does not apply to %s values", pq_encoding_name(enc),
                          pq_phys_name(type));
    return PQ_OK;
}

int pq_values_init(pq_values_dec *d, pq_encoding enc, pq_phys type, int32_t type_length,
                   const uint8_t *p, size_t len, uint32_t num_values, const pq_dict *dict,
                   pq_error *err)
{
    memset(d, 0, sizeof *d);
    d->enc = enc;
    d->type = type;
    d->type_length = type_length;
    d->dict = dict;
    if (!p) {
        p = empty_page; /* keeps pointer arithmetic defined for an empty page */
        len = 0;
    }
    d->p = p;
    d->end = p + len;
    PQ_TRY(check_encoding(enc, type, err));
    if (type == PQ_FIXED_LEN_BYTE_ARRAY && type_length <= 0)
        return PQ_CORRUPT(err, "FIXED_LEN_BYTE_ARRAY with type length %d", (int)type_length);
    d->left = num_values;
    if (num_values == 0) return PQ_OK; /* nothing to decode; the bytes may be absent */

    int rc;
    switch (enc) {
    case PQ_ENC_PLAIN: rc = pq_plain_init(d, err); break;
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: rc = pq_dict_values_init(d, err); break;
    case PQ_ENC_RLE: rc = rle_bool_init(d, err); break;
    case PQ_ENC_DELTA_BINARY_PACKED:
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: rc = pq_delta_init(d, err); break;
    case PQ_ENC_BYTE_STREAM_SPLIT: rc = pq_bss_init(d, err); break;
    default: rc = pq_fail(err, PQ_E_UNSUPPORTED, "value encoding %d not supported", (int)enc);
    }
    if (rc != PQ_OK) pq_error_prefix(err, "%s %s page: ", pq_encoding_name(enc), pq_phys_name(type));
    return rc;
}

static int check_count(const pq_values_dec *d, size_t n, pq_error *err)
{
    if (n > d->left)
        return PQ_CORRUPT(err, "%s %s page: %zu values requested, %u left",
                          pq_encoding_name(d->enc), pq_phys_name(d->type), n, d->left);
    return PQ_OK;
}

int pq_values_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err)
{
    if (n == 0) return PQ_OK;
    PQ_TRY(check_count(d, n, err));
    int rc;
    switch (d->enc) {
    case PQ_ENC_PLAIN: rc = pq_plain_read(d, out, n, err); break;
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: rc = pq_dict_values_read(d, out, n, err); break;
    case PQ_ENC_RLE: rc = rle_bool_read(d, out, n, err); break;
    case PQ_ENC_DELTA_BINARY_PACKED:
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: rc = pq_delta_read(d, out, n, storage, err); break;
    case PQ_ENC_BYTE_STREAM_SPLIT: rc = pq_bss_read(d, out, n, storage, err); break;
    default: rc = pq_fail(err, PQ_E_USAGE, "values decoder not initialized");
    }
    if (rc != PQ_OK) return rc;
    d->left -= (uint32_t)n;
    return PQ_OK;
}

int pq_values_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    if (n == 0) return PQ_OK;
    PQ_TRY(check_count(d, n, err));
    int rc;
    switch (d->enc) {
    case PQ_ENC_PLAIN: rc = pq_plain_skip(d, n, err); break;
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: rc = pq_dict_values_skip(d, n, err); break;
    case PQ_ENC_RLE: rc = pq_rle_skip(&d->rle, n, err); break;
    case PQ_ENC_DELTA_BINARY_PACKED:
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: rc = pq_delta_skip(d, n, err); break;
    case PQ_ENC_BYTE_STREAM_SPLIT: rc = pq_bss_skip(d, n, err); break;
    default: rc = pq_fail(err, PQ_E_USAGE, "values decoder not initialized");
    }
    if (rc != PQ_OK) return rc;
    d->left -= (uint32_t)n;
    return PQ_OK;
}

void pq_values_free(pq_values_dec *d)
{
    free(d->last_value);
    d->last_value = NULL;
    d->last_len = d->last_cap = 0;
}
