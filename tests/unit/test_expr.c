/* Expressions: parser errors and positions, binder errors, normal form (as
 * text), evaluation on a hand-built table of every column type (expected rows
 * checked against DuckDB), values <-> PLAIN bytes, the small API, and
 * randomized tests: pruning soundness against exact evaluation, fast paths
 * against the general path, substitution, text round trips, and garbage
 * input that must never crash. */
#define PQ_EXPR_INTERNAL
#include "expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ------------------------------------------------------------------ the table */

enum {
    C_I32, C_I64, C_D, C_F, C_S, C_DT, C_TS_US, C_TS_MS, C_TS_NS, C_TS96, C_DEC32, C_DEC64,
    C_DECFL, C_DECBA, C_B, C_U, C_T_MS, C_U32, C_U64, C_BIN, C_TAGS, C_IV, C_ODD, C_REQ, C_H,
    N_COLS
};
#define NR 10
#define DAY_US 86400000000LL
#define TS2024 1704067200LL /* 2024-01-01 00:00:00 in seconds */

static pq_node nodes[N_COLS];
static pq_expr_column cols[N_COLS];
static pq_col_batch batches[N_COLS];
static const pq_col_batch *batch_ptrs[N_COLS];
static uint16_t defs[N_COLS][NR];
static unsigned char dense[N_COLS][NR * 16];

static void prim(int i, const char *name, pq_phys phys, int32_t len, pq_logical_kind lk)
{
    pq_node *n = &nodes[i];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->kind = PQ_NODE_PRIMITIVE;
    n->phys = phys;
    n->type_length = len;
    n->logical.kind = lk;
    n->converted = PQ_CT_NONE;
    n->def_level = 1;
    n->nullable = true;
    cols[i].name = name;
    cols[i].node = n;
}

/* Rows of column i: `rows` holds NR values of `elem` bytes; bit r of nulls = NULL. */
static void fill(int i, const void *rows, size_t elem, unsigned nulls)
{
    pq_col_batch *b = &batches[i];
    b->n_rows = b->n_levels = NR;
    b->def = nodes[i].def_level ? defs[i] : NULL;
    int k = 0;
    for (int r = 0; r < NR; r++) {
        bool null = (nulls >> r) & 1;
        defs[i][r] = null ? 0 : 1;
        if (!null)
            memcpy(dense[i] + elem * (size_t)k++, (const char *)rows + elem * (size_t)r, elem);
    }
    b->n_values = k;
    b->values = dense[i];
    batch_ptrs[i] = b;
}

static pq_bytes B(const char *s, uint32_t n) { return (pq_bytes){(const uint8_t *)s, n}; }
#define S(lit) B(lit, sizeof(lit) - 1)

static uint8_t int96s[NR][12];
static uint8_t uuids[NR][16];
static uint8_t decfl[NR][9], decba[NR][16], halfs[NR][2], intervals[NR][12];

