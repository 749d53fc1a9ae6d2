#include "csvtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encoding.h"
#include "numfmt.h"

static int unit_digits(pq_time_unit u)
{
    return u == PQ_UNIT_MILLIS ? 3 : u == PQ_UNIT_NANOS ? 9 : 6;
}

static int classify_decimal_bytes(const pq_leaf *leaf, target_col *t, pq_error *err)
{
    const pq_logical *lg = &leaf->node->logical;
    int32_t len = leaf->node->phys == PQ_FIXED_LEN_BYTE_ARRAY ? leaf->node->type_length : 16;
    if (lg->precision < 1 || lg->precision > 38 || lg->scale < 0 || lg->scale > lg->precision || len < 1 || len > 16)
        return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: DECIMAL(%d,%d) in %d bytes", leaf->path, lg->precision,
                       lg->scale, len);
    t->kind = CV_DECIMAL_BYTES;
    t->scale = lg->scale;
    t->precision = lg->precision;
    return PQ_OK;
}

/* Classifies a leaf; PQ_E_UNSUPPORTED for what this importer cannot read. */
int pq_csv_classify(const pq_leaf *leaf, target_col *t, pq_error *err)
{
    const pq_node *nd = leaf->node;
    const pq_logical *lg = &nd->logical;
    memset(t, 0, sizeof *t);
    t->leaf = leaf;
    t->name = nd->name;
    t->name_len = strlen(nd->name);
    t->phys = nd->phys;
    t->vsize = pq_value_size(nd->phys);
    t->required = leaf->max_def == 0;
    t->csv_field = -1;
    if (leaf->max_rep > 0 || leaf->max_def > 1 || (nd->parent && nd->parent->parent)) {
        const pq_node *top = nd;
        while (top->parent && top->parent->parent) top = top->parent;
        t->nested = true;
        t->name = top->name;
        t->name_len = strlen(top->name);
        /* NULL is def level 0 only where the top-level column is nullable
         * (a required list at 0 is an empty list, not NULL). */
        t->required = !top->nullable;
        t->kind = CV_BINARY; /* never converted: its rows are all NULL */
        return PQ_OK;
    }
    switch (nd->phys) {
    case PQ_BOOLEAN: t->kind = CV_BOOL; return PQ_OK;
    case PQ_FLOAT: t->kind = CV_FLOAT; return PQ_OK;
    case PQ_DOUBLE: t->kind = CV_DOUBLE; return PQ_OK;
    case PQ_INT32:
    case PQ_INT64: {
        bool is64 = nd->phys == PQ_INT64;
        if (lg->kind == PQ_LT_DATE && !is64) t->kind = CV_DATE;
        else if (lg->kind == PQ_LT_TIMESTAMP && is64) {
            t->kind = CV_TIMESTAMP;
            t->digits = unit_digits(lg->unit);
            t->utc = lg->utc;
        } else if (lg->kind == PQ_LT_TIME) {
            t->kind = CV_TIME;
            t->digits = unit_digits(lg->unit);
        } else if (lg->kind == PQ_LT_DECIMAL) {
            if (lg->precision < 1 || lg->precision > (is64 ? 18 : 9) || lg->scale < 0 || lg->scale > lg->precision)
                return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: DECIMAL(%d,%d) on %s", leaf->path, lg->precision,
                               lg->scale, is64 ? "INT64" : "INT32");
            t->kind = CV_DECIMAL;
            t->scale = lg->scale;
            t->precision = lg->precision;
        } else if (lg->kind == PQ_LT_INTEGER && !lg->is_signed) {
            t->kind = CV_UINT;
            t->umax = lg->bit_width >= 64 ? UINT64_MAX : (UINT64_C(1) << lg->bit_width) - 1;
        } else if (lg->kind == PQ_LT_NONE || lg->kind == PQ_LT_INTEGER) {
            int bits = lg->kind == PQ_LT_INTEGER ? lg->bit_width : is64 ? 64 : 32;
            t->kind = CV_INT;
            t->hi = bits >= 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
            t->lo = -t->hi - 1;
        } else {
            return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: its type cannot be written from CSV", leaf->path);
        }
        return PQ_OK;
    }
    case PQ_INT96: t->kind = CV_INT96; return PQ_OK;
    case PQ_BYTE_ARRAY:
        if (lg->kind == PQ_LT_DECIMAL) return classify_decimal_bytes(leaf, t, err);
        if (lg->kind == PQ_LT_STRING || lg->kind == PQ_LT_ENUM || lg->kind == PQ_LT_JSON) t->kind = CV_STRING;
        else if (lg->kind == PQ_LT_NONE || lg->kind == PQ_LT_BSON) t->kind = CV_BINARY;
        else return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: its type cannot be written from CSV", leaf->path);
        return PQ_OK;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        t->fixed_len = nd->type_length;
        if (lg->kind == PQ_LT_DECIMAL) return classify_decimal_bytes(leaf, t, err);
        if (lg->kind == PQ_LT_FLOAT16 && nd->type_length == 2) t->kind = CV_FLOAT16;
        else if (lg->kind == PQ_LT_UUID && nd->type_length == 16) t->kind = CV_UUID;
        else if (lg->kind == PQ_LT_NONE) t->kind = CV_FIXED;
        else return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: its type cannot be written from CSV", leaf->path);
        return PQ_OK;
    default: return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: its type cannot be written from CSV", leaf->path);
    }
}

