/* Values of the expression language: decimal arithmetic on __int128, the
 * total order used by comparisons and pruning, conversions between a column's
 * PLAIN bytes and its value domain, and literal text. */
#include "expr_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "numfmt.h"
#include "render.h"

/* Correctly rounded powers of ten as doubles (exact up to 1e22). */
static const double pow10_double[39] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12,
    1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25,
    1e26, 1e27, 1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38,
};

#define NS_PER_DAY ((int64_t)86400 * 1000000000)
#define JULIAN_EPOCH 2440588

/* ------------------------------------------------------------------ decimals */

bool pq_x_dec_rescale(__int128 u, int32_t from, int32_t to, __int128 *out)
{
    if (to < from || to - from > 38)
        return false;
    return !__builtin_mul_overflow(u, pq_pow10_i128[to - from], out);
}

int pq_x_dec_cmp(__int128 a, int32_t sa, __int128 b, int32_t sb)
{
    if (sa < sb) {
        __int128 r;
        if (!pq_x_dec_rescale(a, sa, sb, &r))
            return a > 0 ? 1 : -1; /* |a| * 10^k exceeds every __int128, so |b| too */
        a = r;
    } else if (sb < sa) {
        __int128 r;
        if (!pq_x_dec_rescale(b, sb, sa, &r))
            return b > 0 ? -1 : 1;
        b = r;
    }
    return (a > b) - (a < b);
}

/* A 128-bit integer as DuckDB converts it: an int64 directly, a wider one
 * from its 64-bit halves (Hugeint::Cast, two roundings). */
static double duck_i128_to_double(__int128 x)
{
    if (x >= INT64_MIN && x <= INT64_MAX)
        return (double)(int64_t)x;
    int64_t upper = (int64_t)(x >> 64);
    uint64_t lower = (uint64_t)x;
    if (upper == -1)
        return -(double)(UINT64_MAX - lower) - 1.0;
    return (double)lower + (double)upper * 18446744073709551616.0;
}

/* DuckDB's cast of a DECIMAL to DOUBLE (TryCastDecimalToFloatingPoint), so a
 * decimal column compared with a double finds DuckDB's rows: the unscaled
 * value divided by 10^scale while it converts exactly (|u| <= 2^53), else
 * the integer part plus the fraction, each converted on its own.  That is
 * not always the nearest double, nor strictly monotone past 2^53: pruning
 * widens bounds converted this way (expr_prune.c). */
double pq_x_dec_to_double(__int128 u, int32_t scale)
{
    const __int128 exact = (__int128)1 << 53;
    if (scale <= 0 || scale > 38 || (u >= -exact && u <= exact)) {
        double d = duck_i128_to_double(u);
        if (scale > 0 && scale <= 38)
            d /= pow10_double[scale];
        return d;
    }
    __int128 p = pq_pow10_i128[scale];
    return duck_i128_to_double(u / p) + duck_i128_to_double(u % p) / pow10_double[scale];
}

__int128 pq_x_dec_round(__int128 u, int32_t from, int32_t to)
{
    if (to >= from)
        return u;
    if (from - to > 38)
        return 0;
    __int128 d = pq_pow10_i128[from - to];
    __int128 q = u / d, r = u % d;
    if (r < 0)
        r = -r;
    if (r >= d - r)
        q += u < 0 ? -1 : 1;
    return q;
}


/* ------------------------------------------------------------------ small helpers */

int pq_x_double_cmp(double a, double b)
{
    bool an = isnan(a), bn = isnan(b);
    if (an || bn)
        return (int)an - (int)bn; /* NaN equals NaN and sorts above everything */
    return (a > b) - (a < b);     /* -0.0 == 0.0 */
}

