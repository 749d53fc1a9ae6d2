#include "csvimport.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csvread.h"
#include "filewrite.h"
#include "numfmt.h"
#include "scan_parquet.h"
#include "schema.h"

#define DEFAULT_ROW_GROUP_ROWS 1048576
#define ENCODE_SLICE_ROWS 65536
#define SLICE_ROWS 65536       /* rows parsed before the column tasks get them */

/* ------------------------------------------------------------------ target columns */

/* How a target column reads its text. */
typedef enum conv_kind {
    CV_BOOL,
    CV_INT,                    /* signed, in [lo, hi] */
    CV_UINT,                   /* unsigned, at most umax, stored as the bit pattern */
    CV_FLOAT,
    CV_DOUBLE,
    CV_DATE,
    CV_TIMESTAMP,              /* digits: 3, 6, 9 */
    CV_TIME,
    CV_DECIMAL,                /* INT32/INT64 unscaled, `scale`, `precision` */
    CV_DECIMAL_BYTES,          /* big-endian two's complement: fixed_len bytes, or minimal (BYTE_ARRAY) */
    CV_INT96,                  /* a timestamp as Julian day and nanoseconds */
    CV_FLOAT16,
    CV_STRING,
    CV_BINARY,                 /* printable ASCII as is, other bytes as \xHH */
    CV_UUID,
    CV_FIXED,                  /* binary of exactly fixed_len bytes */
} conv_kind;

typedef struct target_col {
    const pq_leaf *leaf;
    const char *name;
    size_t name_len;
    conv_kind kind;
    pq_phys phys;
    size_t vsize;              /* bytes per value in the typed array */
    int digits;
    bool utc;
    int32_t scale, precision;
    int64_t lo, hi;
    uint64_t umax;
    int32_t fixed_len;
    bool required;
    int32_t csv_field;         /* -1: not in the CSV */
} target_col;

static const int64_t pow10_i64[19] = {1,
                                      10,
                                      100,
                                      1000,
                                      10000,
                                      100000,
                                      1000000,
                                      10000000,
                                      100000000,
                                      1000000000,
                                      10000000000LL,
                                      100000000000LL,
                                      1000000000000LL,
                                      10000000000000LL,
                                      100000000000000LL,
                                      1000000000000000LL,
                                      10000000000000000LL,
                                      100000000000000000LL,
                                      1000000000000000000LL};

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
static int classify(const pq_leaf *leaf, target_col *t, pq_error *err)
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
    if (leaf->max_rep > 0 || leaf->max_def > 1 || (nd->parent && nd->parent->parent))
        return pq_fail(err, PQ_E_UNSUPPORTED, "column %s: nested columns cannot be written from CSV", leaf->path);
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

/* [-+]digits[.digits] with at most `scale` fraction digits and `precision`
 * (at most 38) digits in all -> the unscaled integer. */
static int parse_decimal(const char *p, size_t n, int32_t scale, int32_t precision, __int128 *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (p[i] == '-' || p[i] == '+')) neg = p[i++] == '-';
    __int128 v = 0, limit = 1;
    for (int32_t k = 0; k < precision; k++) limit *= 10;
    int digits = 0, frac = -1;
    for (; i < n; i++) {
        char c = p[i];
        if (c == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (c < '0' || c > '9') return -1;
        digits++;
        if (frac >= 0 && ++frac > scale) return -1;
        v = v * 10 + (c - '0');
        if (v >= limit) return -1;
    }
    if (digits == 0) return -1;
    for (int32_t k = frac < 0 ? 0 : frac; k < scale; k++) {
        v *= 10;
        if (v >= limit) return -1;
    }
    *out = neg ? -v : v;
    return 0;
}

/* IEEE half precision bits of f, rounded to nearest even. */
static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t exp = (x >> 23) & 0xff, man = x & 0x7fffff;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return sign;
        man |= 0x800000;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* may carry into the exponent: still right */
    return (uint16_t)(sign | h);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Canonical binary text: \xHH for a byte, anything else as is. */
static int unescape_binary(const char *p, size_t n, pq_buf *heap, size_t *len)
{
    if (pq_buf_reserve(heap, n) != 0) return -2;
    uint8_t *o = (uint8_t *)heap->data + heap->len;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] == '\\') {
            int hi, lo;
            if (i + 4 > n) return -1;
            if (p[i + 1] != 'x' || (hi = hexval(p[i + 2])) < 0 || (lo = hexval(p[i + 3])) < 0) return -1;
            o[k++] = (uint8_t)(hi << 4 | lo);
            i += 4;
        } else {
            o[k++] = (uint8_t)p[i++];
        }
    }
    heap->len += k;
    *len = k;
    return 0;
}

