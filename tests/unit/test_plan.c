/* The access plan's building blocks: statistics trust rules
 * (pq_range_from_stats), split-block bloom filters (pq_bloom_*, against the
 * corpus's bloom_filter*.bin and XXH64 values computed by an independent
 * implementation, tests/prune/lib.mjs), and the page-index rung on a small
 * in-memory file built with the thrift encoders (row ranges of two columns
 * intersected, null pages, NaN bounds, a bad offset index). */
#include <malloc.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "check.h"
#include "footer.h"
#include "io.h"
#include "meta.h"
#include "plan.h"
#include "query.h"
#include "scan.h"


/* ------------------------------------------------------------------ helpers */

static pq_node node_of(pq_phys phys, pq_converted ct, pq_logical_kind lk)
{
    pq_node n;
    memset(&n, 0, sizeof n);
    n.name = "x";
    n.kind = PQ_NODE_PRIMITIVE;
    n.phys = phys;
    n.converted = ct;
    n.logical.kind = lk;
    n.leaf_index = 0;
    n.nullable = true;
    n.def_level = 1;
    return n;
}

static pq_leaf leaf_of(const pq_node *n, int32_t order)
{
    pq_leaf l = {.node = n, .max_def = 1, .max_rep = 0, .path = "x", .column_order = order};
    return l;
}

static pq_bytes le_bytes(uint8_t *buf, uint64_t v, int width)
{
    for (int i = 0; i < width; i++) buf[i] = (uint8_t)(v >> (8 * i));
    return (pq_bytes){buf, (uint32_t)width};
}

static pq_bytes dbl_bytes(uint8_t *buf, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    return le_bytes(buf, bits, 8);
}

static pq_bytes str_bytes(const char *s)
{
    return (pq_bytes){(const uint8_t *)s, (uint32_t)strlen(s)};
}

static pq_col_range range_of(const pq_leaf *l, const pq_stats *st, int64_t rows)
{
    pq_col_range r;
    pq_range_from_stats(l, st, true, rows, &r);
    return r;
}

/* ------------------------------------------------------------------ trust rules */

static void test_signed_ints(void)
{
    pq_node n = node_of(PQ_INT64, PQ_CT_NONE, PQ_LT_NONE);
    pq_leaf l = leaf_of(&n, PQ_ORDER_TYPE_DEFINED);
    uint8_t a[8], b[8];
    pq_stats st;
    memset(&st, 0, sizeof st);
    st.has_min_value = st.has_max_value = true;
    st.min_value = le_bytes(a, (uint64_t)-5, 8);
    st.max_value = le_bytes(b, 70, 8);
    st.has_null_count = true;
    st.null_count = 3;
    pq_col_range r = range_of(&l, &st, 10);
    CHECK(r.known && r.has_min && r.has_max && r.exact_min && r.exact_max && !r.may_have_nan);
    CHECK(r.min.type == PQ_V_INT && r.min.u.i == -5 && r.max.u.i == 70);
    CHECK(r.has_null_count && r.null_count == 3 && r.row_count == 10);

    /* Deprecated min/max of a signed integer: written with the same order, used. */
    pq_stats old;
    memset(&old, 0, sizeof old);
    old.has_min = old.has_max = true;
    old.min = le_bytes(a, (uint64_t)-5, 8);
    old.max = le_bytes(b, 70, 8);
    pq_leaf legacy = leaf_of(&n, PQ_ORDER_UNDEFINED);
    r = range_of(&legacy, &old, 10);
    CHECK(r.has_min && r.has_max && r.min.u.i == -5 && r.max.u.i == 70);
    CHECK(!r.has_null_count);

    /* min_value/max_value win over the deprecated fields. */
    old.has_min_value = old.has_max_value = true;
    uint8_t c[8], d[8];
    old.min_value = le_bytes(c, 1, 8);
    old.max_value = le_bytes(d, 2, 8);
    r = range_of(&legacy, &old, 10);
    CHECK(r.min.u.i == 1 && r.max.u.i == 2);

    /* Inverted bounds and bounds of the wrong width prove nothing. */
    st.min_value = le_bytes(a, 71, 8);
    r = range_of(&l, &st, 10);
    CHECK(r.known && !r.has_min && !r.has_max && r.has_null_count);
    st.min_value = le_bytes(a, 1, 4);
    r = range_of(&l, &st, 10);
    CHECK(!r.has_min && !r.has_max);
    /* Only one side: nothing. */
    st.min_value = le_bytes(a, 1, 8);
    st.has_max_value = false;
    r = range_of(&l, &st, 10);
    CHECK(!r.has_min && !r.has_max);

    /* INT32 with DECIMAL: legacy order is the signed one, used. */
    pq_node dn = node_of(PQ_INT32, PQ_CT_DECIMAL, PQ_LT_DECIMAL);
    dn.logical.scale = 2;
    dn.logical.precision = 4;
    pq_leaf dl = leaf_of(&dn, PQ_ORDER_UNDEFINED);
    memset(&old, 0, sizeof old);
    old.has_min = old.has_max = true;
    old.min = le_bytes(a, 100, 4);
    old.max = le_bytes(b, 2400, 4);
    r = range_of(&dl, &old, 24);
    CHECK(r.has_min && r.has_max);
}

static void test_unsigned(void)
{
    pq_node n = node_of(PQ_INT64, PQ_CT_UINT_64, PQ_LT_INTEGER);
    n.logical.bit_width = 64;
    n.logical.is_signed = false;
    pq_leaf l = leaf_of(&n, PQ_ORDER_TYPE_DEFINED);
    uint8_t a[8], b[8];
    pq_stats st;
    memset(&st, 0, sizeof st);
    /* Deprecated fields were compared as signed: 2^63 + 5 sorted below 7. */
    st.has_min = st.has_max = true;
    st.min = le_bytes(a, (1ull << 63) + 5, 8);
    st.max = le_bytes(b, 7, 8);
    pq_col_range r = range_of(&l, &st, 4);
    CHECK(r.known && !r.has_min && !r.has_max);
    /* Even when they happen to look ordered. */
    st.min = le_bytes(a, 1, 8);
    st.max = le_bytes(b, 7, 8);
    r = range_of(&l, &st, 4);
    CHECK(!r.has_min && !r.has_max);
    /* min_value/max_value use the unsigned order: values above INT64_MAX. */
    st.has_min_value = st.has_max_value = true;
    st.min_value = le_bytes(a, 7, 8);
    st.max_value = le_bytes(b, UINT64_MAX, 8);
    r = range_of(&l, &st, 4);
    CHECK(r.has_min && r.has_max && r.exact_min && r.exact_max);
    CHECK(pq_value_cmp(&r.min, &r.max) < 0);
    /* The upper bound really is 2^64 - 1 (not -1). */
    pq_value big = {.type = PQ_V_DECIMAL};
    big.u.dec.unscaled = (__int128)UINT64_MAX;
    big.u.dec.scale = 0;
    pq_value lo = r.max;
    CHECK(pq_value_cmp(&lo, &big) == 0);

    /* UINT_32 from the converted type alone (schema normalization maps it to
     * an unsigned INTEGER logical type; the trust rule keys on that). */
    pq_node u32 = node_of(PQ_INT32, PQ_CT_UINT_32, PQ_LT_INTEGER);
    u32.logical.bit_width = 32;
    u32.logical.is_signed = false;
    pq_leaf ul = leaf_of(&u32, PQ_ORDER_UNDEFINED);
    memset(&st, 0, sizeof st);
    st.has_min = st.has_max = true;
    st.min = le_bytes(a, 0x80000000u, 4);
    st.max = le_bytes(b, 3, 4);
    r = range_of(&ul, &st, 4);
    CHECK(!r.has_min && !r.has_max);
    st.has_min_value = st.has_max_value = true;
    st.min_value = le_bytes(a, 3, 4);
    st.max_value = le_bytes(b, 0x80000000u, 4);
    pq_leaf ul2 = leaf_of(&u32, PQ_ORDER_TYPE_DEFINED);
    r = range_of(&ul2, &st, 4);
    CHECK(r.has_min && r.has_max && r.min.u.i == 3 && r.max.u.i == 0x80000000ll);
}

