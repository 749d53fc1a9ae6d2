/* fuzz_expr: where= expressions.  The input is the expression text; it is
 * compiled against a fixed table of columns of every kind the binder knows
 * (integers, floats, strings, dates, times, timestamps, INT96, decimals of
 * each physical type, booleans, UUIDs, FLOAT16, an opaque INTERVAL, a
 * required column, a quoted name, a nested column (IS [NOT] NULL only: its
 * batch is row-level nullness without values), a partition column).
 *
 * When it compiles, it is evaluated on a batch whose rows are drawn from
 * value pools with a generator seeded by a hash of the input, and checked:
 *   - the fast paths (kernels) and the general evaluator agree, errors too;
 *   - evaluating only kept rows keeps a subset;
 *   - pruning is sound: with the batch's exact ranges, and with loosened
 *     ones, FALSE means no row is TRUE and TRUE means every row is;
 *   - a constant expression keeps all rows or none;
 *   - the printed text compiles back to the same text and the same rows
 *     (except text with a CAST, which has no syntax, and text nested too
 *     deeply to read back; and, unless PQ_FUZZ_STRICT_TEXT=1, text with an
 *     exponent literal only has to be stable from its second printing on,
 *     and text with 'inf' or 'nan' constants need not read back: see
 *     tests/fuzz/known/README.md). */
#include "fuzz_common.h"

#include <math.h>

#include "expr_internal.h"

#define MAX_ROWS 32
#define DAY_US 86400000000LL

enum {
    C_I32, C_I64, C_D, C_F, C_S, C_DT, C_TS, C_TS_MS, C_TS_NS, C_TS96, C_DEC64, C_DEC32, C_DECFL, C_DECBA,
    C_B, C_UUID, C_T_MS, C_T_US, C_U32, C_U64, C_I8, C_BIN, C_HALF, C_IV, C_REQ, C_ODD, C_NESTED, C_PART,
    N_COLS
};

typedef struct column_def {
    const char *name;
    pq_phys phys;
    int32_t type_length;
    pq_logical_kind logical;
    pq_time_unit unit;
    int32_t scale, precision;
    int8_t int_bits;
    bool is_signed;
    pq_converted converted;
    bool required;
} column_def;

static const column_def defs[N_COLS] = {
    [C_I32] = {"i32", PQ_INT32},
    [C_I64] = {"i64", PQ_INT64},
    [C_D] = {"d", PQ_DOUBLE},
    [C_F] = {"f", PQ_FLOAT},
    [C_S] = {"s", PQ_BYTE_ARRAY, 0, PQ_LT_STRING},
    [C_DT] = {"dt", PQ_INT32, 0, PQ_LT_DATE},
    [C_TS] = {"ts", PQ_INT64, 0, PQ_LT_TIMESTAMP, PQ_UNIT_MICROS},
    [C_TS_MS] = {"ts_ms", PQ_INT64, 0, PQ_LT_TIMESTAMP, PQ_UNIT_MILLIS},
    [C_TS_NS] = {"ts_ns", PQ_INT64, 0, PQ_LT_TIMESTAMP, PQ_UNIT_NANOS},
    [C_TS96] = {"ts96", PQ_INT96},
    [C_DEC64] = {"dec", PQ_INT64, 0, PQ_LT_DECIMAL, 0, 3, 18},
    [C_DEC32] = {"dec32", PQ_INT32, 0, PQ_LT_DECIMAL, 0, 2, 9},
    [C_DECFL] = {"decfl", PQ_FIXED_LEN_BYTE_ARRAY, 9, PQ_LT_DECIMAL, 0, 2, 20},
    [C_DECBA] = {"decba", PQ_BYTE_ARRAY, 0, PQ_LT_DECIMAL, 0, 4, 30},
    [C_B] = {"b", PQ_BOOLEAN},
    [C_UUID] = {"u", PQ_FIXED_LEN_BYTE_ARRAY, 16, PQ_LT_UUID},
    [C_T_MS] = {"t", PQ_INT32, 0, PQ_LT_TIME, PQ_UNIT_MILLIS},
    [C_T_US] = {"t_us", PQ_INT64, 0, PQ_LT_TIME, PQ_UNIT_MICROS},
    [C_U32] = {"u32", PQ_INT32, 0, PQ_LT_INTEGER, 0, 0, 0, 32, false},
    [C_U64] = {"u64", PQ_INT64, 0, PQ_LT_INTEGER, 0, 0, 0, 64, false},
    [C_I8] = {"i8", PQ_INT32, 0, PQ_LT_INTEGER, 0, 0, 0, 8, true},
    [C_BIN] = {"bin", PQ_BYTE_ARRAY},
    [C_HALF] = {"h", PQ_FIXED_LEN_BYTE_ARRAY, 2, PQ_LT_FLOAT16},
    [C_IV] = {"iv", PQ_FIXED_LEN_BYTE_ARRAY, 12, PQ_LT_NONE, 0, 0, 0, 0, false, PQ_CT_INTERVAL},
    [C_REQ] = {"req", PQ_INT64, 0, PQ_LT_NONE, 0, 0, 0, 0, false, PQ_CT_NONE, true},
    [C_ODD] = {"odd \"name\"", PQ_BYTE_ARRAY, 0, PQ_LT_STRING},
    [C_NESTED] = {"nested"},
    [C_PART] = {"part", PQ_INT64},
};

