/* fuzz_page_header: the input is a thrift-compact PageHeader (the bytes at
 * the start of a page).  Decoding must succeed or fail cleanly, report a
 * consumed length within the input, and re-encoding must be a fixed point:
 * encode(decode(encode(decode(x)))) == encode(decode(x)).  No arena, as the
 * column reader decodes them (page headers allocate nothing). */
#include "fuzz_common.h"

#include "meta.h"

static void touch_stats(const pq_stats *st)
{
    uint32_t h = 0;
    if (st->has_min_value) h ^= fuzz_touch(st->min_value.ptr, st->min_value.len);
    if (st->has_max_value) h ^= fuzz_touch(st->max_value.ptr, st->max_value.len);
    if (st->has_min) h ^= fuzz_touch(st->min.ptr, st->min.len);
    if (st->has_max) h ^= fuzz_touch(st->max.ptr, st->max.len);
    fuzz_sink ^= h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_error err;
    pq_page_header h;
    size_t consumed = 0;
    if (pq_decode_page_header(data, size, NULL, &h, &consumed, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        return 0;
    }
    FUZZ_CHECK(consumed <= size, "consumed %zu of %zu bytes", consumed, size);
    if (h.has_data && h.data.has_stats) touch_stats(&h.data.stats);
    if (h.has_data_v2 && h.data_v2.has_stats) touch_stats(&h.data_v2.stats);

    pq_buf once, twice;
    pq_buf_init(&once);
    pq_buf_init(&twice);
    if (pq_encode_page_header(&h, &once, &err) == PQ_OK) {
        pq_page_header again;
        size_t used = 0;
        FUZZ_CHECK(pq_decode_page_header((const uint8_t *)once.data, once.len, NULL, &again, &used, &err) == PQ_OK,
                   "re-encoded header does not decode: %s", err.msg);
        FUZZ_CHECK(used == once.len, "re-encoded header: consumed %zu of %zu", used, once.len);
        FUZZ_CHECK(pq_encode_page_header(&again, &twice, &err) == PQ_OK, "%s", err.msg);
        FUZZ_CHECK(twice.len == once.len && memcmp(twice.data, once.data, once.len) == 0,
                   "encoding is not a fixed point (%zu vs %zu bytes)", once.len, twice.len);
    }
    pq_buf_free(&once);
    pq_buf_free(&twice);
    return 0;
}
