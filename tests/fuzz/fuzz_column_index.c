/* fuzz_column_index: the input is a thrift-compact ColumnIndex (page index
 * min/max per page).  Decoding succeeds or fails cleanly; every array has
 * n_pages entries whose bytes are readable; re-encoding is a fixed point. */
#include "fuzz_common.h"

#include "meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_arena arena;
    pq_arena_init(&arena, 4096);
    pq_error err;
    pq_column_index ci;
    if (pq_decode_column_index(data, size, &arena, &ci, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        pq_arena_free(&arena);
        return 0;
    }
    FUZZ_CHECK(ci.n_pages >= 0, "n_pages %d", ci.n_pages);
    uint32_t h = 0;
    for (int32_t i = 0; i < ci.n_pages; i++) {
        h ^= ci.null_pages[i];
        h ^= fuzz_touch(ci.min_values[i].ptr, ci.min_values[i].len);
        h ^= fuzz_touch(ci.max_values[i].ptr, ci.max_values[i].len);
        if (ci.null_counts) h ^= (uint32_t)ci.null_counts[i];
    }
    fuzz_sink ^= h;

    pq_buf once, twice;
    pq_buf_init(&once);
    pq_buf_init(&twice);
    if (pq_encode_column_index(&ci, &once, &err) == PQ_OK) {
        pq_column_index again;
        FUZZ_CHECK(pq_decode_column_index((const uint8_t *)once.data, once.len, &arena, &again, &err) ==
                       PQ_OK,
                   "re-encoded column index does not decode: %s", err.msg);
        FUZZ_CHECK(again.n_pages == ci.n_pages, "%d pages, then %d", ci.n_pages, again.n_pages);
        FUZZ_CHECK(pq_encode_column_index(&again, &twice, &err) == PQ_OK, "%s", err.msg);
        FUZZ_CHECK(twice.len == once.len && memcmp(twice.data, once.data, once.len) == 0,
                   "encoding is not a fixed point (%zu vs %zu bytes)", once.len, twice.len);
    }
    pq_buf_free(&once);
    pq_buf_free(&twice);
    pq_arena_free(&arena);
    return 0;
}
