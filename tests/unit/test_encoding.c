/* Value and level decoders: hand-written pages for the edge cases, small
 * test-side encoders for everything else, and a randomized differential test
 * (random values -> test encoder -> decoder with random read / skip
 * interleaving).  Every page handed to a decoder is copied into a buffer of its
 * exact size so AddressSanitizer catches any over-read. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "encoding.h"

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void) /* xorshift64 */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    return rng_state ^= rng_state << 17;
}

static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

/* A growable byte buffer for building pages. */
typedef struct tbuf {
    uint8_t *d;
    size_t len, cap;
} tbuf;

static void tb_reserve(tbuf *b, size_t extra)
{
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra) cap *= 2;
    b->d = realloc(b->d, cap);
    if (!b->d) abort();
    b->cap = cap;
}

static void tb_put(tbuf *b, const void *p, size_t n)
{
    tb_reserve(b, n);
    if (n) memcpy(b->d + b->len, p, n);
    b->len += n;
}

static void tb_byte(tbuf *b, uint8_t v) { tb_put(b, &v, 1); }

static void tb_le32(tbuf *b, uint32_t v) { tb_put(b, &v, 4); /* little-endian host */ }

static void tb_uleb(tbuf *b, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tb_byte(b, byte | (v ? 0x80 : 0));
    } while (v);
}


static void tb_zigzag(tbuf *b, int64_t v)
{
    uint64_t u = (uint64_t)v;
    tb_uleb(b, (u << 1) ^ (0 - (u >> 63)));
}