/* Each column's pool of values as PLAIN bytes (BOOLEAN: one byte). */
#define POOL_MAX 12
typedef struct pool {
    int n;
    uint8_t bytes[POOL_MAX][20];
    uint32_t len[POOL_MAX];
} pool;

static pq_node nodes[N_COLS];
static pq_expr_column cols[N_COLS];
static pool pools[N_COLS];
static bool ready;

static void add(int c, const void *p, size_t len)
{
    pool *pl = &pools[c];
    if (pl->n == POOL_MAX || len > sizeof pl->bytes[0]) abort();
    memcpy(pl->bytes[pl->n], p, len);
    pl->len[pl->n++] = (uint32_t)len;
}

static void add_le(int c, uint64_t v, size_t len)
{
    uint8_t b[8];
    for (size_t i = 0; i < len; i++) b[i] = (uint8_t)(v >> (8 * i));
    add(c, b, len);
}

static void add_be(int c, __int128 v, size_t len)
{
    uint8_t b[20];
    for (size_t i = len; i-- > 0;) {
        b[i] = (uint8_t)v;
        v >>= 8;
    }
    add(c, b, len);
}

/* Bytes of the shortest big-endian two's complement form of v. */
static size_t be_len(__int128 v)
{
    size_t n = 1;
    while (n < 16 && (v >> (8 * n - 1) != 0 && v >> (8 * n - 1) != -1)) n++;
    return n;
}

static void add_double(int c, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    add_le(c, bits, 8);
}

static void add_float(int c, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    add_le(c, bits, 4);
}

static void add_str(int c, const char *s) { add(c, s, strlen(s)); }

/* INT96: nanoseconds of the day (8 bytes LE), then the Julian day (4 bytes). */
static void add_int96(int c, int64_t day_since_epoch, uint64_t nanos)
{
    uint8_t b[12];
    uint32_t julian = (uint32_t)(day_since_epoch + 2440588);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(nanos >> (8 * i));
    for (int i = 0; i < 4; i++) b[8 + i] = (uint8_t)(julian >> (8 * i));
    add(c, b, 12);
}

