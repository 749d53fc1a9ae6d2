/* Thrift compact protocol primitives and the Parquet metadata decoders /
 * encoders: edge cases of the wire format, round trips, hand-made inputs with
 * unknown fields and union members, truncation and corruption of valid input,
 * and the real footers of the parquet-testing corpus. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "meta.h"
#include "thrift.h"

/* ------------------------------------------------------------ helpers --- */

/* Copies bytes into an exact-size heap block so ASan flags any over-read. */
static uint8_t *exact_copy(const void *p, size_t n)
{
    uint8_t *q = malloc(n ? n : 1);
    if (n) memcpy(q, p, n);
    return q;
}

static bool contains(const char *haystack, const char *needle)
{
    return strstr(haystack, needle) != NULL;
}

#define CHECK_CONTAINS(msg, needle)                                                       \
    do {                                                                                  \
        check_count++;                                                                    \
        if (!contains((msg), (needle))) {                                                 \
            check_failures++;                                                             \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__,  \
                    (msg), (needle));                                                     \
        }                                                                                 \
    } while (0)

static bool bytes_eq(pq_bytes a, pq_bytes b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static pq_bytes bstr(const char *s)
{
    pq_bytes b = {(const uint8_t *)s, (uint32_t)strlen(s)};
    return b;
}

/* Decodes one value with a reader over an exact copy of buf. */
typedef struct rd {
    uint8_t *copy;
    pq_tc_reader r;
    pq_error err;
} rd;

static void rd_open(rd *x, const void *buf, size_t len)
{
    x->copy = exact_copy(buf, len);
    pq_error_clear(&x->err);
    pq_tc_reader_init(&x->r, x->copy, len, &x->err);
}

static void rd_close(rd *x)
{
    free(x->copy);
}

/* ------------------------------------------------------- primitives --- */

static void test_varint(void)
{
    static const struct {
        uint64_t v;
        size_t len;
    } cases[] = {
        {0, 1}, {1, 1}, {127, 1}, {128, 2}, {16383, 2}, {16384, 3}, {0xffffffffu, 5},
        {(uint64_t)1 << 63, 10}, {UINT64_MAX, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pq_buf b;
        pq_buf_init(&b);
        pq_tc_writer w;
        pq_tc_writer_init(&w, &b);
        pq_tc_write_varint(&w, cases[i].v);
        CHECK_EQ_INT(b.len, cases[i].len);
        rd x;
        rd_open(&x, b.data, b.len);
        uint64_t v = 0;
        CHECK(pq_tc_read_varint(&x.r, &v) == PQ_OK);
        CHECK(v == cases[i].v);
        CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
        rd_close(&x);
        /* Every strict prefix is truncated. */
        for (size_t cut = 0; cut < b.len; cut++) {
            rd_open(&x, b.data, cut);
            CHECK(pq_tc_read_varint(&x.r, &v) == PQ_ERR);
            CHECK_EQ_INT(x.err.cls, PQ_E_CORRUPT);
            rd_close(&x);
        }
        pq_buf_free(&b);
    }

    /* The largest 10-byte varint, then ones too long or too big. */
    static const uint8_t max10[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t big10[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    static const uint8_t long11[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                     0x80, 0x80, 0x80, 0x80, 0x00};
    static const uint8_t padded[] = {0x80, 0x80, 0x00}; /* non-canonical zero */
    rd x;
    uint64_t v;
    rd_open(&x, max10, sizeof max10);
    CHECK(pq_tc_read_varint(&x.r, &v) == PQ_OK && v == UINT64_MAX);
    rd_close(&x);
    rd_open(&x, big10, sizeof big10);
    CHECK(pq_tc_read_varint(&x.r, &v) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "10 bytes");
    rd_close(&x);
    rd_open(&x, long11, sizeof long11);
    CHECK(pq_tc_read_varint(&x.r, &v) == PQ_ERR);
    CHECK_EQ_INT(x.err.cls, PQ_E_CORRUPT);
    rd_close(&x);
    rd_open(&x, padded, sizeof padded);
    CHECK(pq_tc_read_varint(&x.r, &v) == PQ_OK && v == 0);
    rd_close(&x);

    /* i32 / i16 reject varints wider than their type. */
    static const uint8_t wide33[] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* 2^32 */
    int32_t i32;
    int16_t i16;
    rd_open(&x, wide33, sizeof wide33);
    CHECK(pq_tc_read_i32(&x.r, &i32) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "i32");
    rd_close(&x);
    static const uint8_t wide17[] = {0x80, 0x80, 0x04}; /* 2^16 */
    rd_open(&x, wide17, sizeof wide17);
    CHECK(pq_tc_read_i16(&x.r, &i16) == PQ_ERR);
    rd_close(&x);
}

static void test_zigzag(void)
{
    static const int64_t v64[] = {0, 1, -1, 63, -64, 64, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
    static const uint64_t zz64[] = {0, 2, 1, 126, 127, 128, 0xfffffffeu, 0xffffffffu,
                                    UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof v64 / sizeof v64[0]; i++) {
        pq_buf b;
        pq_buf_init(&b);
        pq_tc_writer w;
        pq_tc_writer_init(&w, &b);
        pq_tc_write_i64(&w, v64[i]);
        rd x;
        rd_open(&x, b.data, b.len);
        uint64_t raw = 0;
        CHECK(pq_tc_read_varint(&x.r, &raw) == PQ_OK);
        CHECK(raw == zz64[i]);
        rd_close(&x);
        rd_open(&x, b.data, b.len);
        int64_t back = 0;
        CHECK(pq_tc_read_i64(&x.r, &back) == PQ_OK);
        CHECK(back == v64[i]);
        rd_close(&x);
        pq_buf_free(&b);
    }
    static const int32_t v32[] = {0, -1, 1, INT32_MAX, INT32_MIN, -1000000};
    for (size_t i = 0; i < sizeof v32 / sizeof v32[0]; i++) {
        pq_buf b;
        pq_buf_init(&b);
        pq_tc_writer w;
        pq_tc_writer_init(&w, &b);
        pq_tc_write_i32(&w, v32[i]);
        pq_tc_write_i16(&w, (int16_t)(v32[i] & 0x7fff));
        pq_tc_write_i8(&w, (int8_t)-128);
        CHECK(b.len <= 5 + 3 + 1);
        rd x;
        rd_open(&x, b.data, b.len);
        int32_t back = 0;
        int16_t s16 = 0;
        int8_t s8 = 0;
        CHECK(pq_tc_read_i32(&x.r, &back) == PQ_OK && back == v32[i]);
        CHECK(pq_tc_read_i16(&x.r, &s16) == PQ_OK && s16 == (int16_t)(v32[i] & 0x7fff));
        CHECK(pq_tc_read_i8(&x.r, &s8) == PQ_OK && s8 == -128);
        CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
        rd_close(&x);
        pq_buf_free(&b);
    }
    /* INT32_MIN is 0xffffffff zigzagged: five bytes ff ff ff ff 0f. */
    pq_buf b;
    pq_buf_init(&b);
    pq_tc_writer w;
    pq_tc_writer_init(&w, &b);
    pq_tc_write_i32(&w, INT32_MIN);
    CHECK(b.len == 5 && memcmp(b.data, "\xff\xff\xff\xff\x0f", 5) == 0);
    pq_buf_free(&b);
}

static void test_double_and_binary(void)
{
    static const double vals[] = {0.0, -0.0, 3.141592653589793, -1e300, INFINITY};
    pq_buf b;
    pq_buf_init(&b);
    pq_tc_writer w;
    pq_tc_writer_init(&w, &b);
    for (size_t i = 0; i < 5; i++) pq_tc_write_double(&w, vals[i]);
    pq_tc_write_binary(&w, "hello", 5);
    pq_tc_write_binary(&w, "", 0);
    CHECK_EQ_INT(b.len, 5 * 8 + 6 + 1);
    /* Doubles are little-endian: 1.0 is 00 .. f0 3f. */
    rd x;
    rd_open(&x, b.data, b.len);
    for (size_t i = 0; i < 5; i++) {
        double d = 1;
        CHECK(pq_tc_read_double(&x.r, &d) == PQ_OK);
        CHECK(memcmp(&d, &vals[i], sizeof d) == 0);
    }
    pq_bytes s;
    CHECK(pq_tc_read_binary(&x.r, &s) == PQ_OK);
    CHECK_EQ_MEM(s.ptr, s.len, "hello");
    CHECK(s.ptr == x.copy + 41); /* a view, not a copy */
    CHECK(pq_tc_read_binary(&x.r, &s) == PQ_OK && s.len == 0);
    rd_close(&x);
    pq_buf_free(&b);

    static const uint8_t one[] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    rd_open(&x, one, 8);
    double d;
    CHECK(pq_tc_read_double(&x.r, &d) == PQ_OK && d == 1.0);
    rd_close(&x);
    rd_open(&x, one, 7);
    CHECK(pq_tc_read_double(&x.r, &d) == PQ_ERR);
    rd_close(&x);

    /* A length past the end fails before anything is read. */
    static const uint8_t longbin[] = {0x0a, 'a', 'b', 'c'};
    rd_open(&x, longbin, sizeof longbin);
    CHECK(pq_tc_read_binary(&x.r, &s) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "binary of 10 bytes");
    CHECK_CONTAINS(x.err.msg, "3 bytes left");
    rd_close(&x);

    /* Strings are copied NUL-terminated into the arena. */
    pq_arena a;
    pq_arena_init(&a, 0);
    static const uint8_t str[] = {0x03, 'x', 'y', 'z'};
    rd_open(&x, str, sizeof str);
    const char *cs = NULL;
    CHECK(pq_tc_read_string(&x.r, &a, &cs) == PQ_OK);
    CHECK_EQ_STR(cs, "xyz");
    CHECK(cs != (const char *)x.copy + 1);
    rd_close(&x);
    pq_arena_free(&a);
}

static void test_list_headers(void)
{
    /* 14 elements: short form; 15 and 300: long form (0xf0 | type, varint). */
    static const uint32_t sizes[] = {0, 1, 14, 15, 300};
    for (size_t i = 0; i < 5; i++) {
        pq_buf b;
        pq_buf_init(&b);
        pq_tc_writer w;
        pq_tc_writer_init(&w, &b);
        pq_tc_write_list_begin(&w, PQ_TC_I32, sizes[i]);
        for (uint32_t k = 0; k < sizes[i]; k++) pq_tc_write_i32(&w, (int32_t)k - 5);
        uint8_t h = (uint8_t)b.data[0];
        if (sizes[i] < 15)
            CHECK_EQ_INT(h, (sizes[i] << 4) | PQ_TC_I32);
        else
            CHECK_EQ_INT(h, 0xf0 | PQ_TC_I32);
        rd x;
        rd_open(&x, b.data, b.len);
        uint8_t et;
        uint32_t n;
        CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_OK);
        CHECK_EQ_INT(et, PQ_TC_I32);
        CHECK_EQ_INT(n, sizes[i]);
        for (uint32_t k = 0; k < n; k++) {
            int32_t v = 0;
            CHECK(pq_tc_read_i32(&x.r, &v) == PQ_OK);
            if (v != (int32_t)k - 5) CHECK_EQ_INT(v, (int32_t)k - 5);
        }
        CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
        rd_close(&x);
        pq_buf_free(&b);
    }

    /* Counts bigger than the bytes left are refused before any allocation. */
    static const uint8_t huge[] = {0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0};
    rd x;
    uint8_t et;
    uint32_t n;
    rd_open(&x, huge, sizeof huge);
    CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "list of 4294967295 elements");
    CHECK_CONTAINS(x.err.msg, "exceeds the 3 bytes left");
    rd_close(&x);
    /* Doubles need 8 bytes each. */
    static const uint8_t dbl[] = {0x27, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    rd_open(&x, dbl, sizeof dbl);
    CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_ERR);
    rd_close(&x);
    /* List size beyond 32 bits, and an invalid element type. */
    static const uint8_t over32[] = {0xf5, 0x80, 0x80, 0x80, 0x80, 0x10};
    rd_open(&x, over32, sizeof over32);
    CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_ERR);
    rd_close(&x);
    static const uint8_t badtype[] = {0x1e, 0x00};
    rd_open(&x, badtype, sizeof badtype);
    CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "element type 14");
    rd_close(&x);
    /* Bool lists: tagged 1 or 2, elements 1 = true, 0/2 = false. */
    static const uint8_t bools[] = {0x42, 0x01, 0x02, 0x00, 0x01};
    rd_open(&x, bools, sizeof bools);
    CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_OK && et == PQ_TC_BOOL && n == 4);
    bool bv[4];
    for (int i = 0; i < 4; i++) CHECK(pq_tc_read_bool_elem(&x.r, &bv[i]) == PQ_OK);
    CHECK(bv[0] && !bv[1] && !bv[2] && bv[3]);
    rd_close(&x);
    /* Maps: huge sizes rejected too (each entry needs 2 bytes). */
    static const uint8_t bigmap[] = {0x05, 0x88, 'a', 'b', 'c', 'd'};
    rd_open(&x, bigmap, sizeof bigmap);
    uint8_t kt, vt;
    CHECK(pq_tc_map_begin(&x.r, &kt, &vt, &n) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "map of 5 elements");
    rd_close(&x);
}