static void test_binary(void)
{
    pq_node n = node_of(PQ_BYTE_ARRAY, PQ_CT_UTF8, PQ_LT_STRING);
    pq_leaf l = leaf_of(&n, PQ_ORDER_TYPE_DEFINED);
    pq_stats st;
    memset(&st, 0, sizeof st);
    /* Deprecated min/max of byte arrays: signed byte order, ignored. */
    st.has_min = st.has_max = true;
    st.min = str_bytes("apple");
    st.max = str_bytes("pear");
    pq_col_range r = range_of(&l, &st, 5);
    CHECK(!r.has_min && !r.has_max);
    pq_leaf legacy = leaf_of(&n, PQ_ORDER_UNDEFINED);
    r = range_of(&legacy, &st, 5);
    CHECK(!r.has_min && !r.has_max);

    /* min_value/max_value without exactness flags: bounds, not values
     * (writers truncate long strings). */
    st.has_min_value = st.has_max_value = true;
    st.min_value = str_bytes("Al");
    st.max_value = str_bytes("Kf");
    r = range_of(&l, &st, 5);
    CHECK(r.has_min && r.has_max && !r.exact_min && !r.exact_max);
    CHECK(r.min.type == PQ_V_STRING && r.min.u.s.len == 2 && memcmp(r.min.u.s.ptr, "Al", 2) == 0);
    /* The flags are carried. */
    st.has_min_exact = st.has_max_exact = true;
    st.min_exact = false;
    st.max_exact = true;
    r = range_of(&l, &st, 5);
    CHECK(r.has_min && r.has_max && !r.exact_min && r.exact_max);
    st.min_exact = true;
    st.max_exact = false;
    r = range_of(&l, &st, 5);
    CHECK(r.exact_min && !r.exact_max);

    /* Bytes above 0x7F order after ASCII (unsigned). */
    st.min_value = str_bytes("a");
    st.max_value = (pq_bytes){(const uint8_t *)"\xff\xff", 2};
    r = range_of(&l, &st, 5);
    CHECK(r.has_min && r.has_max);

    /* FIXED_LEN_BYTE_ARRAY decimal: deprecated fields ignored. */
    pq_node fn = node_of(PQ_FIXED_LEN_BYTE_ARRAY, PQ_CT_DECIMAL, PQ_LT_DECIMAL);
    fn.type_length = 2;
    fn.logical.precision = 4;
    fn.logical.scale = 2;
    pq_leaf fl = leaf_of(&fn, PQ_ORDER_UNDEFINED);
    memset(&st, 0, sizeof st);
    st.has_min = st.has_max = true;
    st.min = (pq_bytes){(const uint8_t *)"\x00\xc8", 2};
    st.max = (pq_bytes){(const uint8_t *)"\x09\x60", 2};
    r = range_of(&fl, &st, 24);
    CHECK(!r.has_min && !r.has_max);
}

static void test_floats(void)
{
    pq_node n = node_of(PQ_DOUBLE, PQ_CT_NONE, PQ_LT_NONE);
    pq_leaf l = leaf_of(&n, PQ_ORDER_TYPE_DEFINED);
    uint8_t a[8], b[8];
    pq_stats st;
    memset(&st, 0, sizeof st);
    st.has_min_value = st.has_max_value = true;
    st.min_value = dbl_bytes(a, -2.0);
    st.max_value = dbl_bytes(b, 5.0);
    pq_col_range r = range_of(&l, &st, 10);
    CHECK(r.has_min && r.has_max && r.may_have_nan && r.min.u.d == -2.0 && r.max.u.d == 5.0);
    /* A NaN bound (PyArrow 0.8 wrote NaN max) proves nothing. */
    st.max_value = dbl_bytes(b, NAN);
    r = range_of(&l, &st, 10);
    CHECK(r.known && !r.has_min && !r.has_max && r.may_have_nan);
    st.min_value = dbl_bytes(a, -NAN);
    st.max_value = dbl_bytes(b, 5.0);
    r = range_of(&l, &st, 10);
    CHECK(!r.has_min && !r.has_max);
    /* Legacy fields of a double: the same order, used (NaN rule too). */
    pq_leaf legacy = leaf_of(&n, PQ_ORDER_UNDEFINED);
    memset(&st, 0, sizeof st);
    st.has_min = st.has_max = true;
    st.min = dbl_bytes(a, 1.0);
    st.max = dbl_bytes(b, NAN);
    r = range_of(&legacy, &st, 2);
    CHECK(!r.has_min && !r.has_max && r.may_have_nan);
    st.max = dbl_bytes(b, 3.0);
    r = range_of(&legacy, &st, 2);
    CHECK(r.has_min && r.has_max);

    /* Unknown column order (an IEEE 754 total order this reader does not
     * know): bounds ignored, null count kept. */
    pq_leaf unk = leaf_of(&n, PQ_ORDER_UNKNOWN);
    memset(&st, 0, sizeof st);
    st.has_min_value = st.has_max_value = true;
    st.min_value = dbl_bytes(a, -2.0);
    st.max_value = dbl_bytes(b, 5.0);
    st.has_null_count = true;
    st.null_count = 0;
    r = range_of(&unk, &st, 10);
    CHECK(r.known && !r.has_min && !r.has_max && r.has_null_count && r.null_count == 0);

    /* FLOAT16: NaN bound ignored, finite bounds used, NaN possible. */
    pq_node h = node_of(PQ_FIXED_LEN_BYTE_ARRAY, PQ_CT_NONE, PQ_LT_FLOAT16);
    h.type_length = 2;
    pq_leaf hl = leaf_of(&h, PQ_ORDER_TYPE_DEFINED);
    memset(&st, 0, sizeof st);
    st.has_min_value = st.has_max_value = true;
    st.min_value = (pq_bytes){(const uint8_t *)"\x00\xc0", 2}; /* -2.0 */
    st.max_value = (pq_bytes){(const uint8_t *)"\x00\x7e", 2}; /* NaN */
    r = range_of(&hl, &st, 10);
    CHECK(!r.has_min && !r.has_max && r.may_have_nan);
    st.max_value = (pq_bytes){(const uint8_t *)"\x00\x45", 2}; /* 5.0 */
    r = range_of(&hl, &st, 10);
    CHECK(r.has_min && r.has_max && r.min.u.d == -2.0 && r.max.u.d == 5.0 && r.may_have_nan);
}

static void test_no_order_and_nulls(void)
{
    uint8_t a[12] = {0}, b[12] = {0};
    /* INT96: no sort order. */
    pq_node n96 = node_of(PQ_INT96, PQ_CT_NONE, PQ_LT_NONE);
    pq_leaf l96 = leaf_of(&n96, PQ_ORDER_TYPE_DEFINED);
    pq_stats st;
    memset(&st, 0, sizeof st);
    st.has_min_value = st.has_max_value = true;
    st.min_value = (pq_bytes){a, 12};
    st.max_value = (pq_bytes){b, 12};
    st.has_null_count = true;
    st.null_count = 2;
    pq_col_range r = range_of(&l96, &st, 4);
    CHECK(r.known && !r.has_min && !r.has_max && r.has_null_count && r.null_count == 2);

    /* INTERVAL: no sort order. */
    pq_node iv = node_of(PQ_FIXED_LEN_BYTE_ARRAY, PQ_CT_INTERVAL, PQ_LT_NONE);
    iv.type_length = 12;
    pq_leaf ivl = leaf_of(&iv, PQ_ORDER_TYPE_DEFINED);
    r = range_of(&ivl, &st, 4);
    CHECK(!r.has_min && !r.has_max);

    /* Null counts: out of range ignored; no statistics at all: only the rows. */
    pq_node n = node_of(PQ_INT32, PQ_CT_NONE, PQ_LT_NONE);
    pq_leaf l = leaf_of(&n, PQ_ORDER_TYPE_DEFINED);
    memset(&st, 0, sizeof st);
    st.has_null_count = true;
    st.null_count = 11;
    r = range_of(&l, &st, 10);
    CHECK(r.known && !r.has_null_count);
    st.null_count = -1;
    r = range_of(&l, &st, 10);
    CHECK(!r.has_null_count);
    st.null_count = 10;
    r = range_of(&l, &st, 10);
    CHECK(r.has_null_count && r.null_count == 10);
    pq_range_from_stats(&l, &st, false, 10, &r);
    CHECK(r.known && !r.has_null_count && !r.has_min && !r.has_max && r.row_count == 10);

    /* BOOLEAN: deprecated fields are fine (false < true either way). */
    pq_node bn = node_of(PQ_BOOLEAN, PQ_CT_NONE, PQ_LT_NONE);
    pq_leaf bl = leaf_of(&bn, PQ_ORDER_UNDEFINED);
    memset(&st, 0, sizeof st);
    st.has_min = st.has_max = true;
    st.min = (pq_bytes){(const uint8_t *)"\x00", 1};
    st.max = (pq_bytes){(const uint8_t *)"\x01", 1};
    r = range_of(&bl, &st, 3);
    CHECK(r.has_min && r.has_max && !r.min.u.b && r.max.u.b);
}