/* ------------------------------------------------------------------ text -> value */

static bool eq_nocase(const char *p, size_t n, const char *word)
{
    size_t k = strlen(word);
    if (n != k) return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return false;
    }
    return true;
}

static int parse_bool(const char *p, size_t n, uint8_t *out)
{
    if (eq_nocase(p, n, "true") || (n == 1 && p[0] == '1')) *out = 1;
    else if (eq_nocase(p, n, "false") || (n == 1 && p[0] == '0')) *out = 0;
    else return -1;
    return 0;
}

static int parse_u64(const char *p, size_t n, uint64_t *out)
{
    size_t i = n > 0 && p[0] == '+';
    if (i == n) return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(p[i] - '0'), &v)) return -1;
    }
    *out = v;
    return 0;
}

/* Decimal text -> the unscaled integer at `scale`: exact only (trailing
 * zeros past the scale are fine, other digits are not) and within
 * `precision` digits. */
static int parse_decimal(const char *p, size_t n, int32_t scale, int32_t precision, __int128 *out)
{
    __int128 u;
    int32_t sc;
    if (pq_parse_decimal(p, n, &u, &sc) != 0) return -1;
    if (sc > scale) {
        __int128 d = pq_pow10_i128[sc - scale];
        if (u % d != 0) return -1;
        u /= d;
    } else if (__builtin_mul_overflow(u, pq_pow10_i128[scale - sc], &u)) {
        return -1;
    }
    if ((u < 0 ? -u : u) >= pq_pow10_i128[precision]) return -1;
    *out = u;
    return 0;
}

/* Canonical binary text into the heap. */
static int unescape_binary(const char *p, size_t n, pq_buf *heap, size_t *len)
{
    if (pq_buf_reserve(heap, n) != 0) return -2;
    if (pq_unescape_binary(p, n, (uint8_t *)heap->data + heap->len, len) != 0) return -1;
    heap->len += *len;
    return 0;
}

/* strtof, not (float)d: rounding twice can miss the nearest float. */
static float nearest_float(const char *p, size_t n, double d)
{
    char small[64];
    if (n >= sizeof small || isnan(d) || isinf(d)) return (float)d;
    memcpy(small, p, n);
    small[n] = '\0';
    return strtof(small, NULL);
}

/* A decimal as big-endian two's complement bytes into the heap. */
static int convert_decimal_bytes(const target_col *t, const char *p, size_t n, void *value, pq_buf *heap,
                                 const char **why)
{
    __int128 v;
    *why = "not a decimal that fits the column's precision and scale";
    if (parse_decimal(p, n, t->scale, t->precision, &v) != 0) return -1;
    uint8_t be[16];
    unsigned __int128 u = (unsigned __int128)v;
    for (int k = 15; k >= 0; k--, u >>= 8) be[k] = (uint8_t)u;
    /* FIXED_LEN_BYTE_ARRAY: its length (the precision fits it); else
     * the fewest bytes that keep the sign. */
    int len = t->fixed_len;
    if (!len) {
        len = 16;
        while (len > 1 && ((be[16 - len] == 0 && !(be[17 - len] & 0x80)) ||
                           (be[16 - len] == 0xff && (be[17 - len] & 0x80))))
            len--;
    } else {
        for (int k = 0; k < 16 - len; k++)
            if (be[k] != (v < 0 ? 0xff : 0)) {
                *why = "too wide for the column's bytes";
                return -1;
            }
    }
    size_t at = heap->len;
    if (pq_buf_append(heap, be + 16 - len, (size_t)len) != 0) return -2;
    *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, (uint32_t)len};
    return 0;
}