static void test_field_headers_and_bools(void)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_tc_writer w;
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_bool(&w, 1, true);   /* 0x11 */
    pq_tc_write_field_bool(&w, 2, false);  /* 0x12 */
    pq_tc_write_field_i32(&w, 17, 5);      /* delta 15: short form 0xf5 */
    pq_tc_write_field_i32(&w, 100, -3);    /* delta 83: long form */
    pq_tc_write_field_i64(&w, 3, 7);       /* going back: long form */
    pq_tc_write_field_bool(&w, -4, true);  /* negative ids are legal thrift */
    pq_tc_write_struct_end(&w);
    CHECK(pq_tc_writer_finish(&w, NULL) == PQ_OK);
    CHECK_EQ_INT((uint8_t)b.data[0], 0x11);
    CHECK_EQ_INT((uint8_t)b.data[1], 0x12);
    CHECK_EQ_INT((uint8_t)b.data[2], 0xf5);
    CHECK_EQ_INT((uint8_t)b.data[4], 0x05);

    rd x;
    rd_open(&x, b.data, b.len);
    pq_tc_field f;
    int16_t last = 0;
    CHECK(pq_tc_struct_begin(&x.r) == PQ_OK);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK);
    CHECK(f.id == 1 && f.type == PQ_TC_BOOL && f.bool_value);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK);
    CHECK(f.id == 2 && f.type == PQ_TC_BOOL && !f.bool_value);
    int32_t v32;
    int64_t v64;
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.id == 17 && f.type == PQ_TC_I32);
    CHECK(pq_tc_read_i32(&x.r, &v32) == PQ_OK && v32 == 5);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.id == 100 && f.type == PQ_TC_I32);
    CHECK(pq_tc_read_i32(&x.r, &v32) == PQ_OK && v32 == -3);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.id == 3 && f.type == PQ_TC_I64);
    CHECK(pq_tc_read_i64(&x.r, &v64) == PQ_OK && v64 == 7);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.id == -4 && f.bool_value);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.type == PQ_TC_STOP);
    pq_tc_struct_end(&x.r);
    CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
    rd_close(&x);
    pq_buf_free(&b);

    /* Unknown field type nibble, missing STOP, id overflow. */
    static const uint8_t badtype[] = {0x1f};
    rd_open(&x, badtype, 1);
    last = 0;
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "unknown type 15");
    rd_close(&x);
    rd_open(&x, badtype, 0);
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "STOP");
    rd_close(&x);
    static const uint8_t overflow[] = {0xf5};
    rd_open(&x, overflow, 1);
    last = 32760;
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_ERR);
    rd_close(&x);

    /* Writer misuse is reported. */
    pq_buf_init(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_error err;
    CHECK(pq_tc_writer_finish(&w, &err) == PQ_ERR && err.cls == PQ_E_USAGE);
    pq_buf_free(&b);
}

/* A struct holding one of everything, nested, for the skip test. */
static void write_everything(pq_tc_writer *w)
{
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_bool(w, 1, true);
    pq_tc_write_field_bool(w, 2, false);
    pq_tc_write_field_i8(w, 3, -7);
    pq_tc_write_field_i16(w, 4, -300);
    pq_tc_write_field_i32(w, 5, 1 << 30);
    pq_tc_write_field_i64(w, 6, INT64_MIN);
    pq_tc_write_field_double(w, 7, 2.5);
    pq_tc_write_field_binary(w, 8, "bytes", 5);
    pq_tc_write_field(w, 9, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_I32, 20);
    for (int i = 0; i < 20; i++) pq_tc_write_i32(w, i * 1000);
    pq_tc_write_field(w, 10, PQ_TC_SET);
    pq_tc_write_list_begin(w, PQ_TC_BINARY, 2);
    pq_tc_write_string(w, "a");
    pq_tc_write_string(w, "bc");
    pq_tc_write_field(w, 11, PQ_TC_MAP);
    pq_tc_write_map_begin(w, PQ_TC_BINARY, PQ_TC_LIST, 2);
    for (int i = 0; i < 2; i++) {
        pq_tc_write_string(w, i ? "k2" : "k1");
        pq_tc_write_list_begin(w, PQ_TC_DOUBLE, 2);
        pq_tc_write_double(w, 1.0);
        pq_tc_write_double(w, 2.0);
    }
    pq_tc_write_field(w, 12, PQ_TC_MAP);
    pq_tc_write_map_begin(w, PQ_TC_I32, PQ_TC_I32, 0);
    pq_tc_write_field(w, 13, PQ_TC_UUID);
    for (int i = 0; i < 16; i++) pq_tc_write_byte(w, (uint8_t)i);
    pq_tc_write_field(w, 14, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_BOOL, 3);
    pq_tc_write_bool_elem(w, true);
    pq_tc_write_bool_elem(w, false);
    pq_tc_write_bool_elem(w, true);
    pq_tc_write_field(w, 15, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, 2);
    for (int i = 0; i < 2; i++) {
        pq_tc_write_struct_begin(w);
        pq_tc_write_field_string(w, 1, "inner");
        pq_tc_write_field(w, 2, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(w);
        pq_tc_write_field_bool(w, 300, true);
        pq_tc_write_field(w, 301, PQ_TC_LIST);
        pq_tc_write_list_begin(w, PQ_TC_LIST, 1);
        pq_tc_write_list_begin(w, PQ_TC_I8, 2);
        pq_tc_write_i8(w, 1);
        pq_tc_write_i8(w, 2);
        pq_tc_write_struct_end(w);
        pq_tc_write_struct_end(w);
    }
    pq_tc_write_field(w, 16, PQ_TC_MAP);
    pq_tc_write_map_begin(w, PQ_TC_BOOL, PQ_TC_STRUCT, 1);
    pq_tc_write_bool_elem(w, false);
    pq_tc_write_struct_begin(w);
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_end(w);
}

static void test_skip(void)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_tc_writer w;
    pq_tc_writer_init(&w, &b);
    write_everything(&w);
    pq_tc_write_byte(&w, 0x99); /* sentinel after the struct */
    CHECK(pq_tc_writer_finish(&w, NULL) == PQ_OK);

    rd x;
    rd_open(&x, b.data, b.len);
    CHECK(pq_tc_skip(&x.r, PQ_TC_STRUCT) == PQ_OK);
    CHECK_EQ_INT(pq_tc_remaining(&x.r), 1);
    CHECK_EQ_INT(x.r.depth, 0);
    rd_close(&x);

    /* Field by field: skipping each type lands on the next header. */
    rd_open(&x, b.data, b.len - 1);
    int16_t last = 0;
    pq_tc_field f;
    int fields = 0;
    CHECK(pq_tc_struct_begin(&x.r) == PQ_OK);
    while (pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.type != PQ_TC_STOP) {
        fields++;
        CHECK_EQ_INT(f.id, fields);
        CHECK(pq_tc_skip(&x.r, f.type) == PQ_OK);
    }
    CHECK_EQ_INT(fields, 16);
    CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
    rd_close(&x);

    /* Every truncation fails cleanly. */
    for (size_t cut = 0; cut + 1 < b.len; cut++) {
        rd_open(&x, b.data, cut);
        CHECK(pq_tc_skip(&x.r, PQ_TC_STRUCT) == PQ_ERR);
        CHECK_EQ_INT(x.err.cls, PQ_E_CORRUPT);
        rd_close(&x);
    }
    /* Element skips: bools take a byte in containers, none as a field. */
    static const uint8_t one[] = {0x01};
    rd_open(&x, one, 1);
    CHECK(pq_tc_skip(&x.r, PQ_TC_TRUE) == PQ_OK && pq_tc_remaining(&x.r) == 1);
    CHECK(pq_tc_skip_elem(&x.r, PQ_TC_BOOL) == PQ_OK && pq_tc_remaining(&x.r) == 0);
    CHECK(pq_tc_skip(&x.r, 14) == PQ_ERR);
    rd_close(&x);
    pq_buf_free(&b);
}

