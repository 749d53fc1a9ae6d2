/* The writer's pieces: the RLE / bit-packed encoder against the decoder, and
 * the column chunk writer's statistics, page index and dictionary fallback. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "colwrite.h"
#include "encoding.h"
#include "filewrite.h"
#include "plan.h"
#include "scan_parquet.h"
#include "rowgroup.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Runs and noise, every bit width, lengths around the group size. */
static void test_rle_round_trip(void)
{
    static uint32_t v[5000], back[5000];
    const size_t lens[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 5000};
    int bad = 0;
    for (int bw = 0; bw <= 32; bw++) {
        uint32_t mask = bw == 32 ? UINT32_MAX : (uint32_t)((1ull << bw) - 1);
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            size_t n = lens[li];
            for (size_t i = 0; i < n;) {
                size_t run = next_rand() % 3 == 0 ? 1 + next_rand() % 40 : 1;
                uint32_t x = next_rand() & mask;
                for (size_t k = 0; k < run && i < n; k++) v[i++] = x;
            }
            pq_buf b;
            pq_buf_init(&b);
            CHECK(pq_rle_encode(v, n, bw, &b) == 0);
            CHECK(b.len <= pq_rle_encode_bound(n, bw));
            pq_rle_dec d;
            pq_error err;
            pq_error_clear(&err);
            if (pq_rle_init(&d, (const uint8_t *)b.data, b.len, bw, &err) != PQ_OK ||
                pq_rle_read_u32(&d, back, n, &err) != PQ_OK || (n && memcmp(v, back, n * 4) != 0))
                bad++;
            pq_buf_free(&b);
        }
    }
    CHECK_EQ_INT(bad, 0);
    /* A long run is one RLE run: header and value, a few bytes. */
    for (size_t i = 0; i < 5000; i++) v[i] = 3;
    pq_buf b;
    pq_buf_init(&b);
    CHECK(pq_rle_encode(v, 5000, 2, &b) == 0);
    CHECK(b.len <= 4);
    pq_buf_free(&b);
}

/* A one-column schema: `name` of type phys (optional). */
typedef struct one_col {
    pq_node root, col;
    pq_node *children[1];
    pq_leaf leaf;
} one_col;

static void one_col_init(one_col *s, pq_phys phys)
{
    memset(s, 0, sizeof *s);
    s->root.kind = PQ_NODE_STRUCT;
    s->root.name = "schema";
    s->children[0] = &s->col;
    s->root.children = s->children;
    s->root.n_children = 1;
    s->col.kind = PQ_NODE_PRIMITIVE;
    s->col.name = "x";
    s->col.parent = &s->root;
    s->col.phys = phys;
    s->col.converted = PQ_CT_NONE;
    s->col.nullable = true;
    s->col.def_level = 1;
    s->leaf.node = &s->col;
    s->leaf.max_def = 1;
    s->leaf.path = "x";
    s->leaf.column_order = PQ_ORDER_TYPE_DEFINED;
}

/* Writes n entries (values where def[i] == 1) and seals the chunk. */
static int write_chunk(one_col *s, const pq_write_opts *o, const uint16_t *def, int32_t n, const void *values,
                       int32_t n_values, pq_chunk_out *out)
{
    pq_error err;
    pq_error_clear(&err);
    pq_colwriter *w;
    if (pq_colwriter_new(&s->leaf, o, &w, &err) != PQ_OK) return -1;
    pq_col_batch b = {.n_rows = n, .n_levels = n, .def = def, .n_values = n_values, .values = values};
    int rc = pq_colwriter_add(w, &b, &err);
    if (rc == PQ_OK) rc = pq_colwriter_finish(w, out, &err);
    if (rc != PQ_OK) fprintf(stderr, "write_chunk: %s\n", err.msg);
    pq_colwriter_free(w);
    return rc == PQ_OK ? 0 : -1;
}

static int64_t i64_of(pq_bytes b)
{
    int64_t x = 0;
    if (b.len == 8) memcpy(&x, b.ptr, 8);
    return x;
}

/* INT64 with nulls, small pages: chunk and page bounds are the true extremes
 * of exactly the values each page holds; null counts add up. */
