/* Page codecs: round trips for every codec and size class, exact-length
 * enforcement, damaged input (truncation, bit flips, garbage) that must fail
 * cleanly or decode to exactly dst_len, the historical LZ4 layouts, gzip member
 * and zstd frame concatenation, and concurrent use from several threads.
 *
 * Buffers are allocated at exactly the size handed to the codec, so under
 * ASan any read past src_len or write past dst_len is reported. */
#include <lz4.h>
#include <lz4frame.h>
#include <pthread.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

#include "check.h"
#include "codec.h"

static const pq_codec all_codecs[] = {
    PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP,    PQ_CODEC_BROTLI,
    PQ_CODEC_ZSTD,         PQ_CODEC_LZ4,    PQ_CODEC_LZ4_RAW,
};
#define CODEC_COUNT (sizeof all_codecs / sizeof all_codecs[0])

/* ---- data generators ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
    /* xorshift64*: deterministic, so a failure reproduces. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static uint8_t *make_random(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(rng_next() >> 56);
    return p;
}

/* Text-like data: words from a small vocabulary with a few varying digits. */
static uint8_t *make_compressible(size_t n)
{
    static const char *const words[] = {"alpha ", "beta ", "gamma ", "delta ", "2024-01-",
                                        "null,", "\"eu-west\",", "0000"};
    uint8_t *p = malloc(n ? n : 1);
    size_t i = 0;
    while (i < n) {
        const char *w = words[rng_next() % 8];
        for (size_t k = 0; w[k] && i < n; k++) p[i++] = (uint8_t)w[k];
        if (i < n && rng_next() % 4 == 0) p[i++] = (uint8_t)('0' + rng_next() % 10);
    }
    return p;
}

static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (n) memcpy(q, p, n);
    return q;
}

/* Compresses into a scratch buffer, then returns an exactly sized copy. */
static uint8_t *compress_exact(pq_codec codec, int level, const uint8_t *src, size_t n,
                               size_t *out_len)
{
    size_t bound = pq_compress_bound(codec, n);
    uint8_t *tmp = malloc(bound ? bound : 1);
    pq_error err = {0};
    *out_len = 0;
    int rc = pq_compress(codec, level, src, n, tmp, bound, out_len, &err);
    CHECK_EQ_INT(rc, PQ_OK);
    if (rc != PQ_OK) fprintf(stderr, "  compress %s: %s\n", pq_codec_name(codec), err.msg);
    CHECK(*out_len <= bound);
    uint8_t *exact = dup_bytes(tmp, *out_len);
    free(tmp);
    return exact;
}

/* Decompresses into a buffer of exactly dst_len bytes; when `expect` is given,
 * the output must equal it. */
static int decompress_exact(pq_codec codec, const uint8_t *src, size_t src_len, size_t dst_len,
                            const uint8_t *expect, pq_error *err)
{
    uint8_t *dst = dst_len ? malloc(dst_len) : NULL;
    pq_error_clear(err);
    int rc = pq_decompress(codec, src, src_len, dst, dst_len, err);
    if (rc == PQ_OK && expect && dst_len) CHECK(memcmp(dst, expect, dst_len) == 0);
    free(dst);
    return rc;
}

