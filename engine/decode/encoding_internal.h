#ifndef PQ_ENCODING_INTERNAL_H
#define PQ_ENCODING_INTERNAL_H

#include "encoding.h"

/* Per-family entry points behind pq_values_init / read / skip (encoding.c),
 * for decode/enc_*.c (and their unit test) only: init runs after the common fields
 * (enc, type, type_length, p, end, left, dict) are set and num_values > 0;
 * read / skip are called only with 0 < n <= d->left. */
int pq_plain_init(pq_values_dec *d, pq_error *err);
int pq_plain_read(pq_values_dec *d, void *out, size_t n, pq_error *err);
int pq_plain_skip(pq_values_dec *d, size_t n, pq_error *err);

int pq_dict_values_init(pq_values_dec *d, pq_error *err);
int pq_dict_values_read(pq_values_dec *d, void *out, size_t n, pq_error *err);
int pq_dict_values_skip(pq_values_dec *d, size_t n, pq_error *err);

int pq_delta_init(pq_values_dec *d, pq_error *err);
int pq_delta_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err);
int pq_delta_skip(pq_values_dec *d, size_t n, pq_error *err);

int pq_bss_init(pq_values_dec *d, pq_error *err);
int pq_bss_read(pq_values_dec *d, void *out, size_t n, pq_arena *storage, pq_error *err);
int pq_bss_skip(pq_values_dec *d, size_t n, pq_error *err);

#endif