static void test_int64_stats_and_page_index(void)
{
    enum { N = 20000 };
    static uint16_t def[N];
    static int64_t vals[N];
    int32_t nv = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int32_t i = 0; i < N; i++) {
        def[i] = i % 7 != 3;
        if (def[i]) {
            int64_t x = (int64_t)(next_rand() % 1000000) - 500000 + i * 10; /* drifting up */
            vals[nv++] = x;
            if (x < lo) lo = x;
            if (x > hi) hi = x;
        }
    }
    one_col s;
    one_col_init(&s, PQ_INT64);
    pq_write_opts o;
    pq_write_opts_init(&o);
    o.page_size = 4096;
    o.no_dictionary = true;
    pq_chunk_out c;
    CHECK(write_chunk(&s, &o, def, N, vals, nv, &c) == 0);
    CHECK_EQ_INT(c.num_rows, N);
    CHECK_EQ_INT(c.meta.num_values, N);
    CHECK(c.meta.has_stats && c.meta.stats.has_min_value && c.meta.stats.has_max_value);
    CHECK_EQ_INT(i64_of(c.meta.stats.min_value), lo);
    CHECK_EQ_INT(i64_of(c.meta.stats.max_value), hi);
    CHECK_EQ_INT(c.meta.stats.null_count, N - nv);
    CHECK(c.n_pages > 5);
    CHECK(c.column_index.len > 0);
    pq_arena a;
    pq_arena_init(&a, 4096);
    pq_column_index ci;
    pq_error err;
    pq_error_clear(&err);
    CHECK(pq_decode_column_index((const uint8_t *)c.column_index.data, c.column_index.len, &a, &ci, &err) == PQ_OK);
    CHECK_EQ_INT(ci.n_pages, c.n_pages);
    int bad = 0;
    int64_t nulls = 0;
    int32_t v = 0;
    for (int32_t p = 0; p < c.n_pages && ci.n_pages == c.n_pages; p++) {
        int64_t r0 = c.pages[p].first_row_index, r1 = p + 1 < c.n_pages ? c.pages[p + 1].first_row_index : N;
        int64_t plo = INT64_MAX, phi = INT64_MIN, pn = 0;
        for (int64_t r = r0; r < r1; r++) {
            if (!def[r]) {
                pn++;
                continue;
            }
            if (vals[v] < plo) plo = vals[v];
            if (vals[v] > phi) phi = vals[v];
            v++;
        }
        if (i64_of(ci.min_values[p]) != plo || i64_of(ci.max_values[p]) != phi || ci.null_counts[p] != pn) bad++;
        nulls += pn;
        if (p > 0 && c.pages[p].offset <= c.pages[p - 1].offset) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(v, nv);
    CHECK_EQ_INT(nulls, N - nv);
    pq_arena_free(&a);
    pq_chunk_out_free(&c);
}

static double f64_of(pq_bytes b)
{
    double x = 0;
    if (b.len == 8) memcpy(&x, b.ptr, 8);
    return x;
}

/* NaN is left out of the bounds; a zero bound is -0.0 as the min and +0.0 as
 * the max; NaN alone gives no bounds and no column index. */
static void test_double_bounds(void)
{
    one_col s;
    one_col_init(&s, PQ_DOUBLE);
    pq_write_opts o;
    pq_write_opts_init(&o);
    const uint16_t def[5] = {1, 1, 1, 1, 1};
    const double v1[5] = {NAN, 0.0, -1.5, 2.5, -0.0};
    pq_chunk_out c;
    CHECK(write_chunk(&s, &o, def, 5, v1, 5, &c) == 0);
    CHECK(f64_of(c.meta.stats.min_value) == -1.5 && f64_of(c.meta.stats.max_value) == 2.5);
    CHECK(c.column_index.len > 0);
    pq_chunk_out_free(&c);
    const double v2[2] = {0.0, NAN};
    CHECK(write_chunk(&s, &o, def, 2, v2, 2, &c) == 0);
    CHECK(f64_of(c.meta.stats.min_value) == 0.0 && signbit(f64_of(c.meta.stats.min_value)));
    CHECK(f64_of(c.meta.stats.max_value) == 0.0 && !signbit(f64_of(c.meta.stats.max_value)));
    pq_chunk_out_free(&c);
    const double v3[2] = {NAN, NAN};
    CHECK(write_chunk(&s, &o, def, 2, v3, 2, &c) == 0);
    CHECK(c.meta.has_stats && !c.meta.stats.has_min_value && c.meta.stats.null_count == 0);
    CHECK_EQ_INT(c.column_index.len, 0);
    pq_chunk_out_free(&c);
}

/* Byte-array bounds past 64 bytes: the min cut to a prefix, the max cut and
 * incremented, both marked inexact; a max of 0xff bytes cannot be cut. */