static int width_of(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

/* Appends count values of `width` bits, LSB-first, padded to a whole byte. */
static void tb_pack_lsb(tbuf *b, const uint64_t *v, size_t count, int width)
{
    size_t bytes = (count * (size_t)width + 7) / 8;
    if (!bytes) return;
    tb_reserve(b, bytes);
    uint8_t *o = b->d + b->len;
    memset(o, 0, bytes);
    size_t bit = 0;
    for (size_t i = 0; i < count; i++)
        for (int k = 0; k < width; k++, bit++)
            if ((v[i] >> k) & 1) o[bit / 8] |= (uint8_t)(1u << (bit % 8));
    b->len += bytes;
}

static void tb_free(tbuf *b)
{
    free(b->d);
    memset(b, 0, sizeof *b);
}


/* ------------------------------------------------------------------ test-side encoders */

static void rle_put_run(tbuf *b, uint32_t value, uint32_t count, int bw)
{
    tb_uleb(b, (uint64_t)count << 1);
    for (int i = 0; i < (bw + 7) / 8; i++) tb_byte(b, (uint8_t)(value >> (8 * i)));
}

/* A bit-packed run of count values (padded with zeros to whole groups). */
static void rle_put_packed(tbuf *b, const uint32_t *v, size_t count, int bw)
{
    size_t groups = (count + 7) / 8;
    tb_uleb(b, (uint64_t)groups << 1 | 1);
    uint64_t *tmp = calloc(groups * 8 + 1, sizeof *tmp);
    for (size_t i = 0; i < count; i++) tmp[i] = v[i];
    tb_pack_lsb(b, tmp, groups * 8, bw);
    free(tmp);
}

/* Random hybrid encoding: RLE runs of random length over equal values, and
 * bit-packed runs of random group counts elsewhere (only the last one padded). */
static void rle_encode_random(tbuf *b, const uint32_t *v, size_t n, int bw)
{
    size_t i = 0;
    while (i < n) {
        size_t same = 1;
        while (i + same < n && v[i + same] == v[i]) same++;
        if (same >= 8 || (same >= 2 && rnd() % 2)) {
            size_t take = same >= 8 ? 1 + rnd_below(same) : same;
            if (take < same && take < 8) take = same;
            rle_put_run(b, v[i], (uint32_t)take, bw);
            i += take;
        } else {
            size_t take = 8 * (1 + rnd_below(8));
            if (take > n - i) take = n - i;
            rle_put_packed(b, v + i, take, bw);
            i += take;
        }
    }
}

/* Values with runs: each run repeats a random value of bw bits. */
static void gen_runs(uint32_t *v, size_t n, int bw)
{
    uint32_t mask = bw == 32 ? UINT32_MAX : ((uint32_t)1 << bw) - 1;
    size_t i = 0;
    while (i < n) {
        size_t r = rnd() % 4 == 0 ? 1 + rnd_below(40) : 1;
        uint32_t val = (uint32_t)rnd() & mask;
        for (size_t k = 0; k < r && i < n; k++) v[i++] = val;
    }
}

/* ------------------------------------------------------------------ decode checking */

static bool values_equal(pq_phys type, const void *a, const void *b, size_t n)
{
    if (type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY) {
        const pq_bytes *x = a, *y = b;
        for (size_t i = 0; i < n; i++)
            if (x[i].len != y[i].len || (x[i].len && memcmp(x[i].ptr, y[i].ptr, x[i].len) != 0))
                return false;
        return true;
    }
    return n == 0 || memcmp(a, b, n * pq_value_size(type)) == 0;
}

typedef struct page_case {
    const char *what;
    pq_encoding enc;
    pq_phys type;
    int32_t type_length;
    const uint8_t *page;
    size_t len;
    uint32_t num;
    const pq_dict *dict;
    const void *expect; /* typed array of num values */
} page_case;

static uint8_t *exact_copy(const uint8_t *p, size_t len)
{
    uint8_t *c = malloc(len ? len : 1);
    if (len) memcpy(c, p, len);
    return c;
}

/* Reads the whole page at once, then again with random read / skip steps,
 * comparing every read to the matching slice of the expected values. */
static void check_page(const page_case *c)
{
    const size_t esz = pq_value_size(c->type);
    uint8_t *page = exact_copy(c->page, c->len);
    uint8_t *out = malloc((size_t)c->num * esz + 1);
    pq_arena storage;
    pq_arena_init(&storage, 4096);
    pq_error err = {0};
    pq_values_dec d;

    int rc = pq_values_init(&d, c->enc, c->type, c->type_length, page, c->len, c->num, c->dict,
                            &err);
    if (rc == PQ_OK) rc = pq_values_read(&d, out, c->num, &storage, &err);
    if (rc != PQ_OK) fprintf(stderr, "%s: %s\n", c->what, err.msg);
    CHECK_EQ_INT(rc, PQ_OK);
    if (rc == PQ_OK) {
        bool same = values_equal(c->type, out, c->expect, c->num);
        if (!same) fprintf(stderr, "%s: values differ (read all)\n", c->what);
        CHECK(same);
        uint8_t extra[16];
        CHECK_EQ_INT(pq_values_read(&d, extra, 1, &storage, &err), PQ_ERR);
    }
    pq_values_free(&d);

    for (int round = 0; round < 3; round++) {
        rc = pq_values_init(&d, c->enc, c->type, c->type_length, page, c->len, c->num, c->dict,
                            &err);
        CHECK_EQ_INT(rc, PQ_OK);
        size_t pos = 0;
        static const size_t steps[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 127, 1000};
        while (rc == PQ_OK && pos < c->num) {
            size_t k = steps[rnd_below(sizeof steps / sizeof steps[0])];
            if (k > c->num - pos) k = c->num - pos;
            if (rnd() % 2) {
                rc = pq_values_read(&d, out, k, &storage, &err);
                if (rc == PQ_OK) {
                    bool same = values_equal(c->type, out,
                                             (const uint8_t *)c->expect + pos * esz, k);
                    if (!same)
                        fprintf(stderr, "%s: values differ at %zu..%zu (round %d)\n", c->what,
                                pos, pos + k, round);
                    CHECK(same);
                }
            } else {
                rc = pq_values_skip(&d, k, &err);
            }
            if (rc != PQ_OK) fprintf(stderr, "%s: at %zu: %s\n", c->what, pos, err.msg);
            CHECK_EQ_INT(rc, PQ_OK);
            pos += k;
        }
        pq_values_free(&d);
        pq_arena_reset(&storage);
    }
    pq_arena_free(&storage);
    free(out);
    free(page);
}

/* Decodes every truncation of the page.  Each must fail cleanly with
 * PQ_E_CORRUPT or (where the encoding tolerates trailing padding going
 * missing) produce exactly the expected values.  Returns how many succeeded. */
static size_t check_truncations(const page_case *c)
{
    const size_t esz = pq_value_size(c->type);
    uint8_t *out = malloc((size_t)c->num * esz + 1);
    size_t ok = 0;
    for (size_t cut = 0; cut < c->len; cut++) {
        uint8_t *page = exact_copy(c->page, cut);
        pq_arena storage;
        pq_arena_init(&storage, 4096);
        pq_error err = {0};
        pq_values_dec d;
        int rc = pq_values_init(&d, c->enc, c->type, c->type_length, page, cut, c->num, c->dict,
                                &err);
        if (rc == PQ_OK) rc = pq_values_read(&d, out, c->num, &storage, &err);
        if (rc == PQ_OK) {
            ok++;
            bool same = values_equal(c->type, out, c->expect, c->num);
            if (!same) fprintf(stderr, "%s: truncated to %zu: wrong values\n", c->what, cut);
            CHECK(same);
        } else {
            CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
        }
        pq_values_free(&d);
        pq_arena_free(&storage);
        free(page);
    }
    free(out);
    return ok;
}

/* A random page of n values for any encoding and type, with what decoding it
 * must give; everything is freed by gen_page_free. */
typedef struct gen_page {
    tbuf page, pool, dpage;
    pq_arena arena;
    pq_dict dict;
    void *expect;
    char what[96];
    page_case c;
} gen_page;

/* defined with the test-side encoders below; gen_dict_n fixes the dictionary
 * size of RLE_DICTIONARY pages (0: random) */
static uint32_t gen_dict_n;
static void gen_page_make(gen_page *g, pq_encoding enc, pq_phys type, int32_t tl, size_t n);
static void gen_page_free(gen_page *g);

/* ------------------------------------------------------------------ bit width */

static void test_bit_width(void)
{
    static const uint32_t max[] = {0, 1, 2, 3, 255, 256, UINT32_MAX};
    static const int width[] = {0, 1, 2, 2, 8, 9, 32};
    for (int i = 0; i < 7; i++) CHECK_EQ_INT(pq_bit_width(max[i]), width[i]);
}

/* ------------------------------------------------------------------ RLE hybrid */

static void test_rle_handwritten(void)
{
    pq_error err = {0};
    pq_rle_dec d;
    uint32_t out[16];

    /* 0..7 bit-packed at width 3 (one group) */
    static const uint8_t packed[] = {0x03, 0x88, 0xC6, 0xFA};
    CHECK_EQ_INT(pq_rle_init(&d, packed, sizeof packed, 3, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 8, &err), PQ_OK);
    for (uint32_t i = 0; i < 8; i++) CHECK_EQ_INT(out[i], i);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);

    /* 50 ones then 50 zeros as two RLE runs, bit width 1 */
    static const uint8_t runs[] = {0x64, 0x01, 0x64, 0x00};
    uint16_t lv[100];
    CHECK_EQ_INT(pq_rle_init(&d, runs, sizeof runs, 1, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u16(&d, lv, 100, &err), PQ_OK);
    int good = 1;
    for (int i = 0; i < 100; i++) good &= lv[i] == (i < 50);
    CHECK(good);

    /* skip 2 then read 6 from the bit-packed group */
    CHECK_EQ_INT(pq_rle_init(&d, packed, sizeof packed, 3, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_skip(&d, 2, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 6, &err), PQ_OK);
    for (uint32_t i = 0; i < 6; i++) CHECK_EQ_INT(out[i], i + 2);

    /* a run value wider than the bit width is corrupt */
    static const uint8_t wide_value[] = {0x08, 0x09};
    CHECK_EQ_INT(pq_rle_init(&d, wide_value, sizeof wide_value, 3, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);

    /* fastparquet pads pages with zero bytes: a zero header ends the data */
    static const uint8_t padded[] = {0x14, 0x05, 0, 0, 0, 0};
    CHECK_EQ_INT(pq_rle_init(&d, padded, sizeof padded, 3, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 10, &err), PQ_OK);
    CHECK_EQ_INT(out[9], 5);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);

    /* bit widths out of range */
    CHECK_EQ_INT(pq_rle_init(&d, packed, sizeof packed, 33, &err), PQ_ERR);
    CHECK_EQ_INT(pq_rle_init(&d, packed, sizeof packed, -1, &err), PQ_ERR);

    /* bit width 0: RLE runs have no value bytes, bit-packed runs no data */
    static const uint8_t zero_width[] = {0x0a, 0x03, 0x06};
    CHECK_EQ_INT(pq_rle_init(&d, zero_width, sizeof zero_width, 0, &err), PQ_OK);
    memset(out, 0xff, sizeof out);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 13, &err), PQ_OK);
    good = 1;
    for (int i = 0; i < 13; i++) good &= out[i] == 0;
    CHECK(good);
    CHECK_EQ_INT(pq_rle_skip(&d, 3, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_skip(&d, 1, &err), PQ_ERR);

    /* empty input */
    CHECK_EQ_INT(pq_rle_init(&d, NULL, 0, 5, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 0, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);

    /* an over-long varint header */
    static const uint8_t long_header[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                          0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_EQ_INT(pq_rle_init(&d, long_header, sizeof long_header, 1, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);

    /* u16 output refuses widths above 16 */
    CHECK_EQ_INT(pq_rle_init(&d, packed, sizeof packed, 17, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u16(&d, lv, 1, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
}

/* A final bit-packed run whose declared groups exceed the bytes present: the
 * values the bytes hold can be read, one more cannot. */
static void test_rle_truncated_final_run(void)
{
    for (int bw = 1; bw <= 32; bw++) {
        uint32_t v[24];
        gen_runs(v, 24, bw);
        tbuf b = {0};
        rle_put_run(&b, v[0], 1, bw);
        size_t hdr = b.len;
        rle_put_packed(&b, v + 1, 23, bw); /* 3 groups, 24 slots */
        for (size_t keep_vals = 0; keep_vals <= 23; keep_vals++) {
            /* keep just the bytes that hold keep_vals values */
            size_t run_start = hdr + 1; /* one-byte header for 3 groups */
            size_t bytes = (keep_vals * (size_t)bw + 7) / 8;
            uint8_t *page = exact_copy(b.d, run_start + bytes);
            pq_error err = {0};
            pq_rle_dec d;
            uint32_t out[32];
            size_t present = bytes * 8 / (size_t)bw;
            if (present > 24) present = 24;
            CHECK_EQ_INT(pq_rle_init(&d, page, run_start + bytes, bw, &err), PQ_OK);
            int rc = pq_rle_read_u32(&d, out, 1 + present, &err);
            CHECK_EQ_INT(rc, PQ_OK);
            if (rc == PQ_OK) CHECK(memcmp(out, v, (1 + keep_vals) * sizeof *out) == 0);
            CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);
            /* the same through skip */
            CHECK_EQ_INT(pq_rle_init(&d, page, run_start + bytes, bw, &err), PQ_OK);
            CHECK_EQ_INT(pq_rle_skip(&d, 1 + present, &err), PQ_OK);
            CHECK_EQ_INT(pq_rle_skip(&d, 1, &err), PQ_ERR);
            free(page);
        }
        tb_free(&b);
    }
}

/* Every width: random hybrid pages read whole, in random chunks, and with
 * skips, in both output sizes. */
static void test_rle_widths(void)
{
    static const int widths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 25, 31, 32};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        int bw = widths[wi];
        for (int iter = 0; iter < 8; iter++) {
            size_t n = iter == 0 ? 1 : 1 + rnd_below(iter < 4 ? 100 : 3000);
            uint32_t *v = malloc(n * sizeof *v);
            gen_runs(v, n, bw);
            tbuf b = {0};
            rle_encode_random(&b, v, n, bw);
            uint8_t *page = exact_copy(b.d, b.len);
            uint32_t *out = malloc(n * sizeof *out);
            uint16_t *out16 = malloc(n * sizeof *out16);
            pq_error err = {0};
            pq_rle_dec d;

            CHECK_EQ_INT(pq_rle_init(&d, page, b.len, bw, &err), PQ_OK);
            int rc = pq_rle_read_u32(&d, out, n, &err);
            CHECK_EQ_INT(rc, PQ_OK);
            bool same = rc == PQ_OK && memcmp(out, v, n * sizeof *v) == 0;
            if (!same) fprintf(stderr, "rle width %d n %zu: %s\n", bw, n, err.msg);
            CHECK(same);

            /* random read / skip steps */
            CHECK_EQ_INT(pq_rle_init(&d, page, b.len, bw, &err), PQ_OK);
            size_t pos = 0;
            bool steps_ok = true;
            while (pos < n && steps_ok) {
                size_t k = 1 + rnd_below(rnd() % 3 ? 20 : 600);
                if (k > n - pos) k = n - pos;
                if (rnd() % 3 == 0) {
                    steps_ok = pq_rle_skip(&d, k, &err) == PQ_OK;
                } else {
                    steps_ok = pq_rle_read_u32(&d, out, k, &err) == PQ_OK &&
                               memcmp(out, v + pos, k * sizeof *v) == 0;
                }
                pos += k;
            }
            if (!steps_ok) fprintf(stderr, "rle width %d steps: %s\n", bw, err.msg);
            CHECK(steps_ok);

            if (bw <= 16) {
                CHECK_EQ_INT(pq_rle_init(&d, page, b.len, bw, &err), PQ_OK);
                size_t half = n / 2;
                CHECK_EQ_INT(pq_rle_read_u16(&d, out16, half, &err), PQ_OK);
                CHECK_EQ_INT(pq_rle_read_u16(&d, out16 + half, n - half, &err), PQ_OK);
                bool same16 = true;
                for (size_t i = 0; i < n; i++) same16 &= out16[i] == v[i];
                CHECK(same16);
            }

            /* truncations: a clean error, or the values (only the final run's
             * padding may go missing) */
            if (iter < 3) {
                for (size_t cut = 0; cut < b.len; cut++) {
                    uint8_t *t = exact_copy(b.d, cut);
                    CHECK_EQ_INT(pq_rle_init(&d, t, cut, bw, &err), PQ_OK);
                    if (pq_rle_read_u32(&d, out, n, &err) == PQ_OK)
                        CHECK(memcmp(out, v, n * sizeof *v) == 0);
                    else
                        CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
                    free(t);
                }
            }
            free(out16);
            free(out);
            free(page);
            free(v);
            tb_free(&b);
        }
    }
}

/* A long bit-packed run read across several calls, so reads start mid-group
 * and groups straddle the fast/safe boundary near the end of the buffer. */
static void test_rle_run_across_reads(void)
{
    for (int bw = 1; bw <= 32; bw++) {
        uint32_t v[200];
        gen_runs(v, 200, bw);
        tbuf b = {0};
        rle_put_packed(&b, v, 200, bw);
        uint8_t *page = exact_copy(b.d, b.len);
        pq_error err = {0};
        pq_rle_dec d;
        uint32_t out[200];
        CHECK_EQ_INT(pq_rle_init(&d, page, b.len, bw, &err), PQ_OK);
        size_t pos = 0, k = 1;
        bool ok = true;
        while (pos < 200) {
            size_t m = k < 200 - pos ? k : 200 - pos;
            ok &= pq_rle_read_u32(&d, out + pos, m, &err) == PQ_OK;
            pos += m;
            k = k * 3 % 23 + 1;
        }
        CHECK(ok && memcmp(out, v, sizeof v) == 0);
        free(page);
        tb_free(&b);
    }
}

/* ------------------------------------------------------------------ levels */

static void test_bitpacked_levels(void)
{
    /* parquet-format's example: 0..7 at width 3, MSB-first */
    static const uint8_t msb[] = {0x05, 0x39, 0x77};
    uint16_t out[8];
    pq_error err = {0};
    CHECK_EQ_INT(pq_bitpacked_levels_read(msb, sizeof msb, 3, out, 8, &err), PQ_OK);
    for (int i = 0; i < 8; i++) CHECK_EQ_INT(out[i], i);
    CHECK_EQ_INT(pq_bitpacked_levels_read(msb, 2, 3, out, 8, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);

    size_t used = 0;
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_BIT_PACKED, msb, sizeof msb, 7, out, 8, &used, NULL, &err),
                 PQ_OK);
    CHECK_EQ_INT(used, 3);
    CHECK_EQ_INT(out[7], 7);
    /* max level 5 with width 3: levels 6 and 7 are corrupt */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_BIT_PACKED, msb, sizeof msb, 5, out, 8, &used, NULL, &err),
                 PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);

    /* width 1, 10 values: 1011001110 -> 0xB3 0x80 */
    static const uint8_t w1[] = {0xB3, 0x80};
    static const uint16_t w1v[] = {1, 0, 1, 1, 0, 0, 1, 1, 1, 0};
    CHECK_EQ_INT(pq_bitpacked_levels_read(w1, sizeof w1, 1, out, 8, &err), PQ_OK);
    CHECK(memcmp(out, w1v, 8 * sizeof *out) == 0);
    uint16_t out10[10];
    CHECK_EQ_INT(pq_bitpacked_levels_read(w1, sizeof w1, 1, out10, 10, &err), PQ_OK);
    CHECK(memcmp(out10, w1v, sizeof w1v) == 0);

    /* width 16 round trip */
    static const uint8_t w16[] = {0x12, 0x34, 0xff, 0xfe};
    CHECK_EQ_INT(pq_bitpacked_levels_read(w16, sizeof w16, 16, out, 2, &err), PQ_OK);
    CHECK_EQ_INT(out[0], 0x1234);
    CHECK_EQ_INT(out[1], 0xfffe);
}

/* One RLE run of the maximum level (a page without nulls) is reported, not
 * expanded; every other shape is decoded as usual. */
static void test_levels_one_run(void)
{
    pq_error err = {0};
    uint16_t out[300];
    size_t used = 0;
    bool all = false;
    tbuf one = {0};
    tb_le32(&one, 3);
    rle_put_run(&one, 2, 300, 2); /* header varint 600: 2 bytes, value 1 byte */
    memset(out, 0xab, sizeof out);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, one.d, one.len, 2, out, 300, &used, &all, &err), PQ_OK);
    CHECK(all);
    CHECK_EQ_INT(used, one.len);
    CHECK_EQ_INT(out[0], 0xabab); /* not written */
    /* a run longer than the page (padding) still covers it */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, one.d, one.len, 2, out, 200, &used, &all, &err), PQ_OK);
    CHECK(all);
    /* the run of another value, a run too short, two runs, a bit-packed run:
     * expanded, with the values they hold */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, one.d, one.len, 3, out, 300, &used, &all, &err), PQ_OK);
    CHECK(!all && out[0] == 2 && out[299] == 2);
    tbuf two = {0};
    tb_le32(&two, 5); /* 3 + 2 bytes */
    rle_put_run(&two, 2, 299, 2);
    rle_put_run(&two, 1, 1, 2);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, two.d, two.len, 2, out, 300, &used, &all, &err), PQ_OK);
    CHECK(!all && out[298] == 2 && out[299] == 1);
    tbuf packed = {0};
    uint32_t eight[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    tbuf body = {0};
    rle_put_packed(&body, eight, 8, 2);
    tb_le32(&packed, (uint32_t)body.len);
    tb_put(&packed, body.d, body.len);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, packed.d, packed.len, 2, out, 8, &used, &all, &err), PQ_OK);
    CHECK(!all && out[7] == 2);
    /* the decoder-level predicate does not move the decoder */
    pq_rle_dec d;
    CHECK_EQ_INT(pq_rle_init(&d, one.d + 4, one.len - 4, 2, &err), PQ_OK);
    CHECK(pq_rle_is_one_run(&d, 2, 300));
    CHECK(!pq_rle_is_one_run(&d, 2, 301));
    CHECK(!pq_rle_is_one_run(&d, 1, 1));
    CHECK_EQ_INT(pq_rle_read_u16(&d, out, 300, &err), PQ_OK);
    CHECK(out[0] == 2 && out[299] == 2);
    CHECK(!pq_rle_is_one_run(&d, 2, 1)); /* nothing left */
    tb_free(&one);
    tb_free(&two);
    tb_free(&packed);
    tb_free(&body);
}