/* A timestamp as INT96: nanoseconds of the day, then the Julian day. */
static int convert_int96(const char *p, size_t n, void *value, const char **why)
{
    int64_t us;
    int had_offset = 0;
    int rc = pq_parse_timestamp_units(p, n, 6, &us, &had_offset);
    *why = rc == -2 ? "finer than microseconds" : "not a timestamp (YYYY-MM-DD HH:MM:SS[.f])";
    if (rc != 0) return -1;
    int64_t day = us / 86400000000LL - (us % 86400000000LL < 0);
    int64_t nanos = (us - day * 86400000000LL) * 1000;
    *why = "a date out of range";
    if (day + 2440588 < 0 || day + 2440588 > UINT32_MAX) return -1;
    uint8_t *b = ((pq_int96 *)value)->b;
    uint32_t jd = (uint32_t)(day + 2440588);
    memcpy(b, &nanos, 8); /* little-endian hosts only, as the reader */
    memcpy(b + 8, &jd, 4);
    return 0;
}

/* Converts one non-NULL field into *value (t->vsize bytes); byte arrays go
 * to `heap`, and their pq_bytes holds the heap offset until the row group is
 * sealed.  Returns 0, -1 with *why for bad text, -2 out of memory. */
int pq_csv_convert(const target_col *t, const char *p, size_t n, void *value, pq_buf *heap, const char **why)
{
    switch (t->kind) {
    case CV_BOOL:
        *why = "not a boolean (true or false)";
        return parse_bool(p, n, value);
    case CV_INT: {
        int64_t v;
        *why = "not an integer";
        if (pq_parse_i64(p, n, &v) != 0) return -1;
        *why = "out of the column's range";
        if (v < t->lo || v > t->hi) return -1;
        if (t->phys == PQ_INT32) *(int32_t *)value = (int32_t)v;
        else *(int64_t *)value = v;
        return 0;
    }
    case CV_UINT: {
        uint64_t v;
        *why = "not an unsigned integer";
        if (parse_u64(p, n, &v) != 0) return -1;
        *why = "out of the column's range";
        if (v > t->umax) return -1;
        if (t->phys == PQ_INT32) *(uint32_t *)value = (uint32_t)v;
        else *(uint64_t *)value = v;
        return 0;
    }
    case CV_FLOAT:
    case CV_DOUBLE: {
        double d;
        *why = "not a number";
        if (pq_parse_double(p, n, &d) != 0) return -1;
        if (t->kind == CV_DOUBLE) *(double *)value = d;
        else *(float *)value = nearest_float(p, n, d);
        return 0;
    }
    case CV_DATE: {
        int64_t days;
        *why = "not a date (YYYY-MM-DD)";
        if (pq_parse_date(p, n, &days) != 0) return -1;
        *why = "a date out of range";
        if (days < INT32_MIN || days > INT32_MAX) return -1;
        *(int32_t *)value = (int32_t)days;
        return 0;
    }
    case CV_TIMESTAMP: {
        int had_offset = 0;
        int rc = pq_parse_timestamp_units(p, n, t->digits, (int64_t *)value, &had_offset);
        *why = rc == -2 ? "finer than the column's unit" : "not a timestamp (YYYY-MM-DD HH:MM:SS[.f])";
        if (rc != 0) return -1;
        *why = "a time zone offset, for a timestamp column without one";
        if (had_offset && !t->utc) return -1;
        return 0;
    }
    case CV_TIME: {
        int64_t ns;
        *why = "not a time (HH:MM:SS[.f])";
        if (pq_parse_time_ns(p, n, &ns) != 0) return -1;
        int64_t div = (int64_t)pq_pow10_i128[9 - t->digits];
        *why = "finer than the column's unit";
        if (ns % div != 0) return -1;
        if (t->phys == PQ_INT32) *(int32_t *)value = (int32_t)(ns / div);
        else *(int64_t *)value = ns / div;
        return 0;
    }
    case CV_DECIMAL: {
        __int128 v;
        *why = "not a decimal that fits the column's precision and scale";
        if (parse_decimal(p, n, t->scale, t->precision, &v) != 0) return -1;
        if (t->phys == PQ_INT32) *(int32_t *)value = (int32_t)v;
        else *(int64_t *)value = (int64_t)v;
        return 0;
    }
    case CV_DECIMAL_BYTES:
        return convert_decimal_bytes(t, p, n, value, heap, why);
    case CV_INT96:
        return convert_int96(p, n, value, why);
    case CV_FLOAT16: {
        double d;
        *why = "not a number";
        if (pq_parse_double(p, n, &d) != 0) return -1;
        uint16_t h = pq_float_to_half(nearest_float(p, n, d));
        size_t at = heap->len;
        if (pq_buf_append(heap, &h, 2) != 0) return -2;
        *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, 2};
        return 0;
    }
    case CV_STRING: {
        /* STRING is UTF-8 (SPEC section 5): other bytes would make the
         * table unreadable to DuckDB and others. */
        if (pq_utf8_valid_prefix((const unsigned char *)p, n) != n) {
            *why = "not valid UTF-8";
            return -1;
        }
        size_t at = heap->len;
        if (pq_buf_append(heap, p, n) != 0) return -2;
        *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, (uint32_t)n};
        return 0;
    }
    case CV_BINARY:
    case CV_FIXED: {
        size_t at = heap->len, len;
        int rc = unescape_binary(p, n, heap, &len);
        *why = "a backslash that does not start \\xHH";
        if (rc != 0) return rc;
        if (t->kind == CV_FIXED && len != (size_t)t->fixed_len) {
            heap->len = at;
            *why = "not as long as the column's fixed length";
            return -1;
        }
        *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, (uint32_t)len};
        return 0;
    }
    case CV_UUID: {
        uint8_t u[16];
        *why = "not a UUID (8-4-4-4-12 hex digits)";
        if (pq_parse_uuid(p, n, u) != 0) return -1;
        size_t at = heap->len;
        if (pq_buf_append(heap, u, 16) != 0) return -2;
        *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, 16};
        return 0;
    }
    }
    return -1;
}