/* A wrong length must be a clean PQ_E_CORRUPT with a message. */
static void check_wrong_length(pq_codec codec, const uint8_t *comp, size_t clen, size_t dst_len)
{
    pq_error err = {0};
    int rc = decompress_exact(codec, comp, clen, dst_len, NULL, &err);
    CHECK_EQ_INT(rc, PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK(err.msg[0] != '\0');
    if (rc == PQ_OK)
        fprintf(stderr, "  %s accepted %zu compressed bytes as %zu\n", pq_codec_name(codec), clen,
                dst_len);
}

/* Decoding damaged input either fails as corrupt or yields exactly dst_len
 * bytes (some codecs carry no checksum); it never crashes or overruns. */
static void check_damaged(pq_codec codec, const uint8_t *comp, size_t clen, size_t dst_len)
{
    pq_error err = {0};
    int rc = decompress_exact(codec, comp, clen, dst_len, NULL, &err);
    if (rc != PQ_OK) {
        CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
        CHECK(err.msg[0] != '\0');
    }
}

static void check_truncations(pq_codec codec, const uint8_t *comp, size_t clen, size_t n,
                              size_t samples)
{
    /* Every prefix when there are few, else the two ends and random cuts. */
    int every = samples >= clen;
    size_t count = every ? clen : samples;
    for (size_t s = 0; s < count; s++) {
        size_t cut = every ? s : s == 0 ? 0 : s == 1 ? clen - 1 : (size_t)(rng_next() % clen);
        uint8_t *prefix = dup_bytes(comp, cut);
        check_damaged(codec, cut ? prefix : NULL, cut, n);
        free(prefix);
    }
}

static void check_bit_flips(pq_codec codec, const uint8_t *comp, size_t clen, size_t n,
                            int flips)
{
    if (clen == 0) return;
    uint8_t *copy = dup_bytes(comp, clen);
    for (int f = 0; f < flips; f++) {
        size_t pos = (size_t)(rng_next() % clen);
        uint8_t bit = (uint8_t)(1u << (rng_next() % 8));
        copy[pos] ^= bit;
        check_damaged(codec, copy, clen, n);
        copy[pos] ^= bit;
    }
    free(copy);
}

/* Full treatment of one input under one codec. */
static void check_codec_on(pq_codec codec, const uint8_t *data, size_t n, size_t truncations,
                           int flips)
{
    size_t clen;
    uint8_t *comp = compress_exact(codec, 0, data, n, &clen);
    pq_error err = {0};
    int rc = decompress_exact(codec, clen ? comp : NULL, clen, n, data, &err);
    CHECK_EQ_INT(rc, PQ_OK);
    if (rc != PQ_OK) fprintf(stderr, "  %s round trip of %zu: %s\n", pq_codec_name(codec), n, err.msg);

    check_wrong_length(codec, comp, clen, n + 1);
    check_wrong_length(codec, comp, clen, n + 1000);
    if (n > 0) check_wrong_length(codec, comp, clen, n - 1);
    if (n > 1) check_wrong_length(codec, comp, clen, n / 2);
    if (n > 0) check_wrong_length(codec, comp, clen, 0);

    check_truncations(codec, comp, clen, n, truncations);
    check_bit_flips(codec, comp, clen, n, flips);
    free(comp);
}

static void test_round_trips(void)
{
    static const size_t sizes[] = {0, 1, 2, 100, 4096, 65537, 1u << 20};
    for (size_t c = 0; c < CODEC_COUNT; c++) {
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            /* Damage tests cost a full decode each: many on small inputs,
             * a handful on the megabyte ones. */
            size_t truncations = n <= 4096 ? 300 : 8;
            int flips = n <= 4096 ? 300 : n <= 65537 ? 40 : 4;
            uint8_t *random = make_random(n);
            uint8_t *text = make_compressible(n);
            check_codec_on(all_codecs[c], random, n, truncations, flips);
            check_codec_on(all_codecs[c], text, n, truncations, flips);
            free(random);
            free(text);
        }
        /* A single repeated byte: the extreme of compressibility. */
        uint8_t *zeros = calloc(1u << 20, 1);
        check_codec_on(all_codecs[c], zeros, 1u << 20, 4, 4);
        free(zeros);
    }
}

/* Compressed size really shrinks for text, and stays near n for noise. */
static void test_compression_ratio(void)
{
    size_t n = 1u << 16;
    uint8_t *text = make_compressible(n);
    for (size_t c = 1; c < CODEC_COUNT; c++) {
        size_t clen;
        uint8_t *comp = compress_exact(all_codecs[c], 0, text, n, &clen);
        CHECK(clen < n / 2);
        free(comp);
    }
    free(text);
}

static void test_garbage_input(void)
{
    static const size_t src_sizes[] = {1, 3, 8, 9, 17, 100, 5000};
    static const size_t dst_sizes[] = {0, 1, 16, 1000, 70000};
    for (size_t c = 0; c < CODEC_COUNT; c++)
        for (size_t s = 0; s < sizeof src_sizes / sizeof src_sizes[0]; s++)
            for (size_t d = 0; d < sizeof dst_sizes / sizeof dst_sizes[0]; d++)
                for (int rep = 0; rep < 8; rep++) {
                    uint8_t *junk = make_random(src_sizes[s]);
                    check_damaged(all_codecs[c], junk, src_sizes[s], dst_sizes[d]);
                    free(junk);
                }
}