/* ------------------------------------------------------------------ bloom filters */

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The corpus data directory: $PQFS_SHARED_DIR, else ../shared next to the
 * repository (found from this file's path, as test_thrift.c does). */
static const char *corpus_file(const char *name, char *out, size_t cap)
{
    const char *env = getenv("PQFS_SHARED_DIR");
    if (env && *env) {
        snprintf(out, cap, "%s/testdata/parquet-testing/data/%s", env, name);
        return out;
    }
    char here[512];
    snprintf(here, sizeof here, "%s", __FILE__);
    char *slash = strrchr(here, '/');
    if (slash) *slash = '\0';
    else snprintf(here, sizeof here, ".");
    snprintf(out, cap, "%s/../../../shared/testdata/parquet-testing/data/%s", here, name);
    return out;
}

static void test_bloom_hash(void)
{
    /* XXH64, seed 0: published vectors and values from tests/prune/lib.mjs. */
    static const struct { const char *s; uint64_t h; } v[] = {
        {"", 0xef46db3751d8e999ull},      {"a", 0xd24ec4f1a98c6e5bull},
        {"abc", 0x44bc2cf5ad770999ull},   {"hello", 0x26c7827d889f6da3ull},
        {"parquet", 0x3c9d29275c52e429ull},
        {"Nobody inspects the spammish repetition", 0xfbcea83c8a378bf1ull},
        {"The quick brown fox jumps over the lazy dog, twice over: 0123456789", 0xbacf8decaf7f2d1eull},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        CHECK(pq_bloom_hash((const uint8_t *)v[i].s, strlen(v[i].s)) == v[i].h);
    uint8_t b[8];
    CHECK(pq_bloom_hash(le_bytes(b, 42, 8).ptr, 8) == 0xb556806fb6d14353ull);
    CHECK(pq_bloom_hash(le_bytes(b, (uint32_t)-7, 4).ptr, 4) == 0x68f36ee45a503415ull);

    /* An empty filter proves nothing. */
    pq_bloom none = {NULL, 0};
    CHECK(pq_bloom_check_hash(&none, 12345));
}

static void test_bloom_corpus(void)
{
    size_t len;
    char path[1200];
    uint8_t *buf = read_all(corpus_file("bloom_filter.xxhash.bin", path, sizeof path), &len);
    if (!buf) {
        fprintf(stderr, "note: bloom_filter.xxhash.bin not found, corpus bloom checks skipped\n");
        return;
    }
    /* Thrift BloomFilterHeader, then 1024 bytes of bitset; holds "hello",
     * "parquet", "bloom", "filter" (the corpus README). */
    pq_bloom_header h;
    size_t hlen = 0;
    pq_error err;
    CHECK(pq_decode_bloom_header(buf, len, &h, &hlen, &err) == PQ_OK);
    CHECK(h.num_bytes == 1024 && h.algorithm_block && h.hash_xxhash && h.compression_none);
    CHECK(hlen == 16 && hlen + (size_t)h.num_bytes == len);
    pq_bloom bf = {buf + hlen, (uint32_t)h.num_bytes};
    static const char *const present[] = {"hello", "parquet", "bloom", "filter"};
    for (size_t i = 0; i < 4; i++) CHECK(pq_bloom_may_contain(&bf, (const uint8_t *)present[i], strlen(present[i])));
    /* Absent, and definitely absent by lib.mjs's independent check of the
     * same bitset (no false positive among these). */
    static const char *const absent[] = {"world", "Hello", "hello ", "arrow", "duckdb", "pqfs", "a", "", "x",
                                         "filters", "bloo", "0", "parquet-format", "split", "block", "xxhash"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        CHECK(!pq_bloom_may_contain(&bf, (const uint8_t *)absent[i], strlen(absent[i])));
    /* Hash-level entry point agrees. */
    CHECK(pq_bloom_check_hash(&bf, 0x26c7827d889f6da3ull));
    CHECK(!pq_bloom_check_hash(&bf, 0xe778fbfe66ee51efull)); /* "world" */
    free(buf);

    /* The deprecated murmur3 filter (binary header: num_bytes, hash 0,
     * algorithm 0) is not a thrift split-block/xxhash header: unusable. */
    buf = read_all(corpus_file("bloom_filter.bin", path, sizeof path), &len);
    if (buf) {
        int rc = pq_decode_bloom_header(buf, len, &h, &hlen, &err);
        CHECK(rc != PQ_OK || !(h.algorithm_block && h.hash_xxhash && h.compression_none && h.num_bytes > 0));
        free(buf);
    }
}

/* ------------------------------------------------------------------ page index rung */

/* A file of one row group (100 rows) and three optional columns with page
 * indexes and no data (the plan reads only indexes):
 *   a INT64:  4 pages of 25 rows, bounds [0,24] [25,49] [50,74] [75,99]
 *   b INT32:  3 pages at rows 0, 40, 70, bounds [5,5] [6,6] [7,7]
 *   c DOUBLE: 2 pages at rows 0, 50: [1, NaN] (a NaN bound), null page */
typedef struct synth {
    pq_buf file;
    pq_file *f;
    pq_footer *ft;
} synth;

static int64_t put_column_index(pq_buf *file, int n, const bool *nulls, pq_bytes *mins, pq_bytes *maxs, pq_error *err)
{
    pq_column_index ci;
    memset(&ci, 0, sizeof ci);
    ci.n_pages = n;
    ci.null_pages = (bool *)nulls;
    ci.min_values = mins;
    ci.max_values = maxs;
    ci.boundary_order = PQ_BOUNDARY_UNORDERED;
    int64_t at = (int64_t)file->len;
    CHECK(pq_encode_column_index(&ci, file, err) == PQ_OK);
    return at;
}

static int64_t put_offset_index(pq_buf *file, int n, const int64_t *first_rows, int64_t chunk_off, int32_t page_size,
                                pq_error *err)
{
    pq_page_location loc[8];
    for (int i = 0; i < n; i++) loc[i] = (pq_page_location){chunk_off + i * page_size, page_size, first_rows[i]};
    pq_offset_index oi;
    memset(&oi, 0, sizeof oi);
    oi.n_pages = n;
    oi.pages = loc;
    int64_t at = (int64_t)file->len;
    CHECK(pq_encode_offset_index(&oi, file, err) == PQ_OK);
    return at;
}

static bool build_synth(synth *s, bool bad_offset_index)
{
    memset(s, 0, sizeof *s);
    pq_error err;
    pq_buf_init(&s->file);
    pq_buf_append(&s->file, "PAR1", 4);
    /* Chunk bytes (zeros): a at 4 (4 x 100), b at 404 (3 x 100), c at 704 (2 x 100). */
    static const int64_t chunk_off[3] = {4, 404, 704};
    static const int n_pages[3] = {4, 3, 2};
    uint8_t zeros[900];
    memset(zeros, 0, sizeof zeros);
    pq_buf_append(&s->file, zeros, sizeof zeros);

    uint8_t ab[4][2][8], bb[3][2][4], cb[2][2][8];
    pq_bytes amin[4], amax[4], bmin[3], bmax[3], cmin[2], cmax[2];
    bool nn[4] = {false, false, false, false};
    for (int i = 0; i < 4; i++) {
        amin[i] = le_bytes(ab[i][0], (uint64_t)(25 * i), 8);
        amax[i] = le_bytes(ab[i][1], (uint64_t)(25 * i + 24), 8);
    }
    for (int i = 0; i < 3; i++) {
        bmin[i] = le_bytes(bb[i][0], (uint64_t)(5 + i), 4);
        bmax[i] = le_bytes(bb[i][1], (uint64_t)(5 + i), 4);
    }
    cmin[0] = dbl_bytes(cb[0][0], 1.0);
    cmax[0] = dbl_bytes(cb[0][1], NAN);
    cmin[1] = (pq_bytes){cb[1][0], 0};
    cmax[1] = (pq_bytes){cb[1][1], 0};
    bool cnull[2] = {false, true};
    int64_t ci_off[3], ci_len[3], oi_off[3], oi_len[3];
    ci_off[0] = put_column_index(&s->file, 4, nn, amin, amax, &err);
    ci_off[1] = put_column_index(&s->file, 3, nn, bmin, bmax, &err);
    ci_len[0] = ci_off[1] - ci_off[0];
    ci_off[2] = put_column_index(&s->file, 2, cnull, cmin, cmax, &err);
    ci_len[1] = ci_off[2] - ci_off[1];
    ci_len[2] = (int64_t)s->file.len - ci_off[2];
    static const int64_t afirst[4] = {0, 25, 50, 75}, bfirst[3] = {0, 40, 70}, cfirst[2] = {0, 50};
    static const int64_t bad_first[4] = {5, 25, 50, 75};
    oi_off[0] = put_offset_index(&s->file, 4, bad_offset_index ? bad_first : afirst, chunk_off[0], 100, &err);
    oi_off[1] = put_offset_index(&s->file, 3, bfirst, chunk_off[1], 100, &err);
    oi_len[0] = oi_off[1] - oi_off[0];
    oi_off[2] = put_offset_index(&s->file, 2, cfirst, chunk_off[2], 100, &err);
    oi_len[1] = oi_off[2] - oi_off[1];
    oi_len[2] = (int64_t)s->file.len - oi_off[2];

    pq_schema_element se[4];
    memset(se, 0, sizeof se);
    static const char *const names[4] = {"schema", "a", "b", "c"};
    static const int32_t types[3] = {PQ_INT64, PQ_INT32, PQ_DOUBLE};
    for (int i = 0; i < 4; i++) {
        se[i].name = names[i];
        se[i].converted_type = PQ_CT_NONE;
        if (i == 0) {
            se[i].has_num_children = true;
            se[i].num_children = 3;
        } else {
            se[i].has_type = true;
            se[i].type = types[i - 1];
            se[i].has_repetition = true;
            se[i].repetition = PQ_OPTIONAL;
        }
    }
    pq_column_chunk cc[3];
    memset(cc, 0, sizeof cc);
    int32_t enc[2] = {PQ_ENC_PLAIN, PQ_ENC_RLE};
    const char *paths[3][1] = {{"a"}, {"b"}, {"c"}};
    for (int i = 0; i < 3; i++) {
        cc[i].file_offset = chunk_off[i];
        cc[i].has_meta = true;
        pq_column_meta *m = &cc[i].meta;
        m->type = types[i];
        m->encodings = enc;
        m->n_encodings = 2;
        m->path = paths[i];
        m->n_path = 1;
        m->codec = PQ_CODEC_UNCOMPRESSED;
        m->num_values = 100;
        m->total_uncompressed_size = m->total_compressed_size = 100 * n_pages[i];
        m->data_page_offset = chunk_off[i];
        m->n_encoding_stats = -1;
        cc[i].has_column_index = true;
        cc[i].column_index_offset = ci_off[i];
        cc[i].column_index_length = (int32_t)ci_len[i];
        cc[i].has_offset_index = true;
        cc[i].offset_index_offset = oi_off[i];
        cc[i].offset_index_length = (int32_t)oi_len[i];
    }
    pq_row_group rg;
    memset(&rg, 0, sizeof rg);
    rg.columns = cc;
    rg.n_columns = 3;
    rg.num_rows = 100;
    rg.total_byte_size = 900;
    rg.n_sorting = -1;
    int32_t orders[3] = {PQ_ORDER_TYPE_DEFINED, PQ_ORDER_TYPE_DEFINED, PQ_ORDER_TYPE_DEFINED};
    pq_file_meta fm;
    memset(&fm, 0, sizeof fm);
    fm.version = 1;
    fm.schema = se;
    fm.n_schema = 4;
    fm.num_rows = 100;
    fm.row_groups = &rg;
    fm.n_row_groups = 1;
    fm.column_orders = orders;
    fm.n_column_orders = 3;
    size_t meta_at = s->file.len;
    if (pq_encode_file_meta(&fm, &s->file, &err) != PQ_OK) {
        fprintf(stderr, "encode: %s\n", err.msg);
        return false;
    }
    uint8_t tail[8];
    le_bytes(tail, (uint64_t)(s->file.len - meta_at), 4);
    memcpy(tail + 4, "PAR1", 4);
    pq_buf_append(&s->file, tail, 8);
    if (pq_file_open_mem("synth.parquet", s->file.data, s->file.len, &s->f, &err) != PQ_OK ||
        pq_footer_read(s->f, &s->ft, &err) != PQ_OK) {
        fprintf(stderr, "synth: %s\n", err.msg);
        return false;
    }
    return true;
}

static void free_synth(synth *s)
{
    pq_footer_free(s->ft);
    pq_file_close(s->f);
    pq_buf_free(&s->file);
}

/* Plans row group 0 of the synthetic file for `where`, with `deleted`
 * rows (a table format's deletion vector; NULL: none). */
static int plan_where_deleted(synth *s, const char *where, bool no_page_index, const uint64_t *deleted,
                              uint64_t n_deleted, pq_arena *arena, pq_rg_plan *p)
{
    const char *wheres[1] = {where};
    pq_query_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.wheres = wheres;
    spec.n_wheres = 1;
    spec.limit = -1;
    pq_query *q = NULL;
    pq_error err;
    if (pq_query_compile(&s->ft->schema, NULL, NULL, 0, &spec, &q, &err) != PQ_OK) {
        fprintf(stderr, "compile %s: %s\n", where, err.msg);
        return -1;
    }
    int32_t col_leaf[8];
    const pq_node *col_node[8];
    int rc = -1;
    if (q->n_cols <= 8 && pq_query_bind_file(q, &s->ft->schema, col_leaf, col_node, NULL, &err) == PQ_OK) {
        int32_t read[3] = {0, 1, 2};
        pq_plan_input in;
        memset(&in, 0, sizeof in);
        in.file = s->f;
        in.footer = s->ft;
        in.pred = q->pred;
        in.cols = q->cols;
        in.n_cols = q->n_cols;
        in.col_leaf = col_leaf;
        in.read_leaves = read;
        in.n_read_leaves = 3;
        in.no_page_index = no_page_index;
        in.deleted_rows = deleted;
        in.n_deleted = n_deleted;
        rc = pq_plan_row_group(&in, 0, arena, p, &err) == PQ_OK ? 0 : -1;
        if (rc) fprintf(stderr, "plan %s: %s\n", where, err.msg);
    }
    pq_query_free(q);
    return rc;
}

static int plan_where(synth *s, const char *where, bool no_page_index, pq_arena *arena, pq_rg_plan *p)
{
    return plan_where_deleted(s, where, no_page_index, NULL, 0, arena, p);
}

static bool has_ranges(const pq_rg_plan *p, int n, const int64_t *bounds)
{
    if (p->decision != PQ_RG_SELECT || p->n_ranges != n) return false;
    for (int i = 0; i < n; i++)
        if (p->ranges[i].begin != bounds[2 * i] || p->ranges[i].end != bounds[2 * i + 1]) return false;
    return true;
}

static void test_page_index(void)
{
    synth s;
    if (!build_synth(&s, false)) {
        CHECK(!"synthetic file");
        return;
    }
    pq_arena arena;
    pq_arena_init(&arena, 0);
    pq_rg_plan p;

    /* One column: pages [25,50) and [50,75) merge into one range. */
    CHECK(plan_where(&s, "a >= 30 AND a < 60", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){25, 75}));
    /* Two conjuncts read a: its 4 pages count once. */
    CHECK(p.rows_selected == 50 && p.pages_total == 4 && p.pages_pruned == 2);
    /* Bytes: the pages of a, b and c that overlap [25,75), 100 bytes each:
     * a 2 of 4, b 3 of 3 ([0,40) [40,70) [70,100)), c 2 of 2. */
    CHECK(p.bytes_total == 900 && p.bytes_to_read == 700);

    /* Two columns: the row ranges intersect: a in [25,100), b = 6 in [40,70). */
    CHECK(plan_where(&s, "a >= 30 AND b = 6", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){40, 70}));
    CHECK(p.rows_selected == 30);
    /* Pages outside the final selection: a [0,25) [75,100), b [0,40) [70,100). */
    CHECK(p.pages_total == 7 && p.pages_pruned == 4);
    /* Disjoint pieces: b = 5 or b = 7 on one column is not a single conjunct
     * per page (IN list): [0,40) and [70,100). */
    CHECK(plan_where(&s, "b IN (5, 7)", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 2, (const int64_t[]){0, 40, 70, 100}));
    CHECK(plan_where(&s, "b IN (5, 7) AND a < 80", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 2, (const int64_t[]){0, 40, 70, 100}));
    CHECK(plan_where(&s, "b IN (5, 7) AND a < 74", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 2, (const int64_t[]){0, 40, 70, 75}));

    /* Nothing left: the row group is skipped by the page index. */
    CHECK(plan_where(&s, "a > 10 AND b = 5 AND a > 50", false, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SKIP && p.pruned_by == PQ_RUNG_PAGE_INDEX && p.bytes_to_read == 0);
    CHECK(plan_where(&s, "a > 99", false, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SKIP && p.pruned_by == PQ_RUNG_PAGE_INDEX);
    CHECK(p.pages_total == 4 && p.pages_pruned == 4);

    /* Null page: c IS NULL keeps only it; c IS NOT NULL and c > 0 drop it.
     * The NaN max of page 0 is ignored: c > 1e300 keeps page 0 (it may
     * hold NaN, which sorts above every number), c = 'nan' too. */
    CHECK(plan_where(&s, "c IS NULL", false, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SCAN || has_ranges(&p, 1, (const int64_t[]){0, 100}) ||
          has_ranges(&p, 1, (const int64_t[]){50, 100}));
    CHECK(plan_where(&s, "c IS NOT NULL", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){0, 50}));
    CHECK(plan_where(&s, "c > 1e300", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){0, 50}));
    CHECK(plan_where(&s, "c = 'nan'", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){0, 50}));
    /* c < 1: page 0's min (1) excludes it, unless the NaN max made the
     * whole page's bounds unusable (conservative); never the null page. */
    CHECK(plan_where(&s, "c < 1", false, &arena, &p) == 0);
    CHECK((p.decision == PQ_RG_SKIP && p.pruned_by == PQ_RUNG_PAGE_INDEX) || has_ranges(&p, 1, (const int64_t[]){0, 50}));

    /* The rung disabled: everything scanned. */
    CHECK(plan_where(&s, "a >= 30 AND b = 6", true, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SCAN && p.rows_selected == 100 && p.pages_pruned == 0 && p.bytes_to_read == 900);
    /* OR across columns is not one column's conjunct: no page pruning. */
    CHECK(plan_where(&s, "a < 10 OR b = 7", false, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SCAN);
    pq_arena_free(&arena);
    free_synth(&s);

    /* An offset index whose first page does not start at row 0 is not
     * trusted: column a proves nothing, b still prunes. */
    if (!build_synth(&s, true)) {
        CHECK(!"synthetic file (bad offset index)");
        return;
    }
    pq_arena_init(&arena, 0);
    CHECK(plan_where(&s, "a > 90", false, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SCAN);
    CHECK(plan_where(&s, "a > 90 AND b = 6", false, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){40, 70}));
    pq_arena_free(&arena);
    free_synth(&s);
}

/* Schema evolution: the synthetic file's a (INT64) and b (INT32) in a
 * table where every column is DOUBLE (an int and a double file's union).
 * The predicate's literals are the table's doubles, the page index's
 * bounds the file's integers: converted as the scan converts the values
 * (pq_plan_input.leaf_widen), they prune as the table's values would;
 * unconverted, a bound of another type proves nothing (never a wrong skip). */
static int plan_widened(synth *s, const pq_schema *table, const char *where, bool widen, pq_arena *arena,
                        pq_rg_plan *p)
{
    const char *wheres[1] = {where};
    pq_query_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.wheres = wheres;
    spec.n_wheres = 1;
    spec.limit = -1;
    pq_query *q = NULL;
    pq_error err;
    if (pq_query_compile(table, NULL, NULL, 0, &spec, &q, &err) != PQ_OK) {
        fprintf(stderr, "compile %s: %s\n", where, err.msg);
        return -1;
    }
    int32_t col_leaf[8];
    const pq_node *col_node[8];
    pq_col_fit fit[8];
    uint8_t leaf_widen[3] = {0, 0, 0};
    int rc = -1;
    if (q->n_cols <= 8 && pq_query_bind_file(q, &s->ft->schema, col_leaf, col_node, fit, &err) == PQ_OK) {
        for (int i = 0; i < q->n_cols; i++)
            if (col_leaf[i] >= 0 && col_leaf[i] < 3) leaf_widen[col_leaf[i]] = fit[i].widen;
        CHECK(leaf_widen[0] == PQ_WIDEN_I64_F64 && leaf_widen[1] == PQ_WIDEN_I32_F64 && leaf_widen[2] == PQ_WIDEN_NONE);
        int32_t read[3] = {0, 1, 2};
        pq_plan_input in;
        memset(&in, 0, sizeof in);
        in.file = s->f;
        in.footer = s->ft;
        in.pred = q->pred;
        in.cols = q->cols;
        in.n_cols = q->n_cols;
        in.col_leaf = col_leaf;
        in.leaf_widen = widen ? leaf_widen : NULL;
        in.read_leaves = read;
        in.n_read_leaves = 3;
        rc = pq_plan_row_group(&in, 0, arena, p, &err) == PQ_OK ? 0 : -1;
        if (rc) fprintf(stderr, "plan %s: %s\n", where, err.msg);
    }
    pq_query_free(q);
    return rc;
}

static void test_widened_page_index(void)
{
    synth s;
    if (!build_synth(&s, false)) {
        CHECK(!"synthetic file");
        return;
    }
    pq_schema_element se[4];
    memset(se, 0, sizeof se);
    static const char *const names[4] = {"schema", "a", "b", "c"};
    for (int i = 0; i < 4; i++) {
        se[i].name = names[i];
        se[i].converted_type = PQ_CT_NONE;
        se[i].has_num_children = i == 0;
        se[i].num_children = i == 0 ? 3 : 0;
        se[i].has_type = se[i].has_repetition = i > 0;
        se[i].type = PQ_DOUBLE;
        se[i].repetition = PQ_OPTIONAL;
    }
    pq_file_meta fm;
    memset(&fm, 0, sizeof fm);
    fm.version = 1;
    fm.schema = se;
    fm.n_schema = 4;
    pq_schema table;
    pq_error err;
    if (pq_schema_build(&fm, &table, &err) != PQ_OK) {
        CHECK(!"table schema");
        free_synth(&s);
        return;
    }
    pq_arena arena;
    pq_arena_init(&arena, 0);
    pq_rg_plan p;
    CHECK(plan_widened(&s, &table, "a BETWEEN 30 AND 40.5", true, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){25, 50}) && p.pages_pruned == 3);
    CHECK(plan_widened(&s, &table, "a > 74.5", true, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){75, 100}));
    CHECK(plan_widened(&s, &table, "b = 6", true, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){40, 70}));
    CHECK(plan_widened(&s, &table, "b IN (5, 7.0)", true, &arena, &p) == 0);
    CHECK(has_ranges(&p, 2, (const int64_t[]){0, 40, 70, 100}));
    CHECK(plan_widened(&s, &table, "b > 6.5", true, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){70, 100}));
    /* No page holds 6.5 (between its integers' bounds): skipped. */
    CHECK(plan_widened(&s, &table, "b = 6.5", true, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SKIP && p.pruned_by == PQ_RUNG_PAGE_INDEX);
    /* Without the widening the bounds are INTs beside DOUBLE literals: they
     * prove nothing, every row is kept. */
    for (int i = 0; i < 3; i++) {
        static const char *const keep[3] = {"a BETWEEN 30 AND 40.5", "b = 6", "b = 6.5"};
        CHECK(plan_widened(&s, &table, keep[i], false, &arena, &p) == 0);
        CHECK(p.decision == PQ_RG_SCAN && p.pages_pruned == 0);
    }
    pq_arena_free(&arena);
    pq_schema_free(&table);
    free_synth(&s);
}