__int128 pq_x_floor_div(__int128 a, __int128 b)
{
    __int128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

__int128 pq_x_int96_ns(const uint8_t b[12])
{
    /* Whole microseconds, exactly as the CSV output reads INT96. */
    return (__int128)pq_int96_micros(b) * 1000;
}

__int128 pq_x_be_int(const uint8_t *p, uint32_t len, bool *fits)
{
    *fits = true;
    if (len == 0)
        return 0;
    uint8_t sign_byte = (p[0] & 0x80) ? 0xFF : 0x00;
    if (len > 16) {
        for (uint32_t i = 0; i < len - 16; i++)
            if (p[i] != sign_byte)
                *fits = false;
        if ((p[len - 16] & 0x80) != (sign_byte & 0x80))
            *fits = false;
        p += len - 16;
        len = 16;
    }
    unsigned __int128 acc = sign_byte ? ~(unsigned __int128)0 : 0;
    for (uint32_t i = 0; i < len; i++)
        acc = acc << 8 | p[i];
    return (__int128)acc;
}

double pq_x_round_f32(double d)
{
    if (isfinite(d) && fabs(d) > FLT_MAX) {
        /* Out of float range: round as IEEE would, without the undefined cast. */
        double limit = 0x1.ffffffp127; /* FLT_MAX + half an ulp */
        double m = fabs(d) >= limit ? INFINITY : FLT_MAX;
        return d < 0 ? -m : m;
    }
    return (double)(float)d;
}

const char *pq_x_type_name(pq_vtype t)
{
    switch (t) {
    case PQ_V_NULL: return "NULL";
    case PQ_V_BOOL: return "BOOLEAN";
    case PQ_V_INT: return "INTEGER";
    case PQ_V_DOUBLE: return "DOUBLE";
    case PQ_V_DECIMAL: return "DECIMAL";
    case PQ_V_STRING: return "STRING";
    case PQ_V_DATE: return "DATE";
    case PQ_V_TIME: return "TIME";
    case PQ_V_TIMESTAMP: return "TIMESTAMP";
    }
    return "?";
}

/* ------------------------------------------------------------------ column info */

void pq_x_colinfo(const pq_node *node, pq_colinfo *out)
{
    memset(out, 0, sizeof *out);
    out->unit = 1;
    out->def_level = node->def_level;
    out->type_length = node->phys == PQ_FIXED_LEN_BYTE_ARRAY ? node->type_length : 0;
    pq_cell_format f = pq_cell_format_of(node);
    int64_t unit = f.digits == 3 ? 1000000 : f.digits == 6 ? 1000 : 1;
    switch (f.kind) {
    case PQ_CELL_NULL: out->repr = PQ_R_NONE; out->type = PQ_V_NULL; break;
    case PQ_CELL_BOOL: out->repr = PQ_R_BOOL; out->type = PQ_V_BOOL; break;
    case PQ_CELL_I32: out->repr = PQ_R_I32; out->type = PQ_V_INT; break;
    case PQ_CELL_U32: out->repr = PQ_R_U32; out->type = PQ_V_INT; break;
    case PQ_CELL_I64: out->repr = PQ_R_I64; out->type = PQ_V_INT; break;
    case PQ_CELL_U64: out->repr = PQ_R_U64; out->type = PQ_V_DECIMAL; break;
    case PQ_CELL_FLOAT: out->repr = PQ_R_FLOAT; out->type = PQ_V_DOUBLE; out->f32 = true; break;
    case PQ_CELL_DOUBLE: out->repr = PQ_R_DOUBLE; out->type = PQ_V_DOUBLE; break;
    case PQ_CELL_FLOAT16: out->repr = PQ_R_HALF; out->type = PQ_V_DOUBLE; out->f32 = true; break;
    case PQ_CELL_STRING: out->repr = PQ_R_BYTES; out->type = PQ_V_STRING; break;
    case PQ_CELL_BINARY:
        out->repr = PQ_R_BYTES;
        out->type = PQ_V_STRING;
        out->binary = true;
        break;
    case PQ_CELL_DECIMAL_I32:
    case PQ_CELL_DECIMAL_I64:
    case PQ_CELL_DECIMAL_BYTES:
        out->repr = f.kind == PQ_CELL_DECIMAL_I32   ? PQ_R_I32
                    : f.kind == PQ_CELL_DECIMAL_I64 ? PQ_R_I64
                                                    : PQ_R_DEC_BYTES;
        out->type = PQ_V_DECIMAL;
        out->scale = f.scale;
        if (node->logical.precision > 38 || f.scale < 0 || f.scale > 38) {
            out->opaque = "DECIMAL wider than 38 digits";
            out->repr = PQ_R_BYTES;
            out->type = PQ_V_STRING;
        }
        break;
    case PQ_CELL_DATE: out->repr = PQ_R_I32; out->type = PQ_V_DATE; break;
    case PQ_CELL_TIME:
        out->repr = node->phys == PQ_INT32 ? PQ_R_I32 : PQ_R_I64;
        out->type = PQ_V_TIME;
        out->unit = unit;
        break;
    case PQ_CELL_TIMESTAMP:
        out->repr = PQ_R_I64;
        out->type = PQ_V_TIMESTAMP;
        out->unit = unit;
        out->local_ts = !f.utc;
        break;
    case PQ_CELL_INT96:
        out->repr = PQ_R_INT96;
        out->type = PQ_V_TIMESTAMP;
        out->local_ts = !f.utc;
        out->unit = 1000; /* values are whole microseconds (pq_x_int96_ns) */
        break;
    case PQ_CELL_UUID:
        out->repr = PQ_R_BYTES;
        out->type = PQ_V_STRING;
        out->uuid = true;
        break;
    case PQ_CELL_INTERVAL:
        out->repr = PQ_R_BYTES;
        out->type = PQ_V_STRING;
        out->opaque = "INTERVAL";
        break;
    }
}

/* ------------------------------------------------------------------ PLAIN bytes */

static uint64_t load_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void store_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* A stored integer of an INT32/INT64 column into the column's domain. */
static void int_to_value(const pq_colinfo *c, int64_t v, pq_value *out)
{
    out->type = c->type;
    switch (c->type) {
    case PQ_V_DATE: out->u.date = (int32_t)v; break;
    case PQ_V_TIME:
        if (__builtin_mul_overflow(v, c->unit, &out->u.time_ns)) /* corrupt: saturate */
            out->u.time_ns = v < 0 ? INT64_MIN : INT64_MAX;
        break;
    case PQ_V_TIMESTAMP: out->u.ts_ns = (__int128)v * c->unit; break;
    case PQ_V_DECIMAL:
        out->u.dec.unscaled = v;
        out->u.dec.scale = c->scale;
        break;
    default: out->u.i = v; break;
    }
}

static int decode_plain(const pq_colinfo *cp, const uint8_t *p, size_t len, pq_value *out)
{
    pq_colinfo c = *cp;
    switch (c.repr) {
    case PQ_R_NONE: return -1;
    case PQ_R_BOOL:
        if (len != 1) return -1;
        out->type = PQ_V_BOOL;
        out->u.b = p[0] != 0;
        return 0;
    case PQ_R_I32:
    case PQ_R_U32:
        if (len != 4) return -1;
        if (c.repr == PQ_R_U32)
            int_to_value(&c, (int64_t)(uint32_t)load_le(p, 4), out);
        else
            int_to_value(&c, (int32_t)(uint32_t)load_le(p, 4), out);
        return 0;
    case PQ_R_I64:
        if (len != 8) return -1;
        int_to_value(&c, (int64_t)load_le(p, 8), out);
        return 0;
    case PQ_R_U64:
        if (len != 8) return -1;
        out->type = PQ_V_DECIMAL;
        out->u.dec.unscaled = (__int128)load_le(p, 8);
        out->u.dec.scale = 0;
        return 0;
    case PQ_R_FLOAT: {
        if (len != 4) return -1;
        uint32_t bits = (uint32_t)load_le(p, 4);
        float f;
        memcpy(&f, &bits, 4);
        out->type = PQ_V_DOUBLE;
        out->u.d = f;
        return 0;
    }
    case PQ_R_DOUBLE: {
        if (len != 8) return -1;
        uint64_t bits = load_le(p, 8);
        memcpy(&out->u.d, &bits, 8);
        out->type = PQ_V_DOUBLE;
        return 0;
    }
    case PQ_R_HALF:
        if (len != 2) return -1;
        out->type = PQ_V_DOUBLE;
        out->u.d = pq_half_to_float((uint16_t)load_le(p, 2));
        return 0;
    case PQ_R_INT96:
        if (len != 12) return -1;
        out->type = PQ_V_TIMESTAMP;
        out->u.ts_ns = pq_x_int96_ns(p);
        return 0;
    case PQ_R_BYTES:
        if (len > UINT32_MAX) return -1;
        out->type = PQ_V_STRING;
        out->u.s.ptr = p;
        out->u.s.len = (uint32_t)len;
        return 0;
    case PQ_R_DEC_BYTES: {
        bool fits;
        if (len == 0 || len > UINT32_MAX) return -1;
        out->type = PQ_V_DECIMAL;
        out->u.dec.unscaled = pq_x_be_int(p, (uint32_t)len, &fits);
        out->u.dec.scale = c.scale;
        return fits ? 0 : -1;
    }
    }
    return -1;
}

int pq_value_from_plain(const pq_node *col, const uint8_t *p, size_t len, pq_value *out)
{
    pq_colinfo c;
    pq_value v;
    pq_x_colinfo(col, &c);
    memset(&v, 0, sizeof v);
    if (decode_plain(&c, p, len, &v) != 0)
        return -1; /* *out untouched */
    *out = v;
    return 0;
}

/* IEEE half bits of d when d is exactly a half-precision value. */
static int half_bits_exact(double d, uint16_t *bits)
{
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (isnan(d)) { *bits = 0x7E00; return 0; }
    if (isinf(d)) { *bits = sign | 0x7C00; return 0; }
    if (a == 0) { *bits = sign; return 0; }
    if (a > 65504) return -1;
    int e;
    frexp(a, &e);              /* a = m * 2^e, m in [0.5, 1) */
    int exp = e - 1;           /* a = 1.f * 2^exp */
    if (exp < -14) {
        double m = ldexp(a, 24); /* subnormal: a = m * 2^-24 */
        if (m != floor(m)) return -1;
        *bits = sign | (uint16_t)m;
        return 0;
    }
    double frac = ldexp(a, -exp) - 1.0; /* in [0, 1) */
    double m = ldexp(frac, 10);
    if (m != floor(m)) return -1;
    *bits = sign | (uint16_t)((exp + 15) << 10) | (uint16_t)m;
    return 0;
}

int pq_x_to_domain(const pq_colinfo *c, const pq_value *v, pq_value *out)
{
    memset(out, 0, sizeof *out);
    out->type = c->type;
    switch (c->type) {
    case PQ_V_INT:
        if (v->type == PQ_V_INT) { out->u.i = v->u.i; return 0; }
        if (v->type == PQ_V_DECIMAL) {
            __int128 d = pq_pow10_i128[v->u.dec.scale], u = v->u.dec.unscaled;
            if (u % d != 0) return -1;
            u /= d;
            if (u < INT64_MIN || u > INT64_MAX) return -1;
            out->u.i = (int64_t)u;
            return 0;
        }
        if (v->type == PQ_V_DOUBLE) {
            double d = v->u.d;
            if (!isfinite(d) || d != floor(d)) return -1;
            if (d < -0x1p63 || d >= 0x1p63) return -1;
            out->u.i = (int64_t)d;
            return 0;
        }
        return -2;
    case PQ_V_DECIMAL: {
        __int128 u;
        int32_t s;
        if (v->type == PQ_V_INT) { u = v->u.i; s = 0; }
        else if (v->type == PQ_V_DECIMAL) { u = v->u.dec.unscaled; s = v->u.dec.scale; }
        else return -2;
        if (s <= c->scale) {
            if (!pq_x_dec_rescale(u, s, c->scale, &u)) return -1;
        } else {
            __int128 d = pq_pow10_i128[s - c->scale];
            if (u % d != 0) return -1;
            u /= d;
        }
        out->u.dec.unscaled = u;
        out->u.dec.scale = c->scale;
        return 0;
    }
    case PQ_V_DOUBLE: {
        double d;
        if (v->type == PQ_V_DOUBLE) d = v->u.d;
        else if (v->type == PQ_V_INT && v->u.i > -(1LL << 53) && v->u.i < (1LL << 53)) d = (double)v->u.i;
        else return -2;
        uint16_t h;
        if (c->repr == PQ_R_FLOAT && !isnan(d) && pq_x_round_f32(d) != d) return -1;
        if (c->repr == PQ_R_HALF && half_bits_exact(d, &h) != 0) return -1;
        out->u.d = d;
        return 0;
    }
    case PQ_V_STRING:
        if (v->type != PQ_V_STRING) return -2;
        if (c->type_length > 0 && v->u.s.len != (uint32_t)c->type_length) return -1;
        out->u.s = v->u.s;
        return 0;
    case PQ_V_BOOL:
        if (v->type != PQ_V_BOOL) return -2;
        out->u.b = v->u.b;
        return 0;
    case PQ_V_DATE:
        if (v->type == PQ_V_DATE) { out->u.date = v->u.date; return 0; }
        if (v->type == PQ_V_TIMESTAMP) {
            if (v->u.ts_ns % NS_PER_DAY != 0) return -1;
            __int128 days = v->u.ts_ns / NS_PER_DAY;
            if (days < INT32_MIN || days > INT32_MAX) return -1;
            out->u.date = (int32_t)days;
            return 0;
        }
        return -2;
    case PQ_V_TIME:
        if (v->type != PQ_V_TIME) return -2;
        if (v->u.time_ns % c->unit != 0) return -1;
        out->u.time_ns = v->u.time_ns;
        return 0;
    case PQ_V_TIMESTAMP: {
        __int128 ns;
        if (v->type == PQ_V_TIMESTAMP) ns = v->u.ts_ns;
        else if (v->type == PQ_V_DATE) ns = (__int128)v->u.date * NS_PER_DAY;
        else return -2;
        if (ns % c->unit != 0) return -1;
        out->u.ts_ns = ns;
        return 0;
    }
    case PQ_V_NULL: return -2;
    }
    return -2;
}

int pq_value_to_plain(const pq_node *col, const pq_value *v, uint8_t *buf, size_t cap)
{
    pq_colinfo c;
    pq_x_colinfo(col, &c);
    if (c.opaque || v->is_null || v->type == PQ_V_NULL)
        return -2;
    pq_value d;
    int rc = pq_x_to_domain(&c, v, &d);
    if (rc != 0)
        return rc;
    /* The stored integer for INT32/INT64 representations. */
    __int128 stored = 0;
    switch (c.type) {
    case PQ_V_INT: stored = d.u.i; break;
    case PQ_V_DECIMAL: stored = d.u.dec.unscaled; break;
    case PQ_V_DATE: stored = d.u.date; break;
    case PQ_V_TIME: stored = d.u.time_ns / c.unit; break;
    case PQ_V_TIMESTAMP: stored = d.u.ts_ns / c.unit; break;
    default: break;
    }
    switch (c.repr) {
    case PQ_R_NONE: return -2;
    case PQ_R_BOOL:
        if (cap < 1) return -2;
        buf[0] = d.u.b;
        return 1;
    case PQ_R_I32:
    case PQ_R_U32:
        if (c.repr == PQ_R_I32 ? (stored < INT32_MIN || stored > INT32_MAX)
                               : (stored < 0 || stored > UINT32_MAX))
            return -1;
        if (cap < 4) return -2;
        store_le(buf, (uint64_t)(int64_t)stored, 4);
        return 4;
    case PQ_R_I64:
    case PQ_R_U64:
        if (c.repr == PQ_R_I64 ? (stored < INT64_MIN || stored > INT64_MAX)
                               : (stored < 0 || stored > (__int128)UINT64_MAX))
            return -1;
        if (cap < 8) return -2;
        store_le(buf, (uint64_t)stored, 8);
        return 8;
    case PQ_R_FLOAT: {
        if (cap < 4) return -2;
        float f = (float)d.u.d;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        store_le(buf, bits, 4);
        return 4;
    }
    case PQ_R_DOUBLE: {
        if (cap < 8) return -2;
        uint64_t bits;
        memcpy(&bits, &d.u.d, 8);
        store_le(buf, bits, 8);
        return 8;
    }
    case PQ_R_HALF: {
        uint16_t h;
        if (half_bits_exact(d.u.d, &h) != 0) return -1;
        if (cap < 2) return -2;
        store_le(buf, h, 2);
        return 2;
    }
    case PQ_R_INT96: {
        /* The canonical encoding; stored values may also carry nanoseconds
         * below the microsecond, which read as the same value. */
        __int128 days = pq_x_floor_div(d.u.ts_ns, NS_PER_DAY);
        __int128 nanos = d.u.ts_ns - days * NS_PER_DAY;
        __int128 julian = days + JULIAN_EPOCH;
        if (julian < 0 || julian > UINT32_MAX) return -1;
        if (cap < 12) return -2;
        store_le(buf, (uint64_t)nanos, 8);
        store_le(buf + 8, (uint64_t)julian, 4);
        return 12;
    }
    case PQ_R_BYTES:
        if (cap < d.u.s.len) return -2;
        if (d.u.s.len) memcpy(buf, d.u.s.ptr, d.u.s.len);
        return (int)d.u.s.len;
    case PQ_R_DEC_BYTES: {
        __int128 u = d.u.dec.unscaled;
        /* Minimal two's complement length, or the fixed length padded. */
        int need = 1;
        while (need < 16) {
            __int128 lo = -((__int128)1 << (8 * need - 1)), hi = ((__int128)1 << (8 * need - 1)) - 1;
            if (u >= lo && u <= hi) break;
            need++;
        }
        int len = c.type_length > 0 ? c.type_length : need;
        if (need > len) return -1;
        if ((size_t)len > cap) return -2;
        unsigned __int128 x = (unsigned __int128)u;
        for (int i = len - 1; i >= 0; i--) {
            buf[i] = (uint8_t)x;
            x = u < 0 ? (x >> 8) | ((unsigned __int128)0xFF << 120) : x >> 8;
        }
        return len;
    }
    }
    return -2;
}

/* ------------------------------------------------------------------ ordering */

static int cmp_bytes(pq_bytes a, pq_bytes b)
{
    uint32_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c != 0)
        return c < 0 ? -1 : 1;
    return (a.len > b.len) - (a.len < b.len);
}

