/* fuzz_values: the value decoders (PLAIN, dictionary, RLE booleans, the
 * DELTA family, BYTE_STREAM_SPLIT) behind pq_values_init / read / skip, and
 * dictionary pages (pq_dict_decode).
 *
 * Input (16-byte header, then the pages):
 *   0      encoding (mod 10)            1     physical type (mod 8)
 *   2      FIXED_LEN_BYTE_ARRAY length   3..4  values in the page (u16 LE)
 *   5..6   dictionary page bytes (u16)   7..8  values in the dictionary (u16)
 *   9..15  seven read/skip operations (see run_ops)
 *   then the dictionary page (when its length is not 0), then the data page.
 *
 * The page is decoded twice: all values in one read, then by the operation
 * sequence.  When the single read succeeds, every operation must succeed and
 * each read must return exactly the values at its position; reading past the
 * last value must fail.  Views (byte arrays) must lie in readable memory:
 * every byte of every value is read. */
#include "fuzz_common.h"

#include "encoding.h"

#define N_OPS 7
/* DELTA_BYTE_ARRAY rebuilds values: bound what one input can make it build. */
#define MAX_REBUILT_BYTES (64u << 20)

typedef struct page_spec {
    pq_encoding enc;
    pq_phys type;
    int32_t type_length;
    uint32_t num_values;
    const uint8_t *page;
    size_t page_len;
    const pq_dict *dict;
} page_spec;

/* Checks one decoded value and folds its bytes. */
static uint32_t touch_value(const page_spec *s, const uint8_t *v)
{
    if (s->type == PQ_BYTE_ARRAY || s->type == PQ_FIXED_LEN_BYTE_ARRAY) {
        pq_bytes b;
        memcpy(&b, v, sizeof b);
        if (s->type == PQ_FIXED_LEN_BYTE_ARRAY)
            FUZZ_CHECK(b.len == (uint32_t)s->type_length, "FIXED_LEN_BYTE_ARRAY(%d) value of %u bytes",
                       s->type_length, b.len);
        FUZZ_CHECK(b.ptr || b.len == 0, "NULL view of %u bytes", b.len);
        return b.len ? fuzz_touch(b.ptr, b.len) : 0;
    }
    if (s->type == PQ_BOOLEAN) FUZZ_CHECK(*v <= 1, "boolean value %u", *v);
    return fuzz_touch(v, pq_value_size(s->type));
}

static bool same_value(const page_spec *s, const uint8_t *a, const uint8_t *b)
{
    if (s->type == PQ_BYTE_ARRAY || s->type == PQ_FIXED_LEN_BYTE_ARRAY) {
        pq_bytes x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x.len == y.len && (x.len == 0 || memcmp(x.ptr, y.ptr, x.len) == 0);
    }
    return memcmp(a, b, pq_value_size(s->type)) == 0;
}

/* Operation byte: bit 6 set = skip, else read; the low 6 bits give the count,
 * 0..47 as is and 48..63 as (c - 47) * 97 (far jumps over whole blocks). */
static size_t op_count(uint8_t op)
{
    unsigned c = op & 63;
    return c < 48 ? c : (c - 47) * 97;
}

/* Decodes the page by the operations; `all` holds the single-read result
 * when all_ok. */