static void setup(void)
{
    for (int c = 0; c < N_COLS; c++) {
        const column_def *d = &defs[c];
        pq_node *n = &nodes[c];
        n->name = d->name;
        n->kind = c == C_NESTED ? PQ_NODE_STRUCT : PQ_NODE_PRIMITIVE;
        n->phys = d->phys;
        n->type_length = d->type_length;
        n->converted = d->converted ? d->converted : PQ_CT_NONE;
        n->logical.kind = d->logical;
        n->logical.unit = d->unit;
        n->logical.utc = c == C_TS;
        n->logical.scale = d->scale;
        n->logical.precision = d->precision;
        n->logical.bit_width = d->int_bits;
        n->logical.is_signed = d->is_signed;
        n->def_level = d->required ? 0 : 1;
        n->nullable = !d->required;
        n->leaf_index = c;
        cols[c].name = d->name;
        cols[c].node = n;
        cols[c].partition = c == C_PART;
    }
    static const int32_t i32[] = {INT32_MIN, -7, -1, 0, 1, 2, 3, 42, 100, INT32_MAX};
    for (size_t i = 0; i < sizeof i32 / sizeof i32[0]; i++) add_le(C_I32, (uint32_t)i32[i], 4);
    static const int64_t i64[] = {INT64_MIN, -1000, -1, 0, 1, 2, 42, 1000000, INT64_MAX};
    for (size_t i = 0; i < sizeof i64 / sizeof i64[0]; i++) {
        add_le(C_I64, (uint64_t)i64[i], 8);
        add_le(C_PART, (uint64_t)i64[i], 8);
    }
    const double dv[] = {-INFINITY, -2.5, -0.0, 0.0, 0.1, 1, 1.5, 1e300, INFINITY, NAN, -NAN};
    for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++) add_double(C_D, dv[i]);
    const float fv[] = {-INFINITY, -1.5f, -0.0f, 0.0f, 0.1f, 1, 2.5f, 3.4e38f, INFINITY, NAN};
    for (size_t i = 0; i < sizeof fv / sizeof fv[0]; i++) add_float(C_F, fv[i]);
    static const char *const sv[] = {"", "a", "ab", "abc", "b", "B", "a%", "\xc3\xa9t\xc3\xa9", "zz", "a_b"};
    for (size_t i = 0; i < sizeof sv / sizeof sv[0]; i++) {
        add_str(C_S, sv[i]);
        add_str(C_ODD, sv[i]);
    }
    static const int32_t dt[] = {-719162, -1, 0, 1, 19723, 19724, 2932896};
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) add_le(C_DT, (uint32_t)dt[i], 4);
    static const int64_t us[] = {INT64_MIN, -1, 0, 1, 999, 1000, DAY_US, 1704067200000000LL, INT64_MAX};
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++) {
        add_le(C_TS, (uint64_t)us[i], 8);
        add_le(C_TS_MS, (uint64_t)(us[i] / 1000), 8);
        add_le(C_TS_NS, (uint64_t)(us[i] / 1000 * 1000 + (i & 1)), 8);
    }
    add_int96(C_TS96, 0, 0);
    add_int96(C_TS96, -1, 86399999999999ULL);
    add_int96(C_TS96, 19723, 1);
    add_int96(C_TS96, 100000, 5);
    add_int96(C_TS96, -2440588, 0);
    add_int96(C_TS96, 0, UINT64_MAX); /* nanoseconds beyond the day */
    static const int64_t dec[] = {-999999999999999999LL, -1500, -1, 0, 1, 1225, 1500, 999999999999999999LL};
    for (size_t i = 0; i < sizeof dec / sizeof dec[0]; i++) add_le(C_DEC64, (uint64_t)dec[i], 8);
    static const int32_t dec32[] = {-999999999, -150, 0, 1, 150, 12345, 999999999};
    for (size_t i = 0; i < sizeof dec32 / sizeof dec32[0]; i++) add_le(C_DEC32, (uint32_t)dec32[i], 4);
    const __int128 big = (__int128)1000000000000000000LL * 10;
    const __int128 fl[] = {-big, -150, -1, 0, 1, 150, 12345, big};
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) add_be(C_DECFL, fl[i], 9);
    const __int128 ba[] = {-big * 1000, -15000, -1, 0, 1, 5, 12500, big * 1000};
    for (size_t i = 0; i < sizeof ba / sizeof ba[0]; i++) add_be(C_DECBA, ba[i], be_len(ba[i]) + i % 2);
    add_le(C_B, 0, 1);
    add_le(C_B, 1, 1);
    for (int i = 0; i < 5; i++) {
        uint8_t u[16];
        memset(u, (int)(0x3f * i), 16);
        u[15] = (uint8_t)i;
        add(C_UUID, u, 16);
    }
    static const int32_t tms[] = {0, 1, 999, 1000, 43200000, 86399999};
    for (size_t i = 0; i < sizeof tms / sizeof tms[0]; i++) {
        add_le(C_T_MS, (uint32_t)tms[i], 4);
        add_le(C_T_US, (uint64_t)tms[i] * 1000 + (i & 1), 8);
    }
    static const uint32_t u32[] = {0, 1, 7, 2147483647u, 2147483648u, 4294967295u};
    for (size_t i = 0; i < sizeof u32 / sizeof u32[0]; i++) add_le(C_U32, u32[i], 4);
    static const uint64_t u64[] = {0, 1, 9223372036854775807ull, 9223372036854775808ull, UINT64_MAX};
    for (size_t i = 0; i < sizeof u64 / sizeof u64[0]; i++) add_le(C_U64, u64[i], 8);
    static const int32_t i8[] = {-128, -1, 0, 1, 127};
    for (size_t i = 0; i < sizeof i8 / sizeof i8[0]; i++) add_le(C_I8, (uint32_t)i8[i], 4);
    add(C_BIN, "", 0);
    add(C_BIN, "a\0", 2);
    add(C_BIN, "\x80", 1);
    add(C_BIN, "\xff\xfe", 2);
    add(C_BIN, "\\", 1);
    static const uint16_t half[] = {0x0000, 0x8000, 0x3C00, 0xC000, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x0001};
    for (size_t i = 0; i < sizeof half / sizeof half[0]; i++) add_le(C_HALF, half[i], 2);
    for (int i = 0; i < 3; i++) {
        uint8_t iv[12] = {0};
        iv[4 * i] = (uint8_t)(i + 1);
        add(C_IV, iv, 12);
    }
    static const int64_t req[] = {-3, 0, 1, 2, 3, 10};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) add_le(C_REQ, (uint64_t)req[i], 8);
    ready = true;
}

