/* Shortest round-trip text for doubles and floats, and FLOAT16 widening.
 *
 * The digits come from Schubfach (Raffaello Giulietti, "The Schubfach way to
 * render doubles", 2020), implemented here from the paper's description:
 *
 * A finite positive value is v = c * 2^q with an integer significand c.  Every
 * real number in its rounding interval R (the points that read back as v
 * under round-half-even) is a valid rendering; R runs from the midpoint with
 * the lower neighbour to the midpoint with the upper one, both ends included
 * exactly when c is even.  The neighbours are 2^q away except at the bottom of
 * a binade (c = 2^(P-1)), where the lower one is only 2^(q-1) away.
 *
 * Pick k with 10^k <= |R| < 10^(k+1) (|R| = 2^q, or 3/4 * 2^q in the
 * asymmetric case).  Scaled by 10^-k, R is between 1 and 10 wide, so
 *   - it holds at most one multiple of 10: if it does, that number has the
 *     fewest significant digits of anything in R and is the answer;
 *   - otherwise it holds s = floor(v 10^-k) or s + 1 (or both), all
 *     candidates have the same length, and the one closer to v wins (the
 *     even one on an exact tie).
 *
 * All the needed quantities -- v, and the ends of R, times 4 * 10^-k -- are
 * computed as one multiplication of a 4-times-scaled significand by a 126-bit
 * approximation g of 10^-k (64 bits for floats), keeping only the integer part
 * and whether a fraction remains ("round to odd").  Comparisons of such values
 * with the even numbers 4u and 4s + 2 are exact.
 *
 * Why the precision suffices: g exceeds the true scaled 10^-k by less than 1,
 * so the product exceeds the exact value x by less than 2^-66 (x < 2^59).
 * Over every binary64 exponent and every significand, x is never within
 * 2^-64 below an integer, nor within 2^-63 above an even integer (checked
 * for this code with exact rational arithmetic, counting the offending
 * significands of each exponent with floor sums).  So the integer part
 * is always exact, and the fraction flag -- which reads only the top 63
 * fraction bits -- can be lost only above an odd integer, where setting it
 * would change nothing.  The binary32 variant (64-bit g, error < 2^-32) was
 * compared over all 2^32 floats with an independent shortest formatter.
 *
 * The 617 double entries of g are computed once at first use from exact
 * big-integer arithmetic rather than embedded as a table. */
#include "numfmt.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* ---------------------------------------------------------- 128-bit helpers */

static inline void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
    uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
    uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo, hh = a_hi * b_hi;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (mid << 32) | (ll & 0xffffffffu);
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

/* floor(x / 2^shift) for any sign; >> of a negative value is implementation-
 * defined in C. */
static inline int64_t floor_shift(int64_t x, unsigned shift)
{
    return x >= 0 ? x >> shift : ~((~x) >> shift);
}

/* floor(q * log10(2)) and floor(log10(3/4 * 2^q)), as fixed-point products
 * (the constants are log10(2) and -log10(3/4) times 2^41, rounded so the
 * results are exact for |q| <= 1200, checked against exact arithmetic). */
static inline int floor_log10_pow2(int q)
{
    return (int)floor_shift((int64_t)q * 661971961083, 41);
}

static inline int floor_log10_three_quarters_pow2(int q)
{
    return (int)floor_shift((int64_t)q * 661971961083 - 274743187321, 41);
}

/* ---------------------------------------------------------- tables of 10^-k */

enum {
    DOUBLE_K_MIN = -324, /* floor(log10(2^-1074)) */
    DOUBLE_K_MAX = 292,  /* floor(log10(2^971)) */
    FLOAT_K_MIN = -45,   /* floor(log10(2^-149)) */
    FLOAT_K_MAX = 31,    /* floor(log10(2^104)) */
    DOUBLE_K_COUNT = DOUBLE_K_MAX - DOUBLE_K_MIN + 1,
    FLOAT_K_COUNT = FLOAT_K_MAX - FLOAT_K_MIN + 1,
};

/* For each k: e = floor(log2(10^-k)) and g = floor(10^-k * 2^(125 - e)) + 1,
 * so 2^125 < g <= 2^126 approximates 10^-k from above with 126 bits. */
typedef struct scaled_pow10 {
    uint64_t hi, lo;
} scaled_pow10;