static void test_levels_v1_rle(void)
{
    uint16_t expect[300], out[300];
    uint32_t v[300];
    for (int i = 0; i < 300; i++) expect[i] = (uint16_t)(v[i] = (uint32_t)(rnd() % 3));
    tbuf b = {0};
    tbuf body = {0};
    rle_encode_random(&body, v, 300, 2);
    tb_le32(&b, (uint32_t)body.len);
    tb_put(&b, body.d, body.len);
    size_t levels_len = b.len;
    tb_put(&b, "\x01\x02\x03", 3); /* the values section that follows */
    pq_error err = {0};
    size_t used = 0;
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, b.len, 2, out, 300, &used, NULL, &err), PQ_OK);
    CHECK_EQ_INT(used, levels_len);
    CHECK(memcmp(out, expect, sizeof out) == 0);
    /* max level 0: no level section, all zeros, nothing consumed */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, b.len, 0, out, 300, &used, NULL, &err), PQ_OK);
    CHECK_EQ_INT(used, 0);
    CHECK_EQ_INT(out[299], 0);
    /* a length prefix that overruns the page */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, levels_len - 1, 2, out, 300, &used, NULL, &err),
                 PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, 3, 2, out, 300, &used, NULL, &err), PQ_ERR);
    /* a level above the maximum: 3 at width 2 with max 2 */
    tbuf bad = {0};
    tb_le32(&bad, 2);
    rle_put_run(&bad, 3, 1, 2);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, bad.d, bad.len, 2, out, 1, &used, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_PLAIN, b.d, b.len, 2, out, 1, &used, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    tb_free(&bad);
    tb_free(&body);
    tb_free(&b);
}