static int parse_uuid(const char *p, size_t n, uint8_t out[16])
{
    if (n != 36) return -1;
    int k = 0;
    for (size_t i = 0; i < n;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (p[i] != '-') return -1;
            i++;
            continue;
        }
        int hi = hexval(p[i]), lo = hexval(p[i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[k++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return k == 16 ? 0 : -1;
}

/* Converts one non-NULL field into *value (t->vsize bytes); byte arrays go
 * to `heap`, and their pq_bytes holds the heap offset until the row group is
 * sealed.  Returns 0, -1 with *why for bad text, -2 out of memory. */
static int convert(const target_col *t, const char *p, size_t n, void *value, pq_buf *heap, const char **why)
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
        if (t->kind == CV_DOUBLE) {
            *(double *)value = d;
            return 0;
        }
        /* strtof, not (float)d: rounding twice can miss the nearest float. */
        char small[64];
        if (n >= sizeof small || isnan(d) || isinf(d)) {
            *(float *)value = (float)d;
            return 0;
        }
        memcpy(small, p, n);
        small[n] = '\0';
        *(float *)value = strtof(small, NULL);
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
        int64_t div = pow10_i64[9 - t->digits];
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
    case CV_DECIMAL_BYTES: {
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
    case CV_INT96: {
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
    case CV_FLOAT16: {
        double d;
        *why = "not a number";
        if (pq_parse_double(p, n, &d) != 0) return -1;
        float fv = (float)d;
        char small[64];
        if (n < sizeof small && !isnan(d) && !isinf(d)) {
            memcpy(small, p, n);
            small[n] = '\0';
            fv = strtof(small, NULL);
        }
        uint16_t h = float_to_half(fv);
        size_t at = heap->len;
        if (pq_buf_append(heap, &h, 2) != 0) return -2;
        *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, 2};
        return 0;
    }
    case CV_STRING: {
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
        if (parse_uuid(p, n, u) != 0) return -1;
        size_t at = heap->len;
        if (pq_buf_append(heap, u, 16) != 0) return -2;
        *(pq_bytes *)value = (pq_bytes){(const uint8_t *)(uintptr_t)at, 16};
        return 0;
    }
    }
    return -1;
}

/* ------------------------------------------------------------------ row buffers */

/* Rows as the CSV gave them, column by column: the main thread only splits
 * records and copies each field's text here; the column tasks convert. */
enum { CELL_NULL = 0, CELL_VALUE = 1, CELL_QUOTED_EMPTY = 2 };

typedef struct col_text {
    pq_buf bytes;
    uint32_t *ends;            /* ends[r]: end of row r's text in bytes (starts at ends[r-1] or 0) */
    uint8_t *cell;             /* CELL_* per row */
} col_text;

/* A column converted: levels and dense non-NULL values. */
typedef struct col_buf {
    uint16_t *def;             /* one per row: 1 value, 0 NULL */
    uint8_t *vals;
    size_t n_vals;
    pq_buf heap;               /* byte-array contents */
} col_buf;

typedef struct rows_buf {
    col_text *text;
    col_buf *cols;
    int32_t n_cols;
    int64_t n_rows, cap_rows;
    int64_t *lines;            /* the CSV line each row starts on */
} rows_buf;

static void col_text_free(col_text *t)
{
    pq_buf_free(&t->bytes);
    free(t->ends);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

static void rows_buf_free(rows_buf *b)
{
    if (!b) return;
    for (int32_t c = 0; c < b->n_cols; c++) {
        col_text_free(&b->text[c]);
        free(b->cols[c].def);
        free(b->cols[c].vals);
        pq_buf_free(&b->cols[c].heap);
    }
    free(b->text);
    free(b->cols);
    free(b->lines);
    free(b);
}

static rows_buf *rows_buf_new(int32_t n_cols)
{
    rows_buf *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->text = calloc((size_t)n_cols, sizeof *b->text);
    b->cols = calloc((size_t)n_cols, sizeof *b->cols);
    if (!b->text || !b->cols) {
        free(b->text);
        free(b->cols);
        free(b);
        return NULL;
    }
    b->n_cols = n_cols;
    for (int32_t c = 0; c < n_cols; c++) {
        pq_buf_init(&b->text[c].bytes);
        pq_buf_init(&b->cols[c].heap);
    }
    return b;
}

static int rows_buf_grow(rows_buf *b)
{
    int64_t cap = b->cap_rows ? b->cap_rows * 2 : 4096;
    int64_t *l = realloc(b->lines, sizeof *l * (size_t)cap);
    if (!l) return -1;
    b->lines = l;
    for (int32_t c = 0; c < b->n_cols; c++) {
        col_text *t = &b->text[c];
        uint32_t *e = realloc(t->ends, sizeof *e * (size_t)cap);
        if (!e) return -1;
        t->ends = e;
        uint8_t *k = realloc(t->cell, (size_t)cap);
        if (!k) return -1;
        t->cell = k;
    }
    b->cap_rows = cap;
    return 0;
}

static int field_error(pq_error *err, const char *name, int64_t line, const char *col, const char *p, size_t len,
                       const char *why)
{
    int shown = len > 40 ? 40 : (int)len;
    return pq_fail(err, PQ_E_USAGE, "%s: line %lld, column %s: '%.*s%s' is %s", name, (long long)line, col, shown,
                   p, len > 40 ? "..." : "", why);
}

/* Converts column c of `b` from its text (which is then freed).  On bad
 * input *bad_row is the row. */
static int convert_column(rows_buf *b, const target_col *t, int32_t c, const char *name, int64_t *bad_row,
                          pq_error *err)
{
    col_text *tx = &b->text[c];
    col_buf *cb = &b->cols[c];
    size_t n = (size_t)(b->n_rows ? b->n_rows : 1);
    cb->def = malloc(sizeof *cb->def * n);
    cb->vals = malloc(t->vsize * n);
    if (!cb->def || !cb->vals) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    const char *text = tx->bytes.data ? tx->bytes.data : ""; /* NULL while every field was empty */
    bool empty_is_value = t->kind == CV_STRING || t->kind == CV_BINARY;
    uint32_t start = 0;
    for (int64_t r = 0; r < b->n_rows; r++) {
        uint8_t cell = t->csv_field >= 0 ? tx->cell[r] : CELL_NULL;
        uint32_t end = t->csv_field >= 0 ? tx->ends[r] : 0;
        if (cell == CELL_NULL || (cell == CELL_QUOTED_EMPTY && !empty_is_value)) {
            if (t->required) {
                *bad_row = r;
                return pq_fail(err, PQ_E_USAGE, "%s: line %lld, column %s: NULL in a required column", name,
                               (long long)b->lines[r], t->name);
            }
            cb->def[r] = 0;
            start = end;
            continue;
        }
        const char *why = "";
        int rc = convert(t, text + start, end - start, cb->vals + t->vsize * cb->n_vals, &cb->heap, &why);
        if (rc == -2) return pq_fail(err, PQ_E_NOMEM, "out of memory");
        if (rc != 0) {
            *bad_row = r;
            return field_error(err, name, b->lines[r], t->name, text + start, end - start, why);
        }
        cb->def[r] = 1;
        cb->n_vals++;
        start = end;
    }
    col_text_free(tx);
    /* Byte-array values held heap offsets while the heap grew. */
    if (t->phys == PQ_BYTE_ARRAY || t->phys == PQ_FIXED_LEN_BYTE_ARRAY) {
        pq_bytes *v = (pq_bytes *)cb->vals;
        const uint8_t *heap = cb->heap.data ? (const uint8_t *)cb->heap.data : (const uint8_t *)""; /* all empty */
        for (size_t i = 0; i < cb->n_vals; i++) v[i].ptr = heap + (uintptr_t)v[i].ptr;
    }
    return PQ_OK;
}

/* Appends one record's text to `b`. */
static int add_record(rows_buf *b, const target_col *tc, int32_t n_cols, const pq_csv_text *fields, int64_t line,
                      const char *name, pq_error *err)
{
    if (b->n_rows == b->cap_rows && rows_buf_grow(b) != 0) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    int64_t r = b->n_rows;
    b->lines[r] = line;
    for (int32_t c = 0; c < n_cols; c++) {
        if (tc[c].csv_field < 0) continue;
        const pq_csv_text *f = &fields[tc[c].csv_field];
        col_text *t = &b->text[c];
        if (t->bytes.len + f->len > UINT32_MAX)
            return pq_fail(err, PQ_E_USAGE, "%s: line %lld: over 4 GiB of text in one row group's column %s", name,
                           (long long)line, tc[c].name);
        if (pq_buf_append(&t->bytes, f->p, f->len) != 0) return pq_fail(err, PQ_E_NOMEM, "out of memory");
        t->ends[r] = (uint32_t)t->bytes.len;
        t->cell[r] = f->len ? CELL_VALUE : f->quoted ? CELL_QUOTED_EMPTY : CELL_NULL;
    }
    b->n_rows++;
    return PQ_OK;
}

/* ------------------------------------------------------------------ tasks */

/* Work on a set of rows, one task per column: convert (the rows' text into
 * values) and/or encode (the values into a sealed chunk).  Without a sort a
 * row group is converted and encoded in one task per column; with one, all
 * rows are converted first, then each row group is a slice of the sorted
 * permutation, gathered and encoded. */
typedef struct rg_job {
    struct rg_job *next;
    rows_buf *own;             /* freed with the job */
    rows_buf *src;
    bool convert, encode;
    const uint32_t *perm;      /* encode rows src[perm[0..n_rows)]; NULL: src in order */
    int64_t n_rows;
    int32_t next_col, done_cols;
    pq_chunk_out *chunks;
    int *rc;
    int64_t *bad_row;          /* per column: the row that failed, or INT64_MAX */
    pq_error *errs;
    /* Streamed (no sort): the row group arrives as slices while it is
     * parsed; each column takes them in order (one task at a time per
     * column), converting and adding them to its column writer, and seals
     * its chunk once the row group is complete (`sealed`). */
    bool stream, sealed;
    rows_buf **slices;         /* NULL once every column is done with it */
    int32_t n_slices, cap_slices;
    int32_t *slice_done;       /* columns done with each slice */
    pq_colwriter **w;
    int32_t *next_slice;
    int64_t *row_base;         /* rows of the row group before next_slice */
    bool *busy, *finished;
} rg_job;

typedef struct importer {
    const target_col *tc;
    int32_t n_cols;
    const char *name;
    const pq_write_opts *wopts;
    uint32_t **vidx;           /* sorted: per column, the value index of each row */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    rg_job *head, *tail;       /* in row group order */
    bool quit;
    pthread_cond_t space;      /* a slice was freed, or a column failed */
    int32_t pending_slices;    /* parsed and not yet freed */
    bool failed;               /* a column task failed: stop parsing */
    _Atomic bool mismatch;     /* a value did not fit its column's type */
} importer;

static int encode_column(importer *im, rg_job *j, int32_t c, pq_chunk_out *out, pq_error *err)
{
    const target_col *t = &im->tc[c];
    const col_buf *cb = &j->src->cols[c];
    size_t vsize = t->vsize;
    uint16_t *gdef = NULL;
    uint8_t *gvals = NULL;
    const uint16_t *def = cb->def;
    const uint8_t *vals = cb->vals;
    if (j->perm) {
        size_t n = (size_t)(j->n_rows ? j->n_rows : 1);
        gdef = malloc(sizeof *gdef * n);
        gvals = malloc(vsize * n);
        if (!gdef || !gvals) {
            free(gdef);
            free(gvals);
            return pq_fail(err, PQ_E_NOMEM, "out of memory");
        }
        size_t nv = 0;
        for (int64_t i = 0; i < j->n_rows; i++) {
            uint32_t r = j->perm[i];
            gdef[i] = cb->def[r];
            if (cb->def[r]) memcpy(gvals + vsize * nv++, cb->vals + vsize * im->vidx[c][r], vsize);
        }
        def = gdef;
        vals = gvals;
    }
    pq_colwriter *w = NULL;
    int rc = pq_colwriter_new(t->leaf, im->wopts, &w, err);
    size_t at = 0;
    for (int64_t r0 = 0; rc == PQ_OK && r0 < j->n_rows; r0 += ENCODE_SLICE_ROWS) {
        int32_t n = (int32_t)(j->n_rows - r0 < ENCODE_SLICE_ROWS ? j->n_rows - r0 : ENCODE_SLICE_ROWS);
        int32_t nv = 0;
        for (int32_t i = 0; i < n; i++) nv += def[r0 + i];
        pq_col_batch bt = {.n_rows = n, .n_levels = n, .def = t->required ? NULL : def + r0, .rep = NULL,
                           .n_values = nv, .values = vals + vsize * at};
        rc = pq_colwriter_add(w, &bt, err);
        at += (size_t)nv;
    }
    if (rc == PQ_OK) rc = pq_colwriter_finish(w, out, err);
    pq_colwriter_free(w);
    free(gdef);
    free(gvals);
    if (rc != PQ_OK) pq_error_prefix(err, "%s: column %s: ", im->name, t->name);
    return rc;
}

/* One streamed task: slice k of column c converted and added to the
 * column's writer, or (k < 0) the column's chunk sealed.  Called and
 * returns with im->mu held. */
static void stream_task(importer *im, rg_job *j, int32_t c, int32_t k)
{
    const target_col *t = &im->tc[c];
    rows_buf *sl = k >= 0 ? j->slices[k] : NULL;
    pthread_mutex_unlock(&im->mu);
    pq_error *err = &j->errs[c];
    int rc = PQ_OK;
    int64_t bad = INT64_MAX;
    if (!j->w[c]) rc = pq_colwriter_new(t->leaf, im->wopts, &j->w[c], err);
    if (rc == PQ_OK && sl) {
        rc = convert_column(sl, t, c, im->name, &bad, err);
        if (rc != PQ_OK && bad != INT64_MAX) im->mismatch = true;
        col_buf *cb = &sl->cols[c];
        for (int64_t r0 = 0, at = 0; rc == PQ_OK && r0 < sl->n_rows; r0 += ENCODE_SLICE_ROWS) {
            int32_t n = (int32_t)(sl->n_rows - r0 < ENCODE_SLICE_ROWS ? sl->n_rows - r0 : ENCODE_SLICE_ROWS);
            int32_t nv = 0;
            for (int32_t i = 0; i < n; i++) nv += cb->def[r0 + i];
            pq_col_batch bt = {.n_rows = n, .n_levels = n, .def = t->required ? NULL : cb->def + r0,
                               .n_values = nv, .values = cb->vals + t->vsize * (size_t)at};
            rc = pq_colwriter_add(j->w[c], &bt, err);
            at += nv;
        }
        if (rc != PQ_OK && bad == INT64_MAX) pq_error_prefix(err, "%s: column %s: ", im->name, t->name);
        free(cb->def);
        free(cb->vals);
        pq_buf_free(&cb->heap);
        memset(cb, 0, sizeof *cb);
    } else if (rc == PQ_OK) {
        rc = pq_colwriter_finish(j->w[c], &j->chunks[c], err);
        if (rc != PQ_OK) pq_error_prefix(err, "%s: column %s: ", im->name, t->name);
    }
    pthread_mutex_lock(&im->mu);
    j->busy[c] = false;
    if (sl) {
        if (bad != INT64_MAX) bad += j->row_base[c];
        j->row_base[c] += sl->n_rows;
        j->next_slice[c]++;
        if (++j->slice_done[k] == im->n_cols) {
            rows_buf_free(sl);
            j->slices[k] = NULL;
            im->pending_slices--;
            pthread_cond_broadcast(&im->space);
        }
    }
    if (rc != PQ_OK || !sl) {
        j->rc[c] = rc;
        j->bad_row[c] = bad;
        j->finished[c] = true;
        if (rc != PQ_OK) {
            im->failed = true;
            pthread_cond_broadcast(&im->space);
        }
        if (++j->done_cols == im->n_cols) pthread_cond_broadcast(&im->done);
    }
}

/* A streamed task that can run now: *c and *k (slice, or -1: seal). */
static bool stream_pick(const importer *im, const rg_job *j, int32_t *c, int32_t *k)
{
    for (int32_t i = 0; i < im->n_cols; i++) {
        if (j->busy[i] || j->finished[i]) continue;
        if (j->next_slice[i] < j->n_slices) {
            *c = i;
            *k = j->next_slice[i];
            return true;
        }
        if (j->sealed) {
            *c = i;
            *k = -1;
            return true;
        }
    }
    return false;
}

static void *column_worker(void *arg)
{
    importer *im = arg;
    pthread_mutex_lock(&im->mu);
    for (;;) {
        rg_job *j = im->head;
        int32_t sc = -1, sk = -1;
        while (j && (j->stream ? !stream_pick(im, j, &sc, &sk) : j->next_col >= im->n_cols)) j = j->next;
        if (!j) {
            if (im->quit) break;
            pthread_cond_wait(&im->work, &im->mu);
            continue;
        }
        if (j->stream) {
            j->busy[sc] = true;
            stream_task(im, j, sc, sk);
            continue;
        }
        int32_t c = j->next_col++;
        pthread_mutex_unlock(&im->mu);
        pq_error_clear(&j->errs[c]);
        j->bad_row[c] = INT64_MAX;
        int rc = PQ_OK;
        if (j->convert) rc = convert_column(j->src, &im->tc[c], c, im->name, &j->bad_row[c], &j->errs[c]);
        if (rc != PQ_OK && j->bad_row[c] != INT64_MAX) im->mismatch = true;
        if (rc == PQ_OK && j->encode) rc = encode_column(im, j, c, &j->chunks[c], &j->errs[c]);
        j->rc[c] = rc;
        pthread_mutex_lock(&im->mu);
        if (++j->done_cols == im->n_cols) pthread_cond_broadcast(&im->done);
    }
    pthread_mutex_unlock(&im->mu);
    return NULL;
}

static void rg_job_free(rg_job *j, int32_t n_cols)
{
    if (!j) return;
    for (int32_t k = 0; k < j->n_slices; k++) rows_buf_free(j->slices[k]); /* left by a failed column */
    free(j->slices);
    free(j->slice_done);
    if (j->w)
        for (int32_t c = 0; c < n_cols; c++) pq_colwriter_free(j->w[c]);
    free(j->w);
    free(j->next_slice);
    free(j->row_base);
    free(j->busy);
    free(j->finished);
    pq_chunks_free(j->chunks, n_cols);
    free(j->rc);
    free(j->bad_row);
    free(j->errs);
    rows_buf_free(j->own);
    free(j);
}

static rg_job *rg_job_new(int32_t n_cols)
{
    rg_job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->chunks = calloc((size_t)n_cols, sizeof *j->chunks);
    j->rc = calloc((size_t)n_cols, sizeof *j->rc);
    j->bad_row = calloc((size_t)n_cols, sizeof *j->bad_row);
    j->errs = calloc((size_t)n_cols, sizeof *j->errs);
    if (!j->chunks || !j->rc || !j->bad_row || !j->errs) {
        rg_job_free(j, n_cols);
        return NULL;
    }
    return j;
}

static rg_job *stream_job_new(int32_t n_cols)
{
    rg_job *j = rg_job_new(n_cols);
    if (!j) return NULL;
    j->stream = true;
    j->encode = true; /* finish_job appends it */
    size_t n = (size_t)n_cols;
    j->w = calloc(n, sizeof *j->w);
    j->next_slice = calloc(n, sizeof *j->next_slice);
    j->row_base = calloc(n, sizeof *j->row_base);
    j->busy = calloc(n, sizeof *j->busy);
    j->finished = calloc(n, sizeof *j->finished);
    if (!j->w || !j->next_slice || !j->row_base || !j->busy || !j->finished) {
        rg_job_free(j, n_cols);
        return NULL;
    }
    for (int32_t c = 0; c < n_cols; c++) j->bad_row[c] = INT64_MAX;
    return j;
}

/* Hands a parsed slice to a streamed job (or frees it when a column failed),
 * then waits while too many slices are pending. */
static int stream_push(importer *im, rg_job *j, rows_buf *sl, int32_t max_pending, pq_error *err)
{
    pthread_mutex_lock(&im->mu);
    if (j->n_slices == j->cap_slices) {
        int32_t cap = j->cap_slices ? j->cap_slices * 2 : 32;
        rows_buf **ns = realloc(j->slices, sizeof *ns * (size_t)cap);
        int32_t *nd = realloc(j->slice_done, sizeof *nd * (size_t)cap);
        if (ns) j->slices = ns;
        if (nd) j->slice_done = nd;
        if (!ns || !nd) {
            pthread_mutex_unlock(&im->mu);
            rows_buf_free(sl);
            return pq_fail(err, PQ_E_NOMEM, "out of memory");
        }
        j->cap_slices = cap;
    }
    j->slices[j->n_slices] = sl;
    j->slice_done[j->n_slices] = 0;
    j->n_slices++;
    im->pending_slices++;
    /* Columns that failed skip the slice. */
    for (int32_t c = 0; c < im->n_cols; c++)
        if (j->finished[c]) j->slice_done[j->n_slices - 1]++;
    if (j->slice_done[j->n_slices - 1] == im->n_cols) {
        rows_buf_free(sl);
        j->slices[j->n_slices - 1] = NULL;
        im->pending_slices--;
    }
    pthread_cond_broadcast(&im->work);
    while (im->pending_slices > max_pending && !im->failed) pthread_cond_wait(&im->space, &im->mu);
    pthread_mutex_unlock(&im->mu);
    return PQ_OK;
}

static void stream_seal(importer *im, rg_job *j)
{
    pthread_mutex_lock(&im->mu);
    j->sealed = true;
    pthread_cond_broadcast(&im->work);
    pthread_mutex_unlock(&im->mu);
}

static void submit(importer *im, rg_job *j)
{
    pthread_mutex_lock(&im->mu);
    if (im->tail) im->tail->next = j;
    else im->head = j;
    im->tail = j;
    pthread_cond_broadcast(&im->work);
    pthread_mutex_unlock(&im->mu);
}

/* Waits for the oldest job; on success appends its chunks to the file (when
 * it encoded).  The error reported is the earliest row's, then the leftmost
 * column's. */
static int finish_job(importer *im, pq_filewriter *fw, pq_error *err)
{
    pthread_mutex_lock(&im->mu);
    rg_job *j = im->head;
    while (j->done_cols < im->n_cols) pthread_cond_wait(&im->done, &im->mu);
    im->head = j->next;
    if (!im->head) im->tail = NULL;
    for (int32_t k = 0; k < j->n_slices; k++)
        if (j->slices[k]) im->pending_slices--;
    pthread_mutex_unlock(&im->mu);
    int32_t failed = -1;
    for (int32_t c = 0; c < im->n_cols; c++)
        if (j->rc[c] != PQ_OK && (failed < 0 || j->bad_row[c] < j->bad_row[failed])) failed = c;
    int rc = PQ_OK;
    if (failed >= 0) {
        *err = j->errs[failed];
        rc = PQ_ERR;
    } else if (j->encode) {
        rc = pq_filewriter_add_row_group(fw, j->chunks, err);
    }
    rg_job_free(j, im->n_cols);
    return rc;
}

/* ------------------------------------------------------------------ sorting */

typedef struct sort_key {
    const target_col *t;
    const col_buf *cb;
    const uint32_t *vidx;
} sort_key;

static int cmp_double(double a, double b)
{
    bool na = isnan(a), nb = isnan(b);
    if (na || nb) return na == nb ? 0 : na ? 1 : -1;
    return a < b ? -1 : a > b ? 1 : 0;
}

static int cmp_rows(const sort_key *keys, int n_keys, uint32_t a, uint32_t b)
{
    for (int k = 0; k < n_keys; k++) {
        const sort_key *sk = &keys[k];
        bool pa = sk->cb->def[a], pb = sk->cb->def[b];
        if (!pa || !pb) {
            if (pa != pb) return pa ? -1 : 1; /* NULLs last */
            continue;
        }
        const uint8_t *va = sk->cb->vals + sk->t->vsize * sk->vidx[a];
        const uint8_t *vb = sk->cb->vals + sk->t->vsize * sk->vidx[b];
        int c = 0;
        switch (sk->t->phys) {
        case PQ_BOOLEAN: c = (int)*va - (int)*vb; break;
        case PQ_INT32:
            if (sk->t->kind == CV_UINT) {
                uint32_t x = *(const uint32_t *)va, y = *(const uint32_t *)vb;
                c = x < y ? -1 : x > y;
            } else {
                int32_t x = *(const int32_t *)va, y = *(const int32_t *)vb;
                c = x < y ? -1 : x > y;
            }
            break;
        case PQ_INT64:
            if (sk->t->kind == CV_UINT) {
                uint64_t x = *(const uint64_t *)va, y = *(const uint64_t *)vb;
                c = x < y ? -1 : x > y;
            } else {
                int64_t x = *(const int64_t *)va, y = *(const int64_t *)vb;
                c = x < y ? -1 : x > y;
            }
            break;
        case PQ_FLOAT: c = cmp_double(*(const float *)va, *(const float *)vb); break;
        case PQ_DOUBLE: c = cmp_double(*(const double *)va, *(const double *)vb); break;
        default: {
            const pq_bytes *x = (const pq_bytes *)va, *y = (const pq_bytes *)vb;
            uint32_t m = x->len < y->len ? x->len : y->len;
            c = m ? memcmp(x->ptr, y->ptr, m) : 0;
            if (c == 0) c = x->len < y->len ? -1 : x->len > y->len;
            break;
        }
        }
        if (c) return c;
    }
    return 0;
}

/* Stable merge sort of row numbers. */
static void merge_sort(const sort_key *keys, int n_keys, uint32_t *a, uint32_t *tmp, int64_t n)
{
    if (n < 2) return;
    if (n <= 16) {
        for (int64_t i = 1; i < n; i++) {
            uint32_t x = a[i];
            int64_t j = i;
            while (j > 0 && cmp_rows(keys, n_keys, a[j - 1], x) > 0) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    int64_t h = n / 2;
    merge_sort(keys, n_keys, a, tmp, h);
    merge_sort(keys, n_keys, a + h, tmp, n - h);
    if (cmp_rows(keys, n_keys, a[h - 1], a[h]) <= 0) return;
    memcpy(tmp, a, sizeof *a * (size_t)h);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) a[k++] = cmp_rows(keys, n_keys, a[j], tmp[i]) < 0 ? a[j++] : tmp[i++];
    while (i < h) a[k++] = tmp[i++];
}

/* ------------------------------------------------------------------ import */

void pq_import_opts_init(pq_import_opts *o)
{
    memset(o, 0, sizeof *o);
    pq_write_opts_init(&o->write);
}

/* Reads the header and maps its names to the target columns (and fixed
 * columns: fixed_field[k] is the CSV field of opts->fixed[k], or -1). */
static int map_header(pq_csv_reader *rd, const char *name, target_col *tc, int32_t n_cols, const pq_import_opts *opts,
                      int32_t *fixed_field, int32_t *n_fields_out, pq_error *err)
{
    const pq_csv_text *f;
    int32_t nf;
    if (pq_csv_next(rd, &f, &nf, err) != PQ_OK) return PQ_ERR;
    if (nf == 0) return pq_fail(err, PQ_E_USAGE, "%s: empty input: a header line is needed", name);
    if (nf > n_cols + opts->n_fixed)
        return pq_fail(err, PQ_E_USAGE, "%s: line 1: %d columns, the table has %d", name, nf, n_cols + opts->n_fixed);
    for (int k = 0; k < opts->n_fixed; k++) fixed_field[k] = -1;
    for (int32_t i = 0; i < nf; i++) {
        int32_t hit = -1;
        for (int k = 0; k < opts->n_fixed; k++)
            if (strlen(opts->fixed[k].name) == f[i].len && memcmp(opts->fixed[k].name, f[i].p, f[i].len) == 0) {
                if (fixed_field[k] >= 0)
                    return pq_fail(err, PQ_E_USAGE, "%s: line 1: column '%s' appears twice", name, opts->fixed[k].name);
                fixed_field[k] = i;
                hit = n_cols;
            }
        if (hit == n_cols) continue;
        for (int32_t c = 0; c < n_cols; c++)
            if (tc[c].name_len == f[i].len && memcmp(tc[c].name, f[i].p, f[i].len) == 0) hit = c;
        if (hit < 0)
            return pq_fail(err, PQ_E_USAGE, "%s: line 1: column '%.*s' is not in the table's schema", name,
                           (int)(f[i].len > 100 ? 100 : f[i].len), f[i].p);
        if (tc[hit].csv_field >= 0)
            return pq_fail(err, PQ_E_USAGE, "%s: line 1: column '%s' appears twice", name, tc[hit].name);
        tc[hit].csv_field = i;
    }
    *n_fields_out = nf;
    return PQ_OK;
}

/* Whether a CSV field holds a fixed column's value. */
static bool fixed_matches(const pq_import_fixed *fx, const pq_csv_text *f)
{
    bool is_null = f->len == 0 && !f->quoted;
    if (!fx->value || is_null) return !fx->value && is_null;
    size_t vl = strlen(fx->value);
    if (fx->type == PQ_PART_INT64) {
        int64_t a, b;
        return pq_parse_i64(f->p, f->len, &a) == 0 && pq_parse_i64(fx->value, vl, &b) == 0 && a == b;
    }
    if (fx->type == PQ_PART_DATE) {
        int64_t a, b;
        return pq_parse_date(f->p, f->len, &a) == 0 && pq_parse_date(fx->value, vl, &b) == 0 && a == b;
    }
    return f->len == vl && memcmp(f->p, fx->value, vl) == 0;
}

int pq_csv_import(pq_file *in, const char *name, const pq_schema_element *elements, int32_t n_elements,
                  const pq_import_opts *opts, const pq_sink *sink, int64_t *rows_out, pq_error *err)
{
    if (rows_out) *rows_out = 0;
    pq_file_meta meta = {.version = 2, .schema = (pq_schema_element *)elements, .n_schema = n_elements,
                         .n_column_orders = -1};
    pq_schema schema;
    if (pq_schema_build(&meta, &schema, err) != PQ_OK) return PQ_ERR;
    int32_t n_cols = schema.n_leaves;
    int n_sort = opts->n_sort_by;
    target_col *tc = calloc((size_t)(n_cols ? n_cols : 1), sizeof *tc);
    pq_sorting_column *sorting = calloc((size_t)(n_sort ? n_sort : 1), sizeof *sorting);
    sort_key *keys = calloc((size_t)(n_sort ? n_sort : 1), sizeof *keys);
    int rc = tc && sorting && keys ? PQ_OK : pq_fail(err, PQ_E_NOMEM, "out of memory");
    for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++)
        if ((rc = classify(&schema.leaves[c], &tc[c], err)) != PQ_OK) pq_error_prefix(err, "%s: ", name);
    for (int k = 0; rc == PQ_OK && k < n_sort; k++) {
        int32_t hit = -1;
        for (int32_t c = 0; c < n_cols; c++)
            if (strcmp(tc[c].name, opts->sort_by[k]) == 0) hit = c;
        if (hit < 0) rc = pq_fail(err, PQ_E_USAGE, "%s: sort_by: no column '%s'", name, opts->sort_by[k]);
        else if (tc[hit].kind == CV_DECIMAL_BYTES || tc[hit].kind == CV_INT96 || tc[hit].kind == CV_FLOAT16)
            rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: sort_by: column '%s' has a type rows cannot be sorted by yet",
                         name, opts->sort_by[k]);
        else sorting[k] = (pq_sorting_column){hit, false, false};
    }
    pq_csv_reader *rd = NULL;
    int32_t n_fields = 0;
    if (rc == PQ_OK) rc = pq_csv_open(in, name, &rd, err);
    int32_t *fixed_field = calloc((size_t)opts->n_fixed + 1, sizeof *fixed_field);
    if (rc == PQ_OK && !fixed_field) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
    if (rc == PQ_OK) rc = map_header(rd, name, tc, n_cols, opts, fixed_field, &n_fields, err);
    pq_filewriter *fw = NULL;
    if (rc == PQ_OK) rc = pq_filewriter_new(sink, elements, n_elements, n_cols, &fw, err);
    if (rc == PQ_OK && n_sort > 0) rc = pq_filewriter_set_sorting(fw, sorting, n_sort, err);

    importer im = {.tc = tc, .n_cols = n_cols, .name = name, .wopts = &opts->write};
    pthread_mutex_init(&im.mu, NULL);
    pthread_cond_init(&im.work, NULL);
    pthread_cond_init(&im.done, NULL);
    pthread_cond_init(&im.space, NULL);
    int threads = opts->threads > 0 ? opts->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    pthread_t tids[64];
    int started = 0;
    for (; rc == PQ_OK && started < threads; started++)
        if (pthread_create(&tids[started], NULL, column_worker, &im) != 0) {
            rc = pq_fail(err, PQ_E_NOMEM, "cannot start a writer thread");
            break;
        }

    /* Parse.  Without a sort, each row group is a streamed job: slices of
     * SLICE_ROWS rows go to its column tasks while the rest is parsed, and
     * at most `threads` + 1 row groups are held.  With a sort, all rows are
     * staged first. */
    int64_t rg_rows = opts->row_group_rows > 0 ? opts->row_group_rows : DEFAULT_ROW_GROUP_ROWS;
    bool sorted = n_sort > 0;
    int inflight = 0, max_inflight = threads < 2 ? 2 : threads;
    int32_t max_pending = 4 * threads + 4;
    int64_t total = 0, cur_rows = 0;
    rows_buf *b = NULL;        /* sorted: every row; else the slice being parsed */
    rg_job *cur = NULL;        /* the row group being parsed (no sort) */
    while (rc == PQ_OK) {
        const pq_csv_text *f;
        int32_t nf;
        if ((rc = pq_csv_next(rd, &f, &nf, err)) != PQ_OK) break;
        if (!sorted && b && (nf == 0 || b->n_rows == SLICE_ROWS || cur_rows == rg_rows)) {
            rc = stream_push(&im, cur, b, max_pending, err);
            b = NULL;
            if (rc != PQ_OK) break;
            if (nf == 0 || cur_rows == rg_rows) {
                stream_seal(&im, cur);
                total += cur_rows;
                cur = NULL;
                cur_rows = 0;
                if (++inflight > max_inflight) {
                    inflight--;
                    if ((rc = finish_job(&im, fw, err)) != PQ_OK) break;
                }
            }
            pthread_mutex_lock(&im.mu);
            bool stop = im.failed; /* reported by the drain below */
            pthread_mutex_unlock(&im.mu);
            if (stop) break;
        }
        if (nf == 0) break;
        if (nf == 1 && n_fields > 1 && f[0].len == 0 && !f[0].quoted) continue; /* a blank line */
        if (nf != n_fields) {
            rc = pq_fail(err, PQ_E_USAGE, "%s: line %lld: %d fields, the header has %d", name,
                         (long long)pq_csv_line(rd), nf, n_fields);
            break;
        }
        for (int k = 0; k < opts->n_fixed; k++)
            if (fixed_field[k] >= 0 && !fixed_matches(&opts->fixed[k], &f[fixed_field[k]])) {
                const pq_csv_text *x = &f[fixed_field[k]];
                rc = pq_fail(err, PQ_E_USAGE, "%s: line %lld, column %s: '%.*s' contradicts the path (%s=%s)", name,
                             (long long)pq_csv_line(rd), opts->fixed[k].name, (int)(x->len > 40 ? 40 : x->len), x->p,
                             opts->fixed[k].name, opts->fixed[k].value ? opts->fixed[k].value : "NULL");
                break;
            }
        if (rc != PQ_OK) break;
        if (!sorted && !cur) {
            if (!(cur = stream_job_new(n_cols))) {
                rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
                break;
            }
            submit(&im, cur);
        }
        if (!b && !(b = rows_buf_new(n_cols))) {
            rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
            break;
        }
        if (sorted && b->n_rows == (int64_t)UINT32_MAX - 1) {
            rc = pq_fail(err, PQ_E_USAGE, "%s: too many rows to sort", name);
            break;
        }
        rc = add_record(b, tc, n_cols, f, pq_csv_line(rd), name, err);
        cur_rows++;
    }
    if (cur) {
        /* Stopped inside a row group: its tasks end with what they have. */
        rows_buf_free(b);
        b = NULL;
        stream_seal(&im, cur);
        inflight++;
    }
    /* Sorted: convert every column (in parallel), sort, then encode slices. */
    uint32_t *perm = NULL;
    if (rc == PQ_OK && sorted && b && b->n_rows > 0) {
        rg_job *j = rg_job_new(n_cols);
        if (!j) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
        else {
            j->src = b;
            j->convert = true;
            j->n_rows = b->n_rows;
            submit(&im, j);
            rc = finish_job(&im, fw, err);
        }
        int64_t n = b->n_rows;
        uint32_t *tmp = NULL;
        if (rc == PQ_OK) {
            perm = malloc(sizeof *perm * (size_t)n);
            tmp = malloc(sizeof *tmp * (size_t)(n / 2 + 1));
            im.vidx = calloc((size_t)n_cols, sizeof *im.vidx);
            if (!perm || !tmp || !im.vidx) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
        }
        for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++) {
            if (!(im.vidx[c] = malloc(sizeof **im.vidx * (size_t)n))) {
                rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
                break;
            }
            uint32_t v = 0;
            for (int64_t r = 0; r < n; r++) im.vidx[c][r] = b->cols[c].def[r] ? v++ : UINT32_MAX;
        }
        if (rc == PQ_OK) {
            for (int k = 0; k < n_sort; k++) {
                int32_t c = sorting[k].column_idx;
                keys[k] = (sort_key){&tc[c], &b->cols[c], im.vidx[c]};
            }
            for (int64_t r = 0; r < n; r++) perm[r] = (uint32_t)r;
            merge_sort(keys, n_sort, perm, tmp, n);
        }
        free(tmp);
        for (int64_t r0 = 0; rc == PQ_OK && r0 < n; r0 += rg_rows) {
            if (!(j = rg_job_new(n_cols))) {
                rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
                break;
            }
            j->src = b;
            j->encode = true;
            j->perm = perm + r0;
            j->n_rows = n - r0 < rg_rows ? n - r0 : rg_rows;
            total += j->n_rows;
            submit(&im, j);
            if (++inflight > max_inflight) {
                rc = finish_job(&im, fw, err);
                inflight--;
            }
        }
    }
    /* A row group still in flight lies before whatever stopped the parse:
     * its error, if any, is the one to report. */
    bool job_failed = false;
    for (; inflight > 0; inflight--) {
        pq_error e2;
        pq_error_clear(&e2);
        if (finish_job(&im, fw, &e2) != PQ_OK && !job_failed) {
            job_failed = true;
            *err = e2;
            rc = PQ_ERR;
        }
    }
    pthread_mutex_lock(&im.mu);
    im.quit = true;
    pthread_cond_broadcast(&im.work);
    pthread_mutex_unlock(&im.mu);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    if (rc == PQ_OK) rc = pq_filewriter_finish(fw, err);
    if (rc == PQ_OK && rows_out) *rows_out = total;
    if (opts->mismatch) *opts->mismatch = rc != PQ_OK && im.mismatch;
    pq_filewriter_free(fw);
    if (im.vidx)
        for (int32_t c = 0; c < n_cols; c++) free(im.vidx[c]);
    free(im.vidx);
    free(perm);
    rows_buf_free(b);
    pq_csv_free(rd);
    pthread_mutex_destroy(&im.mu);
    pthread_cond_destroy(&im.work);
    pthread_cond_destroy(&im.done);
    pthread_cond_destroy(&im.space);
    free(tc);
    free(sorting);
    free(keys);
    free(fixed_field);
    pq_schema_free(&schema);
    return rc;
}

/* ------------------------------------------------------------------ inference */

typedef struct infer_state {
    bool any;                  /* a non-NULL value was seen */
    bool can_int, can_double, can_bool, can_date, can_ts;
    bool ts_nanos, ts_offset, ts_local;
    bool ts_micros_only;       /* a value out of the years nanoseconds reach */
} infer_state;

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

static void infer_value(infer_state *s, const char *p, size_t n, bool quoted)
{
    if (n == 0) {
        if (quoted) s->can_int = s->can_double = s->can_bool = s->can_date = s->can_ts = false, s->any = true;
        return;
    }
    s->any = true;
    int64_t i64;
    double d;
    uint8_t bv;
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

/* Header names must be distinct: checked with a hash table (a header can
 * hold many thousands of names). */
static int check_unique_names(const pq_csv_text *f, int32_t n, const char *name, pq_error *err)
{
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap *= 2;
    int32_t *slot = malloc(sizeof *slot * cap);
    if (!slot) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    for (size_t i = 0; i < cap; i++) slot[i] = -1;
    int rc = PQ_OK;
    for (int32_t c = 0; c < n && rc == PQ_OK; c++) {
        uint64_t h = 1469598103934665603ull;
        for (uint32_t i = 0; i < f[c].len; i++) h = (h ^ (uint8_t)f[c].p[i]) * 1099511628211ull;
        for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
            if (slot[i] < 0) {
                slot[i] = c;
                break;
            }
            const pq_csv_text *o = &f[slot[i]];
            if (o->len == f[c].len && memcmp(o->p, f[c].p, f[c].len) == 0) {
                rc = pq_fail(err, PQ_E_USAGE, "%s: line 1: column '%.*s' appears twice", name,
                             (int)(f[c].len > 100 ? 100 : f[c].len), f[c].p);
                break;
            }
        }
    }
    free(slot);
    return rc;
}

void pq_csv_schema_free(pq_csv_schema *s)
{
    if (!s) return;
    free(s->elements);
    pq_arena_free(&s->arena);
    memset(s, 0, sizeof *s);
}

int pq_csv_infer(pq_file *in, const char *name, pq_csv_schema *out, pq_error *err)
{
    return pq_csv_infer_rows(in, name, 0, out, NULL, err);
}

int pq_csv_infer_rows(pq_file *in, const char *name, int64_t max_rows, pq_csv_schema *out, bool *whole,
                      pq_error *err)
{
    if (whole) *whole = true;
    int64_t seen = 0;
    memset(out, 0, sizeof *out);
    pq_arena_init(&out->arena, 4096);
    pq_csv_reader *rd;
    if (pq_csv_open(in, name, &rd, err) != PQ_OK) return PQ_ERR;
    const pq_csv_text *f;
    int32_t nf;
    int rc = pq_csv_next(rd, &f, &nf, err);
    if (rc == PQ_OK && nf == 0) rc = pq_fail(err, PQ_E_USAGE, "%s: empty input: a header line is needed", name);
    int32_t n_cols = nf;
    infer_state *st = NULL;
    if (rc == PQ_OK && n_cols > PQ_CSV_MAX_COLUMNS)
        rc = pq_fail(err, PQ_E_USAGE, "%s: line 1: %d columns, more than %d", name, n_cols, PQ_CSV_MAX_COLUMNS);
    for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++)
        if (f[c].len == 0) rc = pq_fail(err, PQ_E_USAGE, "%s: line 1: column %d has no name", name, c + 1);
    if (rc == PQ_OK) rc = check_unique_names(f, n_cols, name, err);
    if (rc == PQ_OK) {
        out->elements = calloc((size_t)n_cols + 1, sizeof *out->elements);
        st = calloc((size_t)n_cols, sizeof *st);
        if (!out->elements || !st) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++) {
        if (f[c].len == 0) {
            rc = pq_fail(err, PQ_E_USAGE, "%s: line 1: column %d has no name", name, c + 1);
            break;
        }
        pq_schema_element *e = &out->elements[c + 1];
        e->name = pq_arena_strndup(&out->arena, f[c].p, f[c].len);
        if (!e->name) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
        st[c] = (infer_state){.can_int = true, .can_double = true, .can_bool = true, .can_date = true, .can_ts = true};
    }
    while (rc == PQ_OK) {
        if (max_rows > 0 && seen >= max_rows) {
            /* A column without a value yet would be STRING by default:
             * read on until it has one. */
            bool determined = true;
            for (int32_t c = 0; c < n_cols && determined; c++) determined = st[c].any;
            if (determined) {
                if (whole) *whole = false;
                break;
            }
        }
        rc = pq_csv_next(rd, &f, &nf, err);
        if (rc != PQ_OK || nf == 0) break;
        seen++;
        if (nf == 1 && n_cols > 1 && f[0].len == 0 && !f[0].quoted) continue;
        if (nf != n_cols) {
            rc = pq_fail(err, PQ_E_USAGE, "%s: line %lld: %d fields, the header has %d", name,
                         (long long)pq_csv_line(rd), nf, n_cols);
            break;
        }
        for (int32_t c = 0; c < n_cols; c++) infer_value(&st[c], f[c].p, f[c].len, f[c].quoted);
    }
    if (rc == PQ_OK) {
        pq_schema_element *root = &out->elements[0];
        root->name = "schema";
        root->has_num_children = true;
        root->num_children = n_cols;
        root->converted_type = PQ_CT_NONE;
        static const infer_state no_values; /* STRING */
        for (int32_t c = 0; c < n_cols; c++) {
            pq_schema_element *e = &out->elements[c + 1];
            const infer_state *s = &st[c];
            e->has_type = true;
            e->has_repetition = true;
            e->repetition = PQ_OPTIONAL;
            e->converted_type = PQ_CT_NONE;
            if (!s->any) s = &no_values;
            if (s->can_int) e->type = PQ_INT64;
            else if (s->can_double) e->type = PQ_DOUBLE;
            else if (s->can_bool) e->type = PQ_BOOLEAN;
            else if (s->can_date) {
                e->type = PQ_INT32;
                e->converted_type = PQ_CT_DATE;
                e->has_logical = true;
                e->logical.kind = PQ_LT_DATE;
            } else if (s->can_ts && !(s->ts_offset && s->ts_local) && !(s->ts_nanos && s->ts_micros_only)) {
                e->type = PQ_INT64;
                e->has_logical = true;
                e->logical.kind = PQ_LT_TIMESTAMP;
                e->logical.utc = s->ts_offset;
                e->logical.unit = s->ts_nanos ? PQ_UNIT_NANOS : PQ_UNIT_MICROS;
                if (s->ts_offset && !s->ts_nanos) e->converted_type = PQ_CT_TIMESTAMP_MICROS;
            } else {
                e->type = PQ_BYTE_ARRAY;
                e->converted_type = PQ_CT_UTF8;
                e->has_logical = true;
                e->logical.kind = PQ_LT_STRING;
            }
        }
        out->n_elements = n_cols + 1;
    }
    free(st);
    pq_csv_free(rd);
    if (rc != PQ_OK) pq_csv_schema_free(out);
    return rc;
}