static void test_depth_limit(void)
{
    /* Structs nested n deep via field 1. */
    for (int n = 60; n <= 70; n += 10) {
        pq_buf b;
        pq_buf_init(&b);
        for (int i = 0; i < n - 1; i++) pq_buf_append(&b, "\x1c", 1); /* field 1: struct */
        for (int i = 0; i < n; i++) pq_buf_append(&b, "", 1);         /* STOPs */
        rd x;
        rd_open(&x, b.data, b.len);
        int rc = pq_tc_skip(&x.r, PQ_TC_STRUCT);
        if (n <= PQ_TC_MAX_DEPTH) {
            CHECK(rc == PQ_OK);
            CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
        } else {
            CHECK(rc == PQ_ERR);
            CHECK_CONTAINS(x.err.msg, "nesting deeper than 64");
        }
        rd_close(&x);
        pq_buf_free(&b);
    }
    /* Lists of lists count too: 10000 levels must not blow the stack. */
    size_t n = 10000;
    uint8_t *deep = malloc(n + 1);
    memset(deep, 0x19, n); /* list of 1 list */
    deep[n] = 0x00;
    rd x;
    rd_open(&x, deep, n + 1);
    CHECK(pq_tc_skip(&x.r, PQ_TC_LIST) == PQ_ERR);
    CHECK_CONTAINS(x.err.msg, "nesting");
    rd_close(&x);
    free(deep);
}

/* ------------------------------------------------------- decoders --- */

/* A file metadata with every field the structs hold set. */
typedef struct sample {
    pq_schema_element schema[6];
    pq_row_group rg[2];
    pq_column_chunk cols[2][2];
    pq_kv kv[2];
    pq_kv col_kv[1];
    int32_t enc[3];
    const char *path_a[1];
    const char *path_b[2];
    pq_page_enc_stats pes[2];
    pq_sorting_column sort[2];
    int32_t orders[3];
    pq_file_meta fm;
} sample;

static void build_sample(sample *s)
{
    memset(s, 0, sizeof *s);
    pq_schema_element *e = s->schema;
    for (int i = 0; i < 6; i++) e[i].converted_type = PQ_CT_NONE;
    e[0].name = "schema";
    e[0].has_num_children = true, e[0].num_children = 3;
    e[1].name = "a";
    e[1].has_type = true, e[1].type = PQ_INT64;
    e[1].has_repetition = true, e[1].repetition = PQ_REQUIRED;
    e[1].has_logical = true, e[1].logical.kind = PQ_LT_TIMESTAMP;
    e[1].logical.utc = true, e[1].logical.unit = PQ_UNIT_NANOS;
    e[1].has_field_id = true, e[1].field_id = -17;
    e[2].name = "b";
    e[2].has_repetition = true, e[2].repetition = PQ_OPTIONAL;
    e[2].has_num_children = true, e[2].num_children = 1;
    e[3].name = "dec";
    e[3].has_type = true, e[3].type = PQ_FIXED_LEN_BYTE_ARRAY, e[3].type_length = 16;
    e[3].has_repetition = true, e[3].repetition = PQ_REPEATED;
    e[3].converted_type = PQ_CT_DECIMAL;
    e[3].has_scale = true, e[3].scale = 4, e[3].has_precision = true, e[3].precision = 38;
    e[3].has_logical = true, e[3].logical.kind = PQ_LT_DECIMAL;
    e[3].logical.scale = 4, e[3].logical.precision = 38;
    e[4].name = "u8";
    e[4].has_type = true, e[4].type = PQ_INT32;
    e[4].has_repetition = true, e[4].repetition = PQ_OPTIONAL;
    e[4].converted_type = PQ_CT_UINT_8;
    e[4].has_logical = true, e[4].logical.kind = PQ_LT_INTEGER;
    e[4].logical.bit_width = 8, e[4].logical.is_signed = false;
    e[5].name = "s";
    e[5].has_type = true, e[5].type = PQ_BYTE_ARRAY;
    e[5].has_logical = true, e[5].logical.kind = PQ_LT_STRING;
    e[5].converted_type = PQ_CT_UTF8;

    s->enc[0] = PQ_ENC_PLAIN, s->enc[1] = PQ_ENC_RLE, s->enc[2] = PQ_ENC_RLE_DICTIONARY;
    s->path_a[0] = "a";
    s->path_b[0] = "b", s->path_b[1] = "dec";
    s->pes[0] = (pq_page_enc_stats){PQ_PAGE_DICTIONARY, PQ_ENC_PLAIN, 1};
    s->pes[1] = (pq_page_enc_stats){PQ_PAGE_DATA, PQ_ENC_RLE_DICTIONARY, 12};
    s->col_kv[0] = (pq_kv){"colkey", NULL};
    s->kv[0] = (pq_kv){"k", "v"};
    s->kv[1] = (pq_kv){"empty", ""};
    s->sort[0] = (pq_sorting_column){1, true, false};
    s->sort[1] = (pq_sorting_column){0, false, true};
    for (int g = 0; g < 2; g++) {
        for (int c = 0; c < 2; c++) {
            pq_column_chunk *cc = &s->cols[g][c];
            pq_column_meta *m = &cc->meta;
            cc->file_offset = 4 + g * 1000 + c * 100;
            cc->has_meta = true;
            m->type = c ? PQ_FIXED_LEN_BYTE_ARRAY : PQ_INT64;
            m->encodings = s->enc, m->n_encodings = 3;
            m->path = c ? s->path_b : s->path_a, m->n_path = c ? 2 : 1;
            m->codec = c ? PQ_CODEC_ZSTD : PQ_CODEC_SNAPPY;
            m->num_values = 1000 + g;
            m->total_uncompressed_size = 5000;
            m->total_compressed_size = 4000;
            m->data_page_offset = cc->file_offset + 50;
            m->n_encoding_stats = -1;
            if (c == 1) {
                m->kv = s->col_kv, m->n_kv = 1;
                m->has_dictionary_page_offset = true, m->dictionary_page_offset = cc->file_offset;
                m->has_index_page_offset = true, m->index_page_offset = 0;
                m->encoding_stats = s->pes, m->n_encoding_stats = 2;
                m->has_bloom_filter_offset = true, m->bloom_filter_offset = 90000;
                m->has_bloom_filter_length = true, m->bloom_filter_length = 2048;
                cc->has_offset_index = true;
                cc->offset_index_offset = 80000, cc->offset_index_length = 33;
                cc->has_column_index = true;
                cc->column_index_offset = 70000, cc->column_index_length = 44;
                cc->file_path = g ? "other.parquet" : NULL;
            }
            m->has_stats = true;
            pq_stats *st = &m->stats;
            st->has_min_value = st->has_max_value = true;
            st->min_value = bstr("aaa"), st->max_value = bstr("zzz");
            st->has_null_count = true, st->null_count = g;
            if (c == 0) {
                st->has_min = st->has_max = true;
                st->min = bstr(""), st->max = bstr("\xff\x00\x01");
                st->max.len = 3;
                st->has_distinct_count = true, st->distinct_count = 77;
                st->has_min_exact = true, st->min_exact = true;
                st->has_max_exact = true, st->max_exact = false;
            }
        }
        pq_row_group *rg = &s->rg[g];
        rg->columns = s->cols[g], rg->n_columns = 2;
        rg->total_byte_size = 123456 + g;
        rg->num_rows = 1000 + g;
        rg->n_sorting = g ? 2 : -1;
        rg->sorting = g ? s->sort : NULL;
        rg->has_file_offset = g == 1, rg->file_offset = 1004;
        rg->has_total_compressed_size = true, rg->total_compressed_size = 8000;
        rg->has_ordinal = true, rg->ordinal = (int16_t)g;
    }
    for (int i = 0; i < 3; i++) s->orders[i] = PQ_ORDER_TYPE_DEFINED;
    pq_file_meta *fm = &s->fm;
    fm->version = 2;
    fm->schema = s->schema, fm->n_schema = 6;
    fm->num_rows = 2001;
    fm->row_groups = s->rg, fm->n_row_groups = 2;
    fm->kv = s->kv, fm->n_kv = 2;
    fm->created_by = "pqfs test";
    fm->column_orders = s->orders, fm->n_column_orders = 3;
}

