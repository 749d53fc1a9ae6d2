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

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
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

static void tb_le32(tbuf *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) tb_byte(b, (uint8_t)(v >> (8 * i)));
}

static void tb_uleb(tbuf *b, uint64_t v)
{
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        tb_byte(b, byte | (v ? 0x80 : 0));
    } while (v);
}


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

/* ------------------------------------------------------------------ bit width */

static void test_bit_width(void)
{
    CHECK_EQ_INT(pq_bit_width(0), 0);
    CHECK_EQ_INT(pq_bit_width(1), 1);
    CHECK_EQ_INT(pq_bit_width(2), 2);
    CHECK_EQ_INT(pq_bit_width(3), 2);
    CHECK_EQ_INT(pq_bit_width(255), 8);
    CHECK_EQ_INT(pq_bit_width(256), 9);
    CHECK_EQ_INT(pq_bit_width(UINT32_MAX), 32);
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

/* fastparquet pads pages with zero bytes: a zero header ends the data. */
static void test_rle_zero_padding(void)
{
    tbuf b = {0};
    rle_put_run(&b, 5, 10, 3);
    for (int i = 0; i < 6; i++) tb_byte(&b, 0);
    pq_error err = {0};
    pq_rle_dec d;
    uint32_t out[11];
    CHECK_EQ_INT(pq_rle_init(&d, b.d, b.len, 3, &err), PQ_OK);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 10, &err), PQ_OK);
    CHECK_EQ_INT(out[9], 5);
    CHECK_EQ_INT(pq_rle_read_u32(&d, out, 1, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    tb_free(&b);
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
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_BIT_PACKED, msb, sizeof msb, 7, out, 8, &used, &err),
                 PQ_OK);
    CHECK_EQ_INT(used, 3);
    CHECK_EQ_INT(out[7], 7);
    /* max level 5 with width 3: levels 6 and 7 are corrupt */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_BIT_PACKED, msb, sizeof msb, 5, out, 8, &used, &err),
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
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, b.len, 2, out, 300, &used, &err), PQ_OK);
    CHECK_EQ_INT(used, levels_len);
    CHECK(memcmp(out, expect, sizeof out) == 0);
    /* max level 0: no level section, all zeros, nothing consumed */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, b.len, 0, out, 300, &used, &err), PQ_OK);
    CHECK_EQ_INT(used, 0);
    CHECK_EQ_INT(out[299], 0);
    /* a length prefix that overruns the page */
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, levels_len - 1, 2, out, 300, &used, &err),
                 PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, b.d, 3, 2, out, 300, &used, &err), PQ_ERR);
    /* a level above the maximum: 3 at width 2 with max 2 */
    tbuf bad = {0};
    tb_le32(&bad, 2);
    rle_put_run(&bad, 3, 1, 2);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_RLE, bad.d, bad.len, 2, out, 1, &used, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_EQ_INT(pq_levels_v1_read(PQ_ENC_PLAIN, b.d, b.len, 2, out, 1, &used, &err), PQ_ERR);
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
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
        pq_phys type = all_types[t];
        static const size_t counts[] = {0, 1, 7, 8, 9, 64, 333};
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            size_t n = counts[ci];
            int32_t tl = type == PQ_FIXED_LEN_BYTE_ARRAY ? 1 + (int32_t)rnd_below(20) : 0;
            void *expect = malloc(n * pq_value_size(type) + 1);
            tbuf b = {0};
            plain_page(&b, type, tl, n, expect);
            char what[64];
            snprintf(what, sizeof what, "PLAIN %s n=%zu", pq_phys_name(type), n);
            page_case c = {what, PQ_ENC_PLAIN, type, tl, b.d, b.len, (uint32_t)n, NULL, expect};
            check_page(&c);
            size_t ok = check_truncations(&c);
            if (type != PQ_BOOLEAN) CHECK_EQ_INT(ok, 0);
            free(expect);
            tb_free(&b);
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
    pq_error err = {0};
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
        pq_phys type = all_types[t];
        static const uint32_t dict_sizes[] = {1, 2, 25, 300};
        for (size_t si = 0; si < sizeof dict_sizes / sizeof dict_sizes[0]; si++) {
            uint32_t dn = dict_sizes[si];
            int32_t tl = type == PQ_FIXED_LEN_BYTE_ARRAY ? 16 : 0;
            const size_t esz = pq_value_size(type);
            void *dict_expect = malloc(dn * esz);
            tbuf dpage = {0};
            plain_page(&dpage, type, tl, dn, dict_expect);
            pq_arena arena;
            pq_arena_init(&arena, 0);
            pq_dict dict;
            CHECK_EQ_INT(pq_dict_decode(&dict, type, tl, dpage.d, dpage.len, dn, &arena, &err),
                         PQ_OK);
            CHECK_EQ_INT(dict.n, dn);
            CHECK(values_equal(type, dict.values, dict_expect, dn));

            size_t n = 1 + rnd_below(2500);
            int bw = pq_bit_width(dn - 1);
            if (rnd() % 4 == 0) bw += (int)rnd_below((uint64_t)(33 - bw)); /* wider than needed */
            uint32_t *idx = malloc(n * sizeof *idx);
            size_t i = 0;
            while (i < n) { /* long runs, short runs and scattered indices */
                size_t r = rnd() % 5 == 0 ? 1 + rnd_below(200) : 1;
                uint32_t v = (uint32_t)rnd_below(dn);
                for (size_t k = 0; k < r && i < n; k++) idx[i++] = v;
            }
            uint8_t *expect = malloc(n * esz);
            for (i = 0; i < n; i++)
                memcpy(expect + i * esz, (uint8_t *)dict.values + idx[i] * esz, esz);
            tbuf page = {0};
            dict_indices_page(&page, idx, n, bw);
            char what[80];
            snprintf(what, sizeof what, "RLE_DICTIONARY %s dict %u n %zu bw %d",
                     pq_phys_name(type), dn, n, bw);
            page_case c = {what, PQ_ENC_RLE_DICTIONARY, type, tl, page.d, page.len,
                           (uint32_t)n, &dict, expect};
            check_page(&c);
            if (si == 1) check_truncations(&c);
            c.enc = PQ_ENC_PLAIN_DICTIONARY;
            check_page(&c);

            free(expect);
            free(idx);
            tb_free(&page);
            pq_arena_free(&arena);
            tb_free(&dpage);
            free(dict_expect);
        }
    }
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