static void test_levels(void)
{
    size_t n = 20000, clen;
    uint8_t *text = make_compressible(n);
    static const struct {
        pq_codec codec;
        int level;
    } good[] = {
        {PQ_CODEC_GZIP, 1},  {PQ_CODEC_GZIP, 9},   {PQ_CODEC_ZSTD, 1},
        {PQ_CODEC_ZSTD, 19}, {PQ_CODEC_ZSTD, -5},  {PQ_CODEC_BROTLI, 1},
        {PQ_CODEC_BROTLI, 11}, {PQ_CODEC_GZIP, 1}, /* level change and back */
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        size_t bound = pq_compress_bound(good[i].codec, n);
        uint8_t *comp = malloc(bound);
        pq_error err = {0};
        CHECK_EQ_INT(pq_compress(good[i].codec, good[i].level, text, n, comp, bound, &clen, &err),
                     PQ_OK);
        CHECK_EQ_INT(decompress_exact(good[i].codec, comp, clen, n, text, &err), PQ_OK);
        free(comp);
    }
    static const struct {
        pq_codec codec;
        int level;
    } bad[] = {{PQ_CODEC_GZIP, 10}, {PQ_CODEC_GZIP, -3}, {PQ_CODEC_ZSTD, 99},
               {PQ_CODEC_BROTLI, 12}, {PQ_CODEC_BROTLI, -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t bound = pq_compress_bound(bad[i].codec, n);
        uint8_t *comp = malloc(bound);
        pq_error err = {0};
        CHECK_EQ_INT(pq_compress(bad[i].codec, bad[i].level, text, n, comp, bound, &clen, &err),
                     PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_USAGE);
        free(comp);
    }
    free(text);
}

/* Output buffers smaller than the result fail cleanly, without overrunning. */
static void test_small_output_buffer(void)
{
    size_t n = 5000;
    uint8_t *random = make_random(n);
    for (size_t c = 0; c < CODEC_COUNT; c++) {
        size_t clen;
        uint8_t *comp = compress_exact(all_codecs[c], 0, random, n, &clen);
        static const size_t shortfalls[] = {1, 8, 100};
        for (size_t s = 0; s < 3; s++) {
            size_t cap = clen - shortfalls[s];
            uint8_t *out = malloc(cap);
            size_t got = 12345;
            pq_error err = {0};
            CHECK_EQ_INT(pq_compress(all_codecs[c], 0, random, n, out, cap, &got, &err), PQ_ERR);
            CHECK_EQ_INT(err.cls, PQ_E_USAGE);
            free(out);
        }
        /* A tight but sufficient buffer works even below the bound. */
        uint8_t *out = malloc(clen);
        size_t got = 0;
        pq_error err = {0};
        CHECK_EQ_INT(pq_compress(all_codecs[c], 0, random, n, out, clen, &got, &err), PQ_OK);
        CHECK_EQ_INT(got, clen);
        free(out);
        free(comp);
    }
    free(random);
}

static void test_unsupported_and_messages(void)
{
    pq_error err = {0};
    uint8_t src[4] = {1, 2, 3, 4}, dst[4];
    size_t got;

    CHECK_EQ_INT(pq_decompress(PQ_CODEC_LZO, src, 4, dst, 4, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    CHECK_EQ_STR(err.msg, "LZO compression is not supported");
    CHECK_EQ_INT(pq_compress(PQ_CODEC_LZO, 0, src, 4, dst, 4, &got, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);

    CHECK_EQ_INT(pq_decompress((pq_codec)42, src, 4, dst, 4, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "42") != NULL);
    CHECK_EQ_INT(pq_compress((pq_codec)-1, 0, src, 4, dst, 4, &got, &err), PQ_ERR);
    CHECK(strstr(err.msg, "-1") != NULL);

    CHECK(!pq_codec_supported(PQ_CODEC_LZO));
    CHECK(!pq_codec_supported((pq_codec)8));
    for (size_t c = 0; c < CODEC_COUNT; c++) CHECK(pq_codec_supported(all_codecs[c]));

    /* The length check names both lengths. */
    uint8_t *text = make_compressible(100);
    size_t clen;
    uint8_t *comp = compress_exact(PQ_CODEC_SNAPPY, 0, text, 100, &clen);
    uint8_t big[120];
    CHECK_EQ_INT(pq_decompress(PQ_CODEC_SNAPPY, comp, clen, big, 120, &err), PQ_ERR);
    CHECK_EQ_STR(err.msg, "SNAPPY page decompressed to 100 bytes, header says 120");
    free(comp);

    comp = compress_exact(PQ_CODEC_ZSTD, 0, text, 100, &clen);
    CHECK_EQ_INT(pq_decompress(PQ_CODEC_ZSTD, comp, clen, big, 99, &err), PQ_ERR);
    CHECK(strstr(err.msg, "ZSTD") != NULL && strstr(err.msg, "99") != NULL);
    free(comp);

    comp = compress_exact(PQ_CODEC_UNCOMPRESSED, 0, text, 100, &clen);
    CHECK_EQ_INT(pq_decompress(PQ_CODEC_UNCOMPRESSED, comp, clen, big, 120, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    free(comp);
    free(text);

    /* No payload and no output: fine for every codec (empty v2 pages). */
    for (size_t c = 0; c < CODEC_COUNT; c++)
        CHECK_EQ_INT(pq_decompress(all_codecs[c], NULL, 0, NULL, 0, &err), PQ_OK);
    /* A NULL buffer with a length is a caller bug. */
    CHECK_EQ_INT(pq_decompress(PQ_CODEC_ZSTD, NULL, 5, dst, 4, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    /* A NULL err is allowed on the failure path. */
    CHECK_EQ_INT(pq_decompress(PQ_CODEC_SNAPPY, src, 4, dst, 4, NULL), PQ_ERR);
}

/* ---- gzip ---- */

static void test_gzip_variants(void)
{
    size_t n1 = 3000, n2 = 5000, c1, c2;
    uint8_t *a = make_compressible(n1), *b = make_random(n2);
    uint8_t *ga = compress_exact(PQ_CODEC_GZIP, 0, a, n1, &c1);
    uint8_t *gb = compress_exact(PQ_CODEC_GZIP, 9, b, n2, &c2);
    CHECK(c1 > 2 && ga[0] == 0x1f && ga[1] == 0x8b); /* gzip, not zlib, framing */

    /* Two members back to back decode as one page. */
    uint8_t *both = malloc(c1 + c2), *expect = malloc(n1 + n2);
    memcpy(both, ga, c1);
    memcpy(both + c1, gb, c2);
    memcpy(expect, a, n1);
    memcpy(expect + n1, b, n2);
    pq_error err = {0};
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_GZIP, both, c1 + c2, n1 + n2, expect, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_GZIP, both, c1 + c2, n1 + n2 - 1);
    check_wrong_length(PQ_CODEC_GZIP, both, c1 + c2, n1 + n2 + 1);
    check_wrong_length(PQ_CODEC_GZIP, both, c1 + c2, n1);
    check_truncations(PQ_CODEC_GZIP, both, c1 + c2, n1 + n2, 200);

    /* Three members, the middle one empty. */
    size_t ce;
    uint8_t *ge = compress_exact(PQ_CODEC_GZIP, 0, NULL, 0, &ce);
    uint8_t *three = malloc(c1 + ce + c2);
    memcpy(three, ga, c1);
    memcpy(three + c1, ge, ce);
    memcpy(three + c1 + ce, gb, c2);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_GZIP, three, c1 + ce + c2, n1 + n2, expect, &err),
                 PQ_OK);

    /* A member followed by junk is corrupt, not silently accepted. */
    uint8_t *junk = malloc(c1 + 7);
    memcpy(junk, ga, c1);
    memset(junk + c1, 0x55, 7);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_GZIP, junk, c1 + 7, n1, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);

    /* A zlib-wrapped stream (some writers) is detected by its header. */
    uLongf zlen = compressBound((uLong)n1);
    uint8_t *z = malloc(zlen);
    CHECK_EQ_INT(compress2(z, &zlen, a, (uLong)n1, 6), Z_OK);
    uint8_t *zexact = dup_bytes(z, zlen);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_GZIP, zexact, zlen, n1, a, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_GZIP, zexact, zlen, n1 + 1);

    free(a);
    free(b);
    free(ga);
    free(gb);
    free(both);
    free(expect);
    free(ge);
    free(three);
    free(junk);
    free(z);
    free(zexact);
}

/* ---- zstd ---- */

static void test_zstd_frames(void)
{
    size_t n1 = 40000, n2 = 777, c1, c2;
    uint8_t *a = make_compressible(n1), *b = make_random(n2);
    uint8_t *za = compress_exact(PQ_CODEC_ZSTD, 0, a, n1, &c1);

    /* Second frame without a content size, as streaming writers produce. */
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    size_t zb_cap = ZSTD_compressBound(n2);
    uint8_t *zb = malloc(zb_cap);
    c2 = ZSTD_compress2(cctx, zb, zb_cap, b, n2);
    CHECK(!ZSTD_isError(c2));
    ZSTD_freeCCtx(cctx);

    pq_error err = {0};
    uint8_t *zbx = dup_bytes(zb, c2);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_ZSTD, zbx, c2, n2, b, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_ZSTD, zbx, c2, n2 + 1);
    check_wrong_length(PQ_CODEC_ZSTD, zbx, c2, n2 - 1);

    /* frame A, a skippable frame, frame B: all one page. */
    static const uint8_t skippable[] = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'p', 'q', 'f'};
    size_t total = c1 + sizeof skippable + c2;
    uint8_t *cat = malloc(total), *expect = malloc(n1 + n2);
    memcpy(cat, za, c1);
    memcpy(cat + c1, skippable, sizeof skippable);
    memcpy(cat + c1 + sizeof skippable, zb, c2);
    memcpy(expect, a, n1);
    memcpy(expect + n1, b, n2);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_ZSTD, cat, total, n1 + n2, expect, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_ZSTD, cat, total, n1 + n2 + 1);
    check_wrong_length(PQ_CODEC_ZSTD, cat, total, n1 + n2 - 1);
    check_wrong_length(PQ_CODEC_ZSTD, cat, total, n1);
    check_truncations(PQ_CODEC_ZSTD, cat, total, n1 + n2, 100);
    check_bit_flips(PQ_CODEC_ZSTD, cat, total, n1 + n2, 100);

    free(a);
    free(b);
    free(za);
    free(zb);
    free(zbx);
    free(cat);
    free(expect);
}