static const char *str_or(const char *s)
{
    return s ? s : "(null)";
}

static void check_stats_eq(const pq_stats *a, const pq_stats *b)
{
    CHECK_EQ_INT(a->has_min_value, b->has_min_value);
    CHECK_EQ_INT(a->has_max_value, b->has_max_value);
    if (a->has_min_value) CHECK(bytes_eq(a->min_value, b->min_value));
    if (a->has_max_value) CHECK(bytes_eq(a->max_value, b->max_value));
    CHECK_EQ_INT(a->has_min, b->has_min);
    CHECK_EQ_INT(a->has_max, b->has_max);
    if (a->has_min) CHECK(bytes_eq(a->min, b->min));
    if (a->has_max) CHECK(bytes_eq(a->max, b->max));
    CHECK_EQ_INT(a->has_null_count, b->has_null_count);
    CHECK_EQ_INT(a->null_count, b->null_count);
    CHECK_EQ_INT(a->has_distinct_count, b->has_distinct_count);
    CHECK_EQ_INT(a->distinct_count, b->distinct_count);
    CHECK_EQ_INT(a->has_min_exact, b->has_min_exact);
    CHECK_EQ_INT(a->has_max_exact, b->has_max_exact);
    CHECK_EQ_INT(a->min_exact, b->min_exact);
    CHECK_EQ_INT(a->max_exact, b->max_exact);
}

static void check_kv_eq(const pq_kv *a, int32_t na, const pq_kv *b, int32_t nb)
{
    CHECK_EQ_INT(na, nb);
    for (int32_t i = 0; i < na && i < nb; i++) {
        CHECK_EQ_STR(a[i].key, b[i].key);
        CHECK_EQ_STR(str_or(a[i].value), str_or(b[i].value));
    }
}

static void check_column_meta_eq(const pq_column_meta *a, const pq_column_meta *b)
{
    CHECK_EQ_INT(a->type, b->type);
    CHECK_EQ_INT(a->n_encodings, b->n_encodings);
    for (int32_t i = 0; i < a->n_encodings && i < b->n_encodings; i++)
        CHECK_EQ_INT(a->encodings[i], b->encodings[i]);
    CHECK_EQ_INT(a->n_path, b->n_path);
    for (int32_t i = 0; i < a->n_path && i < b->n_path; i++) CHECK_EQ_STR(a->path[i], b->path[i]);
    CHECK_EQ_INT(a->codec, b->codec);
    CHECK_EQ_INT(a->num_values, b->num_values);
    CHECK_EQ_INT(a->total_uncompressed_size, b->total_uncompressed_size);
    CHECK_EQ_INT(a->total_compressed_size, b->total_compressed_size);
    check_kv_eq(a->kv, a->n_kv, b->kv, b->n_kv);
    CHECK_EQ_INT(a->data_page_offset, b->data_page_offset);
    CHECK_EQ_INT(a->has_index_page_offset, b->has_index_page_offset);
    CHECK_EQ_INT(a->index_page_offset, b->index_page_offset);
    CHECK_EQ_INT(a->has_dictionary_page_offset, b->has_dictionary_page_offset);
    CHECK_EQ_INT(a->dictionary_page_offset, b->dictionary_page_offset);
    CHECK_EQ_INT(a->has_stats, b->has_stats);
    if (a->has_stats && b->has_stats) check_stats_eq(&a->stats, &b->stats);
    CHECK_EQ_INT(a->n_encoding_stats, b->n_encoding_stats);
    for (int32_t i = 0; i < a->n_encoding_stats && i < b->n_encoding_stats; i++) {
        CHECK_EQ_INT(a->encoding_stats[i].page_type, b->encoding_stats[i].page_type);
        CHECK_EQ_INT(a->encoding_stats[i].encoding, b->encoding_stats[i].encoding);
        CHECK_EQ_INT(a->encoding_stats[i].count, b->encoding_stats[i].count);
    }
    CHECK_EQ_INT(a->has_bloom_filter_offset, b->has_bloom_filter_offset);
    CHECK_EQ_INT(a->bloom_filter_offset, b->bloom_filter_offset);
    CHECK_EQ_INT(a->has_bloom_filter_length, b->has_bloom_filter_length);
    CHECK_EQ_INT(a->bloom_filter_length, b->bloom_filter_length);
}

static void check_file_meta_eq(const pq_file_meta *a, const pq_file_meta *b)
{
    CHECK_EQ_INT(a->version, b->version);
    CHECK_EQ_INT(a->num_rows, b->num_rows);
    CHECK_EQ_STR(str_or(a->created_by), str_or(b->created_by));
    CHECK_EQ_INT(a->encryption_algorithm, b->encryption_algorithm);
    check_kv_eq(a->kv, a->n_kv, b->kv, b->n_kv);
    CHECK_EQ_INT(a->n_column_orders, b->n_column_orders);
    for (int32_t i = 0; i < a->n_column_orders && i < b->n_column_orders; i++)
        CHECK_EQ_INT(a->column_orders[i], b->column_orders[i]);
    CHECK_EQ_INT(a->n_schema, b->n_schema);
    for (int32_t i = 0; i < a->n_schema && i < b->n_schema; i++) {
        const pq_schema_element *x = &a->schema[i], *y = &b->schema[i];
        CHECK_EQ_STR(x->name, y->name);
        CHECK_EQ_INT(x->has_type, y->has_type);
        CHECK_EQ_INT(x->type, y->type);
        CHECK_EQ_INT(x->type_length, y->type_length);
        CHECK_EQ_INT(x->has_repetition, y->has_repetition);
        CHECK_EQ_INT(x->repetition, y->repetition);
        CHECK_EQ_INT(x->has_num_children, y->has_num_children);
        CHECK_EQ_INT(x->num_children, y->num_children);
        CHECK_EQ_INT(x->converted_type, y->converted_type);
        CHECK_EQ_INT(x->has_scale, y->has_scale);
        CHECK_EQ_INT(x->scale, y->scale);
        CHECK_EQ_INT(x->has_precision, y->has_precision);
        CHECK_EQ_INT(x->precision, y->precision);
        CHECK_EQ_INT(x->has_field_id, y->has_field_id);
        CHECK_EQ_INT(x->field_id, y->field_id);
        CHECK_EQ_INT(x->has_logical, y->has_logical);
        CHECK(memcmp(&x->logical, &y->logical, sizeof x->logical) == 0 || !x->has_logical);
    }
    CHECK_EQ_INT(a->n_row_groups, b->n_row_groups);
    for (int32_t g = 0; g < a->n_row_groups && g < b->n_row_groups; g++) {
        const pq_row_group *x = &a->row_groups[g], *y = &b->row_groups[g];
        CHECK_EQ_INT(x->total_byte_size, y->total_byte_size);
        CHECK_EQ_INT(x->num_rows, y->num_rows);
        CHECK_EQ_INT(x->n_sorting, y->n_sorting);
        for (int32_t i = 0; i < x->n_sorting && i < y->n_sorting; i++) {
            CHECK_EQ_INT(x->sorting[i].column_idx, y->sorting[i].column_idx);
            CHECK_EQ_INT(x->sorting[i].descending, y->sorting[i].descending);
            CHECK_EQ_INT(x->sorting[i].nulls_first, y->sorting[i].nulls_first);
        }
        CHECK_EQ_INT(x->has_file_offset, y->has_file_offset);
        if (x->has_file_offset) CHECK_EQ_INT(x->file_offset, y->file_offset);
        CHECK_EQ_INT(x->has_total_compressed_size, y->has_total_compressed_size);
        CHECK_EQ_INT(x->total_compressed_size, y->total_compressed_size);
        CHECK_EQ_INT(x->has_ordinal, y->has_ordinal);
        CHECK_EQ_INT(x->ordinal, y->ordinal);
        CHECK_EQ_INT(x->n_columns, y->n_columns);
        for (int32_t c = 0; c < x->n_columns && c < y->n_columns; c++) {
            const pq_column_chunk *p = &x->columns[c], *q = &y->columns[c];
            CHECK_EQ_STR(str_or(p->file_path), str_or(q->file_path));
            CHECK_EQ_INT(p->file_offset, q->file_offset);
            CHECK_EQ_INT(p->has_offset_index, q->has_offset_index);
            CHECK_EQ_INT(p->offset_index_offset, q->offset_index_offset);
            CHECK_EQ_INT(p->offset_index_length, q->offset_index_length);
            CHECK_EQ_INT(p->has_column_index, q->has_column_index);
            CHECK_EQ_INT(p->column_index_offset, q->column_index_offset);
            CHECK_EQ_INT(p->column_index_length, q->column_index_length);
            CHECK_EQ_INT(p->encrypted, q->encrypted);
            CHECK_EQ_INT(p->has_meta, q->has_meta);
            if (p->has_meta && q->has_meta) check_column_meta_eq(&p->meta, &q->meta);
        }
    }
}