/* Deleted rows (a Delta deletion vector) leave the selection: a page
 * index's ranges lose them, a scan becomes a selection around them, a
 * skipped row group stays skipped, and the row filter is still run where
 * it was needed. */
static void test_deleted_rows(void)
{
    synth s;
    if (!build_synth(&s, false)) {
        CHECK(!"synthetic file");
        return;
    }
    pq_arena arena;
    pq_arena_init(&arena, 0);
    pq_rg_plan p;
    const uint64_t del[] = {0, 25, 26, 40, 74, 99};
    CHECK(plan_where_deleted(&s, "a >= 30 AND a < 60", false, del, 6, &arena, &p) == 0);
    CHECK(has_ranges(&p, 2, (const int64_t[]){27, 40, 41, 74}));
    CHECK(p.rows_selected == 46 && !p.fully_matched);
    CHECK(plan_where_deleted(&s, "a >= 30 AND a < 60", true, del, 6, &arena, &p) == 0);
    CHECK(has_ranges(&p, 4, (const int64_t[]){1, 25, 27, 40, 41, 74, 75, 99})); /* a scan, around them */
    CHECK(p.rows_selected == 94);
    const uint64_t ends[] = {0, 99, 100, 1000}; /* rows past the row group are another's */
    CHECK(plan_where_deleted(&s, "a < 1000", true, ends, 4, &arena, &p) == 0);
    CHECK(has_ranges(&p, 1, (const int64_t[]){1, 99}));
    CHECK(plan_where_deleted(&s, "a > 99", false, del, 6, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SKIP);
    uint64_t all[100];
    for (int i = 0; i < 100; i++) all[i] = (uint64_t)i;
    CHECK(plan_where_deleted(&s, "a < 1000", true, all, 100, &arena, &p) == 0);
    CHECK(p.decision == PQ_RG_SELECT && p.n_ranges == 0 && p.rows_selected == 0);
    pq_arena_free(&arena);
    free_synth(&s);
}

/* The footer read with a guessed tail: one read when the guess holds the
 * footer, else a second read of exactly the missing bytes; the same footer
 * either way. */
static void test_footer_guess(void)
{
    synth s;
    if (!build_synth(&s, false)) {
        CHECK(false);
        return;
    }
    uint64_t need = (uint64_t)s.ft->meta_len + 8;
    size_t guesses[] = {0, 8, 9, 20, (size_t)need - 1, (size_t)need, (size_t)need + 100, 1 << 20};
    for (size_t i = 0; i < sizeof guesses / sizeof guesses[0]; i++) {
        pq_io_counters counters = {0};
        pq_file *f;
        pq_error err;
        pq_footer *ft = NULL;
        CHECK(pq_file_open_mem("synth.parquet", s.file.data, s.file.len, &f, &err) == PQ_OK);
        f->counters = &counters;
        CHECK(pq_footer_read_guess(f, guesses[i], &ft, &err) == PQ_OK);
        if (ft) {
            CHECK(ft->meta_len == s.ft->meta_len);
            CHECK(ft->meta.num_rows == 100 && ft->meta.n_row_groups == 1);
        }
        size_t g = guesses[i] < 8 ? 8 : guesses[i];
        uint64_t tail = g < s.file.len ? g : s.file.len;
        CHECK_EQ_INT(atomic_load(&counters.read_bytes), tail >= need ? tail : need);
        CHECK_EQ_INT(atomic_load(&counters.read_requests), tail >= need ? 1 : 2);
        pq_footer_free(ft);
        pq_file_close(f);
    }
    free_synth(&s);
}

/* Bytes a file keeps (the footer's tail read, a dictionary handed to the
 * scan) serve reads without storage; a kept range serves one read only; the
 * bytes around it come from storage, exactly the missing ones. */
static void test_kept_bytes(void)
{
    enum { N = 4096 };
    static uint8_t data[N];
    for (int i = 0; i < N; i++) data[i] = (uint8_t)(i * 7 + i / 256);
    pq_io_counters counters = {0};
    pq_file *f;
    pq_error err;
    CHECK(pq_file_open_mem("kept.bin", data, N, &f, &err) == PQ_OK);
    f->counters = &counters;
    uint8_t buf[N];
#define READ_COSTS(off, len, want_bytes, want_reads)                                                     \
    do {                                                                                                 \
        uint64_t b0 = atomic_load(&counters.read_bytes), r0 = atomic_load(&counters.read_requests);     \
        memset(buf, 0xEE, sizeof buf);                                                                   \
        CHECK(pq_read_at(f, buf, (len), (off), &err) == PQ_OK);                                          \
        CHECK(memcmp(buf, data + (off), (len)) == 0);                                                    \
        CHECK_EQ_INT(atomic_load(&counters.read_bytes) - b0, (want_bytes));                              \
        CHECK_EQ_INT(atomic_load(&counters.read_requests) - r0, (want_reads));                           \
    } while (0)
    uint8_t *tail = malloc(N - 3000);
    memcpy(tail, data + 3000, N - 3000);
    pq_file_keep_tail(f, tail, 3000, N - 3000);
    READ_COSTS(3500, 100, 0, 0);      /* inside the tail */
    READ_COSTS(3500, 100, 0, 0);      /* ...again: the tail stays */
    READ_COSTS(2900, 200, 100, 1);    /* only the part before it */
    READ_COSTS(0, N, 3000, 1);
    uint8_t *mid = malloc(200);
    memcpy(mid, data + 1000, 200);
    pq_file_keep_range(f, mid, 1000, 200);
    READ_COSTS(900, 400, 200, 2);     /* before and after the kept range */
    READ_COSTS(1000, 200, 200, 1);    /* taken by the first read: storage now */
    /* A read over a kept range and the tail: neither from storage. */
    mid = malloc(500);
    memcpy(mid, data + 2500, 500);
    pq_file_keep_range(f, mid, 2500, 500);
    READ_COSTS(2400, 1000, 100, 1);
    /* Four ranges of the same bytes: each serves one read; the two left are
     * freed by close (no leak under ASan). */
    for (int i = 0; i < 4; i++) {
        uint8_t *b = malloc(64);
        memcpy(b, data + 100, 64);
        pq_file_keep_range(f, b, 100, 64);
    }
    READ_COSTS(100, 64, 0, 0);
    READ_COSTS(100, 64, 0, 0);
    pq_file_keep_range(f, NULL, 0, 0);
    pq_file_close(f); /* frees the two ranges still kept and the tail */
#undef READ_COSTS

    /* The footer read keeps what its tail read brought in before the footer. */
    synth s;
    if (!build_synth(&s, false)) {
        CHECK(false);
        return;
    }
    pq_io_counters c2 = {0};
    pq_footer *ft = NULL;
    CHECK(pq_file_open_mem("synth.parquet", s.file.data, s.file.len, &f, &err) == PQ_OK);
    f->counters = &c2;
    CHECK(pq_footer_read_guess(f, 1 << 20, &ft, &err) == PQ_OK);
    CHECK_EQ_INT(atomic_load(&c2.read_bytes), s.file.len);
    uint8_t *whole = malloc(s.file.len);
    size_t before_footer = s.file.len - 8 - (ft ? ft->meta_len : 0);
    CHECK(pq_read_at(f, whole, before_footer, 0, &err) == PQ_OK);
    CHECK(memcmp(whole, s.file.data, before_footer) == 0);
    CHECK_EQ_INT(atomic_load(&c2.read_bytes), s.file.len);
    free(whole);
    pq_footer_free(ft);
    pq_file_close(f);
    free_synth(&s);
}

static bool copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[65536];
    size_t n;
    bool ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out)) ok = false;
    return ok;
}