/* ------------------------------------------------------------------ PLAIN */

/* Builds a PLAIN page of n random values of `type`; fills expect (views into
 * the page for byte arrays, which the caller frees with the page). */
static void plain_page(tbuf *b, pq_phys type, int32_t tl, size_t n, void *expect)
{
    const size_t esz = pq_value_size(type);
    uint8_t *e = expect;
    if (type == PQ_BOOLEAN) {
        uint64_t *bits = malloc((n + 1) * sizeof *bits);
        for (size_t i = 0; i < n; i++) e[i] = (uint8_t)(bits[i] = rnd() & 1);
        tb_pack_lsb(b, bits, n, 1);
        free(bits);
    } else if (type == PQ_BYTE_ARRAY) {
        size_t *offs = malloc((n + 1) * sizeof *offs);
        uint32_t *lens = malloc((n + 1) * sizeof *lens);
        for (size_t i = 0; i < n; i++) {
            uint32_t len = (uint32_t)(rnd() % 5 == 0 ? 0 : rnd_below(30));
            tb_le32(b, len);
            offs[i] = b->len;
            lens[i] = len;
            for (uint32_t k = 0; k < len; k++) tb_byte(b, (uint8_t)('a' + rnd_below(4)));
        }
        /* views are made after building: the buffer may have moved */
        for (size_t i = 0; i < n; i++)
            ((pq_bytes *)expect)[i] = (pq_bytes){b->d + offs[i], lens[i]};
        free(lens);
        free(offs);
    } else if (type == PQ_FIXED_LEN_BYTE_ARRAY) {
        size_t start = b->len;
        for (size_t i = 0; i < n * (size_t)tl; i++) tb_byte(b, (uint8_t)rnd());
        for (size_t i = 0; i < n; i++)
            ((pq_bytes *)expect)[i] = (pq_bytes){b->d + start + i * (size_t)tl, (uint32_t)tl};
    } else {
        for (size_t i = 0; i < n * esz; i++) e[i] = (uint8_t)rnd();
        tb_put(b, expect, n * esz);
    }
}

static const pq_phys all_types[] = {PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96,
                                    PQ_FLOAT, PQ_DOUBLE, PQ_BYTE_ARRAY, PQ_FIXED_LEN_BYTE_ARRAY};

static void test_plain(void)
{
    static const size_t counts[] = {0, 1, 7, 8, 9, 64, 333};
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            int32_t tl = all_types[t] == PQ_FIXED_LEN_BYTE_ARRAY ? 1 + (int32_t)rnd_below(20) : 0;
            gen_page g;
            gen_page_make(&g, PQ_ENC_PLAIN, all_types[t], tl, counts[ci]);
            check_page(&g.c);
            size_t ok = check_truncations(&g.c);
            if (all_types[t] != PQ_BOOLEAN) CHECK_EQ_INT(ok, 0);
            gen_page_free(&g);
        }
    }

    /* booleans: reads at every bit offset */
    pq_error err = {0};
    pq_values_dec d;
    static const uint8_t bools[] = {0xA5, 0x3C, 0x01};
    uint8_t out[24];
    for (size_t skip = 0; skip < 17; skip++) {
        CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_BOOLEAN, 0, bools, 3, 17, NULL, &err),
                     PQ_OK);
        CHECK_EQ_INT(pq_values_skip(&d, skip, &err), PQ_OK);
        CHECK_EQ_INT(pq_values_read(&d, out, 17 - skip, NULL, &err), PQ_OK);
        bool same = true;
        for (size_t i = skip; i < 17; i++) same &= out[i - skip] == ((bools[i / 8] >> (i % 8)) & 1);
        CHECK(same);
    }
    /* 24 booleans fit in 3 bytes, 25 do not */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_BOOLEAN, 0, bools, 3, 25, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 24, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 1, NULL, &err), PQ_ERR);

    /* a BYTE_ARRAY length that overruns the page */
    static const uint8_t overrun[] = {5, 0, 0, 0, 'a', 'b'};
    pq_bytes bv[2];
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_BYTE_ARRAY, 0, overrun, sizeof overrun, 1,
                                NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, bv, 1, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 'a'};
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_BYTE_ARRAY, 0, huge, sizeof huge, 1, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_skip(&d, 1, &err), PQ_ERR);

    /* asking for more values than the page has */
    static const uint8_t ints[] = {1, 0, 0, 0, 2, 0, 0, 0};
    int32_t iv[3];
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_INT32, 0, ints, sizeof ints, 2, NULL, &err),
                 PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, iv, 3, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_read(&d, iv, 2, NULL, &err), PQ_OK);
    CHECK_EQ_INT(iv[1], 2);
    /* the page header claims more values than the bytes hold */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_INT32, 0, ints, sizeof ints, 3, NULL, &err),
                 PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, iv, 3, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    /* FIXED_LEN_BYTE_ARRAY needs a positive length */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_PLAIN, PQ_FIXED_LEN_BYTE_ARRAY, 0, ints, sizeof ints, 1,
                                NULL, &err), PQ_ERR);
}

/* Encodings that do not apply to a type, and unknown ones. */
static void test_encoding_checks(void)
{
    pq_error err = {0};
    pq_values_dec d;
    static const uint8_t bytes[16] = {0};
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE, PQ_INT32, 0, bytes, 16, 1, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_DOUBLE, 0, bytes, 16, 1, NULL,
                                &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_INT32, 0, bytes, 16, 1,
                                NULL, &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_BYTE_STREAM_SPLIT, PQ_BOOLEAN, 0, bytes, 16, 1, NULL,
                                &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_BIT_PACKED, PQ_INT32, 0, bytes, 16, 1, NULL, &err),
                 PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_GROUP_VAR_INT, PQ_INT32, 0, bytes, 16, 1, NULL, &err),
                 PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, (pq_encoding)42, PQ_INT32, 0, bytes, 16, 1, NULL, &err),
                 PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, bytes, 16, 1, NULL, &err),
                 PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_value_size(PQ_BOOLEAN), 1);
    CHECK_EQ_INT(pq_value_size(PQ_INT96), 12);
    CHECK_EQ_INT(pq_value_size(PQ_BYTE_ARRAY), sizeof(pq_bytes));
}

/* Empty pages: zero values, with or without bytes, for every encoding. */
static void test_empty_pages(void)
{
    static const pq_encoding encs[] = {
        PQ_ENC_PLAIN, PQ_ENC_RLE_DICTIONARY, PQ_ENC_PLAIN_DICTIONARY, PQ_ENC_RLE,
        PQ_ENC_DELTA_BINARY_PACKED, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_ENC_DELTA_BYTE_ARRAY,
        PQ_ENC_BYTE_STREAM_SPLIT};
    static const pq_phys types[] = {PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_BOOLEAN,
                                    PQ_INT32, PQ_BYTE_ARRAY, PQ_BYTE_ARRAY, PQ_FLOAT};
    pq_error err = {0};
    pq_values_dec d;
    uint8_t out[16];
    for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++) {
        pq_phys type = types[i];
        int rc = pq_values_init(&d, encs[i], type, 0, NULL, 0, 0, NULL, &err);
        if (rc != PQ_OK) fprintf(stderr, "empty %s page: %s\n", pq_encoding_name(encs[i]), err.msg);
        CHECK_EQ_INT(rc, PQ_OK);
        CHECK_EQ_INT(pq_values_read(&d, out, 0, NULL, &err), PQ_OK);
        CHECK_EQ_INT(pq_values_skip(&d, 0, &err), PQ_OK);
        CHECK_EQ_INT(pq_values_read(&d, out, 1, NULL, &err), PQ_ERR);
        CHECK_EQ_INT(pq_values_skip(&d, 1, &err), PQ_ERR);
        pq_values_free(&d);
    }
    /* and pages that claim values but have no bytes */
    for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++) {
        pq_phys type = types[i];
        int rc = pq_values_init(&d, encs[i], type, 0, NULL, 0, 1, NULL, &err);
        if (rc == PQ_OK) rc = pq_values_read(&d, out, 1, NULL, &err);
        CHECK_EQ_INT(rc, PQ_ERR);
        pq_values_free(&d);
    }
}