static void test_file_meta_round_trip(void)
{
    sample s;
    build_sample(&s);
    pq_buf b;
    pq_buf_init(&b);
    pq_error err;
    CHECK(pq_encode_file_meta(&s.fm, &b, &err) == PQ_OK);
    uint8_t *copy = exact_copy(b.data, b.len);
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta out;
    CHECK(pq_decode_file_meta(copy, b.len, &a, &out, &err) == PQ_OK);
    check_file_meta_eq(&s.fm, &out);
    /* Binary statistics are views into the input. */
    const pq_stats *st = &out.row_groups[0].columns[0].meta.stats;
    CHECK(st->min_value.ptr >= copy && st->min_value.ptr < copy + b.len);

    /* Encoding the decoded copy gives the same bytes. */
    pq_buf b2;
    pq_buf_init(&b2);
    CHECK(pq_encode_file_meta(&out, &b2, &err) == PQ_OK);
    CHECK(b2.len == b.len && memcmp(b.data, b2.data, b.len) == 0);
    pq_buf_free(&b2);

    /* Truncation at every byte offset fails cleanly, as CORRUPT. */
    int truncation_ok = 1;
    for (size_t cut = 0; cut < b.len; cut++) {
        uint8_t *t = exact_copy(b.data, cut);
        pq_arena_reset(&a);
        pq_error_clear(&err);
        if (pq_decode_file_meta(t, cut, &a, &out, &err) != PQ_ERR || err.cls != PQ_E_CORRUPT)
            truncation_ok = 0;
        free(t);
    }
    CHECK(truncation_ok);

    /* Corrupting any byte never crashes (ASan/UBSan watch); errors are CORRUPT. */
    static const uint8_t repl[] = {0x00, 0xff, 0x7f, 0x80, 0x19, 0x1c, 0xf9};
    int classes_ok = 1;
    for (size_t i = 0; i < b.len; i++) {
        for (size_t k = 0; k < sizeof repl; k++) {
            uint8_t *t = exact_copy(b.data, b.len);
            t[i] = repl[k];
            pq_arena_reset(&a);
            pq_error_clear(&err);
            if (pq_decode_file_meta(t, b.len, &a, &out, &err) != PQ_OK && err.cls != PQ_E_CORRUPT)
                classes_ok = 0;
            free(t);
        }
    }
    CHECK(classes_ok);

    /* Encoding refuses what it cannot represent, and leaves the buffer alone. */
    size_t before = b.len;
    s.orders[1] = PQ_ORDER_UNKNOWN;
    CHECK(pq_encode_file_meta(&s.fm, &b, &err) == PQ_ERR && err.cls == PQ_E_USAGE);
    CHECK_EQ_INT(b.len, before);
    s.orders[1] = PQ_ORDER_TYPE_DEFINED;
    s.schema[5].logical.kind = PQ_LT_UNRECOGNIZED;
    CHECK(pq_encode_file_meta(&s.fm, &b, &err) == PQ_ERR && err.cls == PQ_E_USAGE);
    CHECK_EQ_INT(b.len, before);

    free(copy);
    pq_arena_free(&a);
    pq_buf_free(&b);
}

static void test_page_header_round_trip(void)
{
    pq_page_header h[3];
    memset(h, 0, sizeof h);
    h[0].type = PQ_PAGE_DATA;
    h[0].uncompressed_page_size = 1 << 20, h[0].compressed_page_size = 12345;
    h[0].has_crc = true, h[0].crc = (int32_t)0xdeadbeefu;
    h[0].has_data = true;
    h[0].data.num_values = 1000, h[0].data.encoding = PQ_ENC_RLE_DICTIONARY;
    h[0].data.def_encoding = PQ_ENC_RLE, h[0].data.rep_encoding = PQ_ENC_BIT_PACKED;
    h[0].data.has_stats = true;
    h[0].data.stats.has_min_value = h[0].data.stats.has_max_value = true;
    h[0].data.stats.min_value = bstr("\x01\x00\x00\x00");
    h[0].data.stats.min_value.len = 4;
    h[0].data.stats.max_value = bstr("\x09");
    h[0].data.stats.has_null_count = true, h[0].data.stats.null_count = 3;
    h[1].type = PQ_PAGE_DATA_V2;
    h[1].uncompressed_page_size = 100, h[1].compressed_page_size = 80;
    h[1].has_data_v2 = true;
    h[1].data_v2 = (pq_data_page_header_v2){50, 5, 40, PQ_ENC_DELTA_BINARY_PACKED, 7, 3, false,
                                            false, {0}};
    h[2].type = PQ_PAGE_DICTIONARY;
    h[2].uncompressed_page_size = 64, h[2].compressed_page_size = 64;
    h[2].has_dict = true;
    h[2].dict = (pq_dict_page_header){8, PQ_ENC_PLAIN, true};

    for (int i = 0; i < 3; i++) {
        pq_buf b;
        pq_buf_init(&b);
        pq_error err;
        CHECK(pq_encode_page_header(&h[i], &b, &err) == PQ_OK);
        size_t hlen = b.len;
        pq_buf_append(&b, "PAGEDATA", 8); /* the page body follows the header */
        uint8_t *copy = exact_copy(b.data, b.len);
        pq_page_header out;
        size_t consumed = 0;
        CHECK(pq_decode_page_header(copy, b.len, NULL, &out, &consumed, &err) == PQ_OK);
        CHECK_EQ_INT(consumed, hlen);
        CHECK_EQ_INT(out.type, h[i].type);
        CHECK_EQ_INT(out.uncompressed_page_size, h[i].uncompressed_page_size);
        CHECK_EQ_INT(out.compressed_page_size, h[i].compressed_page_size);
        CHECK_EQ_INT(out.has_crc, h[i].has_crc);
        CHECK_EQ_INT(out.crc, h[i].crc);
        CHECK_EQ_INT(out.has_data, h[i].has_data);
        CHECK_EQ_INT(out.has_data_v2, h[i].has_data_v2);
        CHECK_EQ_INT(out.has_dict, h[i].has_dict);
        CHECK_EQ_INT(out.data.num_values, h[i].data.num_values);
        CHECK_EQ_INT(out.data.encoding, h[i].data.encoding);
        CHECK_EQ_INT(out.data.def_encoding, h[i].data.def_encoding);
        CHECK_EQ_INT(out.data.rep_encoding, h[i].data.rep_encoding);
        CHECK_EQ_INT(out.data.has_stats, h[i].data.has_stats);
        if (out.data.has_stats) check_stats_eq(&out.data.stats, &h[i].data.stats);
        if (h[i].has_data_v2) {
            const pq_data_page_header_v2 *x = &out.data_v2, *y = &h[i].data_v2;
            CHECK_EQ_INT(x->num_values, y->num_values);
            CHECK_EQ_INT(x->num_nulls, y->num_nulls);
            CHECK_EQ_INT(x->num_rows, y->num_rows);
            CHECK_EQ_INT(x->encoding, y->encoding);
            CHECK_EQ_INT(x->def_levels_byte_length, y->def_levels_byte_length);
            CHECK_EQ_INT(x->rep_levels_byte_length, y->rep_levels_byte_length);
            CHECK_EQ_INT(x->is_compressed, y->is_compressed);
            CHECK_EQ_INT(x->has_stats, y->has_stats);
        }
        CHECK_EQ_INT(out.dict.num_values, h[i].dict.num_values);
        CHECK_EQ_INT(out.dict.encoding, h[i].dict.encoding);
        CHECK_EQ_INT(out.dict.is_sorted, h[i].dict.is_sorted);
        for (size_t cut = 0; cut < hlen; cut++) {
            uint8_t *t = exact_copy(b.data, cut);
            CHECK(pq_decode_page_header(t, cut, NULL, &out, &consumed, &err) == PQ_ERR);
            free(t);
        }
        free(copy);
        pq_buf_free(&b);
    }
}