/* ------------------------------------------------------------------ the batch */

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static int picks[N_COLS][MAX_ROWS];          /* pool index per row, -1: NULL */
static uint16_t def_levels[N_COLS][MAX_ROWS];
static uint8_t dense[N_COLS][MAX_ROWS * 16];  /* batch values (typed arrays) */
static pq_col_batch batches[N_COLS];
static const pq_col_batch *batch_of[N_COLS];

static size_t elem_size(const pq_node *n)
{
    return n->phys == PQ_BOOLEAN ? 1 : pq_value_size(n->phys);
}

static void make_batch(int rows)
{
    for (int c = 0; c < N_COLS; c++) {
        const pq_node *n = cols[c].node;
        pq_col_batch *b = &batches[c];
        if (n->kind != PQ_NODE_PRIMITIVE) {
            uint32_t null_pct = (uint32_t[]){0, 30, 100}[rnd(3)];
            for (int r = 0; r < rows; r++) def_levels[c][r] = rnd(100) >= null_pct;
            *b = (pq_col_batch){.n_rows = rows, .n_levels = rows, .def = def_levels[c], .values = dense[c]};
            batch_of[c] = b;
            continue;
        }
        const pool *pl = &pools[c];
        uint32_t null_pct = n->nullable ? (uint32_t[]){0, 10, 50, 100}[rnd(4)] : 0;
        int constant = rnd(4) == 0 ? (int)rnd((uint32_t)pl->n) : -1;
        size_t esz = elem_size(n);
        int k = 0;
        for (int r = 0; r < rows; r++) {
            int v = constant >= 0 ? constant : (int)rnd((uint32_t)pl->n);
            if (null_pct && rnd(100) < null_pct) v = -1;
            picks[c][r] = v;
            def_levels[c][r] = v >= 0;
            if (v < 0) continue;
            uint8_t *dst = dense[c] + esz * (size_t)k++;
            if (n->phys == PQ_BYTE_ARRAY || n->phys == PQ_FIXED_LEN_BYTE_ARRAY) {
                pq_bytes view = {pl->bytes[v], pl->len[v]};
                memcpy(dst, &view, sizeof view);
            } else {
                memcpy(dst, pl->bytes[v], esz);
            }
        }
        b->n_rows = b->n_levels = rows;
        b->def = n->nullable ? def_levels[c] : NULL;
        b->rep = NULL;
        b->n_values = k;
        b->values = dense[c];
        batch_of[c] = b;
    }
}

/* The exact range of column c over the rows, loosened when `loose`. */
static void make_range(int c, int rows, bool loose, pq_col_range *r)
{
    memset(r, 0, sizeof *r);
    const pq_node *n = cols[c].node;
    if (n->kind != PQ_NODE_PRIMITIVE) return; /* nothing known */
    const pool *pl = &pools[c];
    r->known = true;
    r->row_count = rows;
    r->has_null_count = true;
    r->exact_min = r->exact_max = true;
    for (int row = 0; row < rows; row++) {
        int v = picks[c][row];
        if (v < 0) {
            r->null_count++;
            continue;
        }
        pq_value x;
        if (pq_value_from_plain(n, pl->bytes[v], pl->len[v], &x) != 0) continue;
        if (x.type == PQ_V_DOUBLE && isnan(x.u.d)) {
            r->may_have_nan = true;
            continue;
        }
        if (!r->has_min || pq_value_cmp(&x, &r->min) < 0) r->min = x;
        if (!r->has_max || pq_value_cmp(&x, &r->max) > 0) r->max = x;
        r->has_min = r->has_max = true;
    }
    if (!loose) return;
    for (int t = 0; t < 2; t++) {
        int v = (int)rnd((uint32_t)pl->n);
        pq_value x;
        if (pq_value_from_plain(n, pl->bytes[v], pl->len[v], &x) != 0 || (x.type == PQ_V_DOUBLE && isnan(x.u.d)))
            continue;
        if (r->has_min && pq_value_cmp(&x, &r->min) < 0) {
            r->min = x;
            r->exact_min = false;
        }
        if (r->has_max && pq_value_cmp(&x, &r->max) > 0) {
            r->max = x;
            r->exact_max = false;
        }
    }
    if (rnd(6) == 0) r->has_min = false;
    if (rnd(6) == 0) r->has_max = false;
    if (rnd(5) == 0) r->has_null_count = false;
    if (rnd(5) == 0 && r->has_min && r->min.type == PQ_V_DOUBLE) r->may_have_nan = true;
    if (rnd(8) == 0) r->exact_min = r->exact_max = false;
    if (rnd(16) == 0) r->known = false;
}

