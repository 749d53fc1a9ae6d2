/* fuzz_offset_index: the input is a thrift-compact OffsetIndex (page
 * locations).  Decoding succeeds or fails cleanly; re-encoding is a fixed
 * point and keeps every location. */
#include "fuzz_common.h"

#include "meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_arena arena;
    pq_arena_init(&arena, 4096);
    pq_error err;
    pq_offset_index oi;
    if (pq_decode_offset_index(data, size, &arena, &oi, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        pq_arena_free(&arena);
        return 0;
    }
    FUZZ_CHECK(oi.n_pages >= 0, "n_pages %d", oi.n_pages);
    uint32_t h = 0;
    for (int32_t i = 0; i < oi.n_pages; i++)
        h ^= (uint32_t)oi.pages[i].offset ^ (uint32_t)oi.pages[i].compressed_page_size ^
             (uint32_t)oi.pages[i].first_row_index;
    fuzz_sink ^= h;

    pq_buf once, twice;
    pq_buf_init(&once);
    pq_buf_init(&twice);
    if (pq_encode_offset_index(&oi, &once, &err) == PQ_OK) {
        pq_offset_index again;
        FUZZ_CHECK(pq_decode_offset_index((const uint8_t *)once.data, once.len, &arena, &again, &err) ==
                       PQ_OK,
                   "re-encoded offset index does not decode: %s", err.msg);
        FUZZ_CHECK(again.n_pages == oi.n_pages, "%d pages, then %d", oi.n_pages, again.n_pages);
        for (int32_t i = 0; i < oi.n_pages; i++)
            FUZZ_CHECK(again.pages[i].offset == oi.pages[i].offset &&
                           again.pages[i].compressed_page_size == oi.pages[i].compressed_page_size &&
                           again.pages[i].first_row_index == oi.pages[i].first_row_index,
                       "page %d changed in a round trip", i);
        FUZZ_CHECK(pq_encode_offset_index(&again, &twice, &err) == PQ_OK, "%s", err.msg);
        FUZZ_CHECK(twice.len == once.len && memcmp(twice.data, once.data, once.len) == 0,
                   "encoding is not a fixed point (%zu vs %zu bytes)", once.len, twice.len);
    }
    pq_buf_free(&once);
    pq_buf_free(&twice);
    pq_arena_free(&arena);
    return 0;
}