static void test_long_string_bounds(void)
{
    one_col s;
    one_col_init(&s, PQ_BYTE_ARRAY);
    pq_write_opts o;
    pq_write_opts_init(&o);
    static uint8_t a[100], b[100], ff[100];
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    memset(ff, 0xff, sizeof ff);
    const uint16_t def[3] = {1, 0, 1};
    pq_bytes v[2] = {{b, 100}, {a, 100}};
    pq_chunk_out c;
    CHECK(write_chunk(&s, &o, def, 3, v, 2, &c) == 0);
    const pq_stats *st = &c.meta.stats;
    CHECK(st->has_min_value && st->min_value.len == 64 && memcmp(st->min_value.ptr, a, 64) == 0);
    CHECK(st->has_max_value && st->max_value.len == 64 && memcmp(st->max_value.ptr, b, 63) == 0 &&
          st->max_value.ptr[63] == 'c');
    CHECK(st->has_min_exact && !st->min_exact && st->has_max_exact && !st->max_exact);
    CHECK_EQ_INT(st->null_count, 1);
    pq_chunk_out_free(&c);
    pq_bytes w[2] = {{a, 100}, {ff, 100}};
    CHECK(write_chunk(&s, &o, def, 3, w, 2, &c) == 0);
    CHECK(!c.meta.stats.has_max_value);
    CHECK_EQ_INT(c.column_index.len, 0);
    pq_chunk_out_free(&c);
}

/* DECIMAL statistics (none were written): by value, signed, whatever the
 * storage; big-endian bytes of two lengths compare sign-extended, and are
 * never cut like strings. */
static void test_decimal_bounds(void)
{
    one_col s;
    one_col_init(&s, PQ_INT32);
    s.col.logical.kind = PQ_LT_DECIMAL;
    s.col.logical.precision = 9;
    s.col.logical.scale = 2;
    pq_write_opts o;
    pq_write_opts_init(&o);
    const uint16_t def[4] = {1, 1, 1, 1};
    const int32_t v[4] = {5, -700, 42, -3};
    pq_chunk_out c;
    CHECK(write_chunk(&s, &o, def, 4, v, 4, &c) == 0);
    CHECK(c.meta.has_stats && c.meta.stats.has_min_value && c.meta.stats.has_max_value);
    int32_t lo = 0, hi = 0;
    if (c.meta.stats.has_min_value) memcpy(&lo, c.meta.stats.min_value.ptr, 4);
    if (c.meta.stats.has_max_value) memcpy(&hi, c.meta.stats.max_value.ptr, 4);
    CHECK_EQ_INT(lo, -700);
    CHECK_EQ_INT(hi, 42);
    CHECK(c.column_index.len > 0);
    pq_chunk_out_free(&c);

    one_col_init(&s, PQ_BYTE_ARRAY);
    s.col.logical.kind = PQ_LT_DECIMAL;
    s.col.logical.precision = 30;
    s.col.logical.scale = 0;
    static const uint8_t m1[1] = {0xff};                 /* -1 */
    static const uint8_t big[2] = {0x01, 0x00};          /* 256 */
    static const uint8_t neg[3] = {0xff, 0x00, 0x00};    /* -65536 */
    static const uint8_t small[1] = {0x7f};              /* 127 */
    static uint8_t long_pos[80];                          /* 80 bytes: a huge positive value */
    memset(long_pos, 0, sizeof long_pos);
    long_pos[1] = 1;
    pq_bytes b[5] = {{m1, 1}, {big, 2}, {neg, 3}, {small, 1}, {long_pos, 80}};
    const uint16_t def5[5] = {1, 1, 1, 1, 1};
    CHECK(write_chunk(&s, &o, def5, 5, b, 5, &c) == 0);
    const pq_stats *st = &c.meta.stats;
    CHECK(st->has_min_value && st->min_value.len == 3 && memcmp(st->min_value.ptr, neg, 3) == 0);
    CHECK(st->has_max_value && st->max_value.len == 80 && memcmp(st->max_value.ptr, long_pos, 80) == 0);
    CHECK(!st->has_max_exact || st->max_exact);
    pq_chunk_out_free(&c);
}

/* Encoding stats of a chunk: dictionary pages, dictionary-encoded and PLAIN
 * data pages. */
static void page_kinds(const pq_chunk_out *c, int *dict_pages, int *dict_data, int *plain_data)
{
    *dict_pages = *dict_data = *plain_data = 0;
    for (int32_t i = 0; i < c->meta.n_encoding_stats; i++) {
        const pq_page_enc_stats *e = &c->meta.encoding_stats[i];
        if (e->page_type == PQ_PAGE_DICTIONARY) *dict_pages += e->count;
        else if (e->encoding == PQ_ENC_RLE_DICTIONARY) *dict_data += e->count;
        else if (e->encoding == PQ_ENC_PLAIN) *plain_data += e->count;
    }
}