/* ------------------------------------------------------------------ dictionary */

/* A dictionary-encoded data page: bit width byte, then hybrid indices. */
static void dict_indices_page(tbuf *b, const uint32_t *idx, size_t n, int bw)
{
    tb_byte(b, (uint8_t)bw);
    rle_encode_random(b, idx, n, bw);
}

static void test_dictionary(void)
{
    static const uint32_t dict_sizes[] = {1, 2, 25, 300};
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
        for (size_t si = 0; si < sizeof dict_sizes / sizeof dict_sizes[0]; si++) {
            gen_page g;
            gen_dict_n = dict_sizes[si];
            gen_page_make(&g, PQ_ENC_RLE_DICTIONARY, all_types[t],
                          all_types[t] == PQ_FIXED_LEN_BYTE_ARRAY ? 16 : 0, 1 + rnd_below(2500));
            check_page(&g.c);
            if (si == 1) check_truncations(&g.c);
            g.c.enc = PQ_ENC_PLAIN_DICTIONARY;
            check_page(&g.c);
            gen_page_free(&g);
        }
    }
    gen_dict_n = 0;
}

static void test_dictionary_errors(void)
{
    pq_error err = {0};
    pq_arena arena;
    pq_arena_init(&arena, 0);
    int32_t dvals[25];
    for (int i = 0; i < 25; i++) dvals[i] = i * 10;
    pq_dict dict;
    CHECK_EQ_INT(pq_dict_decode(&dict, PQ_INT32, 0, (const uint8_t *)dvals, sizeof dvals, 25,
                                &arena, &err), PQ_OK);
    /* a dictionary page too short for its count fails before allocating */
    CHECK_EQ_INT(pq_dict_decode(&dict, PQ_INT32, 0, (const uint8_t *)dvals, sizeof dvals,
                                4000000000u, &arena, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_dict_decode(&dict, PQ_BYTE_ARRAY, 0, (const uint8_t *)dvals, 8, 3, &arena,
                                &err), PQ_ERR);
    CHECK_EQ_INT(pq_dict_decode(&dict, PQ_INT32, 0, (const uint8_t *)dvals, sizeof dvals, 25,
                                &arena, &err), PQ_OK);

    pq_values_dec d;
    int32_t out[64];
    /* index 70 in a bit-packed run */
    tbuf b = {0};
    uint32_t idx[8] = {1, 2, 3, 70, 4, 5, 6, 7};
    tb_byte(&b, 7);
    rle_put_packed(&b, idx, 8, 7);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, b.d, b.len, 8, &dict,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 8, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_STR(err.msg, "dictionary index 70 out of range (dictionary has 25 values)");
    /* skipping over it is fine: the index is never used */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, b.d, b.len, 8, &dict,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_skip(&d, 4, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 4, NULL, &err), PQ_OK);
    CHECK_EQ_INT(out[0], 40);
    CHECK_EQ_INT(out[3], 70);
    tb_free(&b);

    /* index 25 in a long RLE run (the direct fill path) and a short one */
    for (uint32_t run = 3; run <= 40; run += 37) {
        tb_byte(&b, 5);
        rle_put_run(&b, 25, run, 5);
        CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, b.d, b.len, run,
                                    &dict, &err), PQ_OK);
        CHECK_EQ_INT(pq_values_read(&d, out, run, NULL, &err), PQ_ERR);
        CHECK_EQ_STR(err.msg, "dictionary index 25 out of range (dictionary has 25 values)");
        tb_free(&b);
    }

    /* bit width byte above 32, or missing */
    static const uint8_t wide[] = {33, 0x02, 0x00};
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, wide, sizeof wide, 1,
                                &dict, &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, wide, 0, 1, &dict, &err),
                 PQ_ERR);
    /* a dictionary of another type */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT64, 0, wide, sizeof wide, 1,
                                &dict, &err), PQ_ERR);
    /* bit width 0: every index is 0 */
    static const uint8_t zero_bw[] = {0, 0x14};
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, zero_bw, sizeof zero_bw,
                                10, &dict, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 10, NULL, &err), PQ_OK);
    CHECK_EQ_INT(out[9], 0);
    /* an empty dictionary with values that index it */
    pq_dict empty;
    CHECK_EQ_INT(pq_dict_decode(&empty, PQ_INT32, 0, NULL, 0, 0, &arena, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_RLE_DICTIONARY, PQ_INT32, 0, zero_bw, sizeof zero_bw,
                                10, &empty, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 10, NULL, &err), PQ_ERR);
    CHECK_EQ_STR(err.msg, "dictionary index 0 out of range (dictionary has 0 values)");
    pq_arena_free(&arena);
}

/* ------------------------------------------------------------------ DELTA_BINARY_PACKED */

typedef struct dbp_opts {
    uint32_t block, minis;
    bool wrap32;      /* deltas computed in 32-bit arithmetic (INT32 writers) */
    bool garbage;     /* unused miniblocks of the last block get random widths */
    bool cut_padding; /* the last miniblock holds only its values' bytes */
} dbp_opts;

/* Encodes n values; returns the widest miniblock bit width used. */
static int dbp_encode(tbuf *b, const int64_t *v, size_t n, dbp_opts o)
{
    const uint32_t vpm = o.block / o.minis;
    tb_uleb(b, o.block);
    tb_uleb(b, o.minis);
    tb_uleb(b, n);
    tb_zigzag(b, n ? v[0] : 0);
    uint64_t *deltas = malloc(o.block * sizeof *deltas);
    int widest = 0;
    for (size_t i = 1; i < n; i += o.block) {
        size_t m = n - i < o.block ? n - i : o.block;
        for (size_t j = 0; j < m; j++) {
            uint64_t d = (uint64_t)v[i + j] - (uint64_t)v[i + j - 1];
            if (o.wrap32) d = (uint64_t)(int64_t)(int32_t)(uint32_t)d;
            deltas[j] = d;
        }
        int64_t min_delta = (int64_t)deltas[0];
        for (size_t j = 1; j < m; j++)
            if ((int64_t)deltas[j] < min_delta) min_delta = (int64_t)deltas[j];
        for (size_t j = 0; j < o.block; j++) deltas[j] = j < m ? deltas[j] - (uint64_t)min_delta : 0;
        tb_zigzag(b, min_delta);
        size_t used = (m + vpm - 1) / vpm;
        int widths[64];
        for (size_t k = 0; k < o.minis; k++) {
            int w = 0;
            if (k < used) {
                for (size_t j = k * vpm; j < (k + 1) * vpm; j++)
                    if (width_of(deltas[j]) > w) w = width_of(deltas[j]);
                if (w > widest) widest = w;
            } else if (o.garbage) {
                w = (int)rnd_below(256);
            }
            widths[k] = w;
            tb_byte(b, (uint8_t)w);
        }
        bool last_block = i + m >= n;
        for (size_t k = 0; k < used; k++) {
            size_t count = vpm;
            if (o.cut_padding && last_block && k == used - 1) count = m - k * vpm;
            tb_pack_lsb(b, deltas + k * vpm, count, widths[k]);
        }
    }
    free(deltas);
    return widest;
}

static const dbp_opts dbp_shapes[] = {
    {128, 4, false, false, false}, {128, 1, false, true, false}, {256, 8, false, true, false},
    {128, 2, false, false, true},  {512, 4, false, true, true},  {1024, 32, false, false, false},
    {256, 1, false, false, false},
};

/* Value patterns that exercise widths 0 (constant, arithmetic), small, full
 * 32 / 64 bits, and the wrap-around extremes. */
static void gen_ints(int64_t *v, size_t n, int pattern, bool int32)
{
    int64_t x = (int64_t)(rnd() >> 1);
    for (size_t i = 0; i < n; i++) {
        switch (pattern) {
        case 0: v[i] = 42; break;
        case 1: v[i] = 1000 + 7 * (int64_t)i; break;
        case 2: x += (int64_t)rnd_below(100) - 30; v[i] = x; break;
        case 3: v[i] = (int64_t)rnd(); break;
        case 4: v[i] = (i % 3 == 0) ? INT64_MIN : (i % 3 == 1) ? INT64_MAX : 0; break;
        default: {
            unsigned shift = (unsigned)(rnd() % 64); /* two calls: keep their order fixed */
            v[i] = (int64_t)(rnd() >> shift);
            break;
        }
        }
        if (int32) v[i] = (int32_t)(uint32_t)v[i];
    }
}