int pq_value_cmp(const pq_value *a, const pq_value *b)
{
    if (a->type != b->type) {
        /* Mixed types the binder unifies exactly; anything else orders by type. */
        pq_value ca, cb;
        if ((a->type == PQ_V_INT && b->type == PQ_V_DECIMAL) ||
            (a->type == PQ_V_DATE && b->type == PQ_V_TIMESTAMP)) {
            pq_x_value_cast(a, b->type, 0, false, &ca);
            return pq_value_cmp(&ca, b);
        }
        if ((b->type == PQ_V_INT && a->type == PQ_V_DECIMAL) ||
            (b->type == PQ_V_DATE && a->type == PQ_V_TIMESTAMP)) {
            pq_x_value_cast(b, a->type, 0, false, &cb);
            return pq_value_cmp(a, &cb);
        }
        return a->type < b->type ? -1 : 1;
    }
    switch (a->type) {
    case PQ_V_NULL: return 0;
    case PQ_V_BOOL: return (int)a->u.b - (int)b->u.b;
    case PQ_V_INT: return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    case PQ_V_DOUBLE: return pq_x_double_cmp(a->u.d, b->u.d);
    case PQ_V_DECIMAL:
        return pq_x_dec_cmp(a->u.dec.unscaled, a->u.dec.scale, b->u.dec.unscaled, b->u.dec.scale);
    case PQ_V_STRING: return cmp_bytes(a->u.s, b->u.s);
    case PQ_V_DATE: return (a->u.date > b->u.date) - (a->u.date < b->u.date);
    case PQ_V_TIME: return (a->u.time_ns > b->u.time_ns) - (a->u.time_ns < b->u.time_ns);
    case PQ_V_TIMESTAMP: return (a->u.ts_ns > b->u.ts_ns) - (a->u.ts_ns < b->u.ts_ns);
    }
    return 0;
}