/* ---- LZ4 layouts ---- */

static size_t lz4_block(const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    int got = LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)cap);
    CHECK(got > 0);
    return got > 0 ? (size_t)got : 0;
}

static void put_be32(uint8_t *p, size_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void test_lz4_hadoop(void)
{
    /* Several blocks of [ulen][clen][block], as parquet-mr writes large pages. */
    size_t parts[] = {10000, 1, 65536, 300};
    size_t n = 0;
    for (size_t i = 0; i < 4; i++) n += parts[i];
    uint8_t *data = make_compressible(n);
    uint8_t *framed = malloc(n * 2 + 1000);
    size_t in = 0, out = 0;
    for (size_t i = 0; i < 4; i++) {
        size_t c = lz4_block(data + in, parts[i], framed + out + 8, n * 2);
        put_be32(framed + out, parts[i]);
        put_be32(framed + out + 4, c);
        out += 8 + c;
        in += parts[i];
    }
    uint8_t *exact = dup_bytes(framed, out);
    pq_error err = {0};
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4, exact, out, n, data, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_LZ4, exact, out, n + 1);
    check_wrong_length(PQ_CODEC_LZ4, exact, out, n - 1);
    check_wrong_length(PQ_CODEC_LZ4, exact, out, n - 300);
    check_truncations(PQ_CODEC_LZ4, exact, out, n, 200);
    check_bit_flips(PQ_CODEC_LZ4, exact, out, n, 200);
    free(exact);

    /* One block split into chunks: [total ulen]([clen][chunk])+ — Hadoop's
     * BlockCompressorStream when a write exceeds its buffer. */
    out = 0;
    put_be32(framed, n);
    out = 4;
    in = 0;
    for (size_t i = 0; i < 4; i++) {
        size_t c = lz4_block(data + in, parts[i], framed + out + 4, n * 2);
        put_be32(framed + out, c);
        out += 4 + c;
        in += parts[i];
    }
    exact = dup_bytes(framed, out);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4, exact, out, n, data, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_LZ4, exact, out, n + 1);
    check_wrong_length(PQ_CODEC_LZ4, exact, out, n - 1);
    free(exact);

    /* Our own writer: one block, and its header says so. */
    size_t clen;
    uint8_t *ours = compress_exact(PQ_CODEC_LZ4, 0, data, n, &clen);
    CHECK(clen > 8);
    CHECK(ours[0] == (uint8_t)(n >> 24) && ours[3] == (uint8_t)n);
    CHECK(((size_t)ours[4] << 24 | (size_t)ours[5] << 16 | (size_t)ours[6] << 8 | ours[7]) ==
          clen - 8);
    free(ours);
    free(framed);
    free(data);
}

