/* Split-block bloom filters (Parquet's, XXH64): the hash, the probe and the
 * insert, for the reader's bloom rung (plan.c) and the writer (colwrite.c). */
#ifndef PQ_BLOOM_H
#define PQ_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- bloom filters (split block, XXH64) ---- */
typedef struct pq_bloom {
    const uint8_t *bitset;
    uint32_t n_bytes;          /* multiple of 32 */
} pq_bloom;

/* Whether the filter may contain the value's PLAIN bytes (false = definitely absent). */
bool pq_bloom_may_contain(const pq_bloom *b, const uint8_t *plain, size_t len);
/* Hash for one value (exposed for tests): XXH64 with seed 0. */
uint64_t pq_bloom_hash(const uint8_t *plain, size_t len);
bool pq_bloom_check_hash(const pq_bloom *b, uint64_t hash);
/* Sets the hash's bits in a bitset of n_bytes (a multiple of 32). */
void pq_bloom_insert_hash(uint8_t *bitset, uint32_t n_bytes, uint64_t hash);

/* The bitset size for ndv distinct values at false-positive rate fpp. */
uint32_t pq_bloom_bytes_for(uint64_t ndv, double fpp);

#endif