int pq_x_value_cast(const pq_value *in, pq_vtype to, int32_t scale, bool f32, pq_value *out)
{
    pq_value r;
    memset(&r, 0, sizeof r);
    r.type = to;
    r.is_null = in->is_null || in->type == PQ_V_NULL;
    if (r.is_null) {
        *out = r;
        return 0;
    }
    if (in->type == to && to != PQ_V_DOUBLE && to != PQ_V_DECIMAL) {
        *out = *in;
        return 0;
    }
    switch (to) {
    case PQ_V_DECIMAL: {
        __int128 u;
        int32_t s;
        if (in->type == PQ_V_INT) { u = in->u.i; s = 0; }
        else if (in->type == PQ_V_DECIMAL) { u = in->u.dec.unscaled; s = in->u.dec.scale; }
        else return -1;
        if (scale < s) scale = s; /* never loses digits */
        if (!pq_x_dec_rescale(u, s, scale, &r.u.dec.unscaled)) return -1;
        r.u.dec.scale = scale;
        break;
    }
    case PQ_V_DOUBLE:
        if (in->type == PQ_V_INT) r.u.d = f32 ? (double)(float)in->u.i : (double)in->u.i;
        else if (in->type == PQ_V_DECIMAL)
            r.u.d = pq_x_dec_to_double(in->u.dec.unscaled, in->u.dec.scale);
        else if (in->type == PQ_V_DOUBLE) r.u.d = in->u.d;
        else return -1;
        if (f32) r.u.d = pq_x_round_f32(r.u.d);
        break;
    case PQ_V_TIMESTAMP:
        if (in->type != PQ_V_DATE) return -1;
        r.u.ts_ns = (__int128)in->u.date * NS_PER_DAY;
        break;
    default: return -1;
    }
    *out = r;
    return 0;
}