/* A dictionary past its limit: the first pages keep it, the rest are PLAIN,
 * and the encoding stats say so.  A column whose first page would not shrink
 * with a dictionary (all distinct) has none at all. */
static void test_dictionary_fallback(void)
{
    enum { N = 50000 };
    static int64_t vals[N];
    static uint16_t def[N];
    for (int32_t i = 0; i < N; i++) {
        vals[i] = i / 4; /* each value 4 times: a dictionary pays, then outgrows its limit */
        def[i] = 1;
    }
    one_col s;
    one_col_init(&s, PQ_INT64);
    pq_write_opts o;
    pq_write_opts_init(&o);
    o.dict_limit = 64 * 1024;
    o.page_size = 16 * 1024;
    pq_error err;
    pq_error_clear(&err);
    pq_colwriter *w;
    CHECK(pq_colwriter_new(&s.leaf, &o, &w, &err) == PQ_OK);
    for (int32_t i = 0; i < N; i += 1000) {
        pq_col_batch b = {.n_rows = 1000, .n_levels = 1000, .def = def + i, .n_values = 1000, .values = vals + i};
        CHECK(pq_colwriter_add(w, &b, &err) == PQ_OK);
    }
    pq_chunk_out c;
    CHECK(pq_colwriter_finish(w, &c, &err) == PQ_OK);
    pq_colwriter_free(w);
    int dict_pages, dict_data, plain_data;
    page_kinds(&c, &dict_pages, &dict_data, &plain_data);
    CHECK_EQ_INT(dict_pages, 1);
    CHECK(dict_data > 0 && plain_data > 0);
    CHECK(c.meta.has_dictionary_page_offset && c.meta.dictionary_page_offset == 0);
    CHECK(c.meta.data_page_offset > 0);
    CHECK_EQ_INT(i64_of(c.meta.stats.min_value), 0);
    CHECK_EQ_INT(i64_of(c.meta.stats.max_value), (N - 1) / 4);
    pq_chunk_out_free(&c);

    for (int32_t i = 0; i < N; i++) vals[i] = i * 7919;
    o.dict_limit = 0;
    o.page_size = 0;
    CHECK(write_chunk(&s, &o, def, N, vals, N, &c) == 0);
    page_kinds(&c, &dict_pages, &dict_data, &plain_data);
    CHECK(dict_pages == 0 && dict_data == 0 && plain_data == 1);
    CHECK(!c.meta.has_dictionary_page_offset && c.meta.data_page_offset == 0);
    CHECK_EQ_INT(c.meta.stats.null_count, 0);
    pq_chunk_out_free(&c);
}

/* A copied chunk: offsets and page locations rebased to the chunk, the
 * deprecated min/max dropped, min_value/max_value and the column index kept
 * only under a declared type order; locations outside the extent refused. */
/* Writes a page header at bytes[at] whose page ends at `end` (the page's
 * body left as it is); the header's length depends on the size it holds. */
static void put_page(uint8_t *bytes, int at, int end, int32_t type, int32_t num_values)
{
    pq_page_header h;
    memset(&h, 0, sizeof h);
    h.type = type;
    if (type == PQ_PAGE_DICTIONARY) {
        h.has_dict = true;
        h.dict.num_values = num_values;
        h.dict.encoding = PQ_ENC_PLAIN;
    } else {
        h.has_data = true;
        h.data.num_values = num_values;
        h.data.encoding = h.data.def_encoding = h.data.rep_encoding = PQ_ENC_PLAIN;
    }
    pq_buf b;
    pq_error err;
    for (int guess = 2; guess < 30; guess++) {
        pq_buf_init(&b);
        h.compressed_page_size = h.uncompressed_page_size = end - at - guess;
        CHECK(pq_encode_page_header(&h, &b, &err) == PQ_OK);
        bool fits = (int)b.len == guess;
        if (fits) memcpy(bytes + at, b.data, b.len);
        pq_buf_free(&b);
        if (fits) return;
    }
    CHECK(!"a page header of 2 to 29 bytes");
}