static void test_lz4_raw_block_under_lz4(void)
{
    static const size_t sizes[] = {1, 16, 5000, 200000};
    for (size_t s = 0; s < 4; s++) {
        size_t n = sizes[s];
        uint8_t *data = s % 2 ? make_compressible(n) : make_random(n);
        size_t cap = (size_t)LZ4_compressBound((int)n);
        uint8_t *tmp = malloc(cap);
        size_t c = lz4_block(data, n, tmp, cap);
        uint8_t *exact = dup_bytes(tmp, c);
        pq_error err = {0};
        CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4, exact, c, n, data, &err), PQ_OK);
        CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4_RAW, exact, c, n, data, &err), PQ_OK);
        check_wrong_length(PQ_CODEC_LZ4, exact, c, n + 1);
        check_wrong_length(PQ_CODEC_LZ4, exact, c, n - 1);
        check_bit_flips(PQ_CODEC_LZ4, exact, c, n, 50);
        free(data);
        free(tmp);
        free(exact);
    }
}

static uint8_t *lz4_frame(const uint8_t *src, size_t n, int with_size, int checksums,
                          size_t *out_len)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof prefs);
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.contentSize = with_size ? n : 0;
    prefs.frameInfo.contentChecksumFlag = checksums ? LZ4F_contentChecksumEnabled : 0;
    prefs.frameInfo.blockChecksumFlag = checksums ? LZ4F_blockChecksumEnabled : 0;
    size_t cap = LZ4F_compressFrameBound(n, &prefs);
    uint8_t *tmp = malloc(cap);
    size_t got = LZ4F_compressFrame(tmp, cap, src, n, &prefs);
    CHECK(!LZ4F_isError(got));
    uint8_t *exact = dup_bytes(tmp, LZ4F_isError(got) ? 0 : got);
    *out_len = LZ4F_isError(got) ? 0 : got;
    free(tmp);
    return exact;
}