static scaled_pow10 double_pow10[DOUBLE_K_COUNT];
static int16_t pow10_binary_exp[DOUBLE_K_COUNT];
/* Floats use the top 63 bits: floor(10^-k * 2^(62 - e)) + 1. */
static uint64_t float_pow10[FLOAT_K_COUNT];

static atomic_uchar entry_ready[DOUBLE_K_COUNT]; /* ensure_entry */
static pthread_mutex_t entry_mu = PTHREAD_MUTEX_INITIALIZER;

/* Just enough of a big unsigned integer (little-endian 32-bit limbs) to
 * build the table: 10^324 < 2^1077. */
enum { BIG_LIMBS = 36 };
typedef struct bigint {
    uint32_t limb[BIG_LIMBS];
    unsigned len;
} bigint;

static void big_set_pow2(bigint *b, unsigned exp)
{
    memset(b, 0, sizeof *b);
    b->limb[exp / 32] = (uint32_t)1 << (exp % 32);
    b->len = exp / 32 + 1;
}

static void big_mul10(bigint *b)
{
    uint64_t carry = 0;
    for (unsigned i = 0; i < b->len; i++) {
        uint64_t t = (uint64_t)b->limb[i] * 10 + carry;
        b->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry)
        b->limb[b->len++] = (uint32_t)carry;
}

static unsigned big_bit_length(const bigint *b)
{
    uint32_t top = b->limb[b->len - 1];
    unsigned n = 0;
    while (top) {
        n++;
        top >>= 1;
    }
    return (b->len - 1) * 32 + n;
}

static unsigned big_bit(const bigint *b, long index)
{
    if (index < 0 || index >= (long)b->len * 32)
        return 0;
    return (b->limb[index / 32] >> (index % 32)) & 1u;
}

static void big_shl1(bigint *b)
{
    uint32_t carry = 0;
    for (unsigned i = 0; i < b->len; i++) {
        uint32_t next = b->limb[i] >> 31;
        b->limb[i] = (b->limb[i] << 1) | carry;
        carry = next;
    }
    if (carry)
        b->limb[b->len++] = carry;
}

static int big_cmp(const bigint *a, const bigint *b)
{
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    for (unsigned i = a->len; i-- > 0;)
        if (a->limb[i] != b->limb[i])
            return a->limb[i] < b->limb[i] ? -1 : 1;
    return 0;
}

/* a -= b, for a >= b */
static void big_sub(bigint *a, const bigint *b)
{
    uint32_t borrow = 0;
    for (unsigned i = 0; i < a->len; i++) {
        uint64_t sub = (uint64_t)(i < b->len ? b->limb[i] : 0) + borrow;
        borrow = a->limb[i] < sub;
        a->limb[i] = (uint32_t)((uint64_t)a->limb[i] - sub);
    }
    while (a->len > 1 && a->limb[a->len - 1] == 0)
        a->len--;
}

static void shift_in_bit(scaled_pow10 *g, unsigned bit)
{
    g->hi = (g->hi << 1) | (g->lo >> 63);
    g->lo = (g->lo << 1) | bit;
}

/* Entry k of the tables, computed on first use: a program formats numbers
 * of a few magnitudes, and building all 617 entries up front costs more
 * than a short pqtool run spends formatting. */
static void compute_entry(int k)
{
    bigint p;
    big_set_pow2(&p, 0);
    for (int i = 0; i < (k < 0 ? -k : k); i++)
        big_mul10(&p);
    unsigned bits = big_bit_length(&p);
    scaled_pow10 g = {0, 0};
    if (k <= 0) {
        /* 10^-k is the integer P with L bits, e = L - 1, and
         * floor(P * 2^(126 - L)) is simply P's top 126 bits (zero-extended). */
        for (int i = 125; i >= 0; i--)
            shift_in_bit(&g, big_bit(&p, (long)bits - 126 + i));
        pow10_binary_exp[k - DOUBLE_K_MIN] = (int16_t)(bits - 1);
    } else {
        /* 10^k = D has L bits and is not a power of two, so e = -L and
         * g - 1 = floor(2^(125 + L) / D), found by binary long division.  The
         * dividend's top L bits leave the remainder 2^(L - 1) < D; the 126
         * bits below them produce the quotient. */
        bigint rem;
        big_set_pow2(&rem, bits - 1);
        for (int i = 0; i < 126; i++) {
            big_shl1(&rem);
            unsigned bit = big_cmp(&rem, &p) >= 0;
            if (bit)
                big_sub(&rem, &p);
            shift_in_bit(&g, bit);
        }
        pow10_binary_exp[k - DOUBLE_K_MIN] = (int16_t)-(int)bits;
    }
    if (++g.lo == 0)
        g.hi++;
    double_pow10[k - DOUBLE_K_MIN] = g;
    if (k >= FLOAT_K_MIN && k <= FLOAT_K_MAX) {
        /* floor(G / 2^63) + 1 where floor(G) = g - 1 */
        uint64_t lo = g.lo - 1, hi = g.hi - (g.lo == 0);
        float_pow10[k - FLOAT_K_MIN] = ((hi << 1) | (lo >> 63)) + 1;
    }
}