static void run_ops(const page_spec *s, const uint8_t ops[N_OPS], const uint8_t *all, bool all_ok)
{
    const size_t esz = pq_value_size(s->type);
    pq_values_dec d;
    pq_error err;
    pq_arena storage;
    pq_arena_init(&storage, 4096);
    int rc = pq_values_init(&d, s->enc, s->type, s->type_length, s->page, s->page_len, s->num_values, s->dict,
                            &err);
    if (rc != PQ_OK) {
        FUZZ_CHECK(!all_ok, "init failed the second time: %s", err.msg);
        pq_values_free(&d);
        pq_arena_free(&storage);
        return;
    }
    uint8_t *out = malloc(s->num_values * esz);
    if (!out && s->num_values) abort();
    size_t pos = 0;
    uint32_t h = 0;
    for (int i = 0; i <= N_OPS && rc == PQ_OK; i++) {
        bool skip = i < N_OPS && (ops[i] & 0x40);
        size_t n = i < N_OPS ? op_count(ops[i]) : s->num_values - pos; /* the rest: read */
        if (n > s->num_values - pos) n = s->num_values - pos;
        rc = skip ? pq_values_skip(&d, n, &err) : pq_values_read(&d, out, n, &storage, &err);
        if (rc != PQ_OK) {
            FUZZ_CHECK(!all_ok, "%s %zu values at %zu failed after a full read succeeded: %s",
                       skip ? "skipping" : "reading", n, pos, err.msg);
            break;
        }
        for (size_t k = 0; !skip && k < n; k++) {
            h ^= touch_value(s, out + k * esz);
            FUZZ_CHECK(!all_ok || same_value(s, out + k * esz, all + (pos + k) * esz),
                       "value %zu differs between a single read and operations", pos + k);
        }
        pos += n;
    }
    if (rc == PQ_OK) {
        uint8_t extra[sizeof(pq_int96) + sizeof(pq_bytes)];
        FUZZ_CHECK(pq_values_read(&d, extra, 1, &storage, &err) != PQ_OK, "read past the last value succeeded");
    }
    fuzz_sink ^= h;
    free(out);
    pq_values_free(&d);
    pq_arena_free(&storage);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_init(&in, data, size);
    page_spec s;
    s.enc = (pq_encoding)(fuzz_u8(&in) % 10);
    s.type = (pq_phys)(fuzz_u8(&in) % 8);
    s.type_length = fuzz_u8(&in);
    s.num_values = fuzz_u16(&in);
    size_t dict_len = fuzz_u16(&in);
    uint32_t dict_values = fuzz_u16(&in);
    uint8_t ops[N_OPS];
    for (int i = 0; i < N_OPS; i++) ops[i] = fuzz_u8(&in);
    const uint8_t *dict_bytes = fuzz_take(&in, dict_len, &dict_len);
    size_t page_len;
    const uint8_t *page_bytes = fuzz_take(&in, fuzz_left(&in), &page_len);
    if (s.enc == PQ_ENC_DELTA_BYTE_ARRAY && (uint64_t)s.num_values * (page_len + 1) > MAX_REBUILT_BYTES)
        s.num_values = (uint32_t)(MAX_REBUILT_BYTES / (page_len + 1));

    pq_arena dict_arena;
    pq_arena_init(&dict_arena, 4096);
    pq_dict dict;
    bool have_dict = false;
    uint8_t *dict_copy = fuzz_copy(dict_bytes, dict_len);
    if (dict_len > 0 || s.enc == PQ_ENC_PLAIN_DICTIONARY || s.enc == PQ_ENC_RLE_DICTIONARY) {
        pq_error err;
        have_dict = pq_dict_decode(&dict, s.type, s.type_length, dict_copy, dict_len, dict_values, &dict_arena,
                                   &err) == PQ_OK;
        if (have_dict) {
            FUZZ_CHECK(dict.n == dict_values, "dictionary of %u values, %u asked", dict.n, dict_values);
            page_spec ds = s;
            ds.num_values = dict.n;
            uint32_t h = 0;
            for (uint32_t i = 0; i < dict.n; i++)
                h ^= touch_value(&ds, (const uint8_t *)dict.values + i * pq_value_size(s.type));
            fuzz_sink ^= h;
        }
    }
    s.dict = have_dict ? &dict : NULL;
    uint8_t *page = fuzz_copy(page_bytes, page_len);
    s.page = page;
    s.page_len = page_len;

    /* All values in one read. */
    const size_t esz = pq_value_size(s.type);
    uint8_t *all = malloc(s.num_values * esz);
    if (!all && s.num_values) abort();
    pq_values_dec d;
    pq_error err;
    pq_arena storage;
    pq_arena_init(&storage, 4096);
    bool all_ok = pq_values_init(&d, s.enc, s.type, s.type_length, page, page_len, s.num_values, s.dict, &err) ==
                      PQ_OK &&
                  pq_values_read(&d, all, s.num_values, &storage, &err) == PQ_OK;
    if (!all_ok) FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    pq_values_free(&d);

    run_ops(&s, ops, all, all_ok);

    pq_arena_free(&storage);
    free(all);
    free(page);
    free(dict_copy);
    pq_arena_free(&dict_arena);
    return 0;
}