/* The footer cache sizes the tail read of a table's next file from the
 * footers it has read there: 64 KiB for the first file of a table (also in
 * another partition directory of the same table: the guess is per table),
 * little more than the footer for the others. */
static void test_footer_cache_guess(void)
{
    char src[1024], dir[] = "/tmp/pqfs-guess-XXXXXX", path[1200];
    corpus_file("alltypes_tiny_pages.parquet", src, sizeof src); /* 454 KB, a 1.7 KB footer */
    if (!mkdtemp(dir)) {
        CHECK(false);
        return;
    }
    const char *files[] = {"t/k=1/a.parquet", "t/k=2/b.parquet", "u/c.parquet"};
    const char *dirs[] = {"t", "t/k=1", "t/k=2", "u"};
    bool ok = true;
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        ok = ok && mkdir(path, 0700) == 0;
    }
    for (size_t i = 0; i < 3 && ok; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ok = copy_file(src, path);
    }
    pq_error err = {0};
    pq_store *store = NULL;
    pq_footer_cache *cache = pq_footer_cache_new(64 << 20, NULL);
    if (!ok || pq_store_local_new(dir, &store, &err) != PQ_OK || !cache) {
        fprintf(stderr, "footer cache test: cannot set up %s from %s\n", dir, src);
        CHECK(false);
    } else {
        uint64_t want[3];
        uint32_t meta_len = 0;
        for (int i = 0; i < 3; i++) {
            pq_stat id;
            pq_footer_ref *ref = NULL;
            uint64_t before = atomic_load(&store->counters.read_bytes);
            CHECK(store->ops->stat(store, files[i], &id, &err) == PQ_OK);
            CHECK(pq_footer_cache_get(cache, store, files[i], &id, &ref, &err) == PQ_OK);
            if (ref) meta_len = pq_footer_ref_get(ref)->meta_len;
            pq_footer_ref_put(cache, ref);
            want[i] = atomic_load(&store->counters.read_bytes) - before;
        }
        CHECK(meta_len > 0 && meta_len + 8 < PQ_FOOTER_SPECULATIVE_READ);
        CHECK_EQ_INT(want[0], PQ_FOOTER_SPECULATIVE_READ);
        CHECK_EQ_INT(want[1], pq_footer_guess(meta_len));
        CHECK(want[1] < PQ_FOOTER_SPECULATIVE_READ / 4);
        CHECK_EQ_INT(want[2], PQ_FOOTER_SPECULATIVE_READ); /* another table */
    }
    pq_footer_cache_free(cache);
    pq_store_destroy(store);
    for (int i = 2; i >= 0; i--) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    for (int i = 3; i >= 0; i--) {
        snprintf(path, sizeof path, "%s/%s", dir, dirs[i]);
        rmdir(path);
    }
    rmdir(dir);
}