static void test_chunk_copy(void)
{
    uint8_t bytes[100];
    for (int i = 0; i < 100; i++) bytes[i] = (uint8_t)i;
    /* A dictionary page, then data pages of 5 and 5 values at 40 and 70. */
    put_page(bytes, 0, 40, PQ_PAGE_DICTIONARY, 3);
    put_page(bytes, 40, 70, PQ_PAGE_DATA, 5);
    put_page(bytes, 70, 100, PQ_PAGE_DATA, 5);
    int32_t encs[2] = {PQ_ENC_PLAIN, PQ_ENC_RLE};
    const char *path[1] = {"x"};
    uint8_t lo = 1, hi = 9;
    pq_column_meta src = {
        .type = PQ_INT32, .encodings = encs, .n_encodings = 2, .path = path, .n_path = 1,
        .num_values = 10, .total_compressed_size = 100, .total_uncompressed_size = 120,
        .data_page_offset = 1040, .has_dictionary_page_offset = true, .dictionary_page_offset = 1000,
        .has_stats = true, .n_encoding_stats = -1,
        .has_bloom_filter_offset = true, .bloom_filter_offset = 5000,
    };
    src.stats.has_min = src.stats.has_max = true;
    src.stats.min = (pq_bytes){&lo, 1};
    src.stats.max = (pq_bytes){&hi, 1};
    src.stats.has_min_value = src.stats.has_max_value = true;
    src.stats.min_value = (pq_bytes){&lo, 1};
    src.stats.max_value = (pq_bytes){&hi, 1};
    src.stats.has_null_count = true;
    src.stats.null_count = 2;
    pq_page_location locs[2] = {{1040, 30, 0}, {1070, 30, 5}};
    pq_offset_index oi = {2, locs};
    const uint8_t ci[3] = {7, 8, 9};
    pq_chunk_out c;
    pq_error err;
    pq_error_clear(&err);
    CHECK(pq_chunk_copy(&src, 10, true, bytes, 1000, 100, &oi, ci, 3, &c, &err) == PQ_OK);
    CHECK(c.bytes.len == 100 && memcmp(c.bytes.data, bytes, 100) == 0);
    CHECK_EQ_INT(c.meta.data_page_offset, 40);
    CHECK_EQ_INT(c.meta.dictionary_page_offset, 0);
    CHECK(!c.meta.has_bloom_filter_offset);
    CHECK(!c.meta.stats.has_min && !c.meta.stats.has_max);
    CHECK(c.meta.stats.has_min_value && c.meta.stats.min_value.ptr != &lo && c.meta.stats.min_value.ptr[0] == 1);
    CHECK(c.n_pages == 2 && c.pages[0].offset == 40 && c.pages[1].offset == 70 && c.pages[1].first_row_index == 5);
    CHECK_EQ_INT(c.column_index.len, 3);
    CHECK(c.meta.path[0] != path[0] && strcmp(c.meta.path[0], "x") == 0);
    pq_chunk_out_free(&c);
    /* No declared order: null count only, no column index. */
    CHECK(pq_chunk_copy(&src, 10, false, bytes, 1000, 100, &oi, ci, 3, &c, &err) == PQ_OK);
    CHECK(!c.meta.stats.has_min_value && !c.meta.stats.has_max_value && c.meta.stats.has_null_count);
    CHECK_EQ_INT(c.column_index.len, 0);
    pq_chunk_out_free(&c);
    locs[1].compressed_page_size = 31; /* ends past the extent */
    CHECK(pq_chunk_copy(&src, 10, true, bytes, 1000, 100, &oi, NULL, 0, &c, &err) == PQ_ERR && err.cls == PQ_E_CORRUPT);
    pq_chunk_out_free(&c);
    /* The pages are walked (the copy is not decoded): a garbled header, a
     * page past the chunk's end, or fewer values than the chunk claims is
     * PQ_E_CORRUPT, as a reader would find. */
    locs[1].compressed_page_size = 30;
    uint8_t bad[100];
    memcpy(bad, bytes, sizeof bad);
    bad[40] = 0xff;
    CHECK(pq_chunk_copy(&src, 10, true, bad, 1000, 100, &oi, NULL, 0, &c, &err) == PQ_ERR && err.cls == PQ_E_CORRUPT &&
          strstr(err.msg, "page 1: page header at offset 40"));
    pq_chunk_out_free(&c);
    memcpy(bad, bytes, sizeof bad);
    put_page(bad, 70, 101, PQ_PAGE_DATA, 5);
    CHECK(pq_chunk_copy(&src, 10, true, bad, 1000, 100, &oi, NULL, 0, &c, &err) == PQ_ERR && err.cls == PQ_E_CORRUPT &&
          strstr(err.msg, "overrun the column chunk"));
    pq_chunk_out_free(&c);
    src.num_values = 11;
    CHECK(pq_chunk_copy(&src, 10, true, bytes, 1000, 100, &oi, NULL, 0, &c, &err) == PQ_ERR && err.cls == PQ_E_CORRUPT &&
          strstr(err.msg, "ends after 10 of its 11 values"));
    pq_chunk_out_free(&c);
}

/* A bloom filter of 5000 even numbers: every one of them may be there, few
 * odd ones (about the 1% it is sized for); a header the reader decodes. */