void pq_x_grid_literal(pq_cmp_op op, __int128 literal, __int128 grid, pq_cmp_op *op_out,
                       __int128 *q, int *constant)
{
    __int128 f = pq_x_floor_div(literal, grid);
    *q = f;
    *op_out = op;
    *constant = -1;
    if (f * grid == literal)
        return;
    /* f*grid < literal < (f+1)*grid: no stored value hits the literal. */
    switch (op) {
    case PQ_OP_EQ: *constant = 0; break;
    case PQ_OP_NE: *constant = 1; break;
    case PQ_OP_LT: case PQ_OP_LE: *op_out = PQ_OP_LE; break;
    case PQ_OP_GT: case PQ_OP_GE: *op_out = PQ_OP_GT; break;
    }
}

/* ------------------------------------------------------------------ literal text */

static int put_int128(pq_buf *out, __int128 v)
{
    char tmp[48];
    int n = 0;
    unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
    do {
        tmp[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    if (v < 0)
        tmp[n++] = '-';
    char rev[48];
    for (int i = 0; i < n; i++)
        rev[i] = tmp[n - 1 - i];
    return pq_buf_append(out, rev, (size_t)n);
}

static int put_decimal(pq_buf *out, __int128 u, int32_t scale)
{
    if (scale <= 0)
        return put_int128(out, u);
    pq_buf digits;
    pq_buf_init(&digits);
    unsigned __int128 m = u < 0 ? -(unsigned __int128)u : (unsigned __int128)u;
    int rc = put_int128(&digits, (__int128)m); /* |u| < 2^127 for every decimal we make */
    if (rc == 0 && u < 0)
        rc = pq_buf_puts(out, "-");
    if (rc == 0) {
        size_t n = digits.len, s = (size_t)scale;
        if (n <= s) {
            rc = pq_buf_puts(out, "0.");
            for (size_t i = n; i < s && rc == 0; i++)
                rc = pq_buf_puts(out, "0");
            if (rc == 0) rc = pq_buf_append(out, digits.data, n);
        } else {
            rc = pq_buf_append(out, digits.data, n - s);
            if (rc == 0) rc = pq_buf_puts(out, ".");
            if (rc == 0) rc = pq_buf_append(out, digits.data + n - s, s);
        }
    }
    pq_buf_free(&digits);
    return rc;
}

static int put_quoted(pq_buf *out, const uint8_t *p, size_t n, bool binary)
{
    static const char hex[] = "0123456789abcdef";
    if (pq_buf_puts(out, "'")) return -1;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\'') {
            if (pq_buf_puts(out, "''")) return -1;
        } else if (binary && (c < 0x20 || c >= 0x7F || c == '\\')) {
            char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            if (pq_buf_append(out, esc, 4)) return -1;
        } else if (pq_buf_append(out, &c, 1)) {
            return -1;
        }
    }
    return pq_buf_puts(out, "'");
}