static int prepared_calls;

static void rename_first_column(void *ctx, pq_footer *ft)
{
    prepared_calls++;
    ft->schema.root->children[0]->name = ctx;
}

/* A table format's view of a footer (pq_footer_view): prepared once before
 * it is shared (a second get is a hit, not prepared again), shared only
 * under the same tag (another tag reads it anew, prepared its own way), and
 * identified by size alone when asked (the log's modificationTime is not
 * the file's mtime: a plain get with that identity is refused as changed). */
static void test_footer_cache_view(void)
{
    char src[1024], dir[] = "/tmp/pqfs-view-XXXXXX", path[1200];
    corpus_file("alltypes_plain.parquet", src, sizeof src);
    if (!mkdtemp(dir)) {
        CHECK(false);
        return;
    }
    snprintf(path, sizeof path, "%s/a.parquet", dir);
    pq_error err = {0};
    pq_store *store = NULL;
    pq_cache_counters cc = {0};
    pq_footer_cache *cache = pq_footer_cache_new(64 << 20, &cc);
    pq_stat id;
    if (!copy_file(src, path) || pq_store_local_new(dir, &store, &err) != PQ_OK || !cache ||
        store->ops->stat(store, "a.parquet", &id, &err) != PQ_OK) {
        CHECK(false);
    } else {
        pq_stat logged = id;
        logged.mtime_ns = 12345; /* a Delta add's modificationTime, not the file's */
        pq_footer_ref *r1 = NULL, *r2 = NULL, *r3 = NULL, *plain = NULL;
        pq_footer_view a = {.tag = 7, .size_only = true, .prepare = rename_first_column, .ctx = "logical_a"};
        pq_footer_view b = {.tag = 8, .size_only = true, .prepare = rename_first_column, .ctx = "logical_b"};
        CHECK(pq_footer_cache_get_as(cache, store, "a.parquet", &logged, &a, &r1, &err) == PQ_OK);
        CHECK(pq_footer_cache_get_as(cache, store, "a.parquet", &logged, &a, &r2, &err) == PQ_OK);
        CHECK_EQ_INT(prepared_calls, 1);
        CHECK(r1 && r1 == r2);
        CHECK_EQ_INT(atomic_load(&cc.footer_hits), 1);
        if (r1) CHECK_EQ_STR(pq_footer_ref_get(r1)->schema.root->children[0]->name, "logical_a");
        CHECK(pq_footer_cache_get_as(cache, store, "a.parquet", &logged, &b, &r3, &err) == PQ_OK);
        CHECK_EQ_INT(prepared_calls, 2);
        if (r3) CHECK_EQ_STR(pq_footer_ref_get(r3)->schema.root->children[0]->name, "logical_b");
        /* The first one's holders still see their names. */
        if (r1) CHECK_EQ_STR(pq_footer_ref_get(r1)->schema.root->children[0]->name, "logical_a");
        CHECK(pq_footer_cache_get(cache, store, "a.parquet", &logged, &plain, &err) == PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_STALE);
        pq_stat wrong_size = logged;
        wrong_size.size++;
        pq_footer_ref *r4 = NULL;
        CHECK(pq_footer_cache_get_as(cache, store, "a.parquet", &wrong_size, &a, &r4, &err) == PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_STALE);
        pq_footer_ref_put(cache, r1);
        pq_footer_ref_put(cache, r2);
        pq_footer_ref_put(cache, r3);
    }
    pq_footer_cache_free(cache);
    pq_store_destroy(store);
    unlink(path);
    rmdir(dir);
}

