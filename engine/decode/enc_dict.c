/* PLAIN_DICTIONARY / RLE_DICTIONARY data pages: one byte of bit width, then
 * dictionary indices in the RLE / bit-packed hybrid, without a length prefix.
 *
 * Indices are decoded a chunk at a time into a stack buffer, then gathered
 * with a copy of constant size per element type, each index checked against
 * the dictionary size as it is used.  A long RLE run
 * of one index is filled straight from the dictionary without expanding the
 * indices. */
#include <string.h>

#include "encoding_internal.h"

/* Indices per chunk: 4 KiB of stack, large enough to amortize the loop setup. */
#define DICT_CHUNK 1024
/* RLE runs at least this long are filled directly. */
#define DICT_FILL_MIN_RUN 16

int pq_dict_values_init(pq_values_dec *d, pq_error *err)
{
    const pq_dict *dict = d->dict;
    if (!dict) return PQ_CORRUPT(err, "dictionary-encoded page without a dictionary page");
    if (dict->type != d->type)
        return PQ_CORRUPT(err, "dictionary of type %s for a %s column", pq_phys_name(dict->type),
                          pq_phys_name(d->type));
    if (dict->n && !dict->values) return pq_fail(err, PQ_E_USAGE, "dictionary has no values");
    if (d->p >= d->end) return PQ_CORRUPT(err, "dictionary-encoded page has no bit width byte");
    int bw = *d->p;
    if (bw > 32) return PQ_CORRUPT(err, "dictionary index bit width %d out of range (0..32)", bw);
    return pq_rle_init(&d->rle, d->p + 1, (size_t)(d->end - d->p - 1), bw, err);
}

static int index_out_of_range(const pq_dict *dict, const uint32_t *idx, size_t m, pq_error *err)
{
    uint32_t bad = 0;
    for (size_t i = 0; i < m; i++)
        if (idx[i] >= dict->n) {
            bad = idx[i];
            break;
        }
    return PQ_CORRUPT(err, "dictionary index %u out of range (dictionary has %u values)", bad,
                      dict->n);
}

/* Copies dict[idx[i]] to out[i], checking each index on the way: a compare and
 * a never-taken branch per value cost less than a separate max pass, whose
 * loop-carried dependency gcc does not vectorize.  memcpy of a constant size
 * compiles to plain loads and stores without aliasing trouble (float
 * dictionaries read as bytes).  Returns the number of values copied: m, or the
 * position of the first index out of range. */
static inline __attribute__((always_inline)) size_t gather_const(uint8_t *out,
                                                                 const uint8_t *values,
                                                                 uint32_t dict_n,
                                                                 const uint32_t *idx, size_t m,
                                                                 const size_t esz)
{
    for (size_t i = 0; i < m; i++) {
        uint32_t k = idx[i];
        if (__builtin_expect(k >= dict_n, 0)) return i;
        memcpy(out + i * esz, values + (size_t)k * esz, esz);
    }
    return m;
}

static size_t gather(uint8_t *out, const uint8_t *values, uint32_t dict_n, const uint32_t *idx,
                     size_t m, size_t esz)
{
    switch (esz) {
    case 1: return gather_const(out, values, dict_n, idx, m, 1);
    case 4: return gather_const(out, values, dict_n, idx, m, 4);
    case 8: return gather_const(out, values, dict_n, idx, m, 8);
    case 12: return gather_const(out, values, dict_n, idx, m, 12);
    case 16: return gather_const(out, values, dict_n, idx, m, 16);
    default: return gather_const(out, values, dict_n, idx, m, esz);
    }
}

static inline __attribute__((always_inline)) void fill_const(uint8_t *out, const uint8_t *value,
                                                             size_t m, const size_t esz)
{
    for (size_t i = 0; i < m; i++) memcpy(out + i * esz, value, esz);
}

static void fill(uint8_t *out, const uint8_t *value, size_t m, size_t esz)
{
    switch (esz) {
    case 1: memset(out, *value, m); break;
    case 4: fill_const(out, value, m, 4); break;
    case 8: fill_const(out, value, m, 8); break;
    case 12: fill_const(out, value, m, 12); break;
    case 16: fill_const(out, value, m, 16); break;
    default: fill_const(out, value, m, esz); break;
    }
}

int pq_dict_values_read(pq_values_dec *d, void *out, size_t n, pq_error *err)
{
    const pq_dict *dict = d->dict;
    const size_t esz = pq_value_size(d->type);
    const uint8_t *values = dict->values;
    const uint32_t dict_n = dict->n;
    uint8_t *o = out;
    uint32_t idx[DICT_CHUNK];
    size_t done = 0;
    while (done < n) {
        size_t want = n - done;
        if (d->rle.rle_left >= DICT_FILL_MIN_RUN) {
            uint32_t v = d->rle.rle_value;
            if (v >= dict_n) return index_out_of_range(dict, &v, 1, err);
            size_t m = want < d->rle.rle_left ? want : d->rle.rle_left;
            fill(o + done * esz, values + (size_t)v * esz, m, esz);
            d->rle.rle_left -= (uint32_t)m;
            done += m;
            continue;
        }
        size_t m = want < DICT_CHUNK ? want : DICT_CHUNK;
        /* A long run that starts inside this chunk is expanded only up to the
         * chunk's end; the fill path above takes the rest of it. */
        if (pq_rle_read_u32(&d->rle, idx, m, err) != PQ_OK) {
            pq_error_prefix(err, "dictionary indices: ");
            return PQ_ERR;
        }
        size_t copied = gather(o + done * esz, values, dict_n, idx, m, esz);
        if (copied < m) return index_out_of_range(dict, idx + copied, 1, err);
        done += m;
    }
    return PQ_OK;
}

int pq_dict_values_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    /* Skipped indices are not checked against the dictionary: they are never
     * dereferenced. */
    if (pq_rle_skip(&d->rle, n, err) != PQ_OK) {
        pq_error_prefix(err, "dictionary indices: ");
        return PQ_ERR;
    }
    return PQ_OK;
}
