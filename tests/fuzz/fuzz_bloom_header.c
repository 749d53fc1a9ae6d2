/* fuzz_bloom_header: the input is a thrift-compact BloomFilterHeader followed
 * by the filter's bitset.  The header decodes or fails cleanly; when it
 * decodes to a split-block filter whose bitset is present, probing it with
 * values taken from the input must stay inside the bitset. */
#include "fuzz_common.h"

#include "meta.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_error err;
    pq_bloom_header h;
    size_t consumed = 0;
    if (pq_decode_bloom_header(data, size, &h, &consumed, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        return 0;
    }
    FUZZ_CHECK(consumed <= size, "consumed %zu of %zu bytes", consumed, size);

    pq_buf once;
    pq_buf_init(&once);
    if (pq_encode_bloom_header(&h, &once, &err) == PQ_OK) {
        pq_bloom_header again;
        size_t used = 0;
        FUZZ_CHECK(pq_decode_bloom_header((const uint8_t *)once.data, once.len, &again, &used, &err) ==
                       PQ_OK,
                   "re-encoded header does not decode: %s", err.msg);
        FUZZ_CHECK(used == once.len && again.num_bytes == h.num_bytes, "round trip changed the header");
    }
    pq_buf_free(&once);

    /* The bitset after the header (the probe uses whole 32-byte blocks). */
    size_t left = size - consumed;
    if (h.algorithm_block && h.hash_xxhash && h.compression_none && h.num_bytes > 0 &&
        (size_t)h.num_bytes <= left) {
        uint8_t *bits = fuzz_copy(data + consumed, (size_t)h.num_bytes);
        pq_bloom b = {bits, (uint32_t)h.num_bytes};
        uint32_t hits = 0;
        for (size_t i = 0; i + 8 <= size && i < 256; i += 8) hits += pq_bloom_may_contain(&b, data + i, 8);
        fuzz_sink ^= hits;
        free(bits);
    }
    return 0;
}