static inline void ensure_entry(int k)
{
    atomic_uchar *ready = &entry_ready[k - DOUBLE_K_MIN];
    if (atomic_load_explicit(ready, memory_order_acquire))
        return;
    pthread_mutex_lock(&entry_mu);
    if (!atomic_load_explicit(ready, memory_order_relaxed)) {
        compute_entry(k);
        atomic_store_explicit(ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&entry_mu);
}

/* ---------------------------------------------------------- Schubfach core */

/* x = g * cp / 2^127 rounded to odd: the integer part, with its lowest bit
 * set when a fraction remains.  g * cp is at most 126 + 61 bits; the fraction
 * flag looks at its top 63 fraction bits (see the top of the file). */
static inline uint64_t round_odd_double(const scaled_pow10 *g, uint64_t cp)
{
    uint64_t a_hi, a_lo, b_hi, b_lo;
    mul_64x64(g->lo, cp, &a_hi, &a_lo);
    mul_64x64(g->hi, cp, &b_hi, &b_lo);
    uint64_t mid = b_lo + a_hi;
    uint64_t top = b_hi + (mid < a_hi);
    /* product = top * 2^128 + mid * 2^64 + a_lo */
    uint64_t integer = (top << 1) | (mid >> 63);
    return integer | ((mid & 0x7fffffffffffffffu) != 0);
}

/* The same for floats: g * cp / 2^95, g < 2^63 and cp < 2^62. */
static inline uint32_t round_odd_float(uint64_t g, uint64_t cp)
{
    uint64_t hi, lo;
    mul_64x64(g, cp, &hi, &lo);
    return (uint32_t)((hi >> 31) | ((hi & 0x7fffffffu) != 0));
}

/* Shortest decimal of c * 2^q as significand * 10^exponent (the significand
 * may still end in zeros). */
typedef struct decimal_value {
    uint64_t significand;
    int exponent;
} decimal_value;

/* Chooses between the candidates given the round-to-odd scaled values vb
 * (v), vbl and vbr (the ends of R), all times 4; `open` is 1 when the ends
 * are excluded.  Shared by both widths. */
static inline decimal_value choose_digits(uint64_t vb, uint64_t vbl, uint64_t vbr,
                                          uint64_t open, int k)
{
    decimal_value d;
    uint64_t s = vb >> 2;
    /* One digit shorter: the multiples of 10 around v. */
    uint64_t lower10 = s / 10 * 10, upper10 = lower10 + 10;
    int lower10_in = vbl + open <= lower10 << 2;
    int upper10_in = (upper10 << 2) + open <= vbr;
    if (lower10_in || upper10_in) {
        d.significand = lower10_in ? lower10 : upper10;
        d.exponent = k;
        return d;
    }
    uint64_t t = s + 1;
    int s_in = vbl + open <= s << 2;
    int t_in = (t << 2) + open <= vbr;
    if (s_in != t_in) {
        d.significand = s_in ? s : t;
    } else {
        /* Both in R (at least one always is): the closer to v, whose 4x
         * value is vb, against the midpoint 4s + 2; ties go to even. */
        uint64_t mid = (s << 2) + 2;
        d.significand = vb < mid || (vb == mid && (s & 1) == 0) ? s : t;
    }
    d.exponent = k;
    return d;
}

static decimal_value shortest_double(uint64_t c, int q)
{
    uint64_t cb = c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != (uint64_t)1 << 52 || q == -1074) {
        cbl = cb - 2;
        k = floor_log10_pow2(q);
    } else {
        /* Bottom of a binade: the lower neighbour is half as far. */
        cbl = cb - 1;
        k = floor_log10_three_quarters_pow2(q);
    }
    ensure_entry(k);
    const scaled_pow10 *g = &double_pow10[k - DOUBLE_K_MIN];
    /* Exponent bookkeeping: g ~ 10^-k * 2^(125 - e), so shifting by
     * h = q + e + 2 (between 2 and 5) makes g * (cb << h) / 2^127 ~ cb 2^q 10^-k. */
    int h = q + pow10_binary_exp[k - DOUBLE_K_MIN] + 2;
    uint64_t vb = round_odd_double(g, cb << h);
    uint64_t vbl = round_odd_double(g, cbl << h);
    uint64_t vbr = round_odd_double(g, cbr << h);
    return choose_digits(vb, vbl, vbr, c & 1, k);
}