int pq_x_value_text(const pq_value *v, pq_litform form, pq_buf *out)
{
    char tmp[2 * PQ_FMT_MAX];
    size_t n;
    if (v->is_null || v->type == PQ_V_NULL)
        return pq_buf_puts(out, "NULL");
    switch (v->type) {
    case PQ_V_NULL: break;
    case PQ_V_BOOL: return pq_buf_puts(out, v->u.b ? "TRUE" : "FALSE");
    case PQ_V_INT:
        /* "-9223372036854775808" reads back as the negation of a number
         * past int64, a DECIMAL: the smallest BIGINT is written as the
         * BIGINT arithmetic that folds to it. */
        if (v->u.i == INT64_MIN) return pq_buf_puts(out, "(-9223372036854775807 - 1)");
        n = pq_fmt_i64(v->u.i, tmp);
        return pq_buf_append(out, tmp, n);
    case PQ_V_DOUBLE:
        n = pq_fmt_double(v->u.d, tmp);
        if (!isfinite(v->u.d)) /* 'nan', 'inf', '-inf': read back by a DOUBLE comparison */
            return put_quoted(out, (const uint8_t *)tmp, n, false);
        if (!memchr(tmp, 'e', n)) {
            /* "0.1" reads back as a DECIMAL: say "0.1e0" where that would
             * not give the same double. */
            __int128 u;
            int32_t sc;
            /* -0.0 too: a DECIMAL has no negative zero. */
            bool token = form == PQ_LF_FLOAT_TOKEN || pq_parse_decimal(tmp, n, &u, &sc) != 0 ||
                         pq_x_dec_to_double(u, sc) != v->u.d || (v->u.d == 0 && signbit(v->u.d));
            if (token) {
                memcpy(tmp + n, "e0", 2);
                n += 2;
            }
        }
        return pq_buf_append(out, tmp, n);
    case PQ_V_DECIMAL:
        if (put_decimal(out, v->u.dec.unscaled, v->u.dec.scale))
            return -1;
        /* "12." reads back as a DECIMAL; past int64 the digits alone do
         * (and past 38 digits only they do: "1...9." would be a DOUBLE). */
        return form == PQ_LF_DECIMAL_TOKEN && v->u.dec.scale == 0 && v->u.dec.unscaled >= INT64_MIN &&
                       v->u.dec.unscaled <= INT64_MAX
                   ? pq_buf_puts(out, ".")
                   : 0;
    case PQ_V_STRING:
        if (form == PQ_LF_UUID && v->u.s.len == 16) {
            static const char hex[] = "0123456789abcdef";
            char u[40];
            size_t k = 0;
            u[k++] = '\'';
            for (int i = 0; i < 16; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10) u[k++] = '-';
                u[k++] = hex[v->u.s.ptr[i] >> 4];
                u[k++] = hex[v->u.s.ptr[i] & 15];
            }
            u[k++] = '\'';
            return pq_buf_append(out, u, k);
        }
        return put_quoted(out, v->u.s.ptr, v->u.s.len, form == PQ_LF_BINARY);
    case PQ_V_DATE:
        tmp[0] = '\'';
        n = 1 + pq_fmt_date(v->u.date, tmp + 1);
        tmp[n++] = '\'';
        return pq_buf_append(out, tmp, n);
    case PQ_V_TIME:
        tmp[0] = '\'';
        n = 1 + pq_fmt_time(v->u.time_ns, 9, tmp + 1);
        tmp[n++] = '\'';
        return pq_buf_append(out, tmp, n);
    case PQ_V_TIMESTAMP: {
        __int128 days = pq_x_floor_div(v->u.ts_ns, NS_PER_DAY);
        int64_t tod = (int64_t)(v->u.ts_ns - days * NS_PER_DAY);
        if (days < INT64_MIN / 2 || days > INT64_MAX / 2)
            return pq_buf_puts(out, "NULL"); /* unreachable for values the engine makes */
        tmp[0] = '\'';
        n = 1 + pq_fmt_date((int64_t)days, tmp + 1);
        tmp[n++] = ' ';
        n += pq_fmt_time(tod, 9, tmp + n);
        tmp[n++] = '\'';
        return pq_buf_append(out, tmp, n);
    }
    }
    return pq_buf_puts(out, "NULL");
}