static void test_lz4_frame_under_lz4(void)
{
    static const size_t sizes[] = {0, 1, 5000, 300000};
    pq_error err = {0};
    for (size_t s = 0; s < 4; s++) {
        size_t n = sizes[s];
        uint8_t *data = s % 2 ? make_random(n) : make_compressible(n);
        for (int variant = 0; variant < 4; variant++) {
            size_t c;
            uint8_t *frame = lz4_frame(data, n, variant & 1, variant & 2, &c);
            CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4, frame, c, n, data, &err), PQ_OK);
            if (err.msg[0]) fprintf(stderr, "  LZ4 frame of %zu (variant %d): %s\n", n, variant, err.msg);
            check_wrong_length(PQ_CODEC_LZ4, frame, c, n + 1);
            if (n) check_wrong_length(PQ_CODEC_LZ4, frame, c, n - 1);
            check_truncations(PQ_CODEC_LZ4, frame, c, n, n <= 5000 ? 100 : 10);
            check_bit_flips(PQ_CODEC_LZ4, frame, c, n, n <= 5000 ? 100 : 10);
            /* The frame is not an LZ4_RAW page. */
            CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4_RAW, frame, c, n, NULL, &err), PQ_ERR);
            free(frame);
        }
        free(data);
    }

    /* Two frames back to back. */
    size_t n1 = 4000, n2 = 9000, c1, c2;
    uint8_t *a = make_compressible(n1), *b = make_random(n2);
    uint8_t *fa = lz4_frame(a, n1, 1, 0, &c1), *fb = lz4_frame(b, n2, 0, 1, &c2);
    uint8_t *cat = malloc(c1 + c2), *expect = malloc(n1 + n2);
    memcpy(cat, fa, c1);
    memcpy(cat + c1, fb, c2);
    memcpy(expect, a, n1);
    memcpy(expect + n1, b, n2);
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_LZ4, cat, c1 + c2, n1 + n2, expect, &err), PQ_OK);
    check_wrong_length(PQ_CODEC_LZ4, cat, c1 + c2, n1 + n2 - 1);
    check_wrong_length(PQ_CODEC_LZ4, cat, c1 + c2, n1);
    free(a);
    free(b);
    free(fa);
    free(fb);
    free(cat);
    free(expect);
}

/* ---- brotli ---- */

