/* Delta Lake per-file statistics (add.stats, PROTOCOL.md "Per-file
 * Statistics") into the bounds the pruning rungs reason with (expr.h's
 * pq_col_range): the rung before a file's footer is read.
 *
 * Correctness first: a bound is taken only where it provably holds for
 * every row of the file; anything missing, null, of another JSON type, of
 * a Delta type not handled here, or not understood gives no bound (the
 * file is kept), never a guess.  The writers' own roundings are undone
 * conservatively:
 *   - timestamps are written truncated to the millisecond (the protocol:
 *     "truncated down to milliseconds"): min is the millisecond written
 *     (a finer text floored to it), max the next millisecond, since the
 *     true max may be up to 999 microseconds past the text;
 *   - strings may be cut to a prefix (delta-spark: 32 characters, then a
 *     tie-breaker character on max; older versions' U+FFFD tie-breaker is
 *     below 4-byte UTF-8, so that max was no upper bound).  A string that
 *     may have been cut (UTF-8 length at least the table's prefix length,
 *     or ending in a tie-breaker) loses its last character: min is that
 *     prefix (a prefix of a lower bound is one), max the prefix's
 *     successor (above every string that starts with it);
 *   - floating values are widened by two units in the last place (the
 *     decimal text may not name the exact binary value; a float column's
 *     value is rounded to float first), and NaN is always possible;
 *   - decimals (a JSON number jansson reads as a double) are taken only
 *     below 2^50 unscaled, widened by one unit;
 *   - nullCount is used only with tightBounds (absent: tight), except a
 *     count of 0, which wide bounds cannot make wrong.
 * Statistics that lie (a max below a value) are out of scope: trusted. */
#include "delta_log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "numfmt.h"
#include "tablefmt.h"

typedef enum stat_kind {
    SK_NONE = 0,               /* no min/max (null counts only) */
    SK_INT,
    SK_DOUBLE,
    SK_FLOAT,
    SK_DECIMAL,
    SK_STRING,
    SK_DATE,
    SK_TIMESTAMP,              /* UTC: the text must carry an offset */
    SK_TIMESTAMP_NTZ,          /* no zone: the text must carry none */
    SK_BOOL,
} stat_kind;

/* Digits at *p (at most 9), moving past them; -1 when none. */
static int32_t read_small(const char **p)
{
    int32_t v = 0, n = 0;
    while (**p >= '0' && **p <= '9' && n < 9) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n ? v : -1;
}

static stat_kind kind_of(const char *type, int32_t *scale)
{
    static const struct { const char *name; stat_kind kind; } names[] = {
        {"long", SK_INT}, {"integer", SK_INT}, {"short", SK_INT}, {"byte", SK_INT},
        {"double", SK_DOUBLE}, {"float", SK_FLOAT}, {"string", SK_STRING}, {"date", SK_DATE},
        {"timestamp", SK_TIMESTAMP}, {"timestamp_ntz", SK_TIMESTAMP_NTZ}, {"boolean", SK_BOOL},
    };
    *scale = 0;
    if (!type) return SK_NONE;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(type, names[i].name)) return names[i].kind;
    if (!strcmp(type, "decimal")) return SK_DECIMAL; /* decimal(10,0) */
    if (strncmp(type, "decimal(", 8)) return SK_NONE;
    const char *p = type + 8;
    int32_t prec = read_small(&p);
    if (*p++ != ',') return SK_NONE;
    int32_t s = read_small(&p);
    if (strcmp(p, ")") || prec < 1 || prec > 38 || s < 0 || s > prec) return SK_NONE;
    *scale = s;
    return SK_DECIMAL;
}

static double widen(double d, bool up, int ulps)
{
    for (int i = 0; i < ulps; i++) d = nextafter(d, up ? INFINITY : -INFINITY);
    return d;
}

static bool float_bound(const json_t *v, stat_kind k, bool is_max, pq_value *out)
{
    if (!json_is_number(v)) return false;
    double d = json_number_value(v);
    if (!isfinite(d)) return false;
    if (k == SK_FLOAT) {
        float f = (float)d; /* strtod then the cast may round twice: two float ulps more */
        if (!isfinite(f)) return false;
        for (int i = 0; i < 2; i++) f = nextafterf(f, is_max ? INFINITY : -INFINITY);
        d = (double)f;
    } else {
        d = widen(d, is_max, 2);
    }
    *out = (pq_value){.type = PQ_V_DOUBLE};
    out->u.d = d;
    return true;
}