static decimal_value shortest_float(uint32_t c, int q)
{
    uint64_t cb = (uint64_t)c << 2, cbr = cb + 2, cbl;
    int k;
    if (c != (uint32_t)1 << 23 || q == -149) {
        cbl = cb - 2;
        k = floor_log10_pow2(q);
    } else {
        cbl = cb - 1;
        k = floor_log10_three_quarters_pow2(q);
    }
    ensure_entry(k);
    uint64_t g = float_pow10[k - FLOAT_K_MIN];
    /* g ~ 10^-k * 2^(62 - e); h = q + e + 33 (between 33 and 36). */
    int h = q + pow10_binary_exp[k - DOUBLE_K_MIN] + 33;
    uint64_t vb = round_odd_float(g, cb << h);
    uint64_t vbl = round_odd_float(g, cbl << h);
    uint64_t vbr = round_odd_float(g, cbr << h);
    return choose_digits(vb, vbl, vbr, c & 1, k);
}

/* ---------------------------------------------------------- layout */

static inline void write_8_digits(uint32_t v, char *out)
{
    uint32_t high = v / 10000, low = v % 10000;
    memcpy(out, pq_digit_pairs + 2 * (high / 100), 2);
    memcpy(out + 2, pq_digit_pairs + 2 * (high % 100), 2);
    memcpy(out + 4, pq_digit_pairs + 2 * (low / 100), 2);
    memcpy(out + 6, pq_digit_pairs + 2 * (low % 100), 2);
}

/* Writes the significant digits digits[0, nd) (first and last nonzero) with
 * value d.ddd * 10^sci_exp, per numfmt.h: fixed notation for sci_exp in
 * [-5, 15], otherwise d.ddde+XX.  digits[nd, nd + 32) must be readable and
 * '0', so copies can be of constant size: the excess is overwritten or lies
 * past the end of the text, within PQ_FMT_MAX. */
static size_t write_digits_layout(char *out, const char *digits, size_t nd, int sci_exp)
{
    if (sci_exp >= -5 && sci_exp < 16) {
        if (sci_exp < 0) {
            size_t zeros = (size_t)(-sci_exp - 1);
            memcpy(out, "0.00000", 8);
            memcpy(out + 2 + zeros, digits, 24);
            return 2 + zeros + nd;
        }
        size_t int_len = (size_t)sci_exp + 1;
        if (int_len >= nd) {
            /* integral: the digits, zeros up to the point (digits[nd..] are
             * all '0'), ".0" */
            memcpy(out, digits, 24);
            memcpy(out + int_len, ".0", 2);
            return int_len + 2;
        }
        memcpy(out, digits, 24);
        memcpy(out + int_len + 1, digits + int_len, 17);
        out[int_len] = '.';
        return nd + 1;
    }
    size_t pos = 1;
    out[0] = digits[0];
    if (nd > 1) {
        out[1] = '.';
        memcpy(out + 2, digits + 1, 17);
        pos = nd + 1;
    }
    out[pos++] = 'e';
    unsigned mag = sci_exp < 0 ? (unsigned)-sci_exp : (unsigned)sci_exp;
    out[pos++] = sci_exp < 0 ? '-' : '+';
    if (mag >= 100) {
        out[pos++] = (char)('0' + mag / 100);
        mag %= 100;
    }
    memcpy(out + pos, pq_digit_pairs + 2 * mag, 2);
    return pos + 2;
}

