/* BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32, INT64 and FIXED_LEN_BYTE_ARRAY.
 *
 * A page of N values of W bytes holds W streams of N bytes: stream k has byte
 * k of every value.  The stride N is the page's byte length / W, which equals
 * the page's value count in every well-formed page; it must hold at least the
 * values the page claims.
 *
 * 4- and 8-byte values are reassembled one value per step from W streams read
 * side by side (W constant, so the loop unrolls and vectorizes).  Fixed-length
 * byte arrays of any width are rebuilt into the caller's `storage` arena, one
 * allocation per read, stream by stream over blocks of values so that both the
 * stream reads and the interleaved writes stay in cache. */
#include <string.h>

#include "encoding_internal.h"

/* gcc -O2 does not fully unroll the per-stream loops on its own. */
#define PQ_UNROLL _Pragma("GCC unroll 8")

/* Values per block when rebuilding fixed-length byte arrays. */
#define BSS_BLOCK 256

static size_t bss_width(const pq_values_dec *d)
{
    return pq_phys_width(d->type, d->type_length);
}

int pq_bss_init(pq_values_dec *d, pq_error *err)
{
    size_t width = bss_width(d);
    if (width == 0)
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT does not apply to %s", pq_phys_name(d->type));
    size_t len = (size_t)(d->end - d->p);
    if (len % width != 0)
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT data of %zu bytes is not a multiple of the "
                               "value width %zu", len, width);
    size_t count = len / width;
    if (count < d->left)
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT data holds %zu values, the page has %u", count,
                          d->left);
    if (count > UINT32_MAX)
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT page of %zu values too large", count);
    d->bss_count = (uint32_t)count;
    d->bss_index = 0;
    return PQ_OK;
}

/* Reassembles n values of constant width w (2, 4 or 8) starting at value
 * `start`: byte k of each value comes from stream k, shifted into place. */
static inline __attribute__((always_inline)) void bss_join(const uint8_t *base, size_t stride,
                                                           size_t start, uint8_t *out, size_t n,
                                                           const size_t w)
{
    const uint8_t *stream[8];
    PQ_UNROLL
    for (size_t k = 0; k < w; k++) stream[k] = base + k * stride + start;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        PQ_UNROLL
        for (size_t k = 0; k < w; k++) v |= (uint64_t)stream[k][i] << (8 * k);
        memcpy(out + i * w, &v, w); /* little-endian host: the low w bytes */
    }
}

/* Any width, stream by stream over blocks of values. */
static void bss_join_any(const uint8_t *base, size_t stride, size_t start, uint8_t *out, size_t n,
                         size_t w)
{
    for (size_t b = 0; b < n; b += BSS_BLOCK) {
        size_t m = n - b < BSS_BLOCK ? n - b : BSS_BLOCK;
        for (size_t k = 0; k < w; k++) {
            const uint8_t *s = base + k * stride + start + b;
            uint8_t *o = out + b * w + k;
            for (size_t i = 0; i < m; i++) o[i * w] = s[i];
        }
    }
}

int pq_bss_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err)
{
    const size_t stride = d->bss_count;
    if (n > stride - d->bss_index)
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT data holds %zu more values, %zu requested",
                          stride - d->bss_index, n);
    const size_t w = bss_width(d);
    switch (d->type) {
    case PQ_INT32:
    case PQ_FLOAT:
        bss_join(d->p, stride, d->bss_index, out, n, 4);
        break;
    case PQ_INT64:
    case PQ_DOUBLE:
        bss_join(d->p, stride, d->bss_index, out, n, 8);
        break;
    case PQ_FIXED_LEN_BYTE_ARRAY: {
        if (!storage)
            return pq_fail(err, PQ_E_USAGE, "BYTE_STREAM_SPLIT read needs a storage arena");
        uint8_t *dst = pq_arena_alloc(storage, n * w);
        if (!dst) return pq_fail(err, PQ_E_NOMEM, "out of memory rebuilding values");
        switch (w) { /* common widths get the unrolled kernel */
        case 2: bss_join(d->p, stride, d->bss_index, dst, n, 2); break;
        case 4: bss_join(d->p, stride, d->bss_index, dst, n, 4); break;
        case 8: bss_join(d->p, stride, d->bss_index, dst, n, 8); break;
        default: bss_join_any(d->p, stride, d->bss_index, dst, n, w); break;
        }
        pq_bytes *o = out;
        for (size_t i = 0; i < n; i++) o[i] = (pq_bytes){dst + i * w, (uint32_t)w};
        break;
    }
    default:
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT does not apply to %s", pq_phys_name(d->type));
    }
    d->bss_index += (uint32_t)n;
    return PQ_OK;
}

int pq_bss_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    if (n > (size_t)(d->bss_count - d->bss_index))
        return PQ_CORRUPT(err, "BYTE_STREAM_SPLIT data holds %u more values, %zu requested",
                          d->bss_count - d->bss_index, n);
    d->bss_index += (uint32_t)n;
    return PQ_OK;
}