static void test_page_indexes_round_trip(void)
{
    pq_error err;
    pq_arena a;
    pq_arena_init(&a, 0);

    bool nulls[4] = {false, true, false, false};
    pq_bytes mins[4] = {bstr("a"), bstr(""), bstr("m"), bstr("q")};
    pq_bytes maxs[4] = {bstr("f"), bstr(""), bstr("p"), bstr("zz")};
    int64_t ncounts[4] = {0, 100, 2, 0};
    pq_column_index ci = {4, nulls, mins, maxs, PQ_BOUNDARY_ASCENDING, ncounts};
    pq_buf b;
    pq_buf_init(&b);
    CHECK(pq_encode_column_index(&ci, &b, &err) == PQ_OK);
    pq_column_index cout;
    CHECK(pq_decode_column_index((const uint8_t *)b.data, b.len, &a, &cout, &err) == PQ_OK);
    CHECK_EQ_INT(cout.n_pages, 4);
    CHECK_EQ_INT(cout.boundary_order, PQ_BOUNDARY_ASCENDING);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(cout.null_pages[i], nulls[i]);
        CHECK(bytes_eq(cout.min_values[i], mins[i]));
        CHECK(bytes_eq(cout.max_values[i], maxs[i]));
        CHECK(cout.null_counts && cout.null_counts[i] == ncounts[i]);
    }
    for (size_t cut = 0; cut < b.len; cut++) {
        uint8_t *t = exact_copy(b.data, cut);
        CHECK(pq_decode_column_index(t, cut, &a, &cout, &err) == PQ_ERR);
        free(t);
    }
    /* Without null_counts the pointer stays NULL. */
    ci.null_counts = NULL;
    pq_buf_clear(&b);
    CHECK(pq_encode_column_index(&ci, &b, &err) == PQ_OK);
    CHECK(pq_decode_column_index((const uint8_t *)b.data, b.len, &a, &cout, &err) == PQ_OK);
    CHECK(cout.null_counts == NULL);
    /* Lists of different lengths are corrupt. */
    pq_buf_clear(&b);
    pq_tc_writer w;
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field(&w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_BOOL, 2);
    pq_tc_write_bool_elem(&w, false);
    pq_tc_write_bool_elem(&w, false);
    for (int16_t id = 2; id <= 3; id++) {
        pq_tc_write_field(&w, id, PQ_TC_LIST);
        pq_tc_write_list_begin(&w, PQ_TC_BINARY, 1);
        pq_tc_write_string(&w, "x");
    }
    pq_tc_write_field_i32(&w, 4, 0);
    pq_tc_write_struct_end(&w);
    CHECK(pq_decode_column_index((const uint8_t *)b.data, b.len, &a, &cout, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "2 null_pages but 1 min_values");

    pq_page_location locs[3] = {{4, 100, 0}, {104, 200, 10}, {304, 50, 25}};
    pq_offset_index oi = {3, locs};
    pq_buf_clear(&b);
    CHECK(pq_encode_offset_index(&oi, &b, &err) == PQ_OK);
    pq_offset_index oout;
    CHECK(pq_decode_offset_index((const uint8_t *)b.data, b.len, &a, &oout, &err) == PQ_OK);
    CHECK_EQ_INT(oout.n_pages, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(oout.pages[i].offset, locs[i].offset);
        CHECK_EQ_INT(oout.pages[i].compressed_page_size, locs[i].compressed_page_size);
        CHECK_EQ_INT(oout.pages[i].first_row_index, locs[i].first_row_index);
    }
    for (size_t cut = 0; cut < b.len; cut++) {
        uint8_t *t = exact_copy(b.data, cut);
        CHECK(pq_decode_offset_index(t, cut, &a, &oout, &err) == PQ_ERR);
        free(t);
    }
    CHECK(pq_decode_offset_index((const uint8_t *)b.data, b.len, NULL, &oout, &err) == PQ_ERR);

    pq_bloom_header bh = {4096, true, true, true};
    pq_buf_clear(&b);
    CHECK(pq_encode_bloom_header(&bh, &b, &err) == PQ_OK);
    size_t hlen = b.len;
    pq_buf_append(&b, "bitset", 6);
    pq_bloom_header bout;
    size_t consumed = 0;
    CHECK(pq_decode_bloom_header((const uint8_t *)b.data, b.len, &bout, &consumed, &err) == PQ_OK);
    CHECK_EQ_INT(consumed, hlen);
    CHECK_EQ_INT(bout.num_bytes, 4096);
    CHECK(bout.algorithm_block && bout.hash_xxhash && bout.compression_none);
    bh.hash_xxhash = false;
    CHECK(pq_encode_bloom_header(&bh, &b, &err) == PQ_ERR);

    pq_buf_free(&b);
    pq_arena_free(&a);
}

/* ------------------------------------------------ hand-made inputs --- */

/* Builds a minimal valid FileMetaData around `extra`, a callback writing
 * more fields (with ids above 4) into the top-level struct. */
typedef void (*extra_fields_fn)(pq_tc_writer *w);

static void write_schema_with_logical(pq_tc_writer *w, void (*logical)(pq_tc_writer *w))
{
    pq_tc_write_field(w, 2, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, 2);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_string(w, 4, "root");
    pq_tc_write_field_i32(w, 5, 1);
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_i32(w, 1, PQ_INT64);
    pq_tc_write_field_i32(w, 3, PQ_OPTIONAL);
    pq_tc_write_field_string(w, 4, "leaf");
    if (logical) {
        pq_tc_write_field(w, 10, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(w);
        logical(w);
        pq_tc_write_struct_end(w);
    }
    pq_tc_write_struct_end(w);
}

static void build_meta(pq_buf *b, void (*logical)(pq_tc_writer *w), extra_fields_fn extra)
{
    pq_tc_writer w;
    pq_buf_clear(b);
    pq_tc_writer_init(&w, b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, 1);
    write_schema_with_logical(&w, logical);
    pq_tc_write_field_i64(&w, 3, 0);
    pq_tc_write_field(&w, 4, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 0);
    if (extra) extra(&w);
    pq_tc_write_struct_end(&w);
}

static int decode_meta(pq_buf *b, pq_arena *a, pq_file_meta *m, pq_error *err)
{
    uint8_t *copy = exact_copy(b->data, b->len);
    pq_arena_reset(a);
    pq_error_clear(err);
    int rc = pq_decode_file_meta(copy, b->len, a, m, err);
    free(copy); /* strings were copied; nothing else points into the copy here */
    return rc;
}

static void lt_unknown_member(pq_tc_writer *w)
{
    pq_tc_write_field(w, 40, PQ_TC_STRUCT); /* a future logical type */
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_i32(w, 1, 42);
    pq_tc_write_field(w, 2, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_BINARY, 1);
    pq_tc_write_string(w, "x");
    pq_tc_write_struct_end(w);
}

static void lt_timestamp_unknown_unit(pq_tc_writer *w)
{
    pq_tc_write_field(w, 8, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_bool(w, 1, false);
    pq_tc_write_field(w, 2, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_empty_struct(w, 9); /* PICOS, say */
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_end(w);
}

static void lt_time_millis_with_extra(pq_tc_writer *w)
{
    pq_tc_write_field(w, 7, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_bool(w, 1, true);
    pq_tc_write_field(w, 2, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_empty_struct(w, 1);
    pq_tc_write_struct_end(w);
    pq_tc_write_field_double(w, 3, 1.5); /* unknown field in TimeType */
    pq_tc_write_struct_end(w);
}

static void lt_two_members(pq_tc_writer *w)
{
    pq_tc_write_field_empty_struct(w, 1);
    pq_tc_write_field_empty_struct(w, 6);
}

static void lt_bad_bit_width(pq_tc_writer *w)
{
    pq_tc_write_field(w, 10, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_i8(w, 1, 7);
    pq_tc_write_field_bool(w, 2, true);
    pq_tc_write_struct_end(w);
}

static void lt_decimal_missing_precision(pq_tc_writer *w)
{
    pq_tc_write_field(w, 5, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_i32(w, 1, 2);
    pq_tc_write_struct_end(w);
}

static void extra_unknown_fields(pq_tc_writer *w)
{
    pq_tc_write_field_string(w, 6, "made by hand");
    pq_tc_write_field(w, 7, PQ_TC_LIST); /* column orders: TYPE_ORDER, IEEE754, empty */
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, 3);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_empty_struct(w, 1);
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_empty_struct(w, 2);
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_begin(w);
    pq_tc_write_struct_end(w);
    pq_tc_write_field(w, 50, PQ_TC_STRUCT); /* unknown: nested containers */
    pq_tc_write_struct_begin(w);
    pq_tc_write_field(w, 1, PQ_TC_MAP);
    pq_tc_write_map_begin(w, PQ_TC_BINARY, PQ_TC_LIST, 1);
    pq_tc_write_string(w, "k");
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, 1);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_bool(w, 1, true);
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_end(w);
    pq_tc_write_field_binary(w, 300, "\x00\x01", 2);
    pq_tc_write_field_double(w, 301, 9.75);
}

static void extra_encryption(pq_tc_writer *w)
{
    pq_tc_write_field(w, 8, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field(w, 1, PQ_TC_STRUCT); /* AES_GCM_V1 */
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_binary(w, 2, "unique", 6);
    pq_tc_write_struct_end(w);
    pq_tc_write_struct_end(w);
    pq_tc_write_field_binary(w, 9, "keymeta", 7);
}

static void extra_negative_rows(pq_tc_writer *w)
{
    pq_tc_write_field_i64(w, 3, -5); /* a second num_rows, negative */
}

static void test_hand_made_meta(void)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    pq_error err;

    build_meta(&b, NULL, NULL);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.n_schema, 2);
    CHECK(!m.schema[1].has_logical);
    CHECK_EQ_INT(m.schema[1].converted_type, PQ_CT_NONE);
    CHECK_EQ_INT(m.n_column_orders, -1);
    CHECK(m.created_by == NULL);
    CHECK(!m.encryption_algorithm);

    build_meta(&b, lt_unknown_member, extra_unknown_fields);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK(m.schema[1].has_logical);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_UNRECOGNIZED);
    CHECK_EQ_STR(m.created_by, "made by hand");
    CHECK_EQ_INT(m.n_column_orders, 3);
    CHECK_EQ_INT(m.column_orders[0], PQ_ORDER_TYPE_DEFINED);
    CHECK_EQ_INT(m.column_orders[1], PQ_ORDER_UNKNOWN);
    CHECK_EQ_INT(m.column_orders[2], PQ_ORDER_UNKNOWN);

    build_meta(&b, lt_timestamp_unknown_unit, NULL);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_UNRECOGNIZED);

    build_meta(&b, lt_time_millis_with_extra, NULL);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_TIME);
    CHECK_EQ_INT(m.schema[1].logical.unit, PQ_UNIT_MILLIS);
    CHECK(m.schema[1].logical.utc);

    build_meta(&b, lt_two_members, NULL);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "LogicalType.DATE: a second union member");

    build_meta(&b, lt_bad_bit_width, NULL);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "IntType.bitWidth: 7 is not");

    build_meta(&b, lt_decimal_missing_precision, NULL);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "DecimalType.precision: required field is missing");
    CHECK_CONTAINS(err.msg, "FileMetaData.schema[1]: SchemaElement.logicalType");

    build_meta(&b, NULL, extra_encryption);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK(m.encryption_algorithm);

    build_meta(&b, NULL, extra_negative_rows);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "FileMetaData.num_rows: negative value -5");

    /* Missing required fields name the field. */
    pq_tc_writer w;
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, 1);
    pq_tc_write_field_i64(&w, 3, 0);
    pq_tc_write_field(&w, 4, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 0);
    pq_tc_write_struct_end(&w);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
    CHECK_CONTAINS(err.msg, "FileMetaData.schema: required field is missing");

    /* A row group without num_rows. */
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, 1);
    write_schema_with_logical(&w, NULL);
    pq_tc_write_field_i64(&w, 3, 0);
    pq_tc_write_field(&w, 4, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 1);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field(&w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 0);
    pq_tc_write_field_i64(&w, 2, 0);
    pq_tc_write_struct_end(&w);
    pq_tc_write_struct_end(&w);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "FileMetaData.row_groups[0]: RowGroup.num_rows: required field is missing");

    /* A field of the wrong wire type. */
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_string(&w, 1, "one");
    pq_tc_write_struct_end(&w);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "FileMetaData.version: required field is not a i32");

    /* path_in_schema claiming 2^32-1 elements: refused before allocating. */
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, 1);
    write_schema_with_logical(&w, NULL);
    pq_tc_write_field_i64(&w, 3, 0);
    pq_tc_write_field(&w, 4, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 1);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field(&w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 1);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i64(&w, 2, 0);
    pq_tc_write_field(&w, 3, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, PQ_INT64);
    pq_tc_write_field(&w, 2, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_I32, 0);
    pq_tc_write_field(&w, 3, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_BINARY, 0xffffffffu);
    for (int i = 0; i < 20; i++) pq_tc_write_byte(&w, 0);
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "ColumnMetaData.path_in_schema: list of 4294967295 elements");
    CHECK_CONTAINS(err.msg, "exceeds the 20 bytes left");
    CHECK_CONTAINS(err.msg, "FileMetaData.row_groups[0]: RowGroup.columns[0]: ColumnChunk.meta_data:");
    CHECK(a.total < 4096); /* nothing sized by the bogus count */

    pq_arena_free(&a);
    pq_buf_free(&b);
}