/* The typed output an INT32 or INT64 page of values v decodes to. */
static void ints_expect(void *expect, const int64_t *v, size_t n, bool int32)
{
    for (size_t i = 0; i < n; i++) {
        if (int32)
            ((int32_t *)expect)[i] = (int32_t)v[i];
        else
            ((int64_t *)expect)[i] = v[i];
    }
}

/* Runs a DBP page for values v through check_page (INT32 or INT64). */
static void dbp_check(const char *what, const int64_t *v, size_t n, bool int32, dbp_opts o,
                      bool truncations)
{
    tbuf b = {0};
    dbp_encode(&b, v, n, o);
    void *expect = malloc(n * 8 + 1);
    ints_expect(expect, v, n, int32);
    page_case c = {what, PQ_ENC_DELTA_BINARY_PACKED, int32 ? PQ_INT32 : PQ_INT64, 0, b.d, b.len,
                   (uint32_t)n, NULL, expect};
    check_page(&c);
    if (truncations) check_truncations(&c);
    free(expect);
    tb_free(&b);
}

static void test_dbp(void)
{
    /* parquet-format's first example: 1 2 3 4 5, min delta 1, all widths 0 */
    static const uint8_t five[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00};
    int64_t out[8];
    pq_error err = {0};
    pq_values_dec d;
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT64, 0, five, sizeof five, 5,
                                NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 5, NULL, &err), PQ_OK);
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(out[i], i + 1);
    /* the header alone holds a single value */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT64, 0, five, 5, 1, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 1, NULL, &err), PQ_OK);
    CHECK_EQ_INT(out[0], 1);

    static const size_t counts[] = {1, 2, 7, 8, 9, 31, 32, 33, 127, 128, 129, 130, 256, 257, 1000,
                                    5000};
    for (size_t s = 0; s < sizeof dbp_shapes / sizeof dbp_shapes[0]; s++) {
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            for (int pattern = 0; pattern < 6; pattern++) {
                size_t n = counts[ci];
                int64_t *v = malloc(n * sizeof *v);
                bool int32 = (ci + (size_t)pattern) % 2 == 0;
                gen_ints(v, n, pattern, int32);
                dbp_opts o = dbp_shapes[s];
                o.wrap32 = int32 && pattern % 3 == 0;
                char what[96];
                snprintf(what, sizeof what, "DBP block %u/%u n %zu pattern %d %s", o.block,
                         o.minis, n, pattern, int32 ? "INT32" : "INT64");
                dbp_check(what, v, n, int32, o, n <= 130 && pattern >= 2 && s < 4);
                free(v);
            }
        }
    }
}

static void test_dbp_edges(void)
{
    pq_error err = {0};
    pq_values_dec d;
    int64_t v[600];
    int32_t out32[600];

    /* width 64: deltas INT64_MIN and INT64_MAX in one miniblock */
    for (int i = 0; i < 600; i++) v[i] = i % 2 ? INT64_MIN : (i % 4 == 0 ? 0 : -1);
    tbuf b = {0};
    CHECK_EQ_INT(dbp_encode(&b, v, 600, (dbp_opts){256, 8, false, true, false}), 64);
    tb_free(&b);
    dbp_check("DBP width 64", v, 600, false, (dbp_opts){256, 8, false, true, false}, false);
    dbp_check("DBP width 64 cut", v, 35, false, (dbp_opts){128, 4, false, true, true}, true);

    /* INT32 overflow wraps, whether the writer wrapped deltas in 32 or 64 bits */
    for (int i = 0; i < 300; i++) v[i] = i % 2 ? INT32_MIN : INT32_MAX;
    dbp_check("DBP int32 wrap (32-bit deltas)", v, 300, true, (dbp_opts){128, 4, true, 0, 0},
              false);
    dbp_check("DBP int32 wrap (64-bit deltas)", v, 300, true, (dbp_opts){128, 4, false, 0, 0},
              false);
    for (int i = 0; i < 300; i++) v[i] = (int32_t)(uint32_t)(0x7ffffff0u + 3u * (uint32_t)i);
    dbp_check("DBP int32 counting through the wrap", v, 300, true,
              (dbp_opts){128, 4, true, 0, 0}, false);
    b = (tbuf){0};
    dbp_encode(&b, v, 300, (dbp_opts){128, 4, true, 0, 0});
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, b.d, b.len, 300,
                                NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out32, 300, NULL, &err), PQ_OK);
    CHECK_EQ_INT(out32[5], INT32_MAX);
    CHECK_EQ_INT(out32[6], INT32_MIN + 2);
    tb_free(&b);

    /* header count smaller than the page's value count */
    for (int i = 0; i < 10; i++) v[i] = i;
    dbp_encode(&b, v, 10, (dbp_opts){128, 4, 0, 0, 0});
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, b.d, b.len, 11, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out32, 10, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out32, 1, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    tb_free(&b);

    /* bad headers: block size not a multiple of 128, miniblocks of 16 values,
     * zero miniblocks, a width above 64 */
    static const uint8_t bad_block[] = {0x64, 0x04, 0x05, 0x02};
    static const uint8_t bad_minis[] = {0x80, 0x01, 0x08, 0x05, 0x02};
    static const uint8_t zero_minis[] = {0x80, 0x01, 0x00, 0x05, 0x02};
    static const uint8_t wide[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 65, 0, 0, 0};
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, bad_block,
                                sizeof bad_block, 5, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, bad_minis,
                                sizeof bad_minis, 5, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, zero_minis,
                                sizeof zero_minis, 5, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, wide, sizeof wide, 5,
                                NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out32, 5, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    /* ... but a garbage width in an unused miniblock of the last block is fine */
    static const uint8_t unused_wide[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 200, 255, 77};
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32, 0, unused_wide,
                                sizeof unused_wide, 5, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out32, 5, NULL, &err), PQ_OK);
    CHECK_EQ_INT(out32[4], 5);
}

/* ------------------------------------------------------------------ byte-array values */

/* Random byte strings with shared prefixes (each value edits the previous
 * one's tail), some empty.  Fixed length tl > 0 makes them all tl bytes.
 * Views point into *pool, which must not change afterwards. */
static void gen_strings(pq_bytes *v, size_t n, int32_t tl, tbuf *pool)
{
    size_t *off = malloc((n + 1) * sizeof *off);
    uint32_t *len = malloc((n + 1) * sizeof *len);
    uint8_t prev[64] = {0};
    uint32_t prev_len = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t keep, total;
        if (tl > 0) {
            total = (uint32_t)tl;
            keep = (uint32_t)rnd_below(total + 1);
            if (i == 0) keep = 0;
        } else {
            keep = (uint32_t)rnd_below(prev_len + 1);
            total = rnd() % 6 == 0 ? 0 : keep + (uint32_t)rnd_below(64 - keep);
            if (total < keep) keep = total;
        }
        for (uint32_t k = keep; k < total; k++) prev[k] = (uint8_t)('a' + rnd_below(3));
        off[i] = pool->len;
        len[i] = total;
        tb_put(pool, prev, total);
        prev_len = total;
    }
    tb_reserve(pool, 1); /* a real pointer even when every value is empty */
    for (size_t i = 0; i < n; i++) v[i] = (pq_bytes){pool->d + off[i], len[i]};
    free(len);
    free(off);
}

static dbp_opts random_dbp_shape(void)
{
    dbp_opts o = dbp_shapes[rnd_below(sizeof dbp_shapes / sizeof dbp_shapes[0])];
    o.cut_padding = false; /* a section follows: the padding must be there */
    return o;
}

static void dlba_encode(tbuf *b, const pq_bytes *v, size_t n)
{
    int64_t *lens = calloc(n + 1, sizeof *lens);
    for (size_t i = 0; i < n; i++) lens[i] = v[i].len;
    dbp_encode(b, lens, n, random_dbp_shape());
    for (size_t i = 0; i < n; i++) tb_put(b, v[i].ptr, v[i].len);
    free(lens);
}

/* max_prefix: use the longest shared prefix (otherwise sometimes a shorter
 * one, which is just as valid). */
