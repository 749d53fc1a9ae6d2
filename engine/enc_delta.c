/* DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY (in progress). */
#include "encoding.h"

int pq_delta_init(pq_values_dec *d, pq_error *err)
{
    return pq_fail(err, PQ_E_UNSUPPORTED, "%s not implemented yet", pq_encoding_name(d->enc));
}

int pq_delta_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err)
{
    (void)out, (void)n, (void)storage;
    return pq_fail(err, PQ_E_UNSUPPORTED, "%s not implemented yet", pq_encoding_name(d->enc));
}

int pq_delta_skip(pq_values_dec *d, size_t n, pq_error *err)
{
    (void)n;
    return pq_fail(err, PQ_E_UNSUPPORTED, "%s not implemented yet", pq_encoding_name(d->enc));
}