static void test_bloom_filter(void)
{
    enum { N = 5000 };
    static int64_t vals[N];
    static uint16_t def[N];
    for (int32_t i = 0; i < N; i++) {
        vals[i] = 2 * (int64_t)i;
        def[i] = 1;
    }
    one_col s;
    one_col_init(&s, PQ_INT64);
    pq_write_opts o;
    pq_write_opts_init(&o);
    o.bloom_filter = true;
    pq_chunk_out c;
    CHECK(write_chunk(&s, &o, def, N, vals, N, &c) == 0);
    CHECK(c.bloom.len > 0);
    pq_bloom_header h;
    size_t used = 0;
    pq_error err;
    pq_error_clear(&err);
    CHECK(pq_decode_bloom_header((const uint8_t *)c.bloom.data, c.bloom.len, &h, &used, &err) == PQ_OK);
    CHECK(h.algorithm_block && h.hash_xxhash && h.compression_none);
    CHECK(h.num_bytes > 0 && used + (size_t)h.num_bytes == c.bloom.len && h.num_bytes % 32 == 0);
    pq_bloom b = {(const uint8_t *)c.bloom.data + used, (uint32_t)h.num_bytes};
    int missed = 0, false_pos = 0;
    for (int32_t i = 0; i < N; i++) {
        int64_t even = 2 * (int64_t)i, odd = even + 1;
        missed += !pq_bloom_may_contain(&b, (const uint8_t *)&even, 8);
        false_pos += pq_bloom_may_contain(&b, (const uint8_t *)&odd, 8);
    }
    CHECK_EQ_INT(missed, 0);
    CHECK(false_pos < N / 30);
    pq_chunk_out_free(&c);
    /* Off by default. */
    pq_write_opts_init(&o);
    CHECK(write_chunk(&s, &o, def, N, vals, N, &c) == 0);
    CHECK_EQ_INT(c.bloom.len, 0);
    pq_chunk_out_free(&c);
}

/* ------------------------------------------------------------------ round trips */

static int buf_sink(void *ctx, const char *data, size_t len, pq_error *err)
{
    (void)err;
    return pq_buf_append(ctx, data, len) ? PQ_ERR : PQ_OK;
}

/* One column of n rows (nulls where def == 0), written as a file in one or
 * two row groups and read back by the reader: the same levels and values.
 * Returns the number of mismatches (0). */