static void dba_encode(tbuf *b, const pq_bytes *v, size_t n, bool max_prefix)
{
    int64_t *pre = calloc(n + 1, sizeof *pre), *suf = calloc(n + 1, sizeof *suf);
    for (size_t i = 0; i < n; i++) {
        uint32_t p = 0;
        if (i > 0)
            while (p < v[i].len && p < v[i - 1].len && v[i].ptr[p] == v[i - 1].ptr[p]) p++;
        if (!max_prefix && p && rnd() % 4 == 0) p = (uint32_t)rnd_below(p);
        pre[i] = p;
        suf[i] = v[i].len - p;
    }
    dbp_encode(b, pre, n, random_dbp_shape());
    dbp_encode(b, suf, n, random_dbp_shape());
    for (size_t i = 0; i < n; i++) tb_put(b, v[i].ptr + pre[i], (size_t)suf[i]);
    free(suf);
    free(pre);
}

static void test_delta_byte_arrays(void)
{
    static const size_t counts[] = {1, 2, 9, 128, 129, 700};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        for (int kind = 0; kind < 3; kind++) {
            gen_page g;
            gen_page_make(&g, kind ? PQ_ENC_DELTA_BYTE_ARRAY : PQ_ENC_DELTA_LENGTH_BYTE_ARRAY,
                          kind == 2 ? PQ_FIXED_LEN_BYTE_ARRAY : PQ_BYTE_ARRAY,
                          kind == 2 ? 1 + (int32_t)rnd_below(12) : 0, counts[ci]);
            check_page(&g.c);
            if (counts[ci] < 200) CHECK_EQ_INT(check_truncations(&g.c), 0);
            gen_page_free(&g);
        }
    }

    /* all values empty, and a run of identical values */
    pq_bytes v[300];
    for (int i = 0; i < 300; i++) v[i] = (pq_bytes){(const uint8_t *)"", 0};
    tbuf b = {0};
    dba_encode(&b, v, 300, true);
    page_case c = {"DELTA_BYTE_ARRAY empty strings", PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0,
                   b.d, b.len, 300, NULL, v};
    check_page(&c);
    tb_free(&b);
    dlba_encode(&b, v, 300);
    c.what = "DELTA_LENGTH_BYTE_ARRAY empty strings";
    c.enc = PQ_ENC_DELTA_LENGTH_BYTE_ARRAY;
    c.page = b.d;
    c.len = b.len;
    check_page(&c);
    tb_free(&b);
    for (int i = 0; i < 300; i++) v[i] = (pq_bytes){(const uint8_t *)"same-value", 10};
    dba_encode(&b, v, 300, true);
    c = (page_case){"DELTA_BYTE_ARRAY repeats", PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d,
                    b.len, 300, NULL, v};
    check_page(&c);

    /* one value per read with `storage` reset in between: the previous value
     * must survive in the decoder */
    pq_error err = {0};
    pq_values_dec d;
    pq_arena storage;
    pq_arena_init(&storage, 0);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len, 300,
                                NULL, &err), PQ_OK);
    bool same = true;
    for (int i = 0; i < 300; i++) {
        pq_bytes one;
        if (i % 7 == 3) {
            same &= pq_values_skip(&d, 1, &err) == PQ_OK;
            continue;
        }
        same &= pq_values_read(&d, &one, 1, &storage, &err) == PQ_OK;
        same &= one.len == 10 && memcmp(one.ptr, "same-value", 10) == 0;
        memset((void *)one.ptr, 'x', one.len); /* storage is the caller's to clobber */
        pq_arena_reset(&storage);
    }
    CHECK(same);
    pq_values_free(&d); /* before re-initializing: the previous value is malloc'd */
    /* a read that rebuilds values needs a storage arena */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len, 300,
                                NULL, &err), PQ_OK);
    pq_bytes two[2];
    CHECK_EQ_INT(pq_values_read(&d, two, 2, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    pq_values_free(&d);
    pq_arena_free(&storage);
    tb_free(&b);
}

static void test_delta_byte_array_errors(void)
{
    pq_error err = {0};
    pq_values_dec d;
    pq_arena storage;
    pq_arena_init(&storage, 0);
    pq_bytes out[4];
    tbuf b = {0};

    /* a prefix longer than the previous value */
    int64_t pre[3] = {0, 2, 4}, suf[3] = {3, 1, 1};
    dbp_encode(&b, pre, 3, (dbp_opts){128, 4, 0, 0, 0});
    dbp_encode(&b, suf, 3, (dbp_opts){128, 4, 0, 0, 0});
    tb_put(&b, "abcde", 5);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len, 3, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 2, &storage, &err), PQ_OK);
    CHECK_EQ_MEM(out[1].ptr, out[1].len, "abd");
    CHECK_EQ_INT(pq_values_read(&d, out, 1, &storage, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    pq_values_free(&d);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len, 3, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_skip(&d, 3, &err), PQ_ERR);
    pq_values_free(&d);
    tb_free(&b);

    /* negative prefix and suffix lengths */
    int64_t neg[2] = {0, -1}, pos[2] = {1, 1};
    dbp_encode(&b, neg, 2, (dbp_opts){128, 4, 0, 0, 0});
    dbp_encode(&b, pos, 2, (dbp_opts){128, 4, 0, 0, 0});
    tb_put(&b, "ab", 2);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len, 2, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 2, &storage, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    pq_values_free(&d);
    tb_free(&b);
    dbp_encode(&b, pos, 2, (dbp_opts){128, 4, 0, 0, 0});
    tb_put(&b, "ab", 2);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len,
                                2, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 2, &storage, &err), PQ_OK);
    CHECK_EQ_MEM(out[1].ptr, out[1].len, "b");
    tb_free(&b);
    dbp_encode(&b, neg, 2, (dbp_opts){128, 4, 0, 0, 0});
    tb_put(&b, "ab", 2);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_BYTE_ARRAY, 0, b.d, b.len,
                                2, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 2, &storage, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    tb_free(&b);

    /* FIXED_LEN_BYTE_ARRAY values of the wrong length */
    int64_t fpre[2] = {0, 1}, fsuf[2] = {4, 2};
    dbp_encode(&b, fpre, 2, (dbp_opts){128, 4, 0, 0, 0});
    dbp_encode(&b, fsuf, 2, (dbp_opts){128, 4, 0, 0, 0});
    tb_put(&b, "abcdxy", 6);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_DELTA_BYTE_ARRAY, PQ_FIXED_LEN_BYTE_ARRAY, 4, b.d,
                                b.len, 2, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 1, &storage, &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, out, 1, &storage, &err), PQ_ERR);
    pq_values_free(&d);
    tb_free(&b);
    pq_arena_free(&storage);
}

/* ------------------------------------------------------------------ BYTE_STREAM_SPLIT */

static void bss_encode(tbuf *b, const uint8_t *values, size_t n, size_t w)
{
    for (size_t k = 0; k < w; k++)
        for (size_t i = 0; i < n; i++) tb_byte(b, values[i * w + k]);
}

/* ------------------------------------------------------------------ random pages */


