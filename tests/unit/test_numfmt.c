/* numfmt: integers, shortest floats, FLOAT16, calendar values, decimals and
 * the parsers, against printf/strtod and naive reference implementations.
 *
 * The randomized float checks are the expensive part (printf and strtod per
 * value).  They run a few million values normally and a tenth of that under
 * sanitizers; PQFS_NUMFMT_SCALE=<factor> multiplies the counts. */
#include "check.h"
#include "numfmt.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

static double iteration_scale = 1.0;

static long iterations(long normal)
{
    double n = (double)normal * iteration_scale * (UNDER_SANITIZER ? 0.1 : 1.0);
    return n < 1 ? 1 : (long)n;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

static double bits_to_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

static float bits_to_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t float_to_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* ---------------------------------------------------------------- integers */

static void check_u64(uint64_t v)
{
    char out[PQ_FMT_MAX], want[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    size_t n = pq_fmt_u64(v, out);
    CHECK_EQ_MEM(out, n, want);
}

static void check_i64(int64_t v)
{
    char out[PQ_FMT_MAX], want[32];
    snprintf(want, sizeof want, "%" PRId64, v);
    size_t n = pq_fmt_i64(v, out);
    CHECK_EQ_MEM(out, n, want);
}

static void test_integers(void)
{
    char out[PQ_FMT_MAX];
    CHECK_EQ_MEM(out, pq_fmt_u64(0, out), "0");
    CHECK_EQ_MEM(out, pq_fmt_u64(UINT64_MAX, out), "18446744073709551615");
    CHECK_EQ_MEM(out, pq_fmt_i64(INT64_MIN, out), "-9223372036854775808");
    CHECK_EQ_MEM(out, pq_fmt_i64(INT64_MAX, out), "9223372036854775807");
    CHECK_EQ_MEM(out, pq_fmt_i64(-1, out), "-1");
    CHECK_EQ_MEM(out, pq_fmt_i32(INT32_MIN, out), "-2147483648");
    CHECK_EQ_MEM(out, pq_fmt_i32(INT32_MAX, out), "2147483647");
    CHECK_EQ_MEM(out, pq_fmt_u32(UINT32_MAX, out), "4294967295");
    CHECK_EQ_MEM(out, pq_fmt_u32(0, out), "0");
    /* every digit-count boundary */
    uint64_t p = 1;
    for (int i = 0; i < 20; i++) {
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
        check_i64(-(int64_t)(p - 1));
        if (i < 19) {
            check_i64((int64_t)p);
            check_i64(-(int64_t)p);
            p *= 10;
        }
    }
    long n = iterations(300000);
    for (long i = 0; i < n; i++) {
        uint64_t r = next_random();
        check_u64(r >> (r % 64));
        check_i64((int64_t)r >> (r % 64));
    }
}

/* ---------------------------------------------------------------- floats */

/* Significant digits (no leading or trailing zeros) and the decimal exponent
 * of the first one, from our output or printf's %e. */
static void significant_digits(const char *s, char *digits, int *ndigits, int *sci_exp)
{
    int int_digits = 0, point = 0, n = 0, exp10 = 0;
    char all[64];
    if (*s == '-')
        s++;
    for (; *s; s++) {
        if (*s == '.') {
            point = 1;
        } else if (*s == 'e') {
            exp10 = atoi(s + 1);
            break;
        } else {
            all[n++] = *s;
            int_digits += !point;
        }
    }
    int lead = 0, end = n;
    while (lead < n && all[lead] == '0')
        lead++;
    while (end > lead && all[end - 1] == '0')
        end--;
    *ndigits = end - lead;
    memcpy(digits, all + lead, (size_t)(end - lead));
    digits[end - lead] = '\0';
    *sci_exp = *ndigits ? int_digits - lead - 1 + exp10 : 0;
}

/* The layout rules of numfmt.h for a finite nonzero value whose shortest
 * digits have decimal exponent sci_exp. */
static int layout_ok(const char *text, int sci_exp)
{
    int fixed = sci_exp >= -5 && sci_exp < 16;
    const char *e = strchr(text, 'e');
    if (fixed)
        return !e && strchr(text, '.') && text[strlen(text) - 1] != '.';
    if (!e || (e[1] != '+' && e[1] != '-'))
        return 0;
    size_t exp_len = strlen(e + 2);
    return exp_len >= 2 && (exp_len == 2 || e[2] != '0');
}

static int failures_reported;

static void report_float_failure(const char *what, const char *text, uint64_t bits)
{
    if (failures_reported++ < 20)
        fprintf(stderr, "  %s: bits %016" PRIx64 " -> \"%s\"\n", what, bits, text);
}

/* Does "<mantissa>e<exp>" read back (strtod or strtof) as `target`? */
static int candidate_round_trips(int64_t mantissa, int exp10, int is_float, uint64_t target)
{
    char s[64];
    size_t n = pq_fmt_i64(mantissa, s);
    s[n++] = 'e';
    n += pq_fmt_i64(exp10, s + n);
    s[n] = '\0';
    if (is_float)
        return float_to_bits(strtof(s, NULL)) == (uint32_t)target;
    return double_to_bits(strtod(s, NULL)) == target;
}

/* Checks one finite value: reads back exactly, lays out per the header, has
 * no shorter representation, and is the closest of its length. */
static void verify_shortest(double v, int is_float)
{
    char text[PQ_FMT_MAX + 1];
    size_t n = is_float ? pq_fmt_float((float)v, text) : pq_fmt_double(v, text);
    text[n] = '\0';
    uint64_t bits = is_float ? float_to_bits((float)v) : double_to_bits(v);
    uint64_t abs_bits = is_float ? float_to_bits(fabsf((float)v)) : double_to_bits(fabs(v));
    int ok = is_float ? float_to_bits(strtof(text, NULL)) == bits
                      : double_to_bits(strtod(text, NULL)) == bits;
    CHECK(ok);
    if (!ok) {
        report_float_failure("no round trip", text, bits);
        return;
    }
    if (v == 0)
        return;
    char digits[32];
    int nd, sci_exp;
    significant_digits(text, digits, &nd, &sci_exp);
    ok = layout_ok(text, sci_exp);
    CHECK(ok);
    if (!ok)
        report_float_failure("layout", text, bits);

    /* No (nd-1)-digit number reads back: the ones bracketing v are among
     * M-1, M, M+1 (units of the (nd-1)-th digit), M being the truncated
     * 17-digit rounding of v. */
    char ref[64];
    if (nd > 1) {
        snprintf(ref, sizeof ref, "%.16e", fabs(v));
        char ref_digits[32];
        int ref_nd, ref_exp;
        significant_digits(ref, ref_digits, &ref_nd, &ref_exp);
        (void)ref_nd;
        int64_t m = 0;
        for (int i = 0; i < nd - 1; i++)
            m = m * 10 + (ref_digits[i] ? ref_digits[i] - '0' : 0);
        int unit_exp = ref_exp - (nd - 2);
        for (int64_t c = m - 1; c <= m + 1; c++) {
            if (c > 0 && candidate_round_trips(c, unit_exp, is_float, abs_bits)) {
                CHECK(0);
                report_float_failure("not shortest", text, bits);
            }
        }
    }
    /* The correctly rounded nd-digit value, when it reads back, is ours. */
    snprintf(ref, sizeof ref, "%.*e", nd - 1, fabs(v));
    int back_ok = is_float ? float_to_bits(strtof(ref, NULL)) == abs_bits
                           : double_to_bits(strtod(ref, NULL)) == abs_bits;
    if (back_ok) {
        char ref_digits[32];
        int ref_nd, ref_exp;
        significant_digits(ref, ref_digits, &ref_nd, &ref_exp);
        ok = ref_exp == sci_exp && strcmp(ref_digits, digits) == 0;
        CHECK(ok);
        if (!ok)
            report_float_failure("not closest", text, bits);
    }
}

static void expect_double(double v, const char *want)
{
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_double(v, out);
    CHECK_EQ_MEM(out, n, want);
}

static void expect_float(float v, const char *want)
{
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_float(v, out);
    CHECK_EQ_MEM(out, n, want);
}

static void test_double_cases(void)
{
    expect_double(0.1, "0.1");
    expect_double(1.1, "1.1");
    expect_double(0.3, "0.3");
    expect_double(0.1 + 0.2, "0.30000000000000004");
    expect_double(30.299999999999997, "30.299999999999997");
    expect_double(2.0 / 3.0, "0.6666666666666666");
    expect_double(5e-324, "5e-324");
    expect_double(-5e-324, "-5e-324");
    expect_double(1e-323, "1e-323");
    expect_double(1.7976931348623157e308, "1.7976931348623157e+308");
    expect_double(-DBL_MAX, "-1.7976931348623157e+308");
    expect_double(DBL_MIN, "2.2250738585072014e-308");
    expect_double(-2.2250738585072014e-308, "-2.2250738585072014e-308");
    expect_double(2.225073858507201e-308, "2.225073858507201e-308"); /* largest subnormal */
    expect_double(1e16, "1e+16");
    expect_double(9999999999999998.0, "9999999999999998.0");
    expect_double(1e15, "1000000000000000.0");
    expect_double(1e-5, "0.00001");
    expect_double(5e-5, "0.00005");
    expect_double(9.999999999999999e-6, "9.999999999999999e-06");
    expect_double(0.0001, "0.0001");
    expect_double(123456789012345680.0, "1.2345678901234568e+17");
    expect_double(0.0, "0.0");
    expect_double(-0.0, "-0.0");
    expect_double(1.0, "1.0");
    expect_double(-1.0, "-1.0");
    expect_double(100.0, "100.0");
    expect_double(123.456, "123.456");
    expect_double(1.5e-7, "1.5e-07");
    expect_double(1e22, "1e+22");
    expect_double(1e23, "1e+23");
    expect_double(1e100, "1e+100");
    expect_double(1e-100, "1e-100");
    expect_double(9007199254740992.0, "9007199254740992.0"); /* 2^53 */
    expect_double(9007199254740993.0, "9007199254740992.0"); /* rounds to 2^53 */
    expect_double(18014398509481984.0, "1.8014398509481984e+16"); /* 2^54 */
    expect_double(0.5, "0.5");
    expect_double(4.35, "4.35");
    expect_double(2.5e-5, "0.000025");
    expect_double(1.2345e-6, "1.2345e-06");
    expect_double(NAN, "nan");
    expect_double(-NAN, "nan");
    expect_double(bits_to_double(0x7ff0000000000001u), "nan"); /* signalling, payload 1 */
    expect_double(bits_to_double(0xfff8000000000abcu), "nan");
    expect_double(INFINITY, "inf");
    expect_double(-INFINITY, "-inf");

    /* Every power of ten: shortest is the single digit 1. */
    for (int e = -323; e <= 308; e++) {
        char src[16], want[400];
        snprintf(src, sizeof src, "1e%d", e);
        if (e >= 0 && e < 16)
            snprintf(want, sizeof want, "1%.*s.0", e, "000000000000000");
        else if (e < 0 && e >= -5)
            snprintf(want, sizeof want, "0.%.*s1", -e - 1, "00000");
        else
            snprintf(want, sizeof want, "1e%c%02d", e < 0 ? '-' : '+', abs(e));
        expect_double(strtod(src, NULL), want);
    }
}

static void test_double_random(void)
{
    /* Every power of two, the binade edges around them, and the smallest
     * subnormals exhaustively. */
    for (int e = -1074; e <= 1023; e++) {
        double p = ldexp(1.0, e);
        verify_shortest(p, 0);
        verify_shortest(nextafter(p, 0), 0);
        verify_shortest(nextafter(p, INFINITY), 0);
    }
    for (uint64_t c = 1; c < (uint64_t)iterations(20000); c++) {
        verify_shortest(bits_to_double(c), 0);
        verify_shortest(bits_to_double(0x000fffffffffffffu - c), 0);
    }
    /* Random bit patterns (every exponent equally likely). */
    long n = iterations(1500000);
    for (long i = 0; i < n; i++) {
        uint64_t bits = next_random();
        if ((bits & 0x7ff0000000000000u) == 0x7ff0000000000000u)
            bits ^= 0x4000000000000000u; /* no inf/nan here */
        verify_shortest(bits_to_double(bits), 0);
    }
    /* "Nice" values k / 10^j, as data typically holds, and integers. */
    n = iterations(400000);
    for (long i = 0; i < n; i++) {
        uint64_t r = next_random();
        int64_t k = (int64_t)(r % 10000000000u) - 5000000000;
        char src[48];
        snprintf(src, sizeof src, "%" PRId64 "e-%d", k, (int)((r >> 40) % 24));
        verify_shortest(strtod(src, NULL), 0);
        verify_shortest((double)(int64_t)(r >> (r >> 58)), 0);
    }
}

static void test_float_cases(void)
{
    expect_float(1.7640524f, "1.7640524");
    expect_float(0.4001572f, "0.4001572");
    expect_float(3.4028235e38f, "3.4028235e+38");
    expect_float(1e-45f, "1e-45");
    expect_float(FLT_MIN, "1.1754944e-38");
    expect_float(0.1f, "0.1");
    expect_float(1.0f, "1.0");
    expect_float(-0.0f, "-0.0");
    expect_float(0.0f, "0.0");
    expect_float(16777216.0f, "16777216.0");
    expect_float(1e16f, "1e+16");
    expect_float(3.0e-5f, "0.00003");
    expect_float(NAN, "nan");
    expect_float(bits_to_float(0x7f800001u), "nan");
    expect_float(INFINITY, "inf");
    expect_float(-INFINITY, "-inf");
    for (int e = -45; e <= 38; e++) {
        char src[16];
        snprintf(src, sizeof src, "1e%d", e);
        char out[PQ_FMT_MAX + 1];
        size_t n = pq_fmt_float(strtof(src, NULL), out);
        out[n] = '\0';
        char digits[32];
        int nd, sci_exp;
        significant_digits(out, digits, &nd, &sci_exp);
        CHECK(nd == 1 && digits[0] == '1' && sci_exp == e);
    }
}

static void test_float_random(void)
{
    for (uint32_t c = 1; c < 100000; c++)
        verify_shortest(bits_to_float(c), 1);
    for (int e = -149; e <= 127; e++) {
        float p = ldexpf(1.0f, e);
        verify_shortest(p, 1);
        verify_shortest(nextafterf(p, 0), 1);
        verify_shortest(nextafterf(p, INFINITY), 1);
    }
    long n = iterations(1000000);
    for (long i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)(next_random() >> 32);
        if ((bits & 0x7f800000u) == 0x7f800000u)
            bits ^= 0x40000000u;
        verify_shortest(bits_to_float(bits), 1);
    }
}

/* ---------------------------------------------------------------- FLOAT16 */

static void test_half(void)
{
    int mismatches = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        unsigned sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        float got = pq_half_to_float((uint16_t)h);
        if (exp == 31) {
            if (mant ? !isnan(got) : !(isinf(got) && (signbit(got) != 0) == (sign != 0)))
                mismatches++;
            continue;
        }
        double want = exp ? ldexp(1024.0 + mant, (int)exp - 25) : ldexp((double)mant, -24);
        if (sign)
            want = -want;
        if (float_to_bits(got) != float_to_bits((float)want))
            mismatches++;
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK(pq_half_to_float(0x3c00) == 1.0f);
    CHECK(pq_half_to_float(0x7bff) == 65504.0f);
    CHECK(pq_half_to_float(0x0001) == ldexpf(1.0f, -24));
    CHECK(float_to_bits(pq_half_to_float(0x8000)) == 0x80000000u);
}

/* ---------------------------------------------------------------- calendar */

static void expect_date(int64_t days, const char *want)
{
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_date(days, out);
    CHECK_EQ_MEM(out, n, want);
    int64_t back = 0;
    if (strlen(want) <= 12) {
        CHECK_EQ_INT(pq_parse_date(out, n, &back), 0);
        CHECK_EQ_INT(back, days);
    }
}

static int naive_leap(long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int naive_month_days(long y, int m)
{
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && naive_leap(y) ? 29 : len[m - 1];
}

static void naive_text(long y, int m, int d, char *buf, size_t size)
{
    if (y < 0)
        snprintf(buf, size, "-%04ld-%02d-%02d", -y, m, d);
    else
        snprintf(buf, size, "%04ld-%02d-%02d", y, m, d);
}

static void test_dates(void)
{
    expect_date(0, "1970-01-01");
    expect_date(-1, "1969-12-31");
    expect_date(1, "1970-01-02");
    expect_date(10957, "2000-01-01");
    expect_date(11016, "2000-02-29");
    expect_date(11017, "2000-03-01");
    expect_date(-719162, "0001-01-01");
    expect_date(-719163, "0000-12-31");
    expect_date(-719528, "0000-01-01");
    expect_date(-719529, "-0001-12-31");
    expect_date(2932896, "9999-12-31");
    expect_date(2932897, "10000-01-01");
    expect_date(INT32_MAX, "5881580-07-11");
    expect_date(INT32_MIN, "-5877641-06-23");
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_date(INT64_MAX, out);
    CHECK(n > 10 && n <= PQ_FMT_MAX);
    n = pq_fmt_date(INT64_MIN, out);
    CHECK(n > 10 && n <= PQ_FMT_MAX && out[0] == '-');

    /* A million days each way against a day-by-day walk of the calendar. */
    int bad = 0;
    for (int dir = 1; dir >= -1; dir -= 2) {
        long y = 1970;
        int m = 1, d = 1;
        for (int64_t days = 0; days * dir <= 1000000; days += dir) {
            char want[64];
            naive_text(y, m, d, want, sizeof want);
            n = pq_fmt_date(days, out);
            int64_t back;
            if (n != strlen(want) || memcmp(out, want, n) != 0 || pq_parse_date(want, n, &back) ||
                back != days) {
                if (bad++ < 5)
                    fprintf(stderr, "  date %" PRId64 ": %.*s, want %s\n", days, (int)n, out, want);
            }
            if (dir > 0 && ++d > naive_month_days(y, m)) {
                d = 1;
                if (++m > 12) {
                    m = 1;
                    y++;
                }
            } else if (dir < 0 && --d < 1) {
                if (--m < 1) {
                    m = 12;
                    y--;
                }
                d = naive_month_days(y, m);
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void expect_time(int64_t v, int digits, const char *want)
{
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_time(v, digits, out);
    CHECK_EQ_MEM(out, n, want);
}

static void expect_timestamp(int64_t v, int digits, const char *want)
{
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_timestamp(v, digits, out);
    CHECK_EQ_MEM(out, n, want);
}

static void test_times(void)
{
    expect_time(0, 3, "00:00:00");
    expect_time(1, 3, "00:00:00.001");
    expect_time(10, 3, "00:00:00.01");
    expect_time(86399999, 3, "23:59:59.999");
    expect_time(45296789000, 6, "12:34:56.789");
    expect_time(45296000001, 6, "12:34:56.000001");
    expect_time(1, 9, "00:00:00.000000001");
    expect_time(86399999999999, 9, "23:59:59.999999999");
    expect_time(90000, 0, "25:00:00");
    expect_time(86400000, 3, "24:00:00");
    expect_time(-1000, 3, "-00:00:01");
    expect_time(INT64_MIN, 9, "-2562047:47:16.854775808");

    expect_timestamp(0, 3, "1970-01-01 00:00:00");
    expect_timestamp(-1, 3, "1969-12-31 23:59:59.999");
    expect_timestamp(-1, 6, "1969-12-31 23:59:59.999999");
    expect_timestamp(-1, 9, "1969-12-31 23:59:59.999999999");
    expect_timestamp(-1000, 6, "1969-12-31 23:59:59.999");
    expect_timestamp(-86400000, 3, "1969-12-31 00:00:00");
    expect_timestamp(1500000000123, 3, "2017-07-14 02:40:00.123");
    expect_timestamp(1500000000123400, 6, "2017-07-14 02:40:00.1234");
    expect_timestamp(951782400000000000, 9, "2000-02-29 00:00:00");
    expect_timestamp(INT64_MAX, 9, "2262-04-11 23:47:16.854775807");
    expect_timestamp(INT64_MIN, 9, "1677-09-21 00:12:43.145224192");
    expect_timestamp(INT64_MAX, 6, "294247-01-10 04:00:54.775807");
    expect_timestamp(INT64_MIN, 6, "-290308-12-21 19:59:05.224192");
    expect_timestamp(INT64_MIN, 3, "-292275055-05-16 16:47:04.192");
    expect_timestamp(-62135596800, 0, "0001-01-01 00:00:00");

    /* INT96: nanoseconds of the day and Julian day, little endian, read as
     * whole microseconds (floored), the sum wrapping as Spark's does. */
    struct {
        int64_t nanos;
        uint32_t julian;
        int64_t micros;
    } i96[] = {
        {0, 2440588, 0},
        {1999, 2440588, 1},                                  /* below the microsecond: floored */
        {-1, 2440588, -1},                                   /* a negative nanosecond count floors too */
        {82774067272999, 2459877, 1666652374067272},         /* 2022-10-24 22:59:34.067272(999) */
        {1500, 2415021, -2208988799999999},                  /* 1900-01-01 00:00:00.000001(5) */
        {0, 0, -210866803200000000},                         /* Julian day 0: -4713-11-24 */
        /* Spark's 290000-12-30 23:00:00 (int96_from_spark): the day wraps. */
        {53890448384000, 4189105063u, 9089380393200000000},
    };
    for (size_t i = 0; i < sizeof i96 / sizeof i96[0]; i++) {
        uint8_t b[12];
        for (int k = 0; k < 8; k++) b[k] = (uint8_t)((uint64_t)i96[i].nanos >> (8 * k));
        for (int k = 0; k < 4; k++) b[8 + k] = (uint8_t)(i96[i].julian >> (8 * k));
        CHECK_EQ_INT(pq_int96_micros(b), i96[i].micros);
    }

    /* Format then parse back, every unit. */
    long n = iterations(200000);
    int bad = 0;
    for (long i = 0; i < n; i++) {
        int64_t v = (int64_t)next_random();
        char out[PQ_FMT_MAX];
        size_t len = pq_fmt_timestamp(v, 9, out);
        int64_t back;
        int had = -1;
        if (pq_parse_timestamp_ns(out, len, &back, &had) || back != v || had != 0) {
            if (bad++ < 5)
                fprintf(stderr, "  timestamp %" PRId64 ": %.*s -> %" PRId64 "\n", v, (int)len, out, back);
        }
        int64_t ms = v / 1000000000; /* fits any unit within the parser's range */
        len = pq_fmt_timestamp(ms, 3, out);
        if (pq_parse_timestamp_ns(out, len, &back, &had) || back != ms * 1000000)
            bad++;
        int64_t tod = (int64_t)(next_random() % 86400000000000u);
        len = pq_fmt_time(tod, 9, out);
        if (pq_parse_time_ns(out, len, &back) || back != tod)
            bad++;
        len = pq_fmt_time(tod / 1000, 6, out);
        if (pq_parse_time_ns(out, len, &back) || back != tod / 1000 * 1000)
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
}

/* ---------------------------------------------------------------- decimals */

static void expect_decimal(const uint8_t *be, size_t len, int32_t scale, const char *want)
{
    size_t cap = pq_fmt_decimal_max(len, scale);
    char *out = malloc(cap); /* exactly the promised size, so ASan sees overruns */
    size_t n = pq_fmt_decimal_be(be, len, scale, out);
    CHECK(n <= cap);
    CHECK_EQ_MEM(out, n, want);
    free(out);
}

static void expect_decimal_i64(int64_t v, int32_t scale, const char *want)
{
    char out[PQ_FMT_MAX];
    size_t n = pq_fmt_decimal_i64(v, scale, out);
    CHECK_EQ_MEM(out, n, want);
}

/* Reference: schoolbook base-256 to base-10 on a digit array, then the
 * scale applied as text. */
static void reference_decimal(const uint8_t *be, size_t len, int32_t scale, char *out)
{
    uint8_t mag[128];
    int negative = len > 0 && (be[0] & 0x80);
    unsigned carry = 1;
    for (size_t i = len; i-- > 0;) {
        if (negative) {
            unsigned b = (uint8_t)~be[i] + carry;
            mag[i] = (uint8_t)b;
            carry = b >> 8;
        } else {
            mag[i] = be[i];
        }
    }
    char dec[400];
    int nd = 1;
    dec[0] = 0; /* little-endian decimal digits */
    for (size_t i = 0; i < len; i++) {
        unsigned c = mag[i];
        for (int j = 0; j < nd; j++) {
            unsigned t = (unsigned)dec[j] * 256 + c;
            dec[j] = (char)(t % 10);
            c = t / 10;
        }
        while (c) {
            dec[nd++] = (char)(c % 10);
            c /= 10;
        }
    }
    while (nd > 1 && dec[nd - 1] == 0)
        nd--;
    int zero = nd == 1 && dec[0] == 0;
    char *p = out;
    if (negative && !zero)
        *p++ = '-';
    if (scale <= 0) {
        for (int j = nd - 1; j >= 0; j--)
            *p++ = (char)('0' + dec[j]);
        if (!zero)
            for (int j = 0; j < -scale; j++)
                *p++ = '0';
    } else {
        int width = nd > scale ? nd : scale + 1; /* digits including leading zeros */
        for (int j = width - 1; j >= 0; j--) {
            *p++ = (char)('0' + (j < nd ? dec[j] : 0));
            if (j == scale)
                *p++ = '.';
        }
    }
    *p = '\0';
}

static void test_decimals(void)
{
    const uint8_t d1200[] = {0x04, 0xb0};
    expect_decimal(d1200, 2, 3, "1.200");
    expect_decimal(d1200, 2, 2, "12.00");
    expect_decimal(d1200, 2, 0, "1200");
    expect_decimal(d1200, 2, -2, "120000");
    expect_decimal(d1200, 2, 6, "0.001200");
    const uint8_t minus5[] = {0xff, 0xfb};
    expect_decimal(minus5, 2, 2, "-0.05");
    expect_decimal(minus5, 1 + 0, 0, "-1"); /* 0xff alone */
    const uint8_t zero[] = {0, 0, 0};
    expect_decimal(zero, 3, 2, "0.00");
    expect_decimal(zero, 3, 0, "0");
    expect_decimal(zero, 3, -3, "0");
    const uint8_t twelve[] = {12};
    expect_decimal(twelve, 1, 0, "12");
    expect_decimal(twelve, 1, 1, "1.2");
    expect_decimal(twelve, 1, 2, "0.12");
    expect_decimal(twelve, 1, 5, "0.00012");
    const uint8_t m128[] = {0x80};
    expect_decimal(m128, 1, 0, "-128");

    uint8_t be[40];
    /* 16 bytes: +-2^127 edges */
    memset(be, 0xff, 16);
    be[0] = 0x7f;
    expect_decimal(be, 16, 0, "170141183460469231731687303715884105727");
    expect_decimal(be, 16, 38, "1.70141183460469231731687303715884105727");
    memset(be, 0, 16);
    be[0] = 0x80;
    expect_decimal(be, 16, 0, "-170141183460469231731687303715884105728");
    expect_decimal(be, 16, 40, "-0.0170141183460469231731687303715884105728");
    memset(be, 0xff, 16);
    expect_decimal(be, 16, 3, "-0.001");
    /* 17 bytes: -2^135 and 2^128 */
    memset(be, 0, 17);
    be[0] = 0x80;
    expect_decimal(be, 17, 0, "-43556142965880123323311949751266331066368");
    memset(be, 0, 17);
    be[0] = 0x01;
    expect_decimal(be, 17, 2, "3402823669209384634633746074317682114.56");
    /* 32 bytes: 2^255 - 1 and -2^255 */
    memset(be, 0xff, 32);
    be[0] = 0x7f;
    expect_decimal(be, 32, 0,
                   "57896044618658097711785492504343953926634992332820282019728792003956564819967");
    memset(be, 0, 32);
    be[0] = 0x80;
    expect_decimal(be, 32, 10,
                   "-5789604461865809771178549250434395392663499233282028201972879200395.6564819968");
    memset(be, 0xff, 32);
    expect_decimal(be, 32, 0, "-1");
    expect_decimal(be, 32, 80,
                   "-0.00000000000000000000000000000000000000000000000000000000000000000000000000000001");

    expect_decimal_i64(0, 2, "0.00");
    expect_decimal_i64(-5, 2, "-0.05");
    expect_decimal_i64(120, 2, "1.20");
    expect_decimal_i64(12, 0, "12");
    expect_decimal_i64(12, -3, "12000");
    expect_decimal_i64(INT64_MIN, 0, "-9223372036854775808");
    expect_decimal_i64(INT64_MIN, 19, "-0.9223372036854775808");
    expect_decimal_i64(INT64_MIN, 20, "-0.09223372036854775808");
    expect_decimal_i64(INT64_MAX, 1, "922337203685477580.7");

    /* Random values of every length up to 40 bytes and various scales. */
    long n = iterations(100000);
    int bad = 0;
    for (long i = 0; i < n; i++) {
        size_t len = 1 + next_random() % 40;
        for (size_t j = 0; j < len; j++)
            be[j] = (uint8_t)next_random();
        if (next_random() % 4 == 0) /* sign-extension bytes, as padded values have */
            memset(be, be[len - 1] & 0x80 ? 0xff : 0, len / 2);
        int32_t scale = (int32_t)(next_random() % 110) - 10;
        char want[512];
        reference_decimal(be, len, scale, want);
        size_t cap = pq_fmt_decimal_max(len, scale);
        char *out = malloc(cap);
        size_t got = pq_fmt_decimal_be(be, len, scale, out);
        if (got > cap || got != strlen(want) || memcmp(out, want, got) != 0) {
            if (bad++ < 5)
                fprintf(stderr, "  decimal len %zu scale %d: %.*s, want %s\n", len, (int)scale,
                        (int)got, out, want);
        }
        free(out);
    }
    CHECK_EQ_INT(bad, 0);
}

/* ---------------------------------------------------------------- parsers */

static int parse_i64(const char *s, int64_t *v)
{
    return pq_parse_i64(s, strlen(s), v);
}

static int parse_double(const char *s, double *v)
{
    return pq_parse_double(s, strlen(s), v);
}

static int parse_date(const char *s, int64_t *v)
{
    return pq_parse_date(s, strlen(s), v);
}

static int parse_ts(const char *s, int64_t *v, int *had_offset)
{
    return pq_parse_timestamp_ns(s, strlen(s), v, had_offset);
}

static int parse_time(const char *s, int64_t *v)
{
    return pq_parse_time_ns(s, strlen(s), v);
}

static void test_parsers(void)
{
    int64_t v = 0;
    CHECK(parse_i64("0", &v) == 0 && v == 0);
    CHECK(parse_i64("-0", &v) == 0 && v == 0);
    CHECK(parse_i64("+42", &v) == 0 && v == 42);
    CHECK(parse_i64("-17", &v) == 0 && v == -17);
    CHECK(parse_i64("9223372036854775807", &v) == 0 && v == INT64_MAX);
    CHECK(parse_i64("-9223372036854775808", &v) == 0 && v == INT64_MIN);
    CHECK(parse_i64("000000000000000000000123", &v) == 0 && v == 123);
    const char *bad_ints[] = {"", "-", "+", "9223372036854775808", "-9223372036854775809",
                              "99999999999999999999", "1a", " 1", "1 ", "1.0", "--1", "0x10"};
    for (size_t i = 0; i < sizeof bad_ints / sizeof *bad_ints; i++)
        CHECK(parse_i64(bad_ints[i], &v) != 0);
    CHECK(pq_parse_i64("12345", 3, &v) == 0 && v == 123); /* length, not NUL, ends it */

    double d = 0;
    CHECK(parse_double("1.5", &d) == 0 && d == 1.5);
    CHECK(parse_double("-0", &d) == 0 && d == 0 && signbit(d));
    CHECK(parse_double("1e308", &d) == 0 && d == 1e308);
    CHECK(parse_double("1e999", &d) == 0 && isinf(d));
    CHECK(parse_double(".5", &d) == 0 && d == 0.5);
    CHECK(parse_double("30.299999999999997", &d) == 0 && d == 30.299999999999997);
    CHECK(parse_double("nan", &d) == 0 && isnan(d));
    CHECK(parse_double("NaN", &d) == 0 && isnan(d));
    CHECK(parse_double("inf", &d) == 0 && isinf(d) && d > 0);
    CHECK(parse_double("-INF", &d) == 0 && isinf(d) && d < 0);
    CHECK(parse_double("+Infinity", &d) == 0 && isinf(d) && d > 0);
    const char *bad_doubles[] = {"", "abc", "1.5x", " 1", "1 ", "0x10", "1e", "-", ".", "nan(1)",
                                 "infx", "1,5"};
    for (size_t i = 0; i < sizeof bad_doubles / sizeof *bad_doubles; i++)
        CHECK(parse_double(bad_doubles[i], &d) != 0);
    char long_number[256]; /* 0.000...05 = 5e-253, past the stack buffer */
    memset(long_number, '0', sizeof long_number);
    long_number[1] = '.';
    long_number[sizeof long_number - 2] = '5';
    long_number[sizeof long_number - 1] = '\0';
    CHECK(parse_double(long_number, &d) == 0 && d == 5e-253);

    CHECK(parse_date("1970-01-01", &v) == 0 && v == 0);
    CHECK(parse_date("2000-02-29", &v) == 0 && v == 11016);
    CHECK(parse_date("-0001-12-31", &v) == 0 && v == -719529);
    CHECK(parse_date("10000-01-01", &v) == 0 && v == 2932897);
    const char *bad_dates[] = {"",           "1900-02-29", "2001-02-29",  "2000-13-01",
                               "2000-00-10", "2000-01-00", "2000-04-31",  "2000-1-01",
                               "200-01-01",  "abcd-01-01", "2000-01-01x", "2000-01-32",
                               "2000/01/01", "1234567890-01-01"};
    for (size_t i = 0; i < sizeof bad_dates / sizeof *bad_dates; i++)
        CHECK(parse_date(bad_dates[i], &v) != 0);

    int had = -1;
    CHECK(parse_ts("2000-01-01", &v, &had) == 0 && v == 946684800000000000 && had == 0);
    CHECK(parse_ts("2000-01-01T00:00:00Z", &v, &had) == 0 && v == 946684800000000000 && had == 1);
    CHECK(parse_ts("2000-01-01 12:34", &v, &had) == 0 && v == 946730040000000000 && had == 0);
    CHECK(parse_ts("2000-01-01 12:34:56.789", &v, &had) == 0 && v == 946730096789000000);
    CHECK(parse_ts("2000-01-01T12:34:56.123456789", &v, &had) == 0 && v == 946730096123456789);
    CHECK(parse_ts("2000-01-01 05:30+05:30", &v, &had) == 0 && v == 946684800000000000 && had == 1);
    CHECK(parse_ts("1999-12-31 16:00:00-0800", &v, &had) == 0 && v == 946684800000000000);
    CHECK(parse_ts("2000-01-01 01:00:00+01", &v, &had) == 0 && v == 946684800000000000);
    CHECK(parse_ts("2262-04-11 23:47:16.854775807", &v, &had) == 0 && v == INT64_MAX);
    CHECK(parse_ts("1677-09-21 00:12:43.145224192", &v, &had) == 0 && v == INT64_MIN);
    const char *bad_ts[] = {"2262-04-11 23:47:16.854775808", "1677-09-21 00:12:43.145224191",
                            "2000-01-01 24:00:00", "2000-01-01 12:60", "2000-01-01 12:00:60",
                            "2000-01-01 12:00:00.1234567890", "2000-01-01 12:00:00.",
                            "2000-01-01X12:00", "2000-01-01 12", "2000-01-01 12:00+5",
                            "2000-01-01 12:00+05:3", "2000-01-01 12:00+24", "2000-01-01 12:00Zx",
                            "2000-01-01 ", "2000-02-30 00:00"};
    for (size_t i = 0; i < sizeof bad_ts / sizeof *bad_ts; i++)
        CHECK(parse_ts(bad_ts[i], &v, &had) != 0);

    CHECK(parse_time("00:00", &v) == 0 && v == 0);
    CHECK(parse_time("23:59:59.999999999", &v) == 0 && v == 86399999999999);
    CHECK(parse_time("12:34:56.5", &v) == 0 && v == 45296500000000);
    const char *bad_times[] = {"", "24:00", "12:60", "12:00:60", "1:00", "12:00:00.", "12:00:0",
                               "12-00", "12:00:00.0000000001", "12:00 "};
    for (size_t i = 0; i < sizeof bad_times / sizeof *bad_times; i++)
        CHECK(parse_time(bad_times[i], &v) != 0);
}

int main(void)
{
    const char *scale = getenv("PQFS_NUMFMT_SCALE");
    if (scale && atof(scale) > 0)
        iteration_scale = atof(scale);
    test_integers();
    test_double_cases();
    test_double_random();
    test_float_cases();
    test_float_random();
    test_half();
    test_dates();
    test_times();
    test_decimals();
    test_parsers();
    return check_report();
}