static bool decimal_bound(const json_t *v, int32_t scale, bool is_max, pq_value *out)
{
    __int128 u;
    if (json_is_integer(v)) {
        __int128 i = (__int128)json_integer_value(v);
        if (__builtin_mul_overflow(i, pq_pow10_i128[scale], &u)) return false;
    } else if (json_is_real(v)) {
        double x = json_real_value(v) * (double)pq_pow10_i128[scale];
        /* Below 2^50 the double is within 1/4 of the written value: one
         * unit either way covers it. */
        if (!isfinite(x) || fabs(x) >= 1125899906842624.0) return false;
        u = (__int128)(is_max ? ceil(x) + 1 : floor(x) - 1);
    } else {
        return false;
    }
    if (u >= pq_pow10_i128[38] || u <= -pq_pow10_i128[38]) return false;
    *out = (pq_value){.type = PQ_V_DECIMAL};
    out->u.dec.unscaled = u;
    out->u.dec.scale = scale;
    return true;
}

/* Whether the last code point of s[0, n) is one of the tie-breakers a
 * writer appends to a cut max (U+007F, U+FFFD, U+FFFF, U+10FFFF). */
static bool ends_in_tie_breaker(const unsigned char *s, size_t n)
{
    static const char *const marks[] = {"\x7f", "\xef\xbf\xbd", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
        size_t m = strlen(marks[i]);
        if (n >= m && !memcmp(s + n - m, marks[i], m)) return true;
    }
    return false;
}

/* s[0, n) without its last character (UTF-8: continuation bytes, then the
 * lead byte): the length left. */
static size_t drop_last_char(const unsigned char *s, size_t n)
{
    while (n > 0 && (s[n - 1] & 0xC0) == 0x80) n--;
    return n > 0 ? n - 1 : 0;
}

static bool string_bound(const json_t *v, bool is_max, int32_t prefix_len, pq_arena *a, pq_value *out, bool *oom)
{
    if (!json_is_string(v)) return false;
    const unsigned char *s = (const unsigned char *)json_string_value(v);
    size_t n = json_string_length(v);
    if (n > UINT32_MAX - 1) return false;
    bool cut = n >= (size_t)prefix_len || ends_in_tie_breaker(s, n);
    if (cut) n = drop_last_char(s, n);
    unsigned char *copy = pq_arena_alloc(a, n + 1);
    if (!copy) {
        *oom = true;
        return false;
    }
    memcpy(copy, s, n);
    if (cut && is_max) {
        /* The successor of the prefix: its last byte below 0xFF incremented
         * (and what follows it dropped); none for "" or all 0xFF. */
        while (n > 0 && copy[n - 1] == 0xFF) n--;
        if (n == 0) return false;
        copy[n - 1]++;
    }
    *out = (pq_value){.type = PQ_V_STRING};
    out->u.s.ptr = copy;
    out->u.s.len = (uint32_t)n;
    return true;
}

static bool time_bound(const json_t *v, stat_kind k, bool is_max, pq_value *out)
{
    if (!json_is_string(v)) return false;
    int64_t ns;
    int had_offset = 0;
    if (pq_parse_timestamp_ns(json_string_value(v), json_string_length(v), &ns, &had_offset) != 0) return false;
    if ((k == SK_TIMESTAMP) != (had_offset != 0)) return false;
    /* Truncated down to the millisecond (the protocol's rule; a finer
     * text is floored too): the true value is in [ms, ms + 1 ms). */
    int64_t ms = ns / 1000000 - (ns % 1000000 < 0);
    *out = (pq_value){.type = PQ_V_TIMESTAMP};
    out->u.ts_ns = ((__int128)ms + (is_max ? 1 : 0)) * 1000000;
    return true;
}

/* One side's bound of a column from its JSON value: false when none. */
static bool stat_bound(stat_kind k, int32_t scale, const json_t *v, bool is_max, int32_t prefix_len, pq_arena *a,
                       pq_value *out, bool *oom)
{
    if (!v || json_is_null(v)) return false;
    switch (k) {
    case SK_INT:
        if (!json_is_integer(v)) return false;
        *out = (pq_value){.type = PQ_V_INT};
        out->u.i = (int64_t)json_integer_value(v);
        return true;
    case SK_BOOL:
        if (!json_is_boolean(v)) return false;
        *out = (pq_value){.type = PQ_V_BOOL};
        out->u.b = json_is_true(v);
        return true;
    case SK_DOUBLE:
    case SK_FLOAT: return float_bound(v, k, is_max, out);
    case SK_DECIMAL: return decimal_bound(v, scale, is_max, out);
    case SK_STRING: return string_bound(v, is_max, prefix_len, a, out, oom);
    case SK_DATE: {
        int64_t days;
        if (!json_is_string(v) || pq_parse_date(json_string_value(v), json_string_length(v), &days) != 0 ||
            days < INT32_MIN || days > INT32_MAX)
            return false;
        *out = (pq_value){.type = PQ_V_DATE};
        out->u.date = (int32_t)days;
        return true;
    }
    case SK_TIMESTAMP:
    case SK_TIMESTAMP_NTZ: return time_bound(v, k, is_max, out);
    default: return false;
    }
}

