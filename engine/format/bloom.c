/* Split block bloom filters (Parquet BloomFilter.md): hashing, probing and
 * building.  Reading the filter and deciding what to prune is the plan's
 * business; writing one is the column writer's. */
#include "bloom.h"

#include <math.h>
#include <string.h>
#include <xxhash.h>

uint64_t pq_bloom_hash(const uint8_t *plain, size_t len)
{
    return XXH64(plain, len, 0);
}

bool pq_bloom_may_contain(const pq_bloom *b, const uint8_t *plain, size_t len)
{
    return pq_bloom_check_hash(b, pq_bloom_hash(plain, len));
}

static const uint32_t bloom_salt[8] = {0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
                                       0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};

bool pq_bloom_check_hash(const pq_bloom *b, uint64_t hash)
{
    uint64_t n_blocks = b->n_bytes / 32;
    if (n_blocks == 0) return true;
    uint64_t block = ((hash >> 32) * n_blocks) >> 32;
    uint32_t key = (uint32_t)hash;
    const uint8_t *blk = b->bitset + block * 32;
    for (int i = 0; i < 8; i++) {
        uint32_t word;
        memcpy(&word, blk + 4 * i, 4);
        uint32_t bit = (key * bloom_salt[i]) >> 27;
        if (!(word & (1u << bit))) return false;
    }
    return true;
}

void pq_bloom_insert_hash(uint8_t *bitset, uint32_t n_bytes, uint64_t hash)
{
    uint64_t n_blocks = n_bytes / 32;
    if (n_blocks == 0) return;
    uint64_t block = ((hash >> 32) * n_blocks) >> 32;
    uint32_t key = (uint32_t)hash;
    uint8_t *blk = bitset + block * 32;
    for (int i = 0; i < 8; i++) {
        uint32_t word;
        memcpy(&word, blk + 4 * i, 4);
        word |= 1u << ((key * bloom_salt[i]) >> 27);
        memcpy(blk + 4 * i, &word, 4);
    }
}

uint32_t pq_bloom_bytes_for(uint64_t ndv, double fpp)
{
    /* m = -8 ndv / ln(1 - fpp^(1/8)) bits (the format's sizing), rounded
     * up to a power of two from 32 bytes to 128 MiB. */
    double bits = -8.0 * (double)ndv / log(1.0 - pow(fpp, 1.0 / 8.0));
    uint64_t bytes = 32;
    while (bytes < (128u << 20) && (double)bytes * 8.0 < bits) bytes *= 2;
    return (uint32_t)bytes;
}