static void test_hand_made_chunks_and_pages(void)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_tc_writer w;
    pq_error err;
    pq_page_header h;
    size_t consumed;

    /* A DATA_PAGE without its data_page_header. */
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, PQ_PAGE_DATA);
    pq_tc_write_field_i32(&w, 2, 10);
    pq_tc_write_field_i32(&w, 3, 10);
    pq_tc_write_struct_end(&w);
    CHECK(pq_decode_page_header((const uint8_t *)b.data, b.len, NULL, &h, &consumed, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "data_page_header: missing");

    /* V2 without is_compressed defaults to compressed; index page header and
     * unknown fields are skipped; a negative size is corrupt. */
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, PQ_PAGE_DATA_V2);
    pq_tc_write_field_i32(&w, 2, 10);
    pq_tc_write_field_i32(&w, 3, 10);
    pq_tc_write_field_empty_struct(&w, 6);
    pq_tc_write_field(&w, 8, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(&w);
    for (int16_t id = 1; id <= 6; id++) pq_tc_write_field_i32(&w, id, id == 4 ? 0 : 1);
    pq_tc_write_field_i64(&w, 20, 99);
    pq_tc_write_struct_end(&w);
    pq_tc_write_field_string(&w, 9, "future");
    pq_tc_write_struct_end(&w);
    CHECK(pq_decode_page_header((const uint8_t *)b.data, b.len, NULL, &h, &consumed, &err) == PQ_OK);
    CHECK(h.has_data_v2 && h.data_v2.is_compressed);
    CHECK_EQ_INT(consumed, b.len);

    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, PQ_PAGE_DICTIONARY);
    pq_tc_write_field_i32(&w, 2, 10);
    pq_tc_write_field_i32(&w, 3, -1);
    pq_tc_write_struct_end(&w);
    CHECK(pq_decode_page_header((const uint8_t *)b.data, b.len, NULL, &h, &consumed, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "PageHeader.compressed_page_size: negative value -1");

    /* Column chunks with crypto metadata are flagged encrypted. */
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, 1);
    write_schema_with_logical(&w, NULL);
    pq_tc_write_field_i64(&w, 3, 0);
    pq_tc_write_field(&w, 4, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 1);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field(&w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, 2);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i64(&w, 2, 0);
    pq_tc_write_field(&w, 8, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_empty_struct(&w, 1); /* ENCRYPTION_WITH_FOOTER_KEY */
    pq_tc_write_struct_end(&w);
    pq_tc_write_struct_end(&w);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i64(&w, 2, 0);
    pq_tc_write_field_binary(&w, 9, "ciphertext", 10);
    pq_tc_write_field_i64(&w, 4, 100); /* offset index offset without length */
    pq_tc_write_struct_end(&w);
    pq_tc_write_field_i64(&w, 2, 0);
    pq_tc_write_field_i64(&w, 3, 0);
    pq_tc_write_struct_end(&w);
    pq_tc_write_struct_end(&w);
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK(m.row_groups[0].columns[0].encrypted && !m.row_groups[0].columns[0].has_meta);
    CHECK(m.row_groups[0].columns[1].encrypted);
    CHECK(!m.row_groups[0].columns[1].has_offset_index);
    CHECK_EQ_INT(m.row_groups[0].n_sorting, -1);
    pq_arena_free(&a);

    /* Bloom header with an unknown hash member decodes, flagged. */
    pq_buf_clear(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, 32);
    for (int16_t id = 2; id <= 4; id++) {
        pq_tc_write_field(&w, id, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(&w);
        pq_tc_write_field_empty_struct(&w, id == 3 ? 2 : 1);
        pq_tc_write_struct_end(&w);
    }
    pq_tc_write_struct_end(&w);
    pq_bloom_header bh;
    CHECK(pq_decode_bloom_header((const uint8_t *)b.data, b.len, &bh, &consumed, &err) == PQ_OK);
    CHECK(bh.algorithm_block && !bh.hash_xxhash && bh.compression_none);
    pq_buf_free(&b);
}

/* --------------------------------------------------- real footers --- */

static char data_dir[1024];

static bool find_data_dir(void)
{
    /* tests/unit/test_thrift.c -> ../../../shared/testdata/parquet-testing */
    char here[512];
    snprintf(here, sizeof here, "%s", __FILE__);
    char *slash = strrchr(here, '/');
    if (slash) *slash = '\0';
    else snprintf(here, sizeof here, ".");
    snprintf(data_dir, sizeof data_dir, "%s/../../../shared/testdata/parquet-testing", here);
    char probe[1200];
    snprintf(probe, sizeof probe, "%s/data/alltypes_plain.parquet", data_dir);
    FILE *f = fopen(probe, "rb");
    if (!f) return false;
    fclose(f);
    return true;
}

typedef struct pqfile {
    uint8_t *data;
    size_t len;
    const uint8_t *meta;
    size_t meta_len;
} pqfile;

/* Reads a whole file; meta points at the footer metadata, or NULL. */
static bool load(const char *dir, const char *name, pqfile *f)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s/%s", data_dir, dir, name);
    memset(f, 0, sizeof *f);
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    f->data = malloc(n > 0 ? (size_t)n : 1);
    f->len = fread(f->data, 1, (size_t)n, fp);
    fclose(fp);
    if (f->len >= 12 && memcmp(f->data + f->len - 4, "PAR1", 4) == 0) {
        const uint8_t *t = f->data + f->len - 8;
        uint32_t ml = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
                      (uint32_t)t[3] << 24;
        if (ml <= f->len - 12) {
            f->meta = f->data + f->len - 8 - ml;
            f->meta_len = ml;
        }
    }
    return true;
}

static int leaf_count(const pq_file_meta *m)
{
    int n = 0;
    for (int32_t i = 0; i < m->n_schema; i++) n += !m->schema[i].has_num_children;
    return n;
}