static int round_trip(pq_phys phys, const pq_write_opts *o, const uint16_t *def, int32_t n, const void *values,
                      int32_t n_values, bool two_groups)
{
    one_col s;
    one_col_init(&s, phys);
    if (phys == PQ_FIXED_LEN_BYTE_ARRAY) s.col.type_length = 5;
    pq_schema_element el[2];
    memset(el, 0, sizeof el);
    el[0].name = "schema";
    el[0].has_num_children = true;
    el[0].num_children = 1;
    el[0].converted_type = PQ_CT_NONE;
    el[1].name = "x";
    el[1].has_type = true;
    el[1].type = phys;
    el[1].type_length = s.col.type_length;
    el[1].has_repetition = true;
    el[1].repetition = PQ_OPTIONAL;
    el[1].converted_type = PQ_CT_NONE;
    pq_buf file;
    pq_buf_init(&file);
    pq_sink sink = {buf_sink, &file};
    pq_error err;
    pq_error_clear(&err);
    pq_filewriter *fw;
    int bad = 0;
    if (pq_filewriter_new(&sink, el, 2, 1, &fw, &err) != PQ_OK) return 1;
    const size_t vs = pq_value_size(phys);
    int32_t cut = two_groups ? n / 3 : n, v_cut = 0;
    for (int32_t i = 0; i < cut; i++) v_cut += def[i];
    int32_t at[2] = {0, cut}, len[2] = {cut, n - cut}, vat[2] = {0, v_cut}, vlen[2] = {v_cut, n_values - v_cut};
    for (int g = 0; g < 2 && !bad; g++) {
        if (len[g] == 0) continue;
        pq_colwriter *w;
        pq_chunk_out c;
        if (pq_colwriter_new(&s.leaf, o, &w, &err) != PQ_OK) return 1;
        /* Batches of odd sizes: page cuts and batch ends fall anywhere. */
        int32_t done = 0, vdone = 0;
        while (done < len[g] && !bad) {
            int32_t m = 1 + (int32_t)(next_rand() % 3000);
            if (m > len[g] - done) m = len[g] - done;
            int32_t mv = 0;
            for (int32_t i = 0; i < m; i++) mv += def[at[g] + done + i];
            pq_col_batch b = {.n_rows = m, .n_levels = m, .def = def + at[g] + done, .n_values = mv,
                              .values = (const uint8_t *)values + (size_t)(vat[g] + vdone) * vs};
            bad += pq_colwriter_add(w, &b, &err) != PQ_OK;
            done += m;
            vdone += mv;
        }
        bad += pq_colwriter_finish(w, &c, &err) != PQ_OK;
        pq_colwriter_free(w);
        if (!bad) bad += pq_filewriter_add_row_group(fw, &c, &err) != PQ_OK;
        pq_chunk_out_free(&c);
        (void)vlen;
    }
    if (!bad) bad += pq_filewriter_finish(fw, &err) != PQ_OK;
    pq_filewriter_free(fw);
    pq_file *f = NULL;
    pq_footer *ft = NULL;
    if (!bad && (pq_file_open_mem("mem", file.data, file.len, &f, &err) != PQ_OK || pq_footer_read(f, &ft, &err) != PQ_OK))
        bad++;
    int32_t row = 0, v = 0;
    for (int32_t g = 0; !bad && g < ft->meta.n_row_groups; g++) {
        int32_t leaf = 0;
        pq_rg_reader *rg;
        if (pq_rg_open(f, ft, g, &leaf, 1, &rg, &err) != PQ_OK) {
            bad++;
            break;
        }
        pq_col_reader *cr = pq_rg_column(rg, 0);
        while (!bad && pq_col_position(cr) < rg->num_rows) {
            pq_col_batch b;
            if (pq_col_read(cr, 777, &b, &err) != PQ_OK || b.n_rows == 0) {
                bad++;
                break;
            }
            int32_t bv = 0;
            for (int32_t i = 0; i < b.n_rows; i++, row++) {
                int d = b.def ? b.def[i] : 1;
                if (d != def[row]) bad++;
                if (!d) continue;
                const uint8_t *want = (const uint8_t *)values + (size_t)v++ * vs;
                const uint8_t *got = (const uint8_t *)b.values + (size_t)bv++ * vs;
                if (phys == PQ_BYTE_ARRAY || phys == PQ_FIXED_LEN_BYTE_ARRAY) {
                    const pq_bytes *x = (const pq_bytes *)want, *y = (const pq_bytes *)got;
                    if (x->len != y->len || (x->len && memcmp(x->ptr, y->ptr, x->len))) bad++;
                } else if (memcmp(want, got, vs)) {
                    bad++;
                }
            }
        }
        pq_rg_close(rg);
    }
    if (!bad && (row != n || v != n_values)) bad++;
    if (bad && err.msg[0]) fprintf(stderr, "round_trip(%s): %s\n", pq_phys_name(phys), err.msg);
    pq_footer_free(ft);
    pq_file_close(f);
    pq_buf_free(&file);
    return bad;
}

/* Every physical type, with few or many distinct values, no, some or all
 * nulls, small pages or one, dictionary on, off or overflowing, one or two
 * row groups: the reader gets back exactly what was written. */
