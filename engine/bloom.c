/* Split block bloom filters (Parquet BloomFilter.md): hashing and probing.
 * Reading the filter and deciding what to prune is the plan's business. */
#include <xxhash.h>

#include "plan.h"

uint64_t pq_bloom_hash(const uint8_t *plain, size_t len)
{
    return XXH64(plain, len, 0);
}

bool pq_bloom_may_contain(const pq_bloom *b, const uint8_t *plain, size_t len)
{
    return pq_bloom_check_hash(b, pq_bloom_hash(plain, len));
}