static void test_brotli_trailing_bytes(void)
{
    size_t n = 3000, c;
    uint8_t *data = make_compressible(n);
    uint8_t *comp = compress_exact(PQ_CODEC_BROTLI, 0, data, n, &c);
    uint8_t *longer = malloc(c + 3);
    memcpy(longer, comp, c);
    memset(longer + c, 0, 3);
    pq_error err = {0};
    CHECK_EQ_INT(decompress_exact(PQ_CODEC_BROTLI, longer, c + 3, n, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    free(data);
    free(comp);
    free(longer);
}

/* ---- threads ---- */

typedef struct thread_job {
    const uint8_t *data;
    size_t n;
    uint8_t *comp[CODEC_COUNT];
    size_t clen[CODEC_COUNT];
    int failures;
} thread_job;

/* Prefix decoding: at least `want` bytes equal to the page's start, nothing
 * written past dst_len (ASan), the input may be cut after what those bytes
 * need; codecs that cannot stop early say so. */
static void test_prefix(void)
{
    const size_t n = 600 * 1024;
    uint8_t *data = make_compressible(n);
    const pq_codec codecs[] = {PQ_CODEC_ZSTD, PQ_CODEC_GZIP, PQ_CODEC_LZ4_RAW};
    const size_t wants[] = {1, 100, 16384, 131072, 131073, 300000, n - 1, n};
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        size_t clen;
        uint8_t *comp = compress_exact(codecs[c], 0, data, n, &clen);
        for (size_t w = 0; w < sizeof wants / sizeof wants[0]; w++) {
            uint8_t *dst = malloc(n);
            size_t got = 0;
            pq_error err = {0};
            int rc = pq_decompress_prefix(codecs[c], NULL, comp, clen, dst, wants[w], n, &got, &err);
            CHECK_EQ_INT(rc, PQ_OK);
            CHECK(got >= wants[w] && got <= n);
            if (rc == PQ_OK && got <= n) CHECK(memcmp(dst, data, got) == 0);
            free(dst);
        }
        /* The first bytes from the first part of the input alone. */
        if (codecs[c] != PQ_CODEC_LZ4_RAW) { /* one LZ4 block: its end comes last */
            uint8_t *dst = malloc(n);
            size_t got = 0;
            pq_error err = {0};
            size_t cut = clen / 2;
            uint8_t *half = dup_bytes(comp, cut);
            int rc = pq_decompress_prefix(codecs[c], NULL, half, cut, dst, 1000, n, &got, &err);
            CHECK_EQ_INT(rc, PQ_OK);
            CHECK(got >= 1000);
            if (rc == PQ_OK) CHECK(memcmp(dst, data, 1000) == 0);
            /* ...but not the whole page from half of it */
            rc = pq_decompress_prefix(codecs[c], NULL, half, cut, dst, n, n, &got, &err);
            CHECK(rc != PQ_OK || got < n);
            free(half);
            free(dst);
        }
        free(comp);
    }
    /* Resumed through a cursor: the input given a quarter more at a time
     * and the wanted length growing, the bytes out equal the page's. */
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        size_t clen;
        uint8_t *comp = compress_exact(codecs[c], 0, data, n, &clen);
        uint8_t *dst = malloc(n);
        pq_prefix_cursor cur = {0, 0, 0, 0};
        size_t have = clen / 4, want = 70000, got = 0;
        int calls = 0;
        for (; calls < 64; calls++) {
            uint8_t *part = dup_bytes(comp, have); /* a new buffer each time, as a reader reads on */
            pq_error err = {0};
            int rc = pq_decompress_prefix(codecs[c], &cur, part, have, dst, want, n, &got, &err);
            free(part);
            if (codecs[c] == PQ_CODEC_LZ4_RAW && rc != PQ_OK && have < clen) {
                have = clen; /* a cut LZ4 block may not decode at all */
                continue;
            }
            CHECK_EQ_INT(rc, PQ_OK);
            if (rc != PQ_OK) break;
            if (got < want && have < clen) {
                /* the decoder took all it was given and says how much more
                 * its block needs (ZSTD), so the next call goes on from here */
                if (codecs[c] != PQ_CODEC_LZ4_RAW) CHECK(cur.in_pos == have && cur.out_pos == got);
                if (codecs[c] == PQ_CODEC_ZSTD) CHECK(cur.more > 0 && cur.more <= clen - have + 3);
                have = have + clen / 4 < clen ? have + clen / 4 : clen;
                continue;
            }
            CHECK(got == want);
            if (want == n) break;
            want = want * 2 < n ? want * 2 : n;
        }
        CHECK(calls < 64 && got == n);
        if (got == n) CHECK(memcmp(dst, data, n) == 0);
        free(dst);
        free(comp);
    }
    /* Codecs without a streaming decoder: PQ_E_UNSUPPORTED. */
    const pq_codec whole[] = {PQ_CODEC_SNAPPY, PQ_CODEC_BROTLI, PQ_CODEC_LZ4, PQ_CODEC_UNCOMPRESSED};
    for (size_t c = 0; c < sizeof whole / sizeof whole[0]; c++) {
        uint8_t src[16] = {0}, dst[16];
        size_t got = 1;
        pq_error err = {0};
        CHECK_EQ_INT(pq_decompress_prefix(whole[c], NULL, src, sizeof src, dst, 4, sizeof dst, &got, &err), PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_UNSUPPORTED);
        CHECK_EQ_INT(got, 0);
    }
    free(data);
}