static void put_be(uint8_t *p, int len, __int128 v)
{
    for (int i = len - 1; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void put_int96(uint8_t *p, __int128 ns)
{
    __int128 day = (__int128)86400 * 1000000000;
    __int128 d = ns / day, t = ns % day;
    if (t < 0) { t += day; d--; }
    uint64_t nanos = (uint64_t)t;
    uint32_t julian = (uint32_t)(d + 2440588);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(nanos >> (8 * i));
    for (int i = 0; i < 4; i++) p[8 + i] = (uint8_t)(julian >> (8 * i));
}

static void setup_table(void)
{
    const unsigned N2 = 1u << 2; /* row 2 is NULL in every nullable column */
    prim(C_I32, "i32", PQ_INT32, 0, PQ_LT_NONE);
    static const int32_t i32[NR] = {1, -5, 0, INT32_MAX, 0, 3, INT32_MIN, 100, 7, 42};
    fill(C_I32, i32, 4, N2);
    prim(C_I64, "i64", PQ_INT64, 0, PQ_LT_NONE);
    static const int64_t i64[NR] = {10, INT64_MIN, 0, INT64_MAX, 0, 3, -1, 100000, 7, 42};
    fill(C_I64, i64, 8, N2);
    prim(C_D, "d", PQ_DOUBLE, 0, PQ_LT_NONE);
    const double d[NR] = {1.5, NAN, 0, -0.0, 0.0, INFINITY, -INFINITY, 1e308, 0.1, 2.5};
    fill(C_D, d, 8, N2);
    prim(C_F, "f", PQ_FLOAT, 0, PQ_LT_NONE);
    const float f[NR] = {0.1f, NAN, 0, -0.0f, 0.0f, INFINITY, -INFINITY, 3.4e38f, 2.5f, 1.0f};
    fill(C_F, f, 4, N2);
    prim(C_S, "s", PQ_BYTE_ARRAY, 0, PQ_LT_STRING);
    const pq_bytes s[NR] = {S("apple"), S(""), S(""), S("app"), S("application"),
                            S("banana"), S("h\xc3\xa9llo"), S("hallo"), S("b"), S("APPLE")};
    fill(C_S, s, sizeof(pq_bytes), N2);
    prim(C_DT, "dt", PQ_INT32, 0, PQ_LT_DATE);
    static const int32_t dt[NR] = {19723, 19722, 0, 0, -1, 19782, -25567, 106751, 2932896, 11016};
    fill(C_DT, dt, 4, N2);
    prim(C_TS_US, "ts_us", PQ_INT64, 0, PQ_LT_TIMESTAMP);
    nodes[C_TS_US].logical.unit = PQ_UNIT_MICROS;
    nodes[C_TS_US].logical.utc = true;
    const int64_t ts_us[NR] = {TS2024 * 1000000, (TS2024 + 36000) * 1000000, 0, 0, -1,
                               (TS2024 + 36000) * 1000000 - 1, 1, 1000, DAY_US,
                               (TS2024 + 181 * 86400 + 45296) * 1000000 + 789000};
    fill(C_TS_US, ts_us, 8, N2);
    prim(C_TS_MS, "ts_ms", PQ_INT64, 0, PQ_LT_TIMESTAMP);
    nodes[C_TS_MS].logical.unit = PQ_UNIT_MILLIS;
    const int64_t ts_ms[NR] = {TS2024 * 1000, (TS2024 + 36000) * 1000 + 1, 0, 0, -1,
                               (TS2024 + 36000) * 1000 - 1, 1, 1000, 86400000, -86400000LL * 365};
    fill(C_TS_MS, ts_ms, 8, N2);
    prim(C_TS_NS, "ts_ns", PQ_INT64, 0, PQ_LT_TIMESTAMP);
    nodes[C_TS_NS].logical.unit = PQ_UNIT_NANOS;
    const int64_t ts_ns[NR] = {0, 1, 0, 999, 1000, TS2024 * 1000000000, -1,
                               (TS2024 + 36000) * 1000000000, (TS2024 + 36000) * 1000000000 + 1,
                               4102444800000000000LL};
    fill(C_TS_NS, ts_ns, 8, N2);
    prim(C_TS96, "ts96", PQ_INT96, 0, PQ_LT_NONE);
    const __int128 G = 1000000000;
    const __int128 t96[NR] = {TS2024 * G, 1, 0, 0, -12 * 3600 * G, (TS2024 + 36000) * G,
                              (__int128)-5364662400LL * G, (__int128)16725225600LL * G,
                              TS2024 * G + G / 2, 86400 * G};
    for (int r = 0; r < NR; r++) put_int96(int96s[r], t96[r]);
    fill(C_TS96, int96s, 12, N2);
    prim(C_DEC32, "dec32", PQ_INT32, 0, PQ_LT_DECIMAL);
    nodes[C_DEC32].logical.scale = 2;
    nodes[C_DEC32].logical.precision = 9;
    static const int32_t dec32[NR] = {150, -150, 0, 0, 1, 999999999, -999999999, 100, 125, 123};
    fill(C_DEC32, dec32, 4, N2);
    prim(C_DEC64, "dec64", PQ_INT64, 0, PQ_LT_DECIMAL);
    nodes[C_DEC64].logical.scale = 3;
    nodes[C_DEC64].logical.precision = 18;
    static const int64_t dec64[NR] = {1500, -1, 0, 0, 1, 999999999999999999LL, 1234, 1235, 1225, 2000};
    fill(C_DEC64, dec64, 8, N2);
    prim(C_DECFL, "decfl", PQ_FIXED_LEN_BYTE_ARRAY, 9, PQ_LT_DECIMAL);
    nodes[C_DECFL].logical.scale = 2;
    nodes[C_DECFL].logical.precision = 20;
    const __int128 E19 = (__int128)10000000000000000000ULL;
    const __int128 vfl[NR] = {150, -150, 0, 0, E19, -E19, 1, 99, 100, 12345};
    pq_bytes fl[NR];
    for (int r = 0; r < NR; r++) {
        put_be(decfl[r], 9, vfl[r]);
        fl[r] = B((const char *)decfl[r], 9);
    }
    fill(C_DECFL, fl, sizeof(pq_bytes), N2);
    prim(C_DECBA, "decba", PQ_BYTE_ARRAY, 0, PQ_LT_DECIMAL);
    nodes[C_DECBA].logical.scale = 4;
    nodes[C_DECBA].logical.precision = 30;
    const __int128 vba[NR] = {15000, -15000, 0, 0, E19 * 10000000000LL, -1, 1, 12500, 5, 99990000};
    const int balen[NR] = {2, 2, 1, 1, 13, 1, 3, 16, 1, 4}; /* minimal and padded lengths */
    pq_bytes ba[NR];
    for (int r = 0; r < NR; r++) {
        put_be(decba[r], balen[r], vba[r]);
        ba[r] = B((const char *)decba[r], (uint32_t)balen[r]);
    }
    fill(C_DECBA, ba, sizeof(pq_bytes), N2);
    prim(C_B, "b", PQ_BOOLEAN, 0, PQ_LT_NONE);
    static const uint8_t bo[NR] = {1, 0, 0, 1, 0, 1, 0, 1, 0, 1};
    fill(C_B, bo, 1, N2);
    prim(C_U, "u", PQ_FIXED_LEN_BYTE_ARRAY, 16, PQ_LT_UUID);
    static const uint8_t first[NR] = {0x00, 0xff, 0, 0x12, 0x80, 0x7f, 0x01, 0xfe, 0x12, 0x00};
    pq_bytes u[NR];
    for (int r = 0; r < NR; r++) {
        memset(uuids[r], r == 1 ? 0xff : 0, 16);
        uuids[r][0] = first[r];
        if (r == 3) {
            static const uint8_t v[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                          0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
            memcpy(uuids[r], v, 16);
        }
        if (r == 9) uuids[r][15] = 1;
        u[r] = B((const char *)uuids[r], 16);
    }
    fill(C_U, u, sizeof(pq_bytes), N2);
    prim(C_T_MS, "t_ms", PQ_INT32, 0, PQ_LT_TIME);
    nodes[C_T_MS].logical.unit = PQ_UNIT_MILLIS;
    static const int32_t tms[NR] = {0, 3600000, 0, 86399999, 43200000, 43200001, 1, 999, 1000, 45296789};
    fill(C_T_MS, tms, 4, N2);
    prim(C_U32, "u32", PQ_INT32, 0, PQ_LT_INTEGER);
    nodes[C_U32].logical.bit_width = 32;
    static const uint32_t u32[NR] = {0, 1, 0, 2147483648u, 4294967295u, 3, 100, 7, 42, 2147483647};
    fill(C_U32, u32, 4, N2);
    prim(C_U64, "u64", PQ_INT64, 0, PQ_LT_INTEGER);
    nodes[C_U64].logical.bit_width = 64;
    static const uint64_t u64[NR] = {0, 1, 0, 9223372036854775808ull, 18446744073709551615ull,
                                     3, 100, 7, 42, 9223372036854775807ull};
    fill(C_U64, u64, 8, N2);
    prim(C_BIN, "bin", PQ_BYTE_ARRAY, 0, PQ_LT_NONE);
    const pq_bytes bin[NR] = {S("a\0b"), S("\xff"), S(""), S(""), S("abc"),
                              S("ab"), S("\x80"), S("b"), S("a"), S("\\")};
    fill(C_BIN, bin, sizeof(pq_bytes), N2);
    cols[C_TAGS].name = "tags"; /* nested: no node */
    prim(C_IV, "iv", PQ_FIXED_LEN_BYTE_ARRAY, 12, PQ_LT_NONE);
    nodes[C_IV].converted = PQ_CT_INTERVAL;
    pq_bytes iv[NR];
    for (int r = 0; r < NR; r++) {
        intervals[r][0] = (uint8_t)r;
        iv[r] = B((const char *)intervals[r], 12);
    }
    fill(C_IV, iv, sizeof(pq_bytes), N2 | 1u << 5);
    prim(C_ODD, "odd name", PQ_INT64, 0, PQ_LT_NONE);
    static const int64_t odd[NR] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    fill(C_ODD, odd, 8, 0);
    prim(C_REQ, "req", PQ_INT64, 0, PQ_LT_NONE);
    nodes[C_REQ].def_level = 0;
    nodes[C_REQ].nullable = false;
    static const int64_t req[NR] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    fill(C_REQ, req, 8, 0);
    prim(C_H, "h", PQ_FIXED_LEN_BYTE_ARRAY, 2, PQ_LT_FLOAT16);
    static const uint16_t hb[NR] = {0x3C00, 0x7E00, 0, 0x8000, 0x0000, 0x3800, 0x7BFF, 0xC000, 0x7C00, 0x2E66};
    pq_bytes h[NR];
    for (int r = 0; r < NR; r++) {
        halfs[r][0] = (uint8_t)hb[r];
        halfs[r][1] = (uint8_t)(hb[r] >> 8);
        h[r] = B((const char *)halfs[r], 2);
    }
    fill(C_H, h, sizeof(pq_bytes), N2);
}

/* ------------------------------------------------------------------ helpers */

static pq_arena arena;

static pq_expr *compile(const char *text, pq_error *err)
{
    pq_expr *e = NULL;
    pq_error_clear(err);
    if (pq_expr_compile(text, cols, N_COLS, &arena, &e, err) != PQ_OK)
        return NULL;
    return e;
}

static void expect_error(const char *text, const char *message)
{
    pq_error err;
    pq_expr *e = compile(text, &err);
    CHECK(e == NULL);
    if (!e) {
        CHECK(err.cls == PQ_E_USAGE || err.cls == PQ_E_NOMEM);
        if (strcmp(err.msg, message) != 0)
            fprintf(stderr, "  for: %s\n", text);
        CHECK_EQ_STR(err.msg, message);
    }
}

static char text_buf[4096];

static const char *text_of(const pq_expr *e)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_expr_text(e, &b);
    size_t n = b.len < sizeof text_buf - 1 ? b.len : sizeof text_buf - 1;
    memcpy(text_buf, b.data ? b.data : "", n);
    text_buf[n] = '\0';
    pq_buf_free(&b);
    return text_buf;
}

static void expect_text(const char *text, const char *normalized)
{
    pq_error err;
    pq_expr *e = compile(text, &err);
    if (!e) {
        fprintf(stderr, "  compile failed: %s: %s\n", text, err.msg);
        CHECK(e != NULL);
        return;
    }
    const char *got = text_of(e);
    if (strcmp(got, normalized) != 0)
        fprintf(stderr, "  for: %s\n", text);
    CHECK_EQ_STR(got, normalized);
}

/* Rows kept by the predicate as a string of 0/1 ("E" on error). */
static char mask_buf[NR + 1];
static const char *rows_of(const char *text, pq_error *err)
{
    pq_expr *e = compile(text, err);
    if (!e)
        return "compile error";
    uint8_t keep[NR];
    pq_arena scratch;
    pq_arena_init(&scratch, 0);
    int rc = pq_expr_filter(e, batch_ptrs, NR, keep, false, &scratch, err);
    pq_arena_free(&scratch);
    if (rc != PQ_OK)
        return "E";
    for (int r = 0; r < NR; r++)
        mask_buf[r] = keep[r] ? '1' : '0';
    mask_buf[NR] = '\0';
    return mask_buf;
}

static void expect_rows(const char *text, const char *mask)
{
    pq_error err;
    /* Both the fast paths and the general path must give the same rows. */
    for (int general = 0; general < 2; general++) {
        pq_x_disable_kernels = general;
        const char *got = rows_of(text, &err);
        if (strcmp(got, mask) != 0)
            fprintf(stderr, "  for: %s%s (%s)\n", text, general ? " [general path]" : "",
                    got[0] == 'E' || got[0] == 'c' ? err.msg : "");
        CHECK_EQ_STR(got, mask);
    }
    pq_x_disable_kernels = false;
}

/* ------------------------------------------------------------------ parser */

static void test_parse_errors(void)
{
    expect_error("amount >> 100", "unexpected '>' at position 9"); /* syntax before names */
    expect_error("i32 >> 100", "unexpected '>' at position 6");
    expect_error("s = 'abc", "unterminated string starting at position 5");
    expect_error("(i32 = 1 AND (i64 = 2)", "expected ')' at position 23");
    expect_error("(i32 = 1", "expected ')' at position 9");
    expect_error("", "empty expression");
    expect_error("   ", "empty expression");
    expect_error("i32 =", "unexpected end of expression at position 6");
    expect_error("i32 = 1 = 2", "unexpected '=' at position 9");
    expect_error("i32 / 2 > 1", "unexpected '/' at position 5");
    expect_error("i32 > 1 AND", "unexpected end of expression at position 12");
    expect_error("i32 IN ()", "unexpected ')' at position 9");
    expect_error("i32 IN 1", "expected '(' at position 8");
    expect_error("i32 IS 1", "unexpected '1' at position 8");
    expect_error("i32 NOT 1", "unexpected '1' at position 9");
    expect_error("i32 BETWEEN 1 OR 2", "expected 'AND' at position 15");
    expect_error("\"odd name = 1", "unterminated quoted name starting at position 1");
    expect_error("\"\" = 1", "empty quoted name at position 1");
    expect_error("i32 = 12abc", "invalid number '12abc' at position 7");
    expect_error("i32 = 1.2.3", "invalid number '1.2.3' at position 7");
    expect_error("i32 = 1e", "invalid number '1e' at position 7");
    expect_error("i32 & 1", "unexpected '&' at position 5");
    expect_error("s = 'é' ^ 1", "unexpected '^' at position 9"); /* positions count characters */
    expect_error("é = 1 §", "unexpected '§' at position 7");
    expect_error("i32 = 1 )", "unexpected ')' at position 9");
    expect_error("NOT", "unexpected end of expression at position 4");
    expect_error("i32 = NOT 1", "unexpected 'NOT' at position 7");
    /* depth and length limits */
    char deep[2000];
    int n = 0;
    for (int i = 0; i < 300; i++) deep[n++] = '(';
    memcpy(deep + n, "i32", 3);
    n += 3;
    for (int i = 0; i < 300; i++) deep[n++] = ')';
    deep[n] = '\0';
    expect_error(deep, "expression nested too deeply at position 257");
    n = 0;
    for (int i = 0; i < 300; i++) deep[n++] = '-';
    strcpy(deep + n, "1 = i32");
    expect_error(deep, "expression nested too deeply at position 257");
    n = 0;
    for (int i = 0; i < 300; i++) n += sprintf(deep + n, "NOT ");
    strcpy(deep + n, "b");
    expect_error(deep, "expression nested too deeply at position 1025");
    char *big = malloc(PQ_EXPR_MAX_LEN + 10);
    memset(big, ' ', PQ_EXPR_MAX_LEN + 9);
    big[PQ_EXPR_MAX_LEN + 9] = '\0';
    big[0] = 'b';
    expect_error(big, "expression too long (65545 bytes, limit 65536)");
    free(big);
    /* long flat chains are fine: AND/OR lists are n-ary */
    char *chain = malloc(20000);
    n = sprintf(chain, "i32 = 0");
    for (int i = 1; i < 1000; i++) n += sprintf(chain + n, " OR i32 = %d", i);
    pq_error err;
    CHECK(compile(chain, &err) != NULL);
    free(chain);
}

/* ------------------------------------------------------------------ binder */

static void test_bind_errors(void)
{
    expect_error("amout > 1", "unknown column 'amout'");
    expect_error("I32 > 1", "unknown column 'I32'"); /* names are exact */
    expect_error("tags = 1", "column 'tags' is nested and cannot be filtered");
    expect_error("tags IS NULL", "column 'tags' is nested and cannot be filtered");
    expect_error("dt = b", "cannot compare DATE with BOOLEAN");
    expect_error("s = 1", "cannot compare STRING with INTEGER");
    expect_error("1 = s", "cannot compare INTEGER with STRING");
    expect_error("t_ms = ts_us", "cannot compare TIME with TIMESTAMP");
    expect_error("u = s", "cannot compare UUID with STRING");
    expect_error("i32 IN (1, 'x', 2)", "cannot read 'x' as INTEGER");
    expect_error("dt >= '2024-13-01'", "cannot read '2024-13-01' as DATE");
    expect_error("ts_us >= 'yesterday'", "cannot read 'yesterday' as TIMESTAMP");
    expect_error("t_ms > '25:00'", "cannot read '25:00' as TIME");
    expect_error("d > 'abc'", "cannot read 'abc' as DOUBLE");
    expect_error("f > 'abc'", "cannot read 'abc' as FLOAT");
    expect_error("b = 'maybe'", "cannot read 'maybe' as BOOLEAN");
    expect_error("u = 'not-a-uuid'", "cannot read 'not-a-uuid' as UUID");
    expect_error("dec32 > '1.2.3'", "cannot read '1.2.3' as DECIMAL");
    expect_error("i32 LIKE 'a%'", "LIKE needs a string, not INTEGER");
    expect_error("u LIKE 'a%'", "LIKE needs a string, not UUID");
    expect_error("s LIKE s", "the pattern of LIKE must be a string literal (position 8)");
    expect_error("s + 1 > 2", "cannot apply '+' to STRING and INTEGER");
    expect_error("-dt > 2", "cannot apply '-' to DATE");
    expect_error("dt + 1 > dt", "cannot apply '+' to DATE and INTEGER");
    expect_error("i32", "the expression is not a condition: it has type INTEGER");
    expect_error("i32 + 1", "the expression is not a condition: it has type INTEGER");
    expect_error("i32 AND b", "AND needs a boolean operand, not INTEGER");
    expect_error("NOT s", "NOT needs a boolean operand, not STRING");
    expect_error("iv = 'x'", "column 'iv' has type INTERVAL and can only be tested with IS [NOT] NULL");
    expect_error("iv", "column 'iv' has type INTERVAL and can only be tested with IS [NOT] NULL");
    expect_error("9223372036854775807 + 1 > i64", "integer overflow in 9223372036854775807 + 1");
    expect_error("i64 > -(-9223372036854775807 - 1)", "integer overflow in -(-9223372036854775808)");
    pq_error err;
    CHECK(compile("iv IS NULL", &err) != NULL);
    CHECK(compile("\"odd name\" > 3 AND \"i32\" = 1", &err) != NULL);
}

/* ------------------------------------------------------------------ normal form */

static void test_normalize(void)
{
    static const char *const cases[][2] = {
        {"i32 > 1 AND s IN ('DE', 'FR')", "(i32 > 1) AND (s IN ('DE', 'FR'))"},
        {"NOT (i32 > 1)", "i32 <= 1"},
        {"NOT (i32 > 1 AND i64 < 2)", "(i32 <= 1) OR (i64 >= 2)"},
        {"! (i32 > 1 || i64 < 2) && b", "(i32 <= 1) AND (i64 >= 2) AND (b = TRUE)"},
        {"NOT (i32 IN (1,2))", "i32 NOT IN (1, 2)"},
        {"NOT (i32 NOT IN (1,2))", "i32 IN (1, 2)"},
        {"NOT s LIKE 'a%'", "s NOT LIKE 'a%'"},
        {"NOT i32 IS NULL", "i32 IS NOT NULL"},
        {"NOT NOT i32 = 1", "i32 = 1"},
        {"NOT (d < 1)", "d >= 1.0"},
        {"i32 BETWEEN 1 AND 5", "(i32 >= 1) AND (i32 <= 5)"},
        {"i32 NOT BETWEEN 1 AND 5", "(i32 < 1) OR (i32 > 5)"},
        {"NOT (i32 BETWEEN 1 AND 5)", "(i32 < 1) OR (i32 > 5)"},
        {"i32 BETWEEN NULL AND 5", "FALSE"},
        {"i32 NOT BETWEEN NULL AND 5", "i32 > 5"},
        {"1 < i32", "i32 > 1"},
        {"5 >= i32 + 1", "i32 + 1 <= 5"},
        {"1 + 2 * 3 = i32", "i32 = 7"},
        {"i32 <> 1 and i32 == 2", "(i32 != 1) AND (i32 = 2)"},
        {"i32 > 1 AND NULL", "FALSE"},
        {"i32 > 1 OR NULL", "i32 > 1"},
        {"NOT (i32 > 1 OR NULL)", "FALSE"},
        {"false AND i32 > 1", "FALSE"},
        {"TRUE OR i32 > 1", "TRUE"},
        {"TRUE", "TRUE"},
        {"NULL", "FALSE"},
        {"NULL = 1", "FALSE"},
        {"i32 = NULL", "FALSE"},
        {"NULL IS NULL", "TRUE"},
        {"i32 NOT IN (1, NULL)", "FALSE"},
        {"i32 IN (1, NULL, 2)", "i32 IN (1, 2)"},
        {"i32 IN (3, 1, 2, 1)", "i32 IN (1, 2, 3)"},
        {"i32 IN (1)", "i32 = 1"},
        {"i32 NOT IN (1)", "i32 != 1"},
        {"i32 IN (i64, 1)", "(i32 = i64) OR (i32 = 1)"},
        {"i32 = 1.5", "FALSE"},
        {"i32 != 1.5", "i32 IS NOT NULL"},
        {"i32 = 2.0", "i32 = 2.0"},
        {"i32 > 3000000000", "FALSE"},
        {"i32 < 3000000000", "i32 IS NOT NULL"},
        {"i32 IN (1.5, 2.5)", "FALSE"},
        {"b", "b = TRUE"},
        {"NOT b", "b = FALSE"},
        {"s LIKE 'abc'", "s = 'abc'"},
        {"s NOT LIKE 'abc'", "s != 'abc'"},
        {"s LIKE '%'", "s IS NOT NULL"},
        {"s NOT LIKE '%%'", "FALSE"},
        {"s = 'it''s'", "s = 'it''s'"},
        {"dt >= '2024-01-01'", "dt >= '2024-01-01'"},
        {"dt < '2024-01-01 10:00'", "dt < '2024-01-01'"},
        {"ts_us >= '2024-01-01 10:00'", "ts_us >= '2024-01-01 10:00:00'"},
        {"ts_us = '2024-01-01 10:00:00.0000005'", "FALSE"},
        {"ts_us >= '2024-01-01T10:00:00+02:00'", "ts_us >= '2024-01-01 08:00:00'"},
        {"dt < ts_us", "dt < ts_us"},
        {"t_ms > '12:00'", "t_ms > '12:00:00'"},
        {"i64 > 1e0", "CAST(i64 AS DOUBLE) > 1.0"},
        {"f = 0.1", "f = 0.10000000149011612"},
        {"f = 1e-1", "f = 0.1"},
        {"i32 = f", "CAST(i32 AS FLOAT) = f"},
        {"d = 'nan'", "d = 'nan'"},
        {"d < '-inf'", "d < '-inf'"},
        {"u = '123E4567-E89B-12D3-A456-426614174000'", "u = '123e4567-e89b-12d3-a456-426614174000'"},
        {"bin = '\\xff'", "bin = '\\xff'"},
        {"\"odd name\" = 1", "\"odd name\" = 1"},
        {"(i32 > 1 AND i64 > 2) AND (i32 < 5 AND (d > 0 AND TRUE))",
         "(i32 > 1) AND (i64 > 2) AND (i32 < 5) AND (d > 0.0)"},
        {"i32 % 2 = 1 OR -i32 > 3", "(i32 % 2 = 1) OR (-i32 > 3)"},
        {"(i32 + 1) * 2 > i64 - (1 - i32)", "(i32 + 1) * 2 > i64 - (1 - i32)"},
        {"i64 - -1 > 0", "i64 - -1 > 0"},
        {"dec32 > 1.5 + 1", "dec32 > 2.5"},
        {"dec32 * 2 > 1", "dec32 * 2 > 1"},
        {"dec32 > '1.234'", "dec32 > 1.23"},
        {"dec32 > '1.235'", "dec32 > 1.24"},
        {"i32 > '1.5'", "i32 > 2"},
        {"i32 > '-2.5'", "i32 > -3"},
        {"b = (i32 > 1)", "b = (i32 > 1)"},
        {"NOT (b = (i32 > 1))", "b != (i32 > 1)"},
        {"u64 > 1", "u64 > 1"},
        {"b = 'yes'", "b = TRUE"},
        {"iv IS NULL", "iv IS NULL"},
        {"i32 IN (1, 2.5)", "i32 IN (1, 2.5)"},
        {"123456789012345678901234567890 > dec32", "dec32 IS NOT NULL"}, /* beyond DECIMAL(9,2) */
        {"12345678901234567890123456 > decba", "decba < 12345678901234567890123456"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_text(cases[i][0], cases[i][1]);
}

/* ------------------------------------------------------------------ evaluation */

/* Expected rows computed by DuckDB on the same table (tools/js, TimeZone UTC;
 * ts96 read as TIMESTAMP, so row 1's 1 ns is 0 there: no case below tells). */
static void test_eval_table(void)
{
    static const char *const cases[][2] = {
        {"i32 > 1", "0001010111"},
        {"i32 >= 3", "0001010111"},
        {"i32 < 0", "0100001000"},
        {"i32 <= -5", "0100001000"},
        {"i32 = 42", "0000000001"},
        {"i32 != 42", "1101111110"},
        {"i32 <> 0", "1101011111"},
        {"i32 = 2147483647", "0001000000"},
        {"i32 > 2147483646", "0001000000"},
        {"i32 < -2147483647", "0000001000"},
        {"i32 > 1.5", "0001010111"},
        {"i32 >= 1.5", "0001010111"},
        {"i32 < 2.5", "1100101000"},
        {"i32 = 3.0", "0000010000"},
        {"i32 > 1e0", "0001010111"},
        {"i32 > '7'", "0001000101"},
        {"i32 > '6.5'", "0001000101"},
        {"i32 IN (1, 3, 42, 99)", "1000010001"},
        {"i32 NOT IN (1, 3, 42, 99)", "0101101110"},
        {"i32 IN (1, NULL)", "1000000000"},
        {"i32 NOT IN (1, NULL)", "0000000000"},
        {"i32 NOT IN (2, NULL)", "0000000000"},
        {"i32 IN (1, 2.5, 3)", "1000010000"},
        {"i32 BETWEEN 0 AND 10", "1000110010"},
        {"i32 NOT BETWEEN 0 AND 10", "0101001101"},
        {"i32 BETWEEN 10 AND 0", "0000000000"},
        {"i32 IS NULL", "0010000000"},
        {"i32 IS NOT NULL", "1101111111"},
        {"i32 + 1 > 4", "0001000111"},
        {"i32 * 2 = 14", "0000000010"},
        {"i32 % 2 = 1", "1001010010"},
        {"i32 % 2 = -1", "0100000000"},
        {"i32 - 100 = 0", "0000000100"},
        {"i32 IN (i64, 100)", "0000110111"},
        {"i32 = i64", "0000110011"},
        {"i32 < i64", "1001001100"},
        {"i32 % 0 IS NULL", "1111111111"},
        {"i32 IN (1.5e0, 3)", "0000010000"},
        {"i32 IN (1 + 2, 42)", "0000010001"},
        {"3 IN (i32, i64)", "0000010000"},
        {"i32 + 0 IN (1, 3, NULL)", "1000010000"},
        {"i32 + 0 NOT IN (1, 3, NULL)", "0000000000"},
        {"i64 > 0", "1001010111"},
        {"i64 < -1", "0100000000"},
        {"i64 = -9223372036854775808", "0100000000"},
        {"i64 >= 9223372036854775807", "0001000000"},
        {"i64 > 9223372036854775807", "0000000000"},
        {"i64 < 9223372036854775808", "1101111111"},
        {"i64 > -9223372036854775809", "1101111111"},
        {"i64 > 1e18", "0001000000"},
        {"i64 = 9.223372036854776e18", "0001000000"},
        {"i64 IN (7, 42, 100000)", "0000000111"},
        {"i64 % 7 = 0", "0001100011"},
        {"i64 * 1 > 5", "1001000111"},
        {"d > 1", "1100010101"},
        {"d > 1e308", "0100010000"},
        {"d >= 1e308", "0100010100"},
        {"d < 0", "0000001000"},
        {"d <= 0", "0001101000"},
        {"d = 0", "0001100000"},
        {"d = -0.0", "0001100000"},
        {"d != 0", "1100011111"},
        {"d = 'nan'", "0100000000"},
        {"d != 'nan'", "1001111111"},
        {"d > 'nan'", "0000000000"},
        {"d >= 'nan'", "0100000000"},
        {"d < 'nan'", "1001111111"},
        {"d <= 'inf'", "1001111111"},
        {"d < 'inf'", "1001101111"},
        {"d = 'inf'", "0000010000"},
        {"d = '-inf'", "0000001000"},
        {"d > '-inf'", "1101110111"},
        {"d IN (0, 'nan', 2.5)", "0101100001"},
        {"d NOT IN (0, 1.5)", "0100011111"},
        {"d BETWEEN 0 AND 2", "1001100010"},
        {"d = 0.1", "0000000010"},
        {"d = 1e-1", "0000000010"},
        {"d * 2 > 3", "0100010101"},
        {"d + 1 = 1", "0001100000"},
        {"d % 1 = 0.5", "1000000001"},
        {"-d > 0", "0100001000"},
        {"d IS NULL", "0010000000"},
        {"f = 0.1", "1000000000"},
        {"f = 1e-1", "0000000000"},
        {"f > 0.1", "0100010111"},
        {"f < 0.1", "0001101000"},
        {"f = 2.5", "0000000010"},
        {"f > 3e38", "0100010100"},
        {"f > 3.4e38", "0100010000"},
        {"f = '0.1'", "1000000000"},
        {"f = 'nan'", "0100000000"},
        {"f > 1e308", "0100010000"},
        {"f IN (0.1, 2.5)", "1000000010"},
        {"f * 2 = 5", "0000000010"},
        {"f + 0.1 > 0.2", "0100010111"},
        {"f = d", "0101111000"},
        {"f < i32", "1001001011"},
        {"h = 0.5", "0000010000"},
        {"h > 1", "0100001010"},
        {"h = 'nan'", "0100000000"},
        {"h < 0", "0000000100"},
        {"h = 0.1", "0000000000"},
        {"h IN (1, 65504, -2)", "1000001100"},
        {"s = 'apple'", "1000000000"},
        {"s > 'apple'", "0000111110"},
        {"s >= 'app'", "1001111110"},
        {"s < 'b'", "1101100001"},
        {"s < 'APPLE'", "0100000000"},
        {"s = ''", "0100000000"},
        {"s != ''", "1001111111"},
        {"s > ''", "1001111111"},
        {"s IN ('apple', 'b', 'zzz')", "1000000010"},
        {"s NOT IN ('apple', 'b')", "0101111101"},
        {"s LIKE 'app%'", "1001100000"},
        {"s LIKE 'app'", "0001000000"},
        {"s LIKE 'app_'", "0000000000"},
        {"s LIKE 'a%e'", "1000000000"},
        {"s LIKE '%an%'", "0000010000"},
        {"s LIKE '%a'", "0000010000"},
        {"s LIKE 'h_llo'", "0000001100"},
        {"s LIKE 'h__llo'", "0000000000"},
        {"s LIKE '_'", "0000000010"},
        {"s LIKE '%'", "1101111111"},
        {"s LIKE ''", "0100000000"},
        {"s NOT LIKE 'app%'", "0100011111"},
        {"s NOT LIKE '%l%'", "0101010011"},
        {"s LIKE '%l%o'", "0000001100"},
        {"s LIKE 'APP%'", "0000000001"},
        {"s LIKE '%p%p%'", "1001100000"},
        {"s LIKE '_%_'", "1001111101"},
        {"s BETWEEN 'a' AND 'b'", "1001100010"},
        {"s < 'é'", "1101111111"},
        {"s LIKE '%é%'", "0000001000"},
        {"s IS NULL", "0010000000"},
        {"dt = '2024-01-01'", "1000000000"},
        {"dt > '2024-01-01'", "0000010110"},
        {"dt < '1970-01-01'", "0000101000"},
        {"dt <= '1970-01-01'", "0001101000"},
        {"dt >= '2000-02-29'", "1100010111"},
        {"dt BETWEEN '1970-01-01' AND '2024-12-31'", "1101010001"},
        {"dt IN ('2024-01-01', '1900-01-01')", "1000001000"},
        {"dt < '2024-01-01 10:00'", "0101101001"},
        {"dt = '2024-01-01 10:00'", "1000000000"},
        {"dt > ts_us", "0000010110"},
        {"dt = '9999-12-31'", "0000000010"},
        {"ts_us >= '2024-01-01 10:00'", "0100000001"},
        {"ts_us > '2024-01-01 09:59:59.999999'", "0100000001"},
        {"ts_us < '1970-01-01'", "0000100000"},
        {"ts_us = '1970-01-01'", "0001000000"},
        {"ts_us > '1970-01-01 00:00:00.000001'", "1100010111"},
        {"ts_us BETWEEN '1970-01-01' AND '1970-01-02'", "0001001110"},
        {"ts_us IN ('1970-01-01', '2024-01-01 10:00:00')", "0101000000"},
        {"ts_us >= '2024-01-01T10:00:00+02:00'", "0100010001"},
        {"ts_us < dt", "0000010110"},
        {"ts_ms > '2024-01-01 10:00:00'", "0100000000"},
        {"ts_ms = '2024-01-01 10:00:00.001'", "0100000000"},
        {"ts_ms < '1970-01-01'", "0000100001"},
        {"ts_ms <= '1970-01-01 00:00:00.001'", "0001101001"},
        {"ts_ms >= '1969-01-01'", "1101111111"},
        {"ts_ms = ts_us", "1001000010"},
        {"ts_ns > '1970-01-01'", "0101110111"},
        {"ts_ns >= '1970-01-01 00:00:00.000001'", "0000110111"},
        {"ts_ns = '2024-01-01 10:00:00.000000001'", "0000000010"},
        {"ts_ns > '2024-01-01'", "0000000111"},
        {"ts_ns < '1970-01-01'", "0000001000"},
        {"ts_ns > '2099-12-31'", "0000000001"},
        {"ts96 >= '2024-01-01'", "1000010110"},
        {"ts96 < '1900-01-01'", "0000001000"},
        {"ts96 > '2400-01-01'", "0000000100"},
        {"ts96 = '2024-01-01 00:00:00.5'", "0000000010"},
        {"ts96 BETWEEN '1969-12-31' AND '1970-01-02'", "0101100001"},
        {"dec32 > 1.25", "1000010000"},
        {"dec32 >= 1.25", "1000010010"},
        {"dec32 = 1.5", "1000000000"},
        {"dec32 = 1.50", "1000000000"},
        {"dec32 = 1.505", "0000000000"},
        {"dec32 > 1.505", "0000010000"},
        {"dec32 < 1.505", "1101101111"},
        {"dec32 = '1.234'", "0000000001"},
        {"dec32 > 1", "1000010011"},
        {"dec32 > 1e0", "1000010011"},
        {"dec32 < 0", "0100001000"},
        {"dec32 IN (1.5, 1.23, 0.01)", "1000100001"},
        {"dec32 BETWEEN 1 AND 1.3", "0000000111"},
        {"dec32 * 2 > 2.5", "1000010000"},
        {"dec32 + 1 > 2.25", "1000010000"},
        {"dec32 % 1 = 0.5", "1000000000"},
        {"dec32 * dec32 > 1", "1100011011"},
        {"-dec32 > 1", "0100001000"},
        {"dec32 > 9999999.99", "0000000000"},
        {"dec32 = dec64", "1001000000"},
        {"dec64 > 1.2345", "1000010101"},
        {"dec64 = 1.225", "0000000010"},
        {"dec64 < 1.2345", "0101101010"},
        {"dec64 > 999999999999999.998", "0000010000"},
        {"dec64 IN (1.234, 2)", "0000001001"},
        {"decfl > 1", "1000100001"},
        {"decfl = 100000000000000000", "0000100000"},
        {"decfl < -100000000000000000", "0000000000"},
        {"decfl >= 1.0", "1000100011"},
        {"decfl IN (0.01, 0.99, 1)", "0000001110"},
        {"decfl > 123.449", "0000100001"},
        {"decba > 1.25", "1000100001"},
        {"decba = 10000000000000000000000000", "0000100000"},
        {"decba < 0", "0100010000"},
        {"decba = 0.0005", "0000000010"},
        {"decba > 9999", "0000100000"},
        {"decba + 1 > 2", "1000100101"},
        {"b", "1001010101"},
        {"NOT b", "0100101010"},
        {"b = true", "1001010101"},
        {"b != true", "0100101010"},
        {"b = 'true'", "1001010101"},
        {"b > false", "1001010101"},
        {"b IS NULL", "0010000000"},
        {"b = (i32 > 5)", "0101101101"},
        {"b AND i32 > 5", "0001000101"},
        {"b OR i32 > 5", "1001010111"},
        {"NOT (b AND i32 > 5)", "1100111010"},
        {"u = '123e4567-e89b-12d3-a456-426614174000'", "0001000000"},
        {"u > '80000000-0000-0000-0000-000000000000'", "0100000100"},
        {"u < '7f000000-0000-0000-0000-000000000000'", "1001001011"},
        {"u IN ('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff')", "1100000000"},
        {"u >= '12000000-0000-0000-0000-000000000000'", "0101110110"},
        {"t_ms > '12:00'", "0001010001"},
        {"t_ms >= '12:00:00.001'", "0001010001"},
        {"t_ms = '00:00:01'", "0000000010"},
        {"t_ms < '00:00:00.5'", "1000001000"},
        {"t_ms BETWEEN '01:00' AND '13:00'", "0100110001"},
        {"t_ms = '23:59:59.999'", "0001000000"},
        {"t_ms > '12:00:00.0005'", "0001010001"},
        {"u32 > 2147483647", "0001100000"},
        {"u32 >= 2147483648", "0001100000"},
        {"u32 = 4294967295", "0000100000"},
        {"u32 > 4294967295", "0000000000"},
        {"u32 < 0", "0000000000"},
        {"u32 > -1", "1101111111"},
        {"u32 IN (0, 4294967295, 5000000000)", "1000100000"},
        {"u32 + 1 > 3", "0001111111"},
        {"u64 > 9223372036854775807", "0001100000"},
        {"u64 = 18446744073709551615", "0000100000"},
        {"u64 < 1", "1000000000"},
        {"u64 > -1", "1101111111"},
        {"u64 IN (0, 18446744073709551615)", "1000100000"},
        {"u64 > 1e19", "0000100000"},
        {"u64 = i64", "0000010000"},
        {"bin = 'a\\x00b'", "1000000000"},
        {"bin > 'a'", "1100111100"},
        {"bin < '\\x80'", "1001110111"},
        {"bin = '\\xff'", "0100000000"},
        {"bin >= '\\xFF'", "0100000000"},
        {"bin IN ('a', 'b')", "0000000110"},
        {"bin = '\\x5C'", "0000000001"},
        {"bin = ''", "0001000000"},
        {"\"odd name\" > 5", "0000011111"},
        {"req >= 5", "0000011111"},
        {"req IN (1, 3, 5)", "0101010000"},
        {"req + \"odd name\" = 9", "0000100000"},
        {"req IS NULL", "0000000000"},
        {"req IS NOT NULL", "1111111111"},
        {"req % 3 = 0 AND \"odd name\" > 2", "0001001001"},
        {"i32 > 1 AND s LIKE 'a%'", "0001000000"},
        {"i32 > 1 OR s LIKE 'a%'", "1001110111"},
        {"NOT (i32 > 1 OR s LIKE 'a%')", "0100001000"},
        {"(i32 > 1) = (i64 > 1)", "0101111111"},
        {"(i32 > 1) != (d > 1)", "1101000010"},
        {"i32 IS NULL OR d = 'nan'", "0110000000"},
        {"NOT (i32 IS NULL) AND NOT (d > 0)", "0001101000"},
        {"NOT (d > 0)", "0001101000"},
        {"NOT (d < 1)", "1100010101"},
        {"NOT (d <> d)", "1101111111"},
        {"d = d", "1101111111"},
        {"(i32 > 1 AND NULL) IS NULL", "0011010111"},
        {"(i32 > 1 OR NULL) IS NULL", "1110101000"},
        {"NOT ((i32 > 1) IS NOT NULL)", "0010000000"},
        {"-i32 > 4", "0100001000"}, /* DuckDB: INT32 overflow; pqfs computes in int64 */
        {"-i32 IN (-1, -3)", "1000010000"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_rows(cases[i][0], cases[i][1]);
}

int main(void)
{
    pq_arena_init(&arena, 0);
    setup_table();
    test_parse_errors();
    test_bind_errors();
    test_normalize();
    test_eval_table();
    pq_arena_free(&arena);
    return check_report();
}