static void test_round_trips(void)
{
    enum { N = 20000 };
    static uint16_t def[N];
    static uint8_t vals[N * 16];
    static uint8_t bytes[N * 24];
    const pq_phys types[] = {PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96, PQ_FLOAT, PQ_DOUBLE, PQ_BYTE_ARRAY,
                             PQ_FIXED_LEN_BYTE_ARRAY};
    int bad = 0, cases = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const pq_phys phys = types[t];
        const size_t vs = pq_value_size(phys);
        for (int variant = 0; variant < 12; variant++) {
            int null_mode = variant % 3;            /* none, some, all */
            uint32_t distinct = variant & 4 ? 50 : 0; /* 0: all over the range */
            int32_t n = variant == 11 ? 1 : N;
            int32_t nv = 0;
            size_t bytes_at = 0;
            for (int32_t i = 0; i < n; i++) {
                def[i] = null_mode == 0 ? 1 : null_mode == 2 ? 0 : next_rand() % 4 != 0;
                if (!def[i]) continue;
                uint64_t r = distinct ? next_rand() % distinct : ((uint64_t)next_rand() << 32 | next_rand());
                uint8_t *dst = vals + (size_t)nv * vs;
                switch (phys) {
                case PQ_BOOLEAN: dst[0] = (uint8_t)(r & 1); break;
                case PQ_INT32: { int32_t x = (int32_t)r; memcpy(dst, &x, 4); break; }
                case PQ_INT64: case PQ_INT96: memcpy(dst, &r, 8); memset(dst + 8, 0, vs - 8); if (phys == PQ_INT96) memcpy(dst + 8, &r, 4); break;
                case PQ_FLOAT: { float x = (float)(int64_t)r / 7.0f; memcpy(dst, &x, 4); break; }
                case PQ_DOUBLE: { double x = (double)(int64_t)r / 3.0; memcpy(dst, &x, 8); break; }
                default: {
                    /* Strings of 0..20 bytes (FLBA: 5), some sharing prefixes. */
                    uint32_t len = phys == PQ_FIXED_LEN_BYTE_ARRAY ? 5 : (uint32_t)(r % 21);
                    for (uint32_t k = 0; k < len; k++) bytes[bytes_at + k] = (uint8_t)('a' + (r >> (k % 8)) % 26);
                    pq_bytes b = {bytes + bytes_at, len};
                    memcpy(dst, &b, sizeof b);
                    bytes_at += len;
                }
                }
                nv++;
            }
            pq_write_opts o;
            pq_write_opts_init(&o);
            o.page_size = variant & 1 ? 1024 : 0;
            o.no_dictionary = variant == 3 || variant == 9;
            if (variant == 8 || variant == 10) o.dict_limit = 256; /* overflows mid-chunk */
            o.codec = variant % 4 == 2 ? PQ_CODEC_SNAPPY : variant % 4 == 3 ? PQ_CODEC_UNCOMPRESSED : PQ_CODEC_ZSTD;
            int b = round_trip(phys, &o, def, n, vals, nv, variant & 2);
            if (b) fprintf(stderr, "round trip %s variant %d: %d mismatches\n", pq_phys_name(phys), variant, b);
            bad += b != 0;
            cases++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(cases, 96);
}

/* data.parquet takes its schema from the table's first file: a file whose
 * column has other levels (REQUIRED there, OPTIONAL here) is refused, not
 * written with levels the schema does not declare. */
static void test_parquet_out_levels(void)
{
    pq_schema_element el[2][2];
    memset(el, 0, sizeof el);
    for (int v = 0; v < 2; v++) {
        el[v][0].name = "schema";
        el[v][0].has_num_children = true;
        el[v][0].num_children = 1;
        el[v][0].converted_type = PQ_CT_NONE;
        el[v][1].name = "x";
        el[v][1].has_type = true;
        el[v][1].type = PQ_INT64;
        el[v][1].has_repetition = true;
        el[v][1].repetition = v == 0 ? PQ_REQUIRED : PQ_OPTIONAL;
        el[v][1].converted_type = PQ_CT_NONE;
    }
    pq_footer ref;
    memset(&ref, 0, sizeof ref);
    ref.meta.schema = el[0];
    ref.meta.n_schema = 2;
    pq_file_meta other = {.schema = el[1], .n_schema = 2};
    pq_schema other_schema;
    pq_error err;
    pq_error_clear(&err);
    CHECK(pq_schema_build(&ref.meta, &ref.schema, &err) == PQ_OK);
    CHECK(pq_schema_build(&other, &other_schema, &err) == PQ_OK);
    pq_query_spec spec = {.limit = -1};
    pq_query *q = NULL;
    CHECK(pq_query_compile(&ref.schema, NULL, NULL, 0, &spec, &q, &err) == PQ_OK);
    pq_buf file;
    pq_buf_init(&file);
    pq_sink sink = {buf_sink, &file};
    pq_write_opts o;
    pq_write_opts_init(&o);
    pq_parquet_out *po = NULL;
    CHECK(q && pq_parquet_out_new(q, &ref, &o, &sink, &po, &err) == PQ_OK);
    if (po) {
        const pq_node *same[1] = {ref.schema.root->children[0]}, *nullable[1] = {other_schema.root->children[0]};
        pq_rg_encoder *e = NULL;
        CHECK(pq_rg_encoder_new(po, &ref.schema, same, NULL, &e, &err) == PQ_OK);
        pq_rg_encoder_free(e);
        e = NULL;
        CHECK(pq_rg_encoder_new(po, &other_schema, nullable, NULL, &e, &err) == PQ_ERR && err.cls == PQ_E_UNSUPPORTED);
        CHECK(strstr(err.msg, "'x'") != NULL);
        pq_rg_encoder_free(e);
    }
    pq_parquet_out_free(po);
    pq_query_free(q);
    pq_schema_free(&ref.schema);
    pq_schema_free(&other_schema);
    pq_buf_free(&file);
}

int main(void)
{
    test_rle_round_trip();
    test_int64_stats_and_page_index();
    test_double_bounds();
    test_long_string_bounds();
    test_decimal_bounds();
    test_dictionary_fallback();
    test_chunk_copy();
    test_round_trips();
    test_bloom_filter();
    test_parquet_out_levels();
    return check_report();
}
