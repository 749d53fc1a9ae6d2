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

#define CHECK_CONTAINS(msg, needle)                                                       \
    do {                                                                                  \
        check_count++;                                                                    \
        if (!strstr((msg), (needle))) {                                                 \
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

/* Opens x over buf; x must be zeroed or opened before (its copy is freed). */
static void rd_open(rd *x, const void *buf, size_t len)
{
    free(x->copy);
    x->copy = exact_copy(buf, len);
    pq_error_clear(&x->err);
    pq_tc_reader_init(&x->r, x->copy, len, &x->err);
}

static void rd_close(rd *x)
{
    free(x->copy);
    x->copy = NULL;
}

/* A small notation for hand-made thrift, written with the writer under test:
 *   {ID:V ID:V ...}       struct (field ids may jump, go back or be negative)
 *   i8 N  i16 N  i32 N  i64 N  dbl X  'text'  T  F  (bools: in the header as a
 *                         field, one byte as an element)
 *   [TYPE V ...]          list; [TYPE #N V ...] claims N elements whatever follows;
 *                         S[TYPE V ...] is a set
 *   <KTYPE VTYPE K V ...> map
 *   bare numbers in a container take its element type: [i32 1 2], <bin i8 'k' -1>
 *   raw(hex bytes)        bytes as they are
 * TYPE is one of bool i8 i16 i32 i64 dbl bin list set map struct. */
typedef struct tasm {
    const char *p;
    pq_tc_writer *w;
} tasm;

static void tasm_ws(tasm *t)
{
    while (*t->p == ' ' || *t->p == '\n') t->p++;
}

static uint8_t tasm_type(tasm *t)
{
    static const struct { const char *name; uint8_t type; } types[] = {
        {"bool", PQ_TC_BOOL}, {"i8", PQ_TC_I8}, {"i16", PQ_TC_I16}, {"i32", PQ_TC_I32},
        {"i64", PQ_TC_I64}, {"dbl", PQ_TC_DOUBLE}, {"bin", PQ_TC_BINARY}, {"list", PQ_TC_LIST},
        {"set", PQ_TC_SET}, {"map", PQ_TC_MAP}, {"struct", PQ_TC_STRUCT},
    };
    tasm_ws(t);
    size_t n = strcspn(t->p, " :#]>{[<'\n");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (strlen(types[i].name) == n && strncmp(t->p, types[i].name, n) == 0) {
            t->p += n;
            return types[i].type;
        }
    }
    fprintf(stderr, "tasm: bad type at \"%s\"\n", t->p);
    abort();
}

static void tasm_value(tasm *t, bool in_field, int16_t id, uint8_t elem_type);

/* Elements up to `close` (map keys and values alternate kt, vt), written to
 * a side buffer so the count is known; returns the element count. */
static uint32_t tasm_elems(tasm *t, char close, uint8_t kt, uint8_t vt, pq_buf *side)
{
    pq_tc_writer w;
    pq_tc_writer_init(&w, side);
    tasm sub = {t->p, &w};
    uint32_t n = 0;
    for (tasm_ws(&sub); *sub.p != close; tasm_ws(&sub), n++)
        tasm_value(&sub, false, 0, (n % 2 && vt) ? vt : kt);
    t->p = sub.p + 1;
    return vt ? n / 2 : n;
}

/* One value; a bare number takes elem_type (the container's element type). */
static void tasm_value(tasm *t, bool in_field, int16_t id, uint8_t elem_type)
{
    tasm_ws(t);
    char c = *t->p;
    char *end;
    if (c == 'T' || c == 'F') {
        t->p++;
        if (in_field) pq_tc_write_field_bool(t->w, id, c == 'T');
        else pq_tc_write_bool_elem(t->w, c == 'T');
    } else if (c == '{') {
        t->p++;
        if (in_field) pq_tc_write_field(t->w, id, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(t->w);
        for (tasm_ws(t); *t->p != '}'; tasm_ws(t)) {
            if (*t->p == 'r') { /* raw bytes in place of a field */
                tasm_value(t, false, 0, 0);
                continue;
            }
            int16_t fid = (int16_t)strtol(t->p, &end, 10);
            t->p = end + 1; /* past ':' */
            tasm_value(t, true, fid, 0);
        }
        t->p++;
        pq_tc_write_struct_end(t->w);
    } else if (c == '[' || c == '<' || (c == 'S' && t->p[1] == '[')) {
        bool set = c == 'S';
        if (set) c = *++t->p;
        t->p++;
        uint8_t kt = tasm_type(t), vt = c == '<' ? tasm_type(t) : 0;
        long claimed = -1;
        tasm_ws(t);
        if (*t->p == '#') claimed = strtol(t->p + 1, (char **)&t->p, 10);
        pq_buf side;
        pq_buf_init(&side);
        uint32_t n = tasm_elems(t, c == '[' ? ']' : '>', kt, vt, &side);
        if (claimed >= 0) n = (uint32_t)claimed;
        if (in_field) pq_tc_write_field(t->w, id, set ? PQ_TC_SET : c == '[' ? PQ_TC_LIST : PQ_TC_MAP);
        if (c == '[') pq_tc_write_list_begin(t->w, kt, n);
        else pq_tc_write_map_begin(t->w, kt, vt, n);
        pq_buf_append(t->w->buf, side.data, side.len);
        pq_buf_free(&side);
    } else if (c == '\'') {
        const char *q = strchr(t->p + 1, '\'');
        if (in_field) pq_tc_write_field(t->w, id, PQ_TC_BINARY);
        pq_tc_write_binary(t->w, t->p + 1, (size_t)(q - t->p - 1));
        t->p = q + 1;
    } else if (strncmp(t->p, "raw(", 4) == 0) {
        for (t->p += 4; *t->p != ')'; tasm_ws(t)) {
            pq_tc_write_byte(t->w, (uint8_t)strtoul(t->p, &end, 16));
            t->p = end;
        }
        t->p++;
    } else {
        uint8_t type = (c == '-' || (c >= '0' && c <= '9')) ? elem_type : tasm_type(t);
        if (in_field) pq_tc_write_field(t->w, id, type);
        if (type == PQ_TC_DOUBLE) {
            pq_tc_write_double(t->w, strtod(t->p, &end));
        } else {
            long long v = strtoll(t->p, &end, 10);
            if (type == PQ_TC_I8) pq_tc_write_i8(t->w, (int8_t)v);
            else pq_tc_write_i64(t->w, v); /* i16/i32/i64 share the zigzag varint */
        }
        t->p = end;
    }
}

/* Assembles `text` into b (cleared first). */
static void tasm_build(pq_buf *b, const char *text)
{
    pq_tc_writer w;
    pq_buf_clear(b);
    pq_tc_writer_init(&w, b);
    tasm t = {text, &w};
    for (tasm_ws(&t); *t.p; tasm_ws(&t)) tasm_value(&t, false, 0, 0);
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
        rd x = {0};
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
}

/* Reads one primitive of kind `op` from an exact copy of bytes: v varint,
 * 2/4/8 i16/i32/i64, d double, b binary, l list header, m map header, f field
 * header, s skip a struct. */
static int read_one(rd *x, char op, const char *bytes, size_t len)
{
    rd_open(x, bytes, len);
    uint64_t u;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    double d;
    pq_bytes b;
    uint8_t t1, t2;
    uint32_t n;
    pq_tc_field f;
    int16_t last = 32760;
    switch (op) {
    case 'v': return pq_tc_read_varint(&x->r, &u);
    case '2': return pq_tc_read_i16(&x->r, &i16);
    case '4': return pq_tc_read_i32(&x->r, &i32);
    case '8': return pq_tc_read_i64(&x->r, &i64);
    case 'd': return pq_tc_read_double(&x->r, &d);
    case 'b': return pq_tc_read_binary(&x->r, &b);
    case 'l': return pq_tc_list_begin(&x->r, &t1, &n);
    case 'm': return pq_tc_map_begin(&x->r, &t1, &t2, &n);
    case 'f': return pq_tc_next_field(&x->r, &last, &f);
    default: return pq_tc_skip(&x->r, PQ_TC_STRUCT);
    }
}

static void test_malformed_primitives(void)
{
    static const struct {
        char op;
        const char *bytes;
        size_t len;
        const char *msg; /* NULL: must decode */
    } cases[] = {
        {'v', "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, NULL}, /* UINT64_MAX */
        {'v', "\x80\x80\x00", 3, NULL},                             /* non-canonical 0 */
        {'v', "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, "longer than 10 bytes"},
        {'v', "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11, "longer than 10 bytes"},
        {'v', "\x80", 1, "truncated varint at byte 0"},
        {'4', "\x80\x80\x80\x80\x10", 5, "does not fit in i32"}, /* 2^32 */
        {'2', "\x80\x80\x04", 3, "does not fit in i16"},         /* 2^16 */
        {'8', "\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10, NULL},
        {'d', "\0\0\0\0\0\0\xf0", 7, "truncated double"},
        {'b', "\x0a" "abc", 4, "binary of 10 bytes at byte 0 exceeds the 3 bytes left"},
        {'l', "\xf5\xff\xff\xff\xff\x0f\0\0\0", 9,
         "list of 4294967295 elements at byte 0 exceeds the 3 bytes left"},
        {'l', "\x27\0\0\0\0\0\0\0\0\0\0\0\0\0", 14, "list of 2 elements"}, /* doubles: 8 each */
        {'l', "\xf5\x80\x80\x80\x80\x10", 6, "has size 4294967296"},
        {'l', "\x1e\0", 2, "unknown element type 14"},
        {'l', "\x00", 1, NULL}, /* empty list tagged with type 0 */
        {'m', "\x05\x88" "abcd", 6, "map of 5 elements"}, /* 2 bytes per entry */
        {'m', "\x01\xe5\x00", 3, "unknown key/value types 14/5"},
        {'f', "\x1f", 1, "unknown type 15"},
        {'f', "", 0, "truncated struct (no STOP byte)"},
        {'f', "\xf5", 1, "overflows i16"}, /* last id 32760 + 15 */
        {'s', "\x1c\x1c\x00", 3, "truncated struct"},
        {'s', "\x19\xfc\x80\x80\x80\x80\x01", 7, "list of 268435456 elements"},
        {'s', "\x1e\x00", 2, "unknown type 14"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rd x = {0};
        int rc = read_one(&x, cases[i].op, cases[i].bytes, cases[i].len);
        if (!cases[i].msg) {
            CHECK(rc == PQ_OK);
        } else {
            CHECK(rc == PQ_ERR && x.err.cls == PQ_E_CORRUPT);
            CHECK_CONTAINS(x.err.msg, cases[i].msg);
        }
        rd_close(&x);
    }
}

static void test_zigzag(void)
{
    /* value and its zigzag form; values that fit also take the i32 path */
    static const struct {
        int64_t v;
        uint64_t zz;
    } cases[] = {
        {0, 0}, {1, 2}, {-1, 1}, {63, 126}, {-64, 127}, {64, 128}, {-1000000, 1999999},
        {INT32_MAX, 0xfffffffeu}, {INT32_MIN, 0xffffffffu}, {INT64_MAX, UINT64_MAX - 1},
        {INT64_MIN, UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = cases[i].v, back = 0;
        bool fits32 = v >= INT32_MIN && v <= INT32_MAX;
        pq_buf b;
        pq_buf_init(&b);
        pq_tc_writer w;
        pq_tc_writer_init(&w, &b);
        pq_tc_write_i64(&w, v);
        if (fits32) pq_tc_write_i32(&w, (int32_t)v);
        rd x = {0};
        rd_open(&x, b.data, b.len);
        uint64_t raw = 0;
        int32_t v32 = 0;
        CHECK(pq_tc_read_varint(&x.r, &raw) == PQ_OK && raw == cases[i].zz);
        if (fits32) CHECK(pq_tc_read_i32(&x.r, &v32) == PQ_OK && v32 == v);
        CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
        rd_open(&x, b.data, b.len);
        CHECK(pq_tc_read_i64(&x.r, &back) == PQ_OK && back == v);
        rd_close(&x);
        /* 32-bit zigzag stays within 5 bytes: INT32_MIN is ff ff ff ff 0f. */
        if (v == INT32_MIN) CHECK(memcmp(b.data + b.len - 5, "\xff\xff\xff\xff\x0f", 5) == 0);
        pq_buf_free(&b);
    }
    /* i16 and i8 extremes. */
    pq_buf b;
    pq_buf_init(&b);
    tasm_build(&b, "i16 -32768 i16 32767 i8 -128 i8 127");
    rd x = {0};
    rd_open(&x, b.data, b.len);
    int16_t s16[2];
    int8_t s8[2];
    CHECK(pq_tc_read_i16(&x.r, &s16[0]) == PQ_OK && pq_tc_read_i16(&x.r, &s16[1]) == PQ_OK);
    CHECK(pq_tc_read_i8(&x.r, &s8[0]) == PQ_OK && pq_tc_read_i8(&x.r, &s8[1]) == PQ_OK);
    CHECK(s16[0] == INT16_MIN && s16[1] == INT16_MAX && s8[0] == -128 && s8[1] == 127);
    rd_close(&x);
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
    rd x = {0};
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

    static const uint8_t one[] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}; /* little-endian 1.0 */
    double d;
    rd_open(&x, one, 8);
    CHECK(pq_tc_read_double(&x.r, &d) == PQ_OK && d == 1.0);

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
        CHECK_EQ_INT((uint8_t)b.data[0], (sizes[i] < 15 ? sizes[i] << 4 : 0xf0) | PQ_TC_I32);
        rd x = {0};
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

    rd x = {0};
    uint8_t et;
    uint32_t n;
    /* Bool lists: tagged 1 or 2, elements 1 = true, 0/2 = false. */
    static const uint8_t bools[] = {0x42, 0x01, 0x02, 0x00, 0x01};
    rd_open(&x, bools, sizeof bools);
    CHECK(pq_tc_list_begin(&x.r, &et, &n) == PQ_OK && et == PQ_TC_BOOL && n == 4);
    bool bv[4];
    for (int i = 0; i < 4; i++) CHECK(pq_tc_read_bool_elem(&x.r, &bv[i]) == PQ_OK);
    CHECK(bv[0] && !bv[1] && !bv[2] && bv[3]);
    rd_close(&x);
}

static void test_field_headers_and_bools(void)
{
    /* Bools live in the header; delta 15 is the last short form; a bigger
     * jump, a step back and a negative id take the long form. */
    pq_buf b;
    pq_buf_init(&b);
    tasm_build(&b, "{1:T 2:F 17:i32 5 100:i32 -3 3:i64 7 -4:T}");
    static const char bytes[] = "\x11\x12\xf5\x0a\x05\xc8\x01\x05\x06\x06\x0e\x01\x07\x00";
    CHECK(b.len == 14 && memcmp(b.data, bytes, 14) == 0);
    static const struct {
        int16_t id;
        uint8_t type;
        int64_t v;
    } want[] = {{1, PQ_TC_BOOL, 1}, {2, PQ_TC_BOOL, 0}, {17, PQ_TC_I32, 5},
                {100, PQ_TC_I32, -3}, {3, PQ_TC_I64, 7}, {-4, PQ_TC_BOOL, 1}};
    rd x = {0};
    rd_open(&x, b.data, b.len);
    pq_tc_field f;
    int16_t last = 0;
    CHECK(pq_tc_struct_begin(&x.r) == PQ_OK);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK);
        CHECK(f.id == want[i].id && f.type == want[i].type);
        int64_t v = f.bool_value;
        if (f.type != PQ_TC_BOOL) CHECK(pq_tc_read_i64(&x.r, &v) == PQ_OK);
        CHECK_EQ_INT(v, want[i].v);
    }
    CHECK(pq_tc_next_field(&x.r, &last, &f) == PQ_OK && f.type == PQ_TC_STOP);
    pq_tc_struct_end(&x.r);
    CHECK_EQ_INT(pq_tc_remaining(&x.r), 0);
    rd_close(&x);
    pq_buf_free(&b);

    /* Writer misuse is reported. */
    pq_tc_writer w;
    pq_buf_init(&b);
    pq_tc_writer_init(&w, &b);
    pq_tc_write_struct_begin(&w);
    pq_error err;
    CHECK(pq_tc_writer_finish(&w, &err) == PQ_ERR && err.cls == PQ_E_USAGE);
    pq_buf_free(&b);
}

/* A struct holding one of everything, nested, then a sentinel byte. */
static const char EVERYTHING[] =
    "{1:T 2:F 3:i8 -7 4:i16 -300 5:i32 1073741824 6:i64 -9223372036854775808 7:dbl 2.5"
    " 8:'bytes' 9:[i32 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19] 10:S[bin 'a' 'bc']"
    " 11:<bin list 'k1' [dbl 1.0 2.0] 'k2' [dbl -1.5]> 12:<i32 i32> 13:[i8]"
    " 14:[bool T F T] 15:[struct {1:'inner' 2:{300:T 301:[list [i8 1 2]]}} {}]"
    " 16:<bool struct F {}>"
    " raw(1d 0 1 2 3 4 5 6 7 8 9 a b c d e f)}" /* 17: uuid (delta 1, type 13) */
    " raw(99)";

static void test_skip(void)
{
    pq_buf b;
    pq_buf_init(&b);
    tasm_build(&b, EVERYTHING);

    rd x = {0};
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
    CHECK_EQ_INT(fields, 17);
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
        rd x = {0};
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
    rd x = {0};
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
    e[0] = (pq_schema_element){.name = "schema", .has_num_children = true, .num_children = 3};
    e[1] = (pq_schema_element){.name = "a", .has_type = true, .type = PQ_INT64,
        .has_repetition = true, .repetition = PQ_REQUIRED, .has_field_id = true, .field_id = -17,
        .has_logical = true, .logical = {.kind = PQ_LT_TIMESTAMP, .utc = true, .unit = PQ_UNIT_NANOS}};
    e[2] = (pq_schema_element){.name = "b", .has_repetition = true, .repetition = PQ_OPTIONAL,
        .has_num_children = true, .num_children = 1};
    e[3] = (pq_schema_element){.name = "dec", .has_type = true, .type = PQ_FIXED_LEN_BYTE_ARRAY,
        .type_length = 16, .has_repetition = true, .repetition = PQ_REPEATED,
        .converted_type = PQ_CT_DECIMAL, .has_scale = true, .scale = 4, .has_precision = true,
        .precision = 38, .has_logical = true, .logical = {.kind = PQ_LT_DECIMAL, .scale = 4, .precision = 38}};
    e[4] = (pq_schema_element){.name = "u8", .has_type = true, .type = PQ_INT32,
        .has_repetition = true, .repetition = PQ_OPTIONAL, .converted_type = PQ_CT_UINT_8,
        .has_logical = true, .logical = {.kind = PQ_LT_INTEGER, .bit_width = 8}};
    e[5] = (pq_schema_element){.name = "s", .has_type = true, .type = PQ_BYTE_ARRAY,
        .converted_type = PQ_CT_UTF8, .has_logical = true, .logical = {.kind = PQ_LT_STRING}};
    e[0].converted_type = e[1].converted_type = e[2].converted_type = PQ_CT_NONE;

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
        *rg = (pq_row_group){.columns = s->cols[g], .n_columns = 2, .total_byte_size = 123456 + g,
            .num_rows = 1000 + g, .n_sorting = g ? 2 : -1, .sorting = g ? s->sort : NULL,
            .has_file_offset = g == 1, .file_offset = g ? 1004 : 0, .has_total_compressed_size = true,
            .total_compressed_size = 8000, .has_ordinal = true, .ordinal = (int16_t)g};
    }
    for (int i = 0; i < 3; i++) s->orders[i] = PQ_ORDER_TYPE_DEFINED;
    s->fm = (pq_file_meta){.version = 2, .schema = s->schema, .n_schema = 6, .num_rows = 2001,
        .row_groups = s->rg, .n_row_groups = 2, .kv = s->kv, .n_kv = 2, .created_by = "pqfs test",
        .column_orders = s->orders, .n_column_orders = 3};
}

static const char *str_or(const char *s)
{
    return s ? s : "(null)";
}

/* Field-by-field equality; SAME names the field in a failure. */
#define SAME(f) CHECK_EQ_INT(a->f, b->f)

static void check_stats_eq(const pq_stats *a, const pq_stats *b)
{
    SAME(has_min_value); SAME(has_max_value); SAME(has_min); SAME(has_max);
    CHECK(!a->has_min_value || bytes_eq(a->min_value, b->min_value));
    CHECK(!a->has_max_value || bytes_eq(a->max_value, b->max_value));
    CHECK(!a->has_min || bytes_eq(a->min, b->min));
    CHECK(!a->has_max || bytes_eq(a->max, b->max));
    SAME(has_null_count); SAME(null_count); SAME(has_distinct_count); SAME(distinct_count);
    SAME(has_min_exact); SAME(has_max_exact); SAME(min_exact); SAME(max_exact);
}

static void check_kv_eq(const pq_kv *x, int32_t nx, const pq_kv *y, int32_t ny)
{
    CHECK_EQ_INT(nx, ny);
    for (int32_t i = 0; i < nx && i < ny; i++) {
        CHECK_EQ_STR(x[i].key, y[i].key);
        CHECK_EQ_STR(str_or(x[i].value), str_or(y[i].value));
    }
}

static void check_column_meta_eq(const pq_column_meta *a, const pq_column_meta *b)
{
    SAME(type); SAME(codec); SAME(num_values); SAME(data_page_offset);
    SAME(total_uncompressed_size); SAME(total_compressed_size);
    SAME(n_encodings);
    for (int32_t i = 0; i < a->n_encodings && i < b->n_encodings; i++) SAME(encodings[i]);
    SAME(n_path);
    for (int32_t i = 0; i < a->n_path && i < b->n_path; i++) CHECK_EQ_STR(a->path[i], b->path[i]);
    check_kv_eq(a->kv, a->n_kv, b->kv, b->n_kv);
    SAME(has_index_page_offset); SAME(index_page_offset);
    SAME(has_dictionary_page_offset); SAME(dictionary_page_offset);
    SAME(has_stats);
    if (a->has_stats && b->has_stats) check_stats_eq(&a->stats, &b->stats);
    SAME(n_encoding_stats);
    for (int32_t i = 0; i < a->n_encoding_stats && i < b->n_encoding_stats; i++) {
        SAME(encoding_stats[i].page_type); SAME(encoding_stats[i].encoding);
        SAME(encoding_stats[i].count);
    }
    SAME(has_bloom_filter_offset); SAME(bloom_filter_offset);
    SAME(has_bloom_filter_length); SAME(bloom_filter_length);
}

static void check_schema_element_eq(const pq_schema_element *a, const pq_schema_element *b)
{
    CHECK_EQ_STR(a->name, b->name);
    SAME(has_type); SAME(type); SAME(type_length); SAME(has_repetition); SAME(repetition);
    SAME(has_num_children); SAME(num_children); SAME(converted_type);
    SAME(has_scale); SAME(scale); SAME(has_precision); SAME(precision);
    SAME(has_field_id); SAME(field_id); SAME(has_logical); SAME(logical.kind);
    SAME(logical.scale); SAME(logical.precision); SAME(logical.utc); SAME(logical.unit);
    SAME(logical.bit_width); SAME(logical.is_signed);
}

static void check_column_chunk_eq(const pq_column_chunk *a, const pq_column_chunk *b)
{
    CHECK_EQ_STR(str_or(a->file_path), str_or(b->file_path));
    SAME(file_offset); SAME(encrypted); SAME(has_meta);
    SAME(has_offset_index); SAME(offset_index_offset); SAME(offset_index_length);
    SAME(has_column_index); SAME(column_index_offset); SAME(column_index_length);
    if (a->has_meta && b->has_meta) check_column_meta_eq(&a->meta, &b->meta);
}

static void check_row_group_eq(const pq_row_group *a, const pq_row_group *b)
{
    SAME(total_byte_size); SAME(num_rows); SAME(has_file_offset); SAME(file_offset);
    SAME(has_total_compressed_size); SAME(total_compressed_size); SAME(has_ordinal);
    SAME(ordinal); SAME(n_sorting);
    for (int32_t i = 0; i < a->n_sorting && i < b->n_sorting; i++) {
        SAME(sorting[i].column_idx); SAME(sorting[i].descending); SAME(sorting[i].nulls_first);
    }
    SAME(n_columns);
    for (int32_t c = 0; c < a->n_columns && c < b->n_columns; c++)
        check_column_chunk_eq(&a->columns[c], &b->columns[c]);
}

static void check_file_meta_eq(const pq_file_meta *a, const pq_file_meta *b)
{
    SAME(version); SAME(num_rows); SAME(encryption_algorithm); SAME(n_column_orders);
    CHECK_EQ_STR(str_or(a->created_by), str_or(b->created_by));
    check_kv_eq(a->kv, a->n_kv, b->kv, b->n_kv);
    for (int32_t i = 0; i < a->n_column_orders && i < b->n_column_orders; i++)
        SAME(column_orders[i]);
    SAME(n_schema);
    for (int32_t i = 0; i < a->n_schema && i < b->n_schema; i++)
        check_schema_element_eq(&a->schema[i], &b->schema[i]);
    SAME(n_row_groups);
    for (int32_t g = 0; g < a->n_row_groups && g < b->n_row_groups; g++)
        check_row_group_eq(&a->row_groups[g], &b->row_groups[g]);
}

static void check_page_header_eq(const pq_page_header *a, const pq_page_header *b)
{
    SAME(type); SAME(uncompressed_page_size); SAME(compressed_page_size);
    SAME(has_crc); SAME(crc); SAME(has_data); SAME(has_data_v2); SAME(has_dict);
    SAME(data.num_values); SAME(data.encoding); SAME(data.def_encoding);
    SAME(data.rep_encoding); SAME(data.has_stats);
    if (a->data.has_stats) check_stats_eq(&a->data.stats, &b->data.stats);
    if (b->has_data_v2) {
        SAME(data_v2.num_values); SAME(data_v2.num_nulls); SAME(data_v2.num_rows);
        SAME(data_v2.encoding); SAME(data_v2.def_levels_byte_length);
        SAME(data_v2.rep_levels_byte_length); SAME(data_v2.is_compressed);
        SAME(data_v2.has_stats);
    }
    SAME(dict.num_values); SAME(dict.encoding); SAME(dict.is_sorted);
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

    /* Truncation at every byte offset fails cleanly, as CORRUPT; corrupting
     * any byte never crashes (ASan/UBSan watch) and errors are CORRUPT. */
    static const uint8_t repl[] = {0x00, 0xff, 0x7f, 0x80, 0x19, 0x1c, 0xf9};
    int truncation_ok = 1, classes_ok = 1;
    for (size_t i = 0; i < b.len; i++) {
        for (size_t k = 0; k <= sizeof repl; k++) {
            uint8_t *t = exact_copy(b.data, k ? b.len : i); /* k == 0: truncated at i */
            if (k) t[i] = repl[k - 1];
            pq_arena_reset(&a);
            pq_error_clear(&err);
            int rc = pq_decode_file_meta(t, k ? b.len : i, &a, &out, &err);
            if (!k && rc != PQ_ERR) truncation_ok = 0;
            if (rc != PQ_OK && err.cls != PQ_E_CORRUPT) classes_ok = 0;
            free(t);
        }
    }
    CHECK(truncation_ok);
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
    static const uint8_t min4[] = {1, 0, 0, 0};
    pq_page_header h[3] = {
        {.type = PQ_PAGE_DATA, .uncompressed_page_size = 1 << 20, .compressed_page_size = 12345,
         .has_crc = true, .crc = (int32_t)0xdeadbeefu, .has_data = true,
         .data = {1000, PQ_ENC_RLE_DICTIONARY, PQ_ENC_RLE, PQ_ENC_BIT_PACKED, true,
                  {.has_min_value = true, .has_max_value = true, .min_value = {min4, 4},
                   .max_value = bstr("\x09"), .has_null_count = true, .null_count = 3}}},
        {.type = PQ_PAGE_DATA_V2, .uncompressed_page_size = 100, .compressed_page_size = 80,
         .has_data_v2 = true, .data_v2 = {50, 5, 40, PQ_ENC_DELTA_BINARY_PACKED, 7, 3, false}},
        {.type = PQ_PAGE_DICTIONARY, .uncompressed_page_size = 64, .compressed_page_size = 64,
         .has_dict = true, .dict = {8, PQ_ENC_PLAIN, true}},
    };
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
        check_page_header_eq(&out, &h[i]);
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

/* FileMetaData around a leaf schema element's extra fields and the
 * top-level struct's extra fields. */
static void build_meta(pq_buf *b, const char *leaf_extra, const char *top_extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{1:i32 1 2:[struct {4:'root' 5:i32 1} {1:i32 2 3:i32 1 4:'leaf' %s}]"
             " 3:i64 0 4:[struct] %s}",
             leaf_extra, top_extra);
    tasm_build(b, text);
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

static void test_hand_made_meta(void)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_file_meta m;
    pq_error err;

    build_meta(&b, "", "");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.n_schema, 2);
    CHECK(!m.schema[1].has_logical);
    CHECK_EQ_INT(m.schema[1].converted_type, PQ_CT_NONE);
    CHECK_EQ_INT(m.n_column_orders, -1);
    CHECK(m.created_by == NULL && !m.encryption_algorithm);

    /* A future logical type (member 40); column orders TYPE_ORDER, IEEE754,
     * empty; unknown top-level fields with nested containers. */
    build_meta(&b, "10:{40:{1:i32 42 2:[bin 'x']}}",
               "6:'made by hand' 7:[struct {1:{}} {2:{}} {}]"
               " 50:{1:<bin list 'k' [struct {1:T}]>} 300:'ab' 301:dbl 9.75 -3:[bool T F]");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK(m.schema[1].has_logical);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_UNRECOGNIZED);
    CHECK_EQ_STR(m.created_by, "made by hand");
    CHECK_EQ_INT(m.n_column_orders, 3);
    CHECK_EQ_INT(m.column_orders[0], PQ_ORDER_TYPE_DEFINED);
    CHECK_EQ_INT(m.column_orders[1], PQ_ORDER_UNKNOWN);
    CHECK_EQ_INT(m.column_orders[2], PQ_ORDER_UNKNOWN);

    /* TIMESTAMP with an unknown unit is unrecognised, not corrupt. */
    build_meta(&b, "10:{8:{1:F 2:{9:{}}}}", "");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_UNRECOGNIZED);
    /* TIME(MILLIS, utc) with an unknown extra field. */
    build_meta(&b, "10:{7:{1:T 2:{1:{}} 3:dbl 1.5}} 6:i32 7", "");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK_EQ_INT(m.schema[1].logical.kind, PQ_LT_TIME);
    CHECK_EQ_INT(m.schema[1].logical.unit, PQ_UNIT_MILLIS);
    CHECK(m.schema[1].logical.utc);
    CHECK_EQ_INT(m.schema[1].converted_type, PQ_CT_TIME_MILLIS);
    /* INTEGER(16, signed), and an empty union (no annotation). */
    build_meta(&b, "10:{10:{1:i8 16 2:T}}", "");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK(m.schema[1].logical.bit_width == 16 && m.schema[1].logical.is_signed);
    build_meta(&b, "10:{}", "");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK && !m.schema[1].has_logical);

    static const struct { const char *leaf, *top, *msg; } bad[] = {
        {"10:{1:{} 6:{}}", "", "LogicalType.DATE: a second union member"},
        {"10:{10:{1:i8 7 2:T}}", "", "IntType.bitWidth: 7 is not"},
        {"10:{5:{1:i32 2}}", "",
         "FileMetaData.schema[1]: SchemaElement.logicalType: LogicalType.DECIMAL: "
         "DecimalType.precision: required field is missing"},
        {"", "3:i64 -5", "FileMetaData.num_rows: negative value -5"},
        {"5:i32 -1", "", "SchemaElement.num_children: negative value -1"},
        {"", "4:[struct {1:[struct] 2:i64 0}]",
         "FileMetaData.row_groups[0]: RowGroup.num_rows: required field is missing"},
        {"", "7:[struct #1000]", "list of 1000 elements"},
        {"", "raw(28 7f)", "FileMetaData.created_by: binary of 127 bytes"}, /* field 6 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        build_meta(&b, bad[i].leaf, bad[i].top);
        CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
        CHECK_EQ_INT(err.cls, PQ_E_CORRUPT);
        CHECK_CONTAINS(err.msg, bad[i].msg);
    }
    tasm_build(&b, "{1:i32 1 3:i64 0 4:[struct]}");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "FileMetaData.schema: required field is missing");
    tasm_build(&b, "{1:'one' 2:[struct {4:'root'}] 3:i64 0 4:[struct]}");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "FileMetaData.version: required field is not a i32");

    /* Plaintext-footer encryption and encrypted chunks are flagged; an
     * index offset without its length is no index. */
    build_meta(&b, "", "4:[struct {1:[struct {2:i64 0 8:{1:{}}} {2:i64 0 9:'cipher' 4:i64 100}]"
                       " 2:i64 0 3:i64 0}] 8:{1:{2:'unique'}} 9:'keymeta'");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_OK);
    CHECK(m.encryption_algorithm);
    CHECK(m.row_groups[0].columns[0].encrypted && !m.row_groups[0].columns[0].has_meta);
    CHECK(m.row_groups[0].columns[1].encrypted && !m.row_groups[0].columns[1].has_offset_index);
    CHECK_EQ_INT(m.row_groups[0].n_sorting, -1);

    /* path_in_schema claiming 2^32-1 elements: refused before allocating. */
    build_meta(&b, "", "4:[struct {1:[struct {2:i64 0 3:{1:i32 2 2:[i32] 3:[bin #4294967295 "
                       "raw(0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0)]}}]}]");
    CHECK(decode_meta(&b, &a, &m, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "FileMetaData.row_groups[0]: RowGroup.columns[0]: ColumnChunk.meta_data: "
                            "ColumnMetaData.path_in_schema: list of 4294967295 elements");
    CHECK_CONTAINS(err.msg, "exceeds the 24 bytes left"); /* 20 zeros, 4 STOPs */
    CHECK(a.total < 4096); /* nothing was sized by the bogus count */

    pq_arena_free(&a);
    pq_buf_free(&b);
}

static void test_hand_made_pages(void)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_error err;
    pq_page_header h;
    size_t consumed;
    static const struct { const char *text, *msg; } bad[] = {
        {"{1:i32 0 2:i32 10 3:i32 10}", "PageHeader.data_page_header: missing"},
        {"{1:i32 2 2:i32 10 3:i32 -1 7:{1:i32 1 2:i32 0}}",
         "PageHeader.compressed_page_size: negative value -1"},
        {"{1:i32 2 2:i32 10 7:{1:i32 1 2:i32 0}}",
         "PageHeader.compressed_page_size: required field is missing"},
        {"{1:i32 0 2:i32 10 3:i32 10 5:{1:i32 1 2:i32 0 3:i32 3}}",
         "PageHeader.data_page_header: DataPageHeader.repetition_level_encoding: required"},
        {"{1:i32 0 2:i32 10 3:i32 10 5:{1:i32 1 2:i32 0 3:i32 3 4:i32 3 5:{3:i64 -2}}}",
         "DataPageHeader.statistics: Statistics.null_count: negative value -2"},
        {"{1:i32 0 2:i32 10 3:i32 10 5:{1:i32 1 2:i32 0 3:i32 3 4:i32 3 5:{raw(18 0f)}}}",
         "Statistics.max: binary of 15 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tasm_build(&b, bad[i].text);
        CHECK(pq_decode_page_header((const uint8_t *)b.data, b.len, NULL, &h, &consumed, &err) ==
              PQ_ERR);
        CHECK_CONTAINS(err.msg, bad[i].msg);
    }

    /* V2 without is_compressed is compressed; the index page header and
     * unknown fields are skipped. */
    tasm_build(&b, "{1:i32 3 2:i32 10 3:i32 10 6:{} 8:{1:i32 1 2:i32 1 3:i32 1 4:i32 0 5:i32 1"
                   " 6:i32 1 20:i64 99} 9:'future'}");
    CHECK(pq_decode_page_header((const uint8_t *)b.data, b.len, NULL, &h, &consumed, &err) == PQ_OK);
    CHECK(h.has_data_v2 && h.data_v2.is_compressed);
    CHECK_EQ_INT(consumed, b.len);

    /* Column index with lists of different lengths. */
    pq_arena a;
    pq_arena_init(&a, 0);
    pq_column_index ci;
    tasm_build(&b, "{1:[bool F F] 2:[bin 'x'] 3:[bin 'y'] 4:i32 0}");
    CHECK(pq_decode_column_index((const uint8_t *)b.data, b.len, &a, &ci, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "2 null_pages but 1 min_values");
    tasm_build(&b, "{1:[bool F] 2:[bin 'x'] 3:[bin 'y'] 4:i32 0 5:[i64 1 2]}");
    CHECK(pq_decode_column_index((const uint8_t *)b.data, b.len, &a, &ci, &err) == PQ_ERR);
    CHECK_CONTAINS(err.msg, "1 null_pages but 2 null_counts");
    pq_arena_free(&a);

    /* Bloom header with an unknown hash member decodes, flagged. */
    tasm_build(&b, "{1:i32 32 2:{1:{}} 3:{2:{}} 4:{1:{}}}");
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

/* Loads data/NAME and decodes its footer into m (arena a set up here); on
 * failure records it and cleans up. */
static bool load_meta(const char *name, pqfile *f, pq_arena *a, pq_file_meta *m)
{
    pq_error err;
    pq_arena_init(a, 0);
    bool ok = load("data", name, f) && f->meta &&
              pq_decode_file_meta(f->meta, f->meta_len, a, m, &err) == PQ_OK;
    CHECK(ok);
    if (!ok) {
        pq_arena_free(a);
        free(f->data);
    }
    return ok;
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
    pq_arena a;
    pq_file_meta m;
    if (!load_meta("alltypes_plain.parquet", &f, &a, &m)) return;
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
    CHECK(m.n_row_groups == 1 && m.row_groups[0].num_rows == 8);
    CHECK_EQ_INT(m.row_groups[0].n_columns, 11);
    const pq_column_chunk *c = &m.row_groups[0].columns[9];
    CHECK(c->has_meta && c->meta.n_path == 1 && c->meta.type == PQ_BYTE_ARRAY);
    CHECK_EQ_STR(c->meta.path[0], "string_col");
    CHECK_EQ_INT(c->meta.num_values, 8);
    CHECK_EQ_STR(m.created_by, "impala version 1.3.0-INTERNAL (build 8a48ddb1eff84592b3fc06bc6f51ec120e1fffc9)");

    pq_arena_free(&a);
    free(f.data);
}

static void test_nested_maps(void)
{
    pqfile f;
    pq_arena a;
    pq_file_meta m;
    if (!load_meta("nested_maps.snappy.parquet", &f, &a, &m)) return;
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
    pq_arena a;
    pq_file_meta m;
    pq_error err;
    if (!load_meta("alltypes_tiny_pages.parquet", &f, &a, &m)) return;
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

/* A plaintext footer of an encrypted file decodes, flagged; its encrypted
 * columns are marked. */
static void test_plaintext_footer_encryption(void)
{
    pqfile f;
    pq_arena a;
    pq_file_meta m;
    if (!load_meta("encrypt_columns_plaintext_footer.parquet.encrypted", &f, &a, &m)) return;
    CHECK(m.encryption_algorithm);
    int encrypted = 0;
    for (int32_t c = 0; c < m.row_groups[0].n_columns; c++)
        encrypted += m.row_groups[0].columns[c].encrypted;
    CHECK(encrypted > 0 && encrypted < m.row_groups[0].n_columns);
    pq_buf b;
    pq_buf_init(&b);
    pq_error err;
    CHECK(pq_encode_file_meta(&m, &b, &err) == PQ_ERR && err.cls == PQ_E_USAGE);
    pq_buf_free(&b);
    pq_arena_free(&a);
    free(f.data);
}

/* The first page header of every plaintext chunk decodes, arena-free.  The
 * chunk starts at the dictionary page when there is one; writers that set
 * dictionary_page_offset to 0 (dict-page-offset-zero) or not at all (old
 * parquet-mr) start it at data_page_offset, and an empty chunk may have
 * data_page_offset 0 (column_chunk_key_value_metadata). */
static void check_first_pages(const pq_file_meta *m, const pqfile *f, bool must_decode)
{
    for (int32_t g = 0; g < m->n_row_groups; g++) {
        for (int32_t c = 0; c < m->row_groups[g].n_columns; c++) {
            const pq_column_chunk *cc = &m->row_groups[g].columns[c];
            const pq_column_meta *cm = &cc->meta;
            if (!cc->has_meta || cc->encrypted) continue;
            int64_t off = cm->data_page_offset;
            if (cm->has_dictionary_page_offset && cm->dictionary_page_offset > 0)
                off = cm->dictionary_page_offset;
            if ((uint64_t)off >= f->len) {
                CHECK(!must_decode);
                continue;
            }
            uint8_t *page = exact_copy(f->data + off, f->len - (size_t)off);
            pq_page_header h;
            size_t consumed;
            pq_error err;
            int rc = pq_decode_page_header(page, f->len - (size_t)off, NULL, &h, &consumed, &err);
            if (must_decode) CHECK(rc == PQ_OK && consumed > 0);
            free(page);
        }
    }
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
            check_first_pages(&m, &f, must_decode);
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
    pq_arena a;
    pq_file_meta m;
    pq_error err;
    if (!load_meta("data_index_bloom_encoding_stats.parquet", &f, &a, &m)) return;
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
    test_malformed_primitives();
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
    test_hand_made_pages();
    if (find_data_dir()) {
        test_alltypes_plain();
        test_nested_maps();
        test_tiny_pages_indexes();
        test_bloom_filter_files();
        test_plaintext_footer_encryption();
        test_corpus_footers("data", true);
        test_corpus_footers("bad_data", false);
    } else {
        printf("SKIP real footers: %s not found\n", data_dir);
    }
    return check_report();
}