/* The footer cache's budget is the memory its footers hold: 2,000 small
 * files through a cache of 2 MiB leave at most 2 MiB more heap and 1 MiB
 * of the store's own (measured: 0.8 MiB, whatever the budget). Before, a
 * footer was counted by the bytes its arena handed out, not the 64 KiB
 * block it held: the same files kept about 40 MiB. (glibc's
 * mallinfo2; a sanitizer's allocator may report nothing, which passes.) */
static void test_footer_cache_bound(void)
{
    char src[1024], dir[] = "/tmp/pqfs-bound-XXXXXX", path[1200];
    corpus_file("alltypes_plain.parquet", src, sizeof src);
    if (!mkdtemp(dir)) {
        CHECK(false);
        return;
    }
    enum { N = 2000 };
    snprintf(path, sizeof path, "%s/f0.parquet", dir);
    bool ok = copy_file(src, path);
    char first[1200];
    snprintf(first, sizeof first, "%s", path);
    for (int i = 1; i < N && ok; i++) {
        snprintf(path, sizeof path, "%s/f%d.parquet", dir, i);
        ok = link(first, path) == 0; /* one inode, a name each: an entry each */
    }
    pq_error err = {0};
    pq_store *store = NULL;
    const size_t budget = 2u << 20;
    pq_footer_cache *cache = pq_footer_cache_new(budget, NULL);
    CHECK(ok && cache && pq_store_local_new(dir, &store, &err) == PQ_OK);
    size_t before = mallinfo2().uordblks;
    for (int i = 0; ok && store && i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d.parquet", i);
        pq_stat id;
        pq_footer_ref *ref = NULL;
        if (store->ops->stat(store, name, &id, &err) != PQ_OK ||
            pq_footer_cache_get(cache, store, name, &id, &ref, &err) != PQ_OK) {
            CHECK(false);
            break;
        }
        CHECK(pq_footer_ref_get(ref)->meta.num_rows == 8);
        pq_footer_ref_put(cache, ref);
    }
    size_t after = mallinfo2().uordblks;
    size_t grown = after > before ? after - before : 0;
    if (grown > budget + (1u << 20)) fprintf(stderr, "footer cache of %zu bytes: the heap grew %zu\n", budget, grown);
    CHECK(grown <= budget + (1u << 20));
    pq_footer_cache_free(cache);

    /* Room for all: the table grows past its first 1,024 buckets (twice
     * as many footers as buckets), and every footer is found again. */
    pq_cache_counters cc = {0};
    cache = pq_footer_cache_new(64u << 20, &cc);
    CHECK(cache != NULL);
    for (int pass = 0; ok && store && cache && pass < 2; pass++)
        for (int i = 0; i < N; i++) {
            char name[32];
            snprintf(name, sizeof name, "f%d.parquet", i);
            pq_stat id;
            pq_footer_ref *ref = NULL;
            if (store->ops->stat(store, name, &id, &err) != PQ_OK ||
                pq_footer_cache_get(cache, store, name, &id, &ref, &err) != PQ_OK) {
                CHECK(false);
                break;
            }
            CHECK(pq_footer_ref_get(ref)->meta.num_rows == 8);
            pq_footer_ref_put(cache, ref);
        }
    CHECK_EQ_INT((int)atomic_load(&cc.footer_misses), N);
    CHECK_EQ_INT((int)atomic_load(&cc.footer_hits), N);
    pq_footer_cache_free(cache);
    pq_store_destroy(store);
    for (int i = 0; i < N; i++) {
        snprintf(path, sizeof path, "%s/f%d.parquet", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

/* A scan without a limit opens lazy files a batch at a time and hands each
 * back once scanned: a table of any size holds PQ_SCAN_FILES_AT_ONCE
 * footers at most (before, every file's, until the scan ended: pqtool cat
 * of 25,000 files peaked at 161 MB).  Files given with their footer are
 * never handed back. */
typedef struct lazy_table {
    uint8_t *bytes;
    size_t len;
    pq_file **files;
    pq_footer **footers;
    _Atomic int open_now, open_most, opened; /* open_file runs on several threads */
    int released, released_given;
} lazy_table;

static int lazy_open(void *ctx, int index, pq_scan_file *sf, pq_error *err)
{
    lazy_table *t = ctx;
    PQ_TRY(pq_file_open_mem("lazy.parquet", t->bytes, t->len, &t->files[index], err));
    PQ_TRY(pq_footer_read(t->files[index], &t->footers[index], err));
    sf->file = t->files[index];
    sf->footer = t->footers[index];
    atomic_fetch_add(&t->opened, 1);
    int now = atomic_fetch_add(&t->open_now, 1) + 1, most = atomic_load(&t->open_most);
    while (now > most && !atomic_compare_exchange_weak(&t->open_most, &most, now)) {
    }
    return PQ_OK;
}

static void lazy_release(void *ctx, int index)
{
    lazy_table *t = ctx;
    if (index == 0) t->released_given++;
    /* Scribbled over before it is freed: output that still points into a
     * released footer shows it without a sanitizer. */
    const pq_schema *sc = &t->footers[index]->schema;
    for (int32_t l = 0; l < sc->n_leaves; l++)
        for (int32_t k = 0; k < sc->leaves[l].n_path_parts; k++) {
            char *name = (char *)sc->leaves[l].path_parts[k];
            memset(name, 'X', strlen(name));
        }
    pq_footer_free(t->footers[index]);
    pq_file_close(t->files[index]);
    t->footers[index] = NULL;
    t->files[index] = NULL;
    if (index) atomic_fetch_sub(&t->open_now, 1);
    t->released++;
}

/* n files, each the corpus file `name` (read once), none open yet. */
static pq_scan_file *lazy_table_new(lazy_table *t, const char *name, int n)
{
    char src[1024];
    t->bytes = read_all(corpus_file(name, src, sizeof src), &t->len);
    t->files = calloc((size_t)n, sizeof *t->files);
    t->footers = calloc((size_t)n, sizeof *t->footers);
    return calloc((size_t)n, sizeof(pq_scan_file));
}

static void lazy_table_free(lazy_table *t, pq_scan_file *sf, int n)
{
    for (int i = 0; t->files && i < n; i++) {
        pq_footer_free(t->footers[i]);
        pq_file_close(t->files[i]);
    }
    free(t->files);
    free(t->footers);
    free(sf);
    free(t->bytes);
}

/* Scan options that open and release t's files, on two threads. */
static void lazy_opts(lazy_table *t, pq_scan_opts *o)
{
    pq_scan_opts_init(o);
    o->threads = 2;
    o->open_file = lazy_open;
    o->release_file = lazy_release;
    o->open_ctx = t;
}

static int count_lines(void *ctx, const char *data, size_t len, pq_error *err)
{
    (void)err;
    for (size_t i = 0; i < len; i++) *(int64_t *)ctx += data[i] == '\n';
    return PQ_OK;
}

static int to_buf(void *ctx, const char *data, size_t len, pq_error *err)
{
    return pq_buf_append(ctx, data, len) ? PQ_NOMEM(err) : PQ_OK;
}

/* data.parquet of the lazy files with a filter that keeps part of each row
 * group (re-encoded, not copied): the output's chunks name their columns
 * (path_in_schema was pointers into the input footers, which the scan had
 * let go: the released files' names read back as XXX). */
static void scan_parquet_of_batches(lazy_table *t, pq_scan_file *sf, int n)
{
    const char *where[] = {"id > 2"};
    pq_query_spec spec = {.wheres = where, .n_wheres = 1, .limit = -1};
    pq_query *q = NULL;
    pq_error err = {0};
    CHECK(pq_query_compile(&t->footers[0]->schema, NULL, NULL, 0, &spec, &q, &err) == PQ_OK);
    if (!q) return;
    for (int i = 1; i < n; i++) sf[i].file = NULL, sf[i].footer = NULL;
    pq_scan_opts o;
    lazy_opts(t, &o);
    pq_write_opts wo;
    pq_write_opts_init(&wo);
    pq_buf out;
    pq_buf_init(&out);
    pq_sink sink = {to_buf, &out};
    CHECK(pq_scan_parquet(q, t->footers[0], sf, n, &o, &wo, &sink, NULL, &err) == PQ_OK);
    pq_file *f = NULL;
    pq_footer *ft = NULL;
    if (pq_file_open_mem("out.parquet", out.data, out.len, &f, &err) == PQ_OK && pq_footer_read(f, &ft, &err) == PQ_OK) {
        CHECK_EQ_INT(ft->meta.num_rows, (int64_t)n * 5); /* ids 3..7 of each file */
        int bad = 0;
        for (int32_t g = 0; g < ft->meta.n_row_groups; g++)
            for (int32_t c = 0; c < ft->schema.n_leaves; c++) {
                const pq_column_meta *m = &ft->meta.row_groups[g].columns[c].meta;
                bad += m->n_path != 1 || strcmp(m->path[0], ft->schema.leaves[c].node->name) != 0;
            }
        if (bad) fprintf(stderr, "data.parquet: %d chunks name another column\n", bad);
        CHECK_EQ_INT(bad, 0);
    } else {
        fprintf(stderr, "data.parquet of the batches: %s\n", err.msg);
        CHECK(false);
    }
    pq_footer_free(ft);
    pq_file_close(f);
    pq_buf_free(&out);
    pq_query_free(q);
}

static void test_scan_holds_a_batch(void)
{
    enum { N = 3 * PQ_SCAN_FILES_AT_ONCE + 7 };
    lazy_table t = {0};
    pq_scan_file *sf = lazy_table_new(&t, "alltypes_plain.parquet", N);
    pq_error err = {0};
    pq_query *q = NULL;
    pq_query_spec spec = {.limit = -1};
    CHECK(t.bytes && t.files && t.footers && sf);
    if (!t.bytes || !t.files || !t.footers || !sf) goto out;
    /* File 0 given with its footer (as pqtool compiles from it); the rest lazy. */
    CHECK(lazy_open(&t, 0, &sf[0], &err) == PQ_OK);
    t.open_now = t.open_most = t.opened = 0;
    CHECK(pq_query_compile(&t.footers[0]->schema, NULL, NULL, 0, &spec, &q, &err) == PQ_OK);
    if (!q) goto out;
    pq_scan_opts o;
    lazy_opts(&t, &o);
    int64_t lines = 0;
    pq_sink sink = {count_lines, &lines};
    CHECK(pq_scan_csv(q, sf, N, &o, &sink, NULL, &err) == PQ_OK);
    CHECK_EQ_INT(lines, (int64_t)N * 8 + 1); /* the header and every row */
    CHECK_EQ_INT(t.opened, N - 1);
    CHECK_EQ_INT(t.released, N - 1);
    CHECK_EQ_INT(t.released_given, 0);
    CHECK(t.open_most <= PQ_SCAN_FILES_AT_ONCE);
    if (t.open_most > PQ_SCAN_FILES_AT_ONCE) fprintf(stderr, "scan held %d files at once\n", t.open_most);
    scan_parquet_of_batches(&t, sf, N);
out:
    pq_query_free(q);
    lazy_table_free(&t, sf, N);
}

/* The union's pass over footers it lets go (keep_bytes 0) records what
 * each one's statistics prove for its query, and the scan of that query
 * does not read those footers again (before: every file opened twice, and
 * a 100,000-file Hive lookup read 195,000 times).  A query that keeps rows
 * gets no verdict; forgotten verdicts mean reading again. */
static void union_then_scan(lazy_table *t, pq_scan_file *sf, int n, const char *where, bool forget,
                            int want_opened, int64_t want_lines)
{
    const char *w[] = {where};
    pq_query_spec spec = {.wheres = w, .n_wheres = 1, .limit = -1};
    pq_query *q = NULL;
    pq_footer *u = NULL;
    pq_error err = {0};
    CHECK(pq_query_compile(&t->footers[0]->schema, NULL, NULL, 0, &spec, &q, &err) == PQ_OK);
    if (!q) return;
    for (int i = 1; i < n; i++) sf[i].file = NULL, sf[i].footer = NULL;
    t->opened = t->open_now = t->open_most = 0;
    pq_scan_opts o;
    lazy_opts(t, &o);
    CHECK(pq_scan_schema_union(sf, n, q, &o, 0, &u, &err) == PQ_OK);
    CHECK_EQ_INT(t->opened, n - 1);
    if (forget) pq_scan_files_forget_verdicts(sf, n);
    int64_t lines = 0;
    pq_sink sink = {count_lines, &lines};
    pq_scan_stats st;
    CHECK(pq_scan_csv(q, sf, n, &o, &sink, &st, &err) == PQ_OK);
    if (want_lines >= 0) CHECK_EQ_INT(lines, want_lines);
    else CHECK(lines > n); /* the header and rows of every file */
    CHECK_EQ_INT(t->opened, want_opened);
    /* Counted as if each footer had been planned again. */
    CHECK_EQ_INT((int64_t)st.plan.row_groups, n);
    CHECK_EQ_INT((int64_t)st.plan.rows, (int64_t)n * 1000);
    if (want_lines == 1) CHECK_EQ_INT((int64_t)st.plan.row_groups_pruned[PQ_RUNG_STATS], n);
    pq_footer_free(u);
    pq_query_free(q);
}

static void test_union_verdicts(void)
{
    enum { N = 40 };
    lazy_table t = {0};
    pq_scan_file *sf = lazy_table_new(&t, "int32_with_null_pages.parquet", N);
    pq_error err = {0};
    CHECK(t.bytes && t.files && t.footers && sf);
    if (!t.bytes || !t.files || !t.footers || !sf) goto out;
    CHECK(lazy_open(&t, 0, &sf[0], &err) == PQ_OK);
    /* No row anywhere: one read a file. */
    union_then_scan(&t, sf, N, "int32_field > 2147483000", false, N - 1, 1);
    /* Forgotten (the caller's query is another): read again. */
    union_then_scan(&t, sf, N, "int32_field > 2147483000", true, 2 * (N - 1), 1);
    /* Rows in every file: no verdict, every footer read again. */
    union_then_scan(&t, sf, N, "int32_field IS NOT NULL AND int32_field < 2147483000", false, 2 * (N - 1), -1);
out:
    lazy_table_free(&t, sf, N);
}

int main(void)
{
    test_footer_guess();
    test_kept_bytes();
    test_footer_cache_guess();
    test_footer_cache_bound();
    test_footer_cache_view();
    test_scan_holds_a_batch();
    test_union_verdicts();
    test_signed_ints();
    test_unsigned();
    test_binary();
    test_floats();
    test_no_order_and_nulls();
    test_bloom_hash();
    test_bloom_corpus();
    test_page_index();
    test_widened_page_index();
    test_deleted_rows();
    return check_report();
}