/* ------------------------------------------------------------------ checks */

static bool filter(const pq_expr *e, int rows, uint8_t *keep, bool only_kept, bool general)
{
    pq_arena scratch;
    pq_arena_init(&scratch, 0);
    pq_error err;
    pq_x_disable_kernels = general;
    int rc = pq_expr_filter(e, batch_of, rows, keep, only_kept, &scratch, &err);
    pq_x_disable_kernels = false;
    if (rc != PQ_OK) FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    pq_arena_free(&scratch);
    return rc == PQ_OK;
}

/* PQ_FUZZ_STRICT_TEXT=1 in the environment: no exception to the text
 * round trip (reproduces the known FLOAT literal issue, see check()). */
static bool strict_text;

/* Whether the text holds a number written with an exponent (1e5, 2.5e-3). */
static bool has_exponent_literal(const char *t)
{
    for (const char *p = t; *p; p++)
        if ((*p == 'e' || *p == 'E') && p > t && p[-1] >= '0' && p[-1] <= '9' &&
            ((p[1] >= '0' && p[1] <= '9') || p[1] == '+' || p[1] == '-'))
            return true;
    return false;
}

static char *text_of(const pq_expr *e)
{
    pq_buf b;
    pq_buf_init(&b);
    FUZZ_CHECK(pq_expr_text(e, &b) == 0 && pq_buf_append(&b, "", 1) == 0, "no text");
    return b.data;
}