static void gen_page_make(gen_page *g, pq_encoding enc, pq_phys type, int32_t tl, size_t n)
{
    memset(g, 0, sizeof *g);
    pq_arena_init(&g->arena, 0);
    const size_t esz = pq_value_size(type);
    g->expect = malloc(n * esz + 1);
    const pq_dict *dict = NULL;
    switch (enc) {
    case PQ_ENC_PLAIN:
        plain_page(&g->page, type, tl, n, g->expect);
        break;
    case PQ_ENC_RLE: {
        uint32_t *v = malloc((n + 1) * sizeof *v);
        gen_runs(v, n, 1);
        for (size_t i = 0; i < n; i++) ((uint8_t *)g->expect)[i] = (uint8_t)v[i];
        tbuf body = {0};
        rle_encode_random(&body, v, n, 1);
        tb_le32(&g->page, (uint32_t)body.len);
        tb_put(&g->page, body.d, body.len);
        tb_free(&body);
        free(v);
        break;
    }
    case PQ_ENC_RLE_DICTIONARY: {
        uint32_t dn = gen_dict_n ? gen_dict_n : 1 + (uint32_t)rnd_below(rnd() % 2 ? 10 : 5000);
        void *dvals = malloc(dn * esz);
        plain_page(&g->dpage, type, tl, dn, dvals);
        CHECK_EQ_INT(pq_dict_decode(&g->dict, type, tl, g->dpage.d, g->dpage.len, dn, &g->arena,
                                    NULL), PQ_OK);
        CHECK(g->dict.n == dn && values_equal(type, g->dict.values, dvals, dn));
        dict = &g->dict;
        uint32_t *idx = malloc((n + 1) * sizeof *idx);
        gen_runs(idx, n, 32);
        for (size_t i = 0; i < n; i++) idx[i] %= dn;
        for (size_t i = 0; i < n; i++)
            memcpy((uint8_t *)g->expect + i * esz, (uint8_t *)g->dict.values + idx[i] * esz, esz);
        int bw = pq_bit_width(dn - 1);
        if (rnd() % 4 == 0) bw += (int)rnd_below((uint64_t)(33 - bw)); /* wider than needed */
        dict_indices_page(&g->page, idx, n, bw);
        free(idx);
        free(dvals);
        break;
    }
    case PQ_ENC_DELTA_BINARY_PACKED: {
        int64_t *v = malloc((n + 1) * sizeof *v);
        bool int32 = type == PQ_INT32;
        gen_ints(v, n, (int)rnd_below(6), int32);
        dbp_opts o = dbp_shapes[rnd_below(sizeof dbp_shapes / sizeof dbp_shapes[0])];
        o.wrap32 = int32 && rnd() % 2;
        dbp_encode(&g->page, v, n, o);
        ints_expect(g->expect, v, n, int32);
        free(v);
        break;
    }
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY:
        gen_strings(g->expect, n, tl, &g->pool);
        if (enc == PQ_ENC_DELTA_BYTE_ARRAY)
            dba_encode(&g->page, g->expect, n, rnd() % 2);
        else
            dlba_encode(&g->page, g->expect, n);
        break;
    case PQ_ENC_BYTE_STREAM_SPLIT: {
        size_t w = pq_phys_width(type, tl);
        for (size_t i = 0; i < n * w; i++) tb_byte(&g->pool, (uint8_t)rnd());
        bss_encode(&g->page, g->pool.d, n, w);
        if (type == PQ_FIXED_LEN_BYTE_ARRAY) {
            for (size_t i = 0; i < n; i++)
                ((pq_bytes *)g->expect)[i] = (pq_bytes){g->pool.d + i * w, (uint32_t)w};
        } else if (n) {
            memcpy(g->expect, g->pool.d, n * w);
        }
        break;
    }
    default:
        break;
    }
    snprintf(g->what, sizeof g->what, "%s %s(%d) n %zu", pq_encoding_name(enc),
             pq_phys_name(type), (int)tl, n);
    g->c = (page_case){g->what, enc, type, tl, g->page.d, g->page.len, (uint32_t)n, dict,
                       g->expect};
}

static void gen_page_free(gen_page *g)
{
    pq_arena_free(&g->arena);
    tb_free(&g->dpage);
    tb_free(&g->pool);
    tb_free(&g->page);
    free(g->expect);
}

static void test_rle_booleans(void)
{
    for (int iter = 0; iter < 20; iter++) {
        gen_page g;
        gen_page_make(&g, PQ_ENC_RLE, PQ_BOOLEAN, 0, 1 + rnd_below(iter < 10 ? 40 : 3000));
        check_page(&g.c);
        if (iter < 4) check_truncations(&g.c);
        gen_page_free(&g);
    }
}

static void test_bss(void)
{
    static const size_t counts[] = {1, 2, 7, 8, 100, 1001};
    static const struct {
        pq_phys type;
        int32_t tl;
    } kinds[] = {{PQ_FLOAT, 0}, {PQ_DOUBLE, 0}, {PQ_INT32, 0}, {PQ_INT64, 0},
                 {PQ_FIXED_LEN_BYTE_ARRAY, 2}, {PQ_FIXED_LEN_BYTE_ARRAY, 3},
                 {PQ_FIXED_LEN_BYTE_ARRAY, 4}, {PQ_FIXED_LEN_BYTE_ARRAY, 5},
                 {PQ_FIXED_LEN_BYTE_ARRAY, 8}, {PQ_FIXED_LEN_BYTE_ARRAY, 16}};
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            gen_page g;
            gen_page_make(&g, PQ_ENC_BYTE_STREAM_SPLIT, kinds[ki].type, kinds[ki].tl, counts[ci]);
            check_page(&g.c);
            if (counts[ci] <= 100) CHECK_EQ_INT(check_truncations(&g.c), 0);
            gen_page_free(&g);
        }
    }
    /* float values survive bit-exactly */
    float f[3] = {1.5f, -0.0f, 3.25e-20f}, fo[3];
    tbuf b = {0};
    bss_encode(&b, (const uint8_t *)f, 3, 4);
    pq_error err = {0};
    pq_values_dec d;
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_BYTE_STREAM_SPLIT, PQ_FLOAT, 0, b.d, b.len, 3, NULL,
                                &err), PQ_OK);
    CHECK_EQ_INT(pq_values_read(&d, fo, 3, NULL, &err), PQ_OK);
    CHECK(memcmp(f, fo, sizeof f) == 0);
    /* length not a multiple of the width; fewer values than the page claims */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_BYTE_STREAM_SPLIT, PQ_FLOAT, 0, b.d, b.len - 1, 2, NULL,
                                &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_BYTE_STREAM_SPLIT, PQ_FLOAT, 0, b.d, b.len, 4, NULL,
                                &err), PQ_ERR);
    /* FIXED_LEN_BYTE_ARRAY needs storage */
    CHECK_EQ_INT(pq_values_init(&d, PQ_ENC_BYTE_STREAM_SPLIT, PQ_FIXED_LEN_BYTE_ARRAY, 4, b.d,
                                b.len, 3, NULL, &err), PQ_OK);
    pq_bytes views[3];
    CHECK_EQ_INT(pq_values_read(&d, views, 3, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    tb_free(&b);
}

/* ------------------------------------------------------------------ randomized differential */

/* Random values of a type, encoded by the test-side encoder for `enc`, read
 * back with random read / skip interleaving (check_page). */
static void test_random_differential(void)
{
    static const struct {
        pq_encoding enc;
        pq_phys type;
    } combos[] = {
        {PQ_ENC_PLAIN, PQ_BOOLEAN}, {PQ_ENC_PLAIN, PQ_INT32}, {PQ_ENC_PLAIN, PQ_INT64},
        {PQ_ENC_PLAIN, PQ_INT96}, {PQ_ENC_PLAIN, PQ_DOUBLE}, {PQ_ENC_PLAIN, PQ_BYTE_ARRAY},
        {PQ_ENC_PLAIN, PQ_FIXED_LEN_BYTE_ARRAY}, {PQ_ENC_RLE, PQ_BOOLEAN},
        {PQ_ENC_RLE_DICTIONARY, PQ_BYTE_ARRAY}, {PQ_ENC_RLE_DICTIONARY, PQ_INT64},
        {PQ_ENC_RLE_DICTIONARY, PQ_FLOAT}, {PQ_ENC_DELTA_BINARY_PACKED, PQ_INT32},
        {PQ_ENC_DELTA_BINARY_PACKED, PQ_INT64}, {PQ_ENC_DELTA_LENGTH_BYTE_ARRAY, PQ_BYTE_ARRAY},
        {PQ_ENC_DELTA_BYTE_ARRAY, PQ_BYTE_ARRAY},
        {PQ_ENC_DELTA_BYTE_ARRAY, PQ_FIXED_LEN_BYTE_ARRAY},
        {PQ_ENC_BYTE_STREAM_SPLIT, PQ_DOUBLE}, {PQ_ENC_BYTE_STREAM_SPLIT, PQ_INT32},
        {PQ_ENC_BYTE_STREAM_SPLIT, PQ_FIXED_LEN_BYTE_ARRAY},
    };
    const size_t n_combos = sizeof combos / sizeof combos[0];
    for (int iter = 0; iter < 400; iter++) {
        pq_phys type = combos[iter % n_combos].type;
        size_t n = rnd() % 8 == 0 ? rnd_below(10) : rnd_below(4000);
        int32_t tl = type == PQ_FIXED_LEN_BYTE_ARRAY ? 1 + (int32_t)rnd_below(20) : 0;
        gen_page g;
        gen_page_make(&g, combos[iter % n_combos].enc, type, tl, n);
        check_page(&g.c);
        gen_page_free(&g);
    }
}

int main(void)
{
    test_bit_width();
    test_rle_handwritten();
    test_rle_truncated_final_run();
    test_rle_widths();
    test_rle_run_across_reads();
    test_bitpacked_levels();
    test_levels_v1_rle();
    test_levels_one_run();
    test_plain();
    test_encoding_checks();
    test_empty_pages();
    test_dictionary();
    test_dictionary_errors();
    test_rle_booleans();
    test_dbp();
    test_dbp_edges();
    test_delta_byte_arrays();
    test_delta_byte_array_errors();
    test_bss();
    test_random_differential();
    return check_report();
}