/* ------------------------------------------------------------------ inference */


/* [+-](digits[.digits] | .digits)[e[+-]digits]: text strtod reads whole, so
 * pq_parse_double accepts it; checked without converting (inference only
 * needs to know). */
static bool decimal_syntax(const char *p, size_t n)
{
    size_t i = 0, int_digits = 0, frac_digits = 0;
    if (i < n && (p[i] == '+' || p[i] == '-')) i++;
    while (i < n && p[i] >= '0' && p[i] <= '9') i++, int_digits++;
    if (i < n && p[i] == '.') {
        i++;
        while (i < n && p[i] >= '0' && p[i] <= '9') i++, frac_digits++;
    }
    if (int_digits + frac_digits == 0) return false;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        size_t exp_digits = 0;
        while (i < n && p[i] >= '0' && p[i] <= '9') i++, exp_digits++;
        if (exp_digits == 0) return false;
    }
    return i == n;
}

void pq_csv_infer_value(infer_state *s, const char *p, size_t n, bool quoted)
{
    if (n == 0) {
        if (quoted) s->can_int = s->can_double = s->can_bool = s->can_date = s->can_ts = false, s->any = true;
        return;
    }
    s->any = true;
    int64_t i64;
    double d;
    uint8_t bv;
    /* A leading zero before another digit (00123, 01.5) is an identifier
     * (a zip code, an account number), not a number: DuckDB's sniffer makes
     * such a column VARCHAR, and a number would lose the zeros. */
    if (n >= 2 && p[0] == '0' && p[1] >= '0' && p[1] <= '9') s->can_int = s->can_double = false;
    if (s->can_int && pq_parse_i64(p, n, &i64) != 0) s->can_int = false;
    if (s->can_double && !decimal_syntax(p, n) && pq_parse_double(p, n, &d) != 0) s->can_double = false;
    if (s->can_bool && (parse_bool(p, n, &bv) != 0 || (n == 1))) s->can_bool = false;
    /* DATE is INT32 days: a year beyond them is not a DATE. */
    if (s->can_date && (pq_parse_date(p, n, &i64) != 0 || i64 < INT32_MIN || i64 > INT32_MAX)) s->can_date = false;
    if (s->can_ts) {
        int off = 0;
        int rc = pq_parse_timestamp_units(p, n, 6, &i64, &off);
        if (rc == -2) {
            s->ts_nanos = true;
            rc = pq_parse_timestamp_units(p, n, 9, &i64, &off);
        } else if (rc == 0 && !s->ts_micros_only && pq_parse_timestamp_units(p, n, 9, &i64, &off) != 0) {
            s->ts_micros_only = true; /* fine unless another value needs NANOS */
        }
        /* A plain date parses as a timestamp too; dates alone stay DATE. */
        if (rc != 0) s->can_ts = false;
        else if (off) s->ts_offset = true;
        else s->ts_local = true;
    }
}