static void check(const char *text, const pq_expr *e, pq_arena *arena)
{
    int rows = (int)rnd(MAX_ROWS + 1);
    make_batch(rows);
    int used[N_COLS];
    int n_used = pq_expr_columns(e, used, N_COLS);
    for (int i = 0; i < n_used; i++)
        FUZZ_CHECK(used[i] >= 0 && used[i] < N_COLS && (i == 0 || used[i] > used[i - 1]), "column list");

    uint8_t keep[MAX_ROWS], keep_general[MAX_ROWS], subset[MAX_ROWS];
    bool ok = filter(e, rows, keep, false, false);
    bool ok_general = filter(e, rows, keep_general, false, true);
    FUZZ_CHECK(ok == ok_general, "fast path %s, general path %s: %s", ok ? "ok" : "error",
               ok_general ? "ok" : "error", text);
    if (ok) {
        FUZZ_CHECK(memcmp(keep, keep_general, (size_t)rows) == 0, "fast and general paths differ: %s", text);
        int n_true = 0;
        for (int r = 0; r < rows; r++) {
            FUZZ_CHECK(keep[r] <= 1, "keep[%d] = %u", r, keep[r]);
            n_true += keep[r];
        }
        pq_tri k = pq_expr_constant(e);
        if (k != PQ_TRI_MAYBE)
            FUZZ_CHECK(n_true == (k == PQ_TRI_TRUE ? rows : 0), "constant %d but %d of %d rows kept: %s", k, n_true,
                       rows, text);
        for (int loose = 0; loose < 3; loose++) {
            pq_col_range ranges[N_COLS];
            for (int c = 0; c < N_COLS; c++) make_range(c, rows, loose > 0, &ranges[c]);
            pq_tri p = pq_expr_prune(e, ranges);
            FUZZ_CHECK(!(p == PQ_TRI_FALSE && n_true > 0) && !(p == PQ_TRI_TRUE && n_true < rows),
                       "unsound prune %d (%s ranges): %d of %d rows true: %s", p, loose ? "loose" : "exact", n_true,
                       rows, text);
        }
        uint8_t mask[MAX_ROWS];
        for (int r = 0; r < rows; r++) mask[r] = subset[r] = (uint8_t)rnd(2);
        FUZZ_CHECK(filter(e, rows, subset, true, false), "only_kept failed where a full evaluation did: %s", text);
        for (int r = 0; r < rows; r++)
            FUZZ_CHECK(subset[r] == (mask[r] && keep[r]), "only_kept row %d: %u, expected %u: %s", r, subset[r],
                       mask[r] && keep[r], text);
    }

    /* The printed text parenthesizes more than the input may have (-(-x)
     * for --x): near PQ_EXPR_MAX_DEPTH it can be too deep to read back.
     * Known, reported: infinite and NaN constants print as 'inf' / 'nan',
     * which read back as numbers only where a string may stand for one (in
     * comparisons, not in arithmetic). */
    /* The cache key renders every tree, deterministically. */
    pq_buf k1, k2;
    pq_buf_init(&k1);
    pq_buf_init(&k2);
    FUZZ_CHECK(pq_expr_key(e, &k1) == 0 && pq_expr_key(e, &k2) == 0 && k1.len == k2.len && k1.len > 0 &&
                   memcmp(k1.data, k2.data, k1.len) == 0,
               "pq_expr_key is not deterministic: %s", text);
    pq_buf_free(&k1);
    pq_buf_free(&k2);

    char *printed = text_of(e);
    pq_expr *again = NULL;
    pq_error err;
    bool non_finite = strstr(printed, "'inf'") || strstr(printed, "'-inf'") || strstr(printed, "'nan'");
    if (!strstr(printed, "CAST(") && strlen(printed) <= PQ_EXPR_MAX_LEN &&
        (pq_expr_compile(printed, cols, N_COLS, arena, &again, &err) == PQ_OK ||
         !(strstr(err.msg, "nested too deeply") || (non_finite && !strict_text)))) {
        FUZZ_CHECK(again, "printed text does not compile: %s (from %s): %s", printed, text, err.msg);
        char *reprinted = text_of(again);
        bool same = strcmp(printed, reprinted) == 0;
        if (!same && !strict_text && has_exponent_literal(printed)) {
            /* Known, reported: a FLOAT-precision literal printed with an
             * exponent reads back as a DOUBLE, so the arithmetic around it
             * changes type.  Require only that the second text is stable. */
            pq_expr *third;
            FUZZ_CHECK(pq_expr_compile(reprinted, cols, N_COLS, arena, &third, &err) == PQ_OK,
                       "reprinted text does not compile: %s: %s", reprinted, err.msg);
            char *third_text = text_of(third);
            FUZZ_CHECK(strcmp(reprinted, third_text) == 0, "text round trip: %s -> %s (from %s)", reprinted,
                       third_text, text);
            free(third_text);
            free(reprinted);
            free(printed);
            return;
        }
        FUZZ_CHECK(same, "text round trip: %s -> %s (from %s)", printed, reprinted, text);
        free(reprinted);
        /* The same known issue when the text is stable: `f - 7.33e+25 = f`
         * (a FLOAT column's arithmetic) prints and reprints alike, but the
         * printed literal reads back as a DOUBLE, so the reprint computes
         * in double precision.  (Why pq_expr_key, not this text, keys the
         * mount's result cache.) */
        if (ok && !strict_text && has_exponent_literal(printed)) ok = false;
        if (ok) {
            FUZZ_CHECK(filter(again, rows, keep_general, false, false), "the reprinted expression fails: %s", printed);
            FUZZ_CHECK(memcmp(keep, keep_general, (size_t)rows) == 0, "the reprinted expression keeps other rows: %s",
                       printed);
        }
    }
    free(printed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        setup();
        const char *strict = getenv("PQ_FUZZ_STRICT_TEXT");
        strict_text = strict && strcmp(strict, "1") == 0;
    }
    if (size > 4096) return 0; /* long texts only repeat what short ones cover */
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = '\0';
    rng = fuzz_hash(data, size) | 1;

    pq_arena arena;
    pq_arena_init(&arena, 0);
    pq_expr *e = NULL;
    pq_error err;
    if (pq_expr_compile(text, cols, N_COLS, &arena, &e, &err) == PQ_OK) {
        FUZZ_CHECK(e != NULL, "no expression");
        check(text, e, &arena);
    } else {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    }
    pq_arena_free(&arena);
    free(text);
    return 0;
}