/* significand * 10^exponent, significand in (0, 10^17). */
static size_t write_decimal(char *out, uint64_t significand, int exponent)
{
    /* All 17 digit positions, zero-padded, then trim both ends.  Floats need
     * only the last nine. */
    char buf[17 + 48];
    size_t start, end = 17;
    uint32_t low;
    int upper_zero;
    if (significand < 1000000000u) {
        uint32_t v = (uint32_t)significand;
        low = v % 100000000u;
        buf[8] = (char)('0' + v / 100000000u);
        start = 8;
        upper_zero = 0; /* buf[8] is the leading digit when low is zero */
    } else {
        uint64_t top = significand / 10000000000000000u;
        uint64_t rest = significand % 10000000000000000u;
        uint32_t mid = (uint32_t)(rest / 100000000u);
        low = (uint32_t)(rest % 100000000u);
        buf[0] = (char)('0' + top);
        write_8_digits(mid, buf + 1);
        start = 0;
        upper_zero = mid == 0;
    }
    write_8_digits(low, buf + 9);
    memset(buf + 17, '0', 48);
    if (low == 0)
        end = upper_zero ? 1 : 9;
    while (buf[end - 1] == '0')
        end--;
    while (buf[start] == '0')
        start++;
    int sci_exp = exponent + 16 - (int)start;
    return write_digits_layout(out, buf + start, end - start, sci_exp);
}

/* An integer below 2^53 (or 2^24) is its own shortest text. */
static size_t write_integer(char *out, uint64_t v)
{
    size_t n = pq_fmt_u64(v, out);
    memcpy(out + n, ".0", 2);
    return n + 2;
}

size_t pq_fmt_double(double v, char *out)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint64_t fraction = bits & (((uint64_t)1 << 52) - 1);
    unsigned biased = (unsigned)(bits >> 52) & 0x7ff;
    if (biased == 0x7ff) {
        if (fraction) {
            memcpy(out, "nan", 3);
            return 3;
        }
        if (bits >> 63) {
            memcpy(out, "-inf", 4);
            return 4;
        }
        memcpy(out, "inf", 3);
        return 3;
    }
    size_t pos = 0;
    if (bits >> 63)
        out[pos++] = '-';
    uint64_t c;
    int q;
    if (biased) {
        c = fraction | (uint64_t)1 << 52;
        q = (int)biased - 1075;
        if (q < 0 && q >= -52) {
            uint64_t integer = c >> -q;
            if (integer << -q == c)
                return pos + write_integer(out + pos, integer);
        }
    } else {
        if (fraction == 0) {
            memcpy(out + pos, "0.0", 3);
            return pos + 3;
        }
        c = fraction;
        q = -1074;
    }
    decimal_value d = shortest_double(c, q);
    return pos + write_decimal(out + pos, d.significand, d.exponent);
}

size_t pq_fmt_float(float v, char *out)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint32_t fraction = bits & 0x7fffffu;
    unsigned biased = (bits >> 23) & 0xff;
    if (biased == 0xff) {
        if (fraction) {
            memcpy(out, "nan", 3);
            return 3;
        }
        if (bits >> 31) {
            memcpy(out, "-inf", 4);
            return 4;
        }
        memcpy(out, "inf", 3);
        return 3;
    }
    size_t pos = 0;
    if (bits >> 31)
        out[pos++] = '-';
    uint32_t c;
    int q;
    if (biased) {
        c = fraction | (uint32_t)1 << 23;
        q = (int)biased - 150;
        if (q < 0 && q >= -23) {
            uint32_t integer = c >> -q;
            if (integer << -q == c)
                return pos + write_integer(out + pos, integer);
        }
    } else {
        if (fraction == 0) {
            memcpy(out + pos, "0.0", 3);
            return pos + 3;
        }
        c = fraction;
        q = -149;
    }
    decimal_value d = shortest_float(c, q);
    return pos + write_decimal(out + pos, d.significand, d.exponent);
}

/* ---------------------------------------------------------- FLOAT16 */

float pq_half_to_float(uint16_t half)
{
    uint32_t sign = (uint32_t)(half >> 15) << 31;
    unsigned exp = (half >> 10) & 0x1f;
    uint32_t mant = half & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        /* inf, or nan with its payload kept in the top fraction bits */
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((uint32_t)(exp + 127 - 15) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        /* Subnormal half, mant * 2^-24: normalise into a float's implicit bit. */
        int e = -14;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        bits = sign | ((uint32_t)(e + 127) << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