/* Fixed columns (partition values from the path) are not written: an
 * inferred schema loses the CSV columns of those names. */
static void drop_fixed(pq_csv_schema *s, const pq_import_opts *opts)
{
    int32_t kept = 1;
    for (int32_t i = 1; i < s->n_elements; i++) {
        bool fixed = false;
        for (int k = 0; k < opts->n_fixed && !fixed; k++) fixed = !strcmp(s->elements[i].name, opts->fixed[k].name);
        if (!fixed) s->elements[kept++] = s->elements[i];
    }
    s->n_elements = kept;
    s->elements[0].num_children = kept - 1;
}

int pq_csv_import_inferred(pq_file *in, const char *name, const pq_import_opts *opts, const pq_sink *sink,
                           int (*restart)(void *ctx, pq_error *err), void *restart_ctx, pq_csv_schema *schema,
                           int64_t *rows_out, pq_error *err)
{
    /* Types from a sample, then one pass; a value past the sample that
     * does not fit means the sample was not enough: the sink is emptied and
     * the types are taken from the whole file, as a second pass. */
    bool whole;
    PQ_TRY(pq_csv_infer_rows(in, name, PQ_CSV_INFER_SAMPLE_ROWS, schema, &whole, err));
    drop_fixed(schema, opts);
    pq_import_opts o = *opts;
    bool mismatch = false;
    o.mismatch = &mismatch;
    int rc = pq_csv_import(in, name, schema->elements, schema->n_elements, &o, sink, rows_out, err);
    if (rc == PQ_OK || whole || !mismatch) return rc;
    pq_csv_schema_free(schema);
    pq_error_clear(err);
    PQ_TRY(restart(restart_ctx, err));
    PQ_TRY(pq_csv_infer(in, name, schema, err));
    drop_fixed(schema, opts);
    o.mismatch = NULL;
    return pq_csv_import(in, name, schema->elements, schema->n_elements, &o, sink, rows_out, err);
}