static void *thread_main(void *arg)
{
    thread_job *job = arg;
    uint8_t *dst = malloc(job->n);
    size_t bound = pq_compress_bound(PQ_CODEC_SNAPPY, job->n) * 2 + 1024;
    uint8_t *scratch = malloc(bound);
    for (int iter = 0; iter < 12; iter++) {
        for (size_t c = 0; c < CODEC_COUNT; c++) {
            pq_error err = {0};
            memset(dst, 0xa5, job->n);
            if (pq_decompress(all_codecs[c], job->comp[c], job->clen[c], dst, job->n, &err) != PQ_OK ||
                memcmp(dst, job->data, job->n) != 0)
                job->failures++;
            /* Exercise the cached encoders too, with changing gzip levels. */
            size_t got;
            int level = all_codecs[c] == PQ_CODEC_GZIP ? 1 + iter % 9 : 0;
            size_t cap = pq_compress_bound(all_codecs[c], job->n);
            if (cap > bound) cap = bound;
            if (pq_compress(all_codecs[c], level, job->data, job->n, scratch, cap, &got, &err) !=
                    PQ_OK ||
                pq_decompress(all_codecs[c], scratch, got, dst, job->n, &err) != PQ_OK ||
                memcmp(dst, job->data, job->n) != 0)
                job->failures++;
        }
    }
    free(dst);
    free(scratch);
    return NULL;
}

static void test_threads(void)
{
    enum { THREADS = 4 };
    size_t n = 200000;
    uint8_t *data = make_compressible(n);
    thread_job jobs[THREADS];
    memset(jobs, 0, sizeof jobs);
    for (size_t c = 0; c < CODEC_COUNT; c++) {
        size_t clen;
        uint8_t *comp = compress_exact(all_codecs[c], 0, data, n, &clen);
        for (int t = 0; t < THREADS; t++) {
            jobs[t].comp[c] = comp;
            jobs[t].clen[c] = clen;
        }
    }
    pthread_t tids[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t].data = data;
        jobs[t].n = n;
        CHECK_EQ_INT(pthread_create(&tids[t], NULL, thread_main, &jobs[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(tids[t], NULL);
        CHECK_EQ_INT(jobs[t].failures, 0);
    }
    for (size_t c = 0; c < CODEC_COUNT; c++) free(jobs[0].comp[c]);
    free(data);
}

/* One spelling of a writer's compression for the ini and pqtool: pqtool
 * took any level from -100 to 22 for any codec and the ini rejected brotli. */
static void test_codec_specs(void)
{
    pq_codec c;
    int level;
    pq_error err;
    CHECK(pq_codec_parse(" Gzip : 9 ", &c, &level, &err) == PQ_OK && c == PQ_CODEC_GZIP && level == 9);
    CHECK(pq_codec_parse("brotli:5", &c, &level, &err) == PQ_OK && c == PQ_CODEC_BROTLI && level == 5);
    CHECK(pq_codec_parse("lz4", &c, &level, &err) == PQ_OK && c == PQ_CODEC_LZ4_RAW && level == 0);
    CHECK(pq_codec_parse("zstd", &c, &level, &err) == PQ_OK && c == PQ_CODEC_ZSTD && level == 0);
    CHECK(pq_codec_parse("zstd:-5", &c, &level, &err) == PQ_ERR && strstr(err.msg, "out of range (1..22)"));
    CHECK(pq_codec_parse("snappy:3", &c, &level, &err) == PQ_ERR && strstr(err.msg, "takes no level"));
    CHECK(pq_codec_parse("gzip:9x", &c, &level, &err) == PQ_ERR && strstr(err.msg, "is not a level"));
    CHECK(pq_codec_parse("lzo", &c, &level, &err) == PQ_ERR && strstr(err.msg, "is not a compression"));
    CHECK(!strcmp(pq_codec_spec_name(PQ_CODEC_UNCOMPRESSED), "none"));
    CHECK(pq_codec_level_ok(PQ_CODEC_BROTLI, 11) && !pq_codec_level_ok(PQ_CODEC_SNAPPY, 1));
}

int main(void)
{
    test_codec_specs();
    test_round_trips();
    test_compression_ratio();
    test_garbage_input();
    test_levels();
    test_small_output_buffer();
    test_unsupported_and_messages();
    test_gzip_variants();
    test_zstd_frames();
    test_lz4_hadoop();
    test_lz4_raw_block_under_lz4();
    test_lz4_frame_under_lz4();
    test_brotli_trailing_bytes();
    test_prefix();
    test_threads();
    return check_report();
}