static void test_alltypes_plain(void)
{
    pqfile f;
    CHECK(load("data", "alltypes_plain.parquet", &f) && f.meta);
    if (!f.meta) return;
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    pq_error err;
    CHECK(pq_decode_file_meta(f.meta, f.meta_len, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.num_rows, 8);
    CHECK_EQ_INT(m.n_schema, 12);
    CHECK_EQ_INT(leaf_count(&m), 11);
    static const char *const names[] = {
        "schema", "id", "bool_col", "tinyint_col", "smallint_col", "int_col", "bigint_col",
        "float_col", "double_col", "date_string_col", "string_col", "timestamp_col",
    };
    for (int i = 0; i < 12 && i < m.n_schema; i++) CHECK_EQ_STR(m.schema[i].name, names[i]);
    CHECK_EQ_INT(m.schema[0].num_children, 11);
    CHECK_EQ_INT(m.schema[1].type, PQ_INT32);
    CHECK_EQ_INT(m.schema[11].type, PQ_INT96);
    CHECK_EQ_INT(m.n_row_groups, 1);
    CHECK_EQ_INT(m.row_groups[0].num_rows, 8);
    CHECK_EQ_INT(m.row_groups[0].n_columns, 11);
    const pq_column_chunk *c = &m.row_groups[0].columns[9];
    CHECK(c->has_meta && c->meta.n_path == 1);
    CHECK_EQ_STR(c->meta.path[0], "string_col");
    CHECK_EQ_INT(c->meta.type, PQ_BYTE_ARRAY);
    CHECK_EQ_INT(c->meta.num_values, 8);
    CHECK(m.created_by != NULL);

    /* The first page header of every chunk decodes, arena-free. */
    for (int32_t i = 0; i < m.row_groups[0].n_columns; i++) {
        const pq_column_meta *cm = &m.row_groups[0].columns[i].meta;
        int64_t off = cm->has_dictionary_page_offset ? cm->dictionary_page_offset
                                                     : cm->data_page_offset;
        pq_page_header h;
        size_t consumed;
        CHECK(off > 0 && (size_t)off < f.len);
        CHECK(pq_decode_page_header(f.data + off, f.len - (size_t)off, NULL, &h, &consumed,
                                    &err) == PQ_OK);
        CHECK(h.compressed_page_size >= 0 && consumed > 0);
        if (cm->has_dictionary_page_offset) CHECK(h.has_dict);
    }
    pq_arena_free(&a);
    free(f.data);
}

static void test_nested_maps(void)
{
    pqfile f;
    CHECK(load("data", "nested_maps.snappy.parquet", &f) && f.meta);
    if (!f.meta) return;
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    pq_error err;
    CHECK(pq_decode_file_meta(f.meta, f.meta_len, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.num_rows, 6);
    CHECK_EQ_STR(m.schema[1].name, "a");
    CHECK_EQ_INT(m.schema[1].converted_type, PQ_CT_MAP);
    int maps = 0;
    for (int32_t i = 0; i < m.n_schema; i++) maps += m.schema[i].converted_type == PQ_CT_MAP;
    CHECK_EQ_INT(maps, 2);
    /* Every leaf's path has one part per level below the root. */
    const pq_column_meta *cm = &m.row_groups[0].columns[0].meta;
    CHECK_EQ_INT(cm->n_path, 3);
    CHECK_EQ_STR(cm->path[0], "a");
    CHECK_EQ_STR(cm->path[2], "key");
    CHECK_EQ_INT(m.row_groups[0].columns[2].meta.n_path, 5);
    CHECK_EQ_INT(cm->codec, PQ_CODEC_SNAPPY);
    pq_arena_free(&a);
    free(f.data);
}

static void test_tiny_pages_indexes(void)
{
    pqfile f;
    CHECK(load("data", "alltypes_tiny_pages.parquet", &f) && f.meta);
    if (!f.meta) return;
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    pq_error err;
    CHECK(pq_decode_file_meta(f.meta, f.meta_len, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.num_rows, 7300);
    int with_index = 0;
    for (int32_t g = 0; g < m.n_row_groups; g++) {
        const pq_row_group *rg = &m.row_groups[g];
        for (int32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            if (!cc->has_offset_index || !cc->has_column_index) continue;
            with_index++;
            CHECK((uint64_t)cc->offset_index_offset + (uint64_t)cc->offset_index_length <= f.len);
            CHECK((uint64_t)cc->column_index_offset + (uint64_t)cc->column_index_length <= f.len);
            pq_offset_index oi;
            pq_column_index ci;
            CHECK(pq_decode_offset_index(f.data + cc->offset_index_offset,
                                         (size_t)cc->offset_index_length, &a, &oi, &err) == PQ_OK);
            CHECK(pq_decode_column_index(f.data + cc->column_index_offset,
                                         (size_t)cc->column_index_length, &a, &ci, &err) == PQ_OK);
            CHECK(oi.n_pages > 1); /* tiny pages: many of them */
            CHECK_EQ_INT(oi.n_pages, ci.n_pages);
            CHECK_EQ_INT(oi.pages[0].first_row_index, 0);
            /* parquet-mr left dictionary_page_offset unset here: the dictionary
             * page sits at data_page_offset, the first data page after it. */
            CHECK(oi.pages[0].offset >= cc->meta.data_page_offset);
            bool ascending = true, in_file = true;
            for (int32_t p = 0; p < oi.n_pages; p++) {
                if (p && oi.pages[p].first_row_index <= oi.pages[p - 1].first_row_index)
                    ascending = false;
                if ((uint64_t)oi.pages[p].offset + (uint64_t)oi.pages[p].compressed_page_size >
                    f.len)
                    in_file = false;
            }
            CHECK(ascending);
            CHECK(in_file);
            CHECK(oi.pages[oi.n_pages - 1].first_row_index < rg->num_rows);
            /* Each page location holds a data page header. */
            pq_page_header h;
            size_t consumed;
            const pq_page_location *pl = &oi.pages[oi.n_pages - 1];
            CHECK(pq_decode_page_header(f.data + pl->offset, (size_t)pl->compressed_page_size,
                                        NULL, &h, &consumed, &err) == PQ_OK);
            CHECK(h.has_data || h.has_data_v2);
            CHECK_EQ_INT(consumed + (size_t)h.compressed_page_size,
                         (size_t)pl->compressed_page_size);
        }
    }
    CHECK(with_index >= 11);
    pq_arena_free(&a);
    free(f.data);
}

/* Every footer of the corpus: plaintext ones decode, re-encode and decode to
 * the same; bad_data files fail cleanly or decode. */
static void test_corpus_footers(const char *dir, bool must_decode)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", data_dir, dir);
    DIR *d = opendir(path);
    CHECK(d != NULL);
    if (!d) return;
    int decoded = 0, failed = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl < 8 || strcmp(de->d_name + nl - 8, ".parquet") != 0) continue;
        pqfile f;
        if (!load(dir, de->d_name, &f)) continue;
        pq_arena a;
        pq_arena_init(&a, 0);
        pq_file_meta m;
        pq_error err;
        uint8_t *meta = f.meta ? exact_copy(f.meta, f.meta_len) : NULL;
        int rc = meta ? pq_decode_file_meta(meta, f.meta_len, &a, &m, &err) : PQ_ERR;
        if (rc == PQ_OK) {
            decoded++;
            if (!m.encryption_algorithm) {
                pq_buf b;
                pq_buf_init(&b);
                bool encodable = true;
                for (int32_t i = 0; i < m.n_column_orders; i++)
                    encodable &= m.column_orders[i] == PQ_ORDER_TYPE_DEFINED;
                for (int32_t i = 0; i < m.n_schema; i++)
                    encodable &= m.schema[i].logical.kind != PQ_LT_UNRECOGNIZED;
                if (encodable) {
                    pq_file_meta m2;
                    CHECK(pq_encode_file_meta(&m, &b, &err) == PQ_OK);
                    CHECK(pq_decode_file_meta((const uint8_t *)b.data, b.len, &a, &m2, &err) ==
                          PQ_OK);
                    check_file_meta_eq(&m, &m2);
                }
                pq_buf_free(&b);
            }
        } else {
            failed++;
            if (must_decode) fprintf(stderr, "%s: %s\n", de->d_name, meta ? err.msg : "no footer");
            else CHECK(!meta || err.cls == PQ_E_CORRUPT);
        }
        free(meta);
        pq_arena_free(&a);
        free(f.data);
    }
    closedir(d);
    printf("%s: %d footers decoded, %d failed\n", dir, decoded, failed);
    if (must_decode) {
        CHECK(decoded > 40);
        CHECK_EQ_INT(failed, 0);
    }
}

static void test_bloom_filter_files(void)
{
    pqfile f;
    CHECK(load("data", "data_index_bloom_encoding_stats.parquet", &f) && f.meta);
    if (!f.meta) return;
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    pq_error err;
    CHECK(pq_decode_file_meta(f.meta, f.meta_len, &a, &m, &err) == PQ_OK);
    const pq_column_meta *cm = &m.row_groups[0].columns[0].meta;
    CHECK(cm->has_bloom_filter_offset);
    CHECK(cm->n_encoding_stats > 0);
    if (cm->has_bloom_filter_offset && (uint64_t)cm->bloom_filter_offset < f.len) {
        pq_bloom_header bh;
        size_t consumed;
        CHECK(pq_decode_bloom_header(f.data + cm->bloom_filter_offset,
                                     f.len - (size_t)cm->bloom_filter_offset, &bh, &consumed,
                                     &err) == PQ_OK);
        CHECK(bh.algorithm_block && bh.hash_xxhash && bh.compression_none);
        CHECK(bh.num_bytes > 0 && (bh.num_bytes & (bh.num_bytes - 1)) == 0);
    }
    pq_arena_free(&a);
    free(f.data);

    /* bloom_filter.bin: a standalone header + bitset. */
    CHECK(load("data", "bloom_filter.xxhash.bin", &f));
    if (f.data) {
        pq_bloom_header bh;
        size_t consumed;
        CHECK(pq_decode_bloom_header(f.data, f.len, &bh, &consumed, &err) == PQ_OK);
        CHECK_EQ_INT(consumed + (size_t)bh.num_bytes, f.len);
        free(f.data);
    }
}

int main(void)
{
    test_varint();
    test_zigzag();
    test_double_and_binary();
    test_list_headers();
    test_field_headers_and_bools();
    test_skip();
    test_depth_limit();
    test_file_meta_round_trip();
    test_page_header_round_trip();
    test_page_indexes_round_trip();
    test_hand_made_meta();
    test_hand_made_chunks_and_pages();
    if (find_data_dir()) {
        test_alltypes_plain();
        test_nested_maps();
        test_tiny_pages_indexes();
        test_bloom_filter_files();
        test_corpus_footers("data", true);
        test_corpus_footers("bad_data", false);
    } else {
        printf("SKIP real footers: %s not found\n", data_dir);
    }
    return check_report();
}