/* What the statistics say of one column. */
static void column_range(const pq_delta_stats_col *c, const json_t *mins, const json_t *maxs, const json_t *nulls,
                         int64_t records, bool tight, int32_t prefix_len, pq_arena *a, pq_col_range *r, bool *oom)
{
    int32_t scale;
    stat_kind k = kind_of(c->type, &scale);
    const json_t *nc = json_object_get(nulls, c->physical);
    if (json_is_integer(nc) && json_integer_value(nc) >= 0 && json_integer_value(nc) <= records &&
        (tight || json_integer_value(nc) == 0)) {
        r->has_null_count = true;
        r->null_count = (int64_t)json_integer_value(nc);
    }
    r->has_min = stat_bound(k, scale, json_object_get(mins, c->physical), false, prefix_len, a, &r->min, oom);
    r->has_max = stat_bound(k, scale, json_object_get(maxs, c->physical), true, prefix_len, a, &r->max, oom);
    /* Inverted bounds prove nothing (a mangled log). */
    if (r->has_min && r->has_max && pq_value_cmp(&r->min, &r->max) > 0) r->has_min = r->has_max = false;
    r->known = r->has_null_count || r->has_min || r->has_max || records == 0;
    if (!r->known) return;
    r->row_count = records;
    r->may_have_nan = k == SK_DOUBLE || k == SK_FLOAT;
}

int pq_delta_stats_ranges(const char *stats, size_t len, const pq_delta_stats_col *cols, int n_cols,
                          int32_t prefix_len, pq_arena *a, pq_col_range *out)
{
    for (int i = 0; i < n_cols; i++) memset(&out[i], 0, sizeof out[i]);
    if (!stats || prefix_len < 1) return 0;
    json_error_t jerr;
    json_t *root = json_loadb(stats, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) return 0;
    const json_t *nr = json_object_get(root, "numRecords");
    const json_t *tb = json_object_get(root, "tightBounds");
    int known = 0;
    bool oom = false;
    if (json_is_object(root) && json_is_integer(nr) && json_integer_value(nr) >= 0) {
        int64_t records = (int64_t)json_integer_value(nr);
        bool tight = !tb || json_is_true(tb); /* absent: tight; anything but true otherwise: wide */
        const json_t *mins = json_object_get(root, "minValues"), *maxs = json_object_get(root, "maxValues");
        const json_t *nulls = json_object_get(root, "nullCount");
        for (int i = 0; i < n_cols && !oom; i++) {
            if (!cols[i].physical) continue;
            column_range(&cols[i], json_is_object(mins) ? mins : NULL, json_is_object(maxs) ? maxs : NULL,
                         json_is_object(nulls) ? nulls : NULL, records, tight, prefix_len, a, &out[i], &oom);
            known += out[i].known;
        }
    }
    json_decref(root);
    if (oom) {
        for (int i = 0; i < n_cols; i++) memset(&out[i], 0, sizeof out[i]);
        return -1;
    }
    return known;
}

/* The prefix length strings may have been cut to: delta-spark's 32, or the
 * table's delta.dataSkippingStringPrefixLength when smaller; a value that
 * is not a count makes every string a possibly cut one. */
static int32_t string_prefix_len(const pq_delta_log *log)
{
    if (!log->string_prefix) return 32;
    int64_t v;
    if (pq_parse_i64(log->string_prefix, strlen(log->string_prefix), &v) != 0 || v < 1) return 1;
    return v < 32 ? (int32_t)v : 32;
}

int pq_tf_file_ranges(const pq_tf_snapshot *s, int file, const pq_expr_column *cols, int n_cols, pq_arena *a,
                      pq_col_range *out)
{
    for (int i = 0; i < n_cols; i++) memset(&out[i], 0, sizeof out[i]);
    if (s->kind != PQ_TF_DELTA || !s->files || !s->priv || file < 0 || file >= s->table->n_files ||
        !s->files[file].stats)
        return 0;
    pq_delta_stats_col *sc = pq_arena_alloc(a, sizeof *sc * (size_t)(n_cols + 1));
    if (!sc) return -1;
    int any = 0;
    for (int i = 0; i < n_cols; i++) {
        sc[i] = (pq_delta_stats_col){NULL, NULL};
        /* Top-level primitive data columns, by logical name. */
        if (cols[i].partition || !cols[i].node || cols[i].node->kind != PQ_NODE_PRIMITIVE) continue;
        for (int j = 0; j < s->n_cols; j++)
            if (s->cols[j].part < 0 && !strcmp(s->cols[j].name, cols[i].name)) {
                sc[i] = (pq_delta_stats_col){s->cols[j].physical, s->cols[j].type};
                any = 1;
                break;
            }
    }
    if (!any) return 0;
    const char *stats = s->files[file].stats;
    return pq_delta_stats_ranges(stats, strlen(stats), sc, n_cols, string_prefix_len(s->priv), a, out);
}