/* ------------------------------------------------------------------ RLE booleans */

static void test_rle_booleans(void)
{
    for (int iter = 0; iter < 20; iter++) {
        size_t n = 1 + rnd_below(iter < 10 ? 40 : 3000);
        uint32_t *v = malloc(n * sizeof *v);
        uint8_t *expect = malloc(n);
        gen_runs(v, n, 1);
        for (size_t i = 0; i < n; i++) expect[i] = (uint8_t)v[i];
        tbuf body = {0}, page = {0};
        rle_encode_random(&body, v, n, 1);
        tb_le32(&page, (uint32_t)body.len);
        tb_put(&page, body.d, body.len);
        page_case c = {"RLE BOOLEAN", PQ_ENC_RLE, PQ_BOOLEAN, 0, page.d, page.len, (uint32_t)n,
                       NULL, expect};
        check_page(&c);
        if (iter < 4) check_truncations(&c);
        tb_free(&page);
        tb_free(&body);
        free(expect);
        free(v);
    }
}

int main(void)
{
    test_bit_width();
    test_rle_handwritten();
    test_rle_truncated_final_run();
    test_rle_zero_padding();
    test_rle_widths();
    test_rle_run_across_reads();
    test_bitpacked_levels();
    test_levels_v1_rle();
    test_plain();
    test_encoding_checks();
    test_empty_pages();
    test_dictionary();
    test_dictionary_errors();
    test_rle_booleans();
    return check_report();
}
