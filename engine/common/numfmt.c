/* Integers, calendar values and decimals to text for the CSV hot path, and the
 * strict parsers used by expressions and CSV input.
 *
 * No printf anywhere: digits come two at a time from pq_digit_pairs, written
 * backwards from a precomputed length so nothing has to be reversed or moved.
 * The shortest-float formatting lives in floatfmt.c. */
#include "numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char pq_digit_pairs[201] =
    "00010203040506070809"
    "10111213141516171819"
    "20212223242526272829"
    "30313233343536373839"
    "40414243444546474849"
    "50515253545556575859"
    "60616263646566676869"
    "70717273747576777879"
    "80818283848586878889"
    "90919293949596979899";

static const uint64_t pow10_u64[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/* ---------------------------------------------------------------- integers */

static unsigned bit_length_u64(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
#else
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n;
#endif
}

/* Number of decimal digits of v (1 for 0).  bits * 1233 / 4096 is
 * floor(bits * log10(2)), which is either the digit count minus one or the
 * digit count itself; one table compare decides. */
static unsigned decimal_length_u64(uint64_t v)
{
    if (v < 10)
        return 1;
    unsigned guess = (bit_length_u64(v) * 1233u) >> 12;
    return guess + (v >= pow10_u64[guess]);
}

/* Writes the digits of v so that the last one lands just before `end`. */
static void write_digits_backward(uint64_t v, char *end)
{
    /* Halve the number of 64-bit divisions: peel 8 digits at a time while the
     * value does not fit 32 bits, then finish in cheaper 32-bit arithmetic. */
    while (v > 0xffffffffu) {
        uint64_t q = v / 100000000u;
        uint32_t low8 = (uint32_t)(v - q * 100000000u);
        for (int i = 0; i < 4; i++) {
            uint32_t r = low8 % 100u;
            low8 /= 100u;
            end -= 2;
            memcpy(end, pq_digit_pairs + 2 * r, 2);
        }
        v = q;
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100u) {
        uint32_t r = w % 100u;
        w /= 100u;
        end -= 2;
        memcpy(end, pq_digit_pairs + 2 * r, 2);
    }
    if (w >= 10u) {
        end -= 2;
        memcpy(end, pq_digit_pairs + 2 * w, 2);
    } else {
        *--end = (char)('0' + w);
    }
}

/* Exactly `width` digits, zero-padded on the left (v < 10^width). */
static void write_fixed_width(uint64_t v, unsigned width, char *out)
{
    unsigned len = decimal_length_u64(v);
    if (len < width)
        memset(out, '0', width - len);
    write_digits_backward(v, out + width);
}

static void write_two_digits(unsigned v, char *out)
{
    memcpy(out, pq_digit_pairs + 2 * v, 2);
}

size_t pq_fmt_u64(uint64_t v, char *out)
{
    unsigned len = decimal_length_u64(v);
    write_digits_backward(v, out + len);
    return len;
}

size_t pq_fmt_i64(int64_t v, char *out)
{
    if (v < 0) {
        /* Negate in unsigned arithmetic: INT64_MIN has no positive int64. */
        out[0] = '-';
        return 1 + pq_fmt_u64(0 - (uint64_t)v, out + 1);
    }
    return pq_fmt_u64((uint64_t)v, out);
}

size_t pq_fmt_u32(uint32_t v, char *out)
{
    return pq_fmt_u64(v, out);
}

size_t pq_fmt_i32(int32_t v, char *out)
{
    return pq_fmt_i64(v, out);
}

/* ---------------------------------------------------------------- calendar */

/* floor(a / b) for b > 0 (C division truncates toward zero). */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if (a % b < 0)
        q--;
    return q;
}

enum {
    DAYS_PER_400_YEARS = 146097,
    /* Days from 0000-03-01 to 1970-01-01.  Counting years from March puts
     * the leap day at the end of the year, so month lengths within a year
     * follow a fixed pattern and only the year length varies. */
    EPOCH_FROM_MARCH_0000 = 719468,
};

/* Proleptic Gregorian (year, month, day) of a day count, for every int64
 * (the calendar repeats every 400 years = 146097 days). */
static void civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day)
{
    /* Split into whole 400-year cycles (with % rather than a multiply, which
     * could overflow at INT64_MIN) before adding the epoch offset, so nothing
     * overflows anywhere in the int64 range. */
    int64_t cycles = days / DAYS_PER_400_YEARS;
    int64_t rem = days % DAYS_PER_400_YEARS;
    if (rem < 0) {
        rem += DAYS_PER_400_YEARS;
        cycles--;
    }
    rem += EPOCH_FROM_MARCH_0000;
    cycles += rem / DAYS_PER_400_YEARS;
    uint32_t day_of_cycle = (uint32_t)(rem % DAYS_PER_400_YEARS); /* [0, 146096] */
    /* Years of the cycle: remove the leap days (every 4th year, except every
     * 100th, except the 400th which is the cycle's last day) before dividing. */
    uint32_t year_of_cycle =
        (day_of_cycle - day_of_cycle / 1460 + day_of_cycle / 36524 - day_of_cycle / 146096) / 365;
    uint32_t day_of_year =
        day_of_cycle - (365 * year_of_cycle + year_of_cycle / 4 - year_of_cycle / 100);
    /* March-based months have lengths 31 30 31 30 31 31 30 31 30 31 31 29:
     * (153 * m + 2) / 5 is the first day of month m (0 = March). */
    uint32_t month_from_march = (5 * day_of_year + 2) / 153;
    *day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    *month = month_from_march < 10 ? month_from_march + 3 : month_from_march - 9;
    *year = (int64_t)year_of_cycle + cycles * 400 + (*month <= 2);
}

/* Days since 1970-01-01 of a valid date; |year| must stay well inside int64
 * (the parsers limit it to 9 digits). */
static int64_t days_from_civil(int64_t year, unsigned month, unsigned day)
{
    int64_t y = year - (month <= 2);
    int64_t cycles = floor_div(y, 400);
    uint32_t year_of_cycle = (uint32_t)(y - cycles * 400);
    uint32_t month_from_march = month > 2 ? month - 3 : month + 9;
    uint32_t day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    uint32_t day_of_cycle =
        year_of_cycle * 365 + year_of_cycle / 4 - year_of_cycle / 100 + day_of_year;
    return cycles * DAYS_PER_400_YEARS + (int64_t)day_of_cycle - EPOCH_FROM_MARCH_0000;
}

static int is_leap_year(int64_t year)
{
    return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

static unsigned days_in_month(int64_t year, unsigned month)
{
    static const unsigned char lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && is_leap_year(year) ? 29u : lengths[month - 1];
}

size_t pq_fmt_date(int64_t days_since_epoch, char *out)
{
    int64_t year;
    unsigned month, day;
    civil_from_days(days_since_epoch, &year, &month, &day);
    size_t pos;
    if (year >= 0 && year <= 9999) {
        write_two_digits((unsigned)year / 100, out);
        write_two_digits((unsigned)year % 100, out + 2);
        pos = 4;
    } else {
        pos = 0;
        uint64_t year_mag = (uint64_t)year;
        if (year < 0) {
            out[pos++] = '-';
            year_mag = 0 - (uint64_t)year;
        }
        unsigned width = decimal_length_u64(year_mag);
        if (width < 4)
            width = 4;
        write_fixed_width(year_mag, width, out + pos);
        pos += width;
    }
    out[pos] = '-';
    write_two_digits(month, out + pos + 1);
    out[pos + 3] = '-';
    write_two_digits(day, out + pos + 4);
    return pos + 6;
}

/* Units per second for a fraction of `digits` digits; digits outside 0..18
 * are clamped so a bad unit cannot index past the table. */
static unsigned clamp_digits(int digits)
{
    return digits < 0 ? 0u : digits > 18 ? 18u : (unsigned)digits;
}

/* HH:MM:SS with at least two hour digits (more when secs spans days). */
static size_t write_hms(uint64_t secs, char *out)
{
    uint64_t hours = secs / 3600;
    unsigned rem = (unsigned)(secs - hours * 3600);
    unsigned width = 2;
    if (hours < 100) {
        write_two_digits((unsigned)hours, out);
    } else {
        width = decimal_length_u64(hours);
        write_digits_backward(hours, out + width);
    }
    out[width] = ':';
    write_two_digits(rem / 60, out + width + 1);
    out[width + 3] = ':';
    write_two_digits(rem % 60, out + width + 4);
    return width + 6;
}

/* ".fff" with trailing zeros dropped; nothing at all for a zero fraction. */
static size_t write_fraction(uint64_t frac, unsigned digits, char *out)
{
    if (frac == 0)
        return 0;
    out[0] = '.';
    write_fixed_width(frac, digits, out + 1);
    size_t last = digits;
    while (out[last] == '0')
        last--;
    return last + 1;
}

size_t pq_fmt_time(int64_t value, int digits, char *out)
{
    unsigned d = clamp_digits(digits);
    uint64_t unit = pow10_u64[d];
    size_t pos = 0;
    uint64_t mag = (uint64_t)value;
    /* A time of day is never negative in valid data; show one as sign and
     * magnitude ("-00:00:01") rather than as a wrapped clock. */
    if (value < 0) {
        out[pos++] = '-';
        mag = 0 - (uint64_t)value;
    }
    pos += write_hms(mag / unit, out + pos);
    pos += write_fraction(mag % unit, d, out + pos);
    return pos;
}

int64_t pq_int96_micros(const uint8_t b[12])
{
    uint64_t nanos = 0;
    uint32_t julian = 0;
    for (int i = 7; i >= 0; i--) nanos = nanos << 8 | b[i];
    for (int i = 11; i >= 8; i--) julian = julian << 8 | b[i];
    /* 2440588 is the Julian day of 1970-01-01. */
    int64_t n = (int64_t)nanos;
    int64_t micro = n / 1000 - (n % 1000 < 0);
    return (int64_t)((uint64_t)((int64_t)(int32_t)julian - 2440588) * 86400000000ull + (uint64_t)micro);
}

size_t pq_fmt_timestamp(int64_t value, int digits, char *out)
{
    unsigned d = clamp_digits(digits);
    uint64_t unit = pow10_u64[d];
    int64_t secs = floor_div(value, (int64_t)unit);
    /* secs * unit can be below INT64_MIN when value is near it; the
     * difference is small and exact in wrapping unsigned arithmetic. */
    uint64_t frac = (uint64_t)value - (uint64_t)secs * unit;
    int64_t days = floor_div(secs, 86400);
    uint64_t sec_of_day = (uint64_t)secs - (uint64_t)days * 86400u;
    size_t pos = pq_fmt_date(days, out);
    out[pos++] = ' ';
    pos += write_hms(sec_of_day, out + pos);
    pos += write_fraction(frac, d, out + pos);
    return pos;
}

/* ---------------------------------------------------------------- decimals */

/* Upper bound of the decimal digits of a magnitude below 2^(8 * len):
 * log10(256) < 2.40824. */
static size_t max_decimal_digits(size_t len)
{
    return len * 240824 / 100000 + 1;
}

size_t pq_fmt_decimal_max(size_t len, int32_t scale)
{
    size_t digits = max_decimal_digits(len);
    size_t frac_width = scale > 0 ? (size_t)scale : 0;
    size_t zeros = scale < 0 ? (size_t)(-(int64_t)scale) : 0;
    /* Final text: sign, "0.", the larger of digits and scale, zeros. */
    size_t text = 3 + (digits > frac_width ? digits : frac_width) + zeros;
    /* The long path divides the magnitude in place at the start of `out`
     * while 9-digit groups accumulate after it. */
    size_t scratch = len + 9 * ((digits + 8) / 9);
    return (text > scratch ? text : scratch) + 1;
}

/* Places `ndigits` digits (no leading zeros; "0" for zero), which may lie
 * anywhere in or outside `out`, as the final text of digits * 10^-scale. */
static size_t place_decimal(char *out, const char *digits, size_t ndigits, int negative,
                            int32_t scale)
{
    int is_zero = ndigits == 1 && digits[0] == '0';
    size_t sign = negative && !is_zero;
    if (scale <= 0) {
        memmove(out + sign, digits, ndigits);
        size_t pos = sign + ndigits;
        if (!is_zero && scale < 0) {
            size_t zeros = (size_t)(-(int64_t)scale);
            memset(out + pos, '0', zeros);
            pos += zeros;
        }
        if (sign)
            out[0] = '-';
        return pos;
    }
    size_t frac = (size_t)scale;
    if (ndigits > frac) {
        /* Move everything one to the right of its final place, then the
         * integer part back left: correct whichever way the source overlaps. */
        size_t int_len = ndigits - frac;
        memmove(out + sign + 1, digits, ndigits);
        memmove(out + sign, out + sign + 1, int_len);
        out[sign + int_len] = '.';
        if (sign)
            out[0] = '-';
        return sign + ndigits + 1;
    }
    size_t lead_zeros = frac - ndigits;
    memmove(out + sign + 2 + lead_zeros, digits, ndigits);
    if (sign)
        out[0] = '-';
    out[sign] = '0';
    out[sign + 1] = '.';
    memset(out + sign + 2, '0', lead_zeros);
    return sign + 2 + frac;
}

size_t pq_fmt_decimal_i64(int64_t unscaled, int32_t scale, char *out)
{
    char digits[20];
    uint64_t mag = unscaled < 0 ? 0 - (uint64_t)unscaled : (uint64_t)unscaled;
    size_t n = pq_fmt_u64(mag, digits);
    return place_decimal(out, digits, n, unscaled < 0, scale);
}

#ifdef __SIZEOF_INT128__
/* Digits of a 128-bit magnitude, via at most two divisions by 10^19. */
static size_t format_u128(unsigned __int128 v, char *out)
{
    const uint64_t ten19 = 10000000000000000000ull;
    if ((uint64_t)(v >> 64) == 0)
        return pq_fmt_u64((uint64_t)v, out);
    unsigned __int128 high = v / ten19;
    uint64_t low = (uint64_t)(v - high * ten19);
    size_t n;
    if ((uint64_t)(high >> 64) == 0) {
        n = pq_fmt_u64((uint64_t)high, out);
    } else {
        uint64_t top = (uint64_t)(high / ten19);
        uint64_t mid = (uint64_t)(high - (unsigned __int128)top * ten19);
        n = pq_fmt_u64(top, out);
        write_fixed_width(mid, 19, out + n);
        n += 19;
    }
    write_fixed_width(low, 19, out + n);
    return n + 19;
}
#endif

size_t pq_fmt_decimal_i128(__int128 unscaled, int32_t scale, char *out)
{
    uint8_t be[16];
    unsigned __int128 u = (unsigned __int128)unscaled;
    for (int i = 15; i >= 0; i--, u >>= 8) be[i] = (uint8_t)u;
    return pq_fmt_decimal_be(be, 16, scale, out);
}

size_t pq_fmt_decimal_be(const uint8_t *be, size_t len, int32_t scale, char *out)
{
    if (len == 0)
        return place_decimal(out, "0", 1, 0, scale);
    int negative = (be[0] & 0x80) != 0;
#ifdef __SIZEOF_INT128__
    if (len <= 16) {
        /* Start from all ones for a negative value so the bytes shifted in
         * leave a sign-extended 128-bit two's complement. */
        unsigned __int128 v = negative ? ~(unsigned __int128)0 : 0;
        for (size_t i = 0; i < len; i++)
            v = (v << 8) | be[i];
        if (negative)
            v = -v; /* unsigned negation: the magnitude, even for -2^127 */
        char digits[40];
        size_t n = format_u128(v, digits);
        return place_decimal(out, digits, n, negative, scale);
    }
#else
    if (len <= 8) {
        uint64_t v = negative ? ~(uint64_t)0 : 0;
        for (size_t i = 0; i < len; i++)
            v = (v << 8) | be[i];
        if (negative)
            v = 0 - v;
        char digits[20];
        size_t n = pq_fmt_u64(v, digits);
        return place_decimal(out, digits, n, negative, scale);
    }
#endif
    /* Any length: the magnitude, big-endian, goes to out[0, len) and is
     * divided by 10^9 in place; each remainder is the next nine digits from
     * the right, stored after the magnitude (pq_fmt_decimal_max reserves the
     * room), so no allocation is needed for arbitrarily long values. */
    uint8_t *mag = (uint8_t *)out;
    if (negative) {
        unsigned carry = 1;
        for (size_t i = len; i-- > 0;) {
            unsigned b = (uint8_t)~be[i] + carry;
            mag[i] = (uint8_t)b;
            carry = b >> 8;
        }
    } else {
        memcpy(mag, be, len);
    }
    size_t digits_end = len + 9 * ((max_decimal_digits(len) + 8) / 9);
    size_t digits_start = digits_end;
    size_t first = 0;
    while (first < len && mag[first] == 0)
        first++;
    if (first == len)
        out[--digits_start] = '0';
    while (first < len) {
        uint64_t rem = 0;
        for (size_t i = first; i < len; i++) {
            uint64_t cur = (rem << 8) | mag[i];
            mag[i] = (uint8_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        while (first < len && mag[first] == 0)
            first++;
        if (first < len) {
            digits_start -= 9;
            write_fixed_width(rem, 9, out + digits_start);
        } else {
            unsigned n = decimal_length_u64(rem);
            digits_start -= n;
            write_digits_backward(rem, out + digits_start + n);
        }
    }
    return place_decimal(out, out + digits_start, digits_end - digits_start, negative, scale);
}

/* ---------------------------------------------------------------- parsers */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int pq_parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int negative = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        negative = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return -1;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    for (; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (limit - d) / 10)
            return -1;
        acc = acc * 10 + d;
    }
    if (negative)
        *out = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
    else
        *out = (int64_t)acc;
    return 0;
}

/* Case-insensitive whole-string compare with a lowercase word. */
static int equals_word(const char *s, size_t n, const char *word)
{
    size_t len = strlen(word);
    if (n != len)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != word[i])
            return 0;
    }
    return 1;
}

int pq_parse_row_count(const char *s, size_t n, int64_t *out)
{
    return n > 0 && is_digit(s[0]) ? pq_parse_i64(s, n, out) : -1;
}

int pq_parse_double(const char *s, size_t n, double *out)
{
    if (n == 0)
        return -1;
    size_t i = s[0] == '-' || s[0] == '+';
    if (equals_word(s + i, n - i, "nan")) {
        *out = NAN;
        return 0;
    }
    if (equals_word(s + i, n - i, "inf") || equals_word(s + i, n - i, "infinity")) {
        *out = s[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    /* Only plain decimal syntax reaches strtod: no white space, hex floats
     * or "nan(...)" forms, which strtod would otherwise accept. */
    for (size_t j = 0; j < n; j++) {
        char c = s[j];
        if (!is_digit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
            return -1;
    }
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    int ok = end == buf + n;
    if (buf != small)
        free(buf);
    if (!ok)
        return -1;
    *out = v; /* overflow gives +-inf and underflow 0, as IEEE rounding would */
    return 0;
}

/* Exactly `width` digits at s[*pos], advancing *pos. */
static int read_digits(const char *s, size_t n, size_t *pos, unsigned width, unsigned *out)
{
    if (n - *pos < width)
        return -1;
    unsigned v = 0;
    for (unsigned i = 0; i < width; i++) {
        char c = s[*pos + i];
        if (!is_digit(c))
            return -1;
        v = v * 10 + (unsigned)(c - '0');
    }
    *pos += width;
    *out = v;
    return 0;
}

static int expect_char(const char *s, size_t n, size_t *pos, char c)
{
    if (*pos >= n || s[*pos] != c)
        return -1;
    (*pos)++;
    return 0;
}

/* [-]YYYY-MM-DD with 4 to 9 year digits (the round trip of pq_fmt_date for
 * every date a 64-bit nanosecond timestamp, or far more, can hold). */
static int parse_date_at(const char *s, size_t n, size_t *pos, int64_t *days)
{
    size_t i = *pos;
    int negative = 0;
    if (i < n && s[i] == '-') {
        negative = 1;
        i++;
    }
    size_t start = i;
    int64_t year = 0;
    while (i < n && is_digit(s[i]) && i - start < 9) {
        year = year * 10 + (s[i] - '0');
        i++;
    }
    if (i - start < 4)
        return -1;
    if (negative)
        year = -year;
    unsigned month, day;
    if (expect_char(s, n, &i, '-') || read_digits(s, n, &i, 2, &month) ||
        expect_char(s, n, &i, '-') || read_digits(s, n, &i, 2, &day))
        return -1;
    if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
        return -1;
    *days = days_from_civil(year, month, day);
    *pos = i;
    return 0;
}

/* HH:MM[:SS[.f{1,9}]] -> nanoseconds since midnight. */
static int parse_time_at(const char *s, size_t n, size_t *pos, int64_t *ns)
{
    size_t i = *pos;
    unsigned hour, minute, second = 0;
    uint32_t frac_ns = 0;
    if (read_digits(s, n, &i, 2, &hour) || expect_char(s, n, &i, ':') ||
        read_digits(s, n, &i, 2, &minute))
        return -1;
    if (i < n && s[i] == ':') {
        i++;
        if (read_digits(s, n, &i, 2, &second))
            return -1;
        if (i < n && s[i] == '.') {
            i++;
            unsigned count = 0;
            while (i < n && is_digit(s[i])) {
                if (++count > 9)
                    return -1;
                frac_ns = frac_ns * 10 + (uint32_t)(s[i] - '0');
                i++;
            }
            if (count == 0)
                return -1;
            frac_ns *= (uint32_t)pow10_u64[9 - count];
        }
    }
    if (hour > 23 || minute > 59 || second > 59)
        return -1;
    *ns = ((int64_t)hour * 3600 + minute * 60 + second) * 1000000000 + frac_ns;
    *pos = i;
    return 0;
}

int pq_parse_date(const char *s, size_t n, int64_t *days)
{
    size_t pos = 0;
    int64_t d;
    if (parse_date_at(s, n, &pos, &d) || pos != n)
        return -1;
    *days = d;
    return 0;
}

int pq_parse_time_ns(const char *s, size_t n, int64_t *ns)
{
    size_t pos = 0;
    int64_t t;
    if (parse_time_at(s, n, &pos, &t) || pos != n)
        return -1;
    *ns = t;
    return 0;
}

/* Timestamp text -> seconds since the epoch (UTC when an offset is given)
 * and nanoseconds past them (0..999999999). */
static int parse_timestamp_parts(const char *s, size_t n, int64_t *secs_out, int64_t *frac_out, int *had_offset)
{
    size_t pos = 0;
    int64_t days, time_ns = 0, offset_secs = 0;
    int offset = 0;
    if (parse_date_at(s, n, &pos, &days))
        return -1;
    if (pos < n) {
        if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')
            return -1;
        pos++;
        if (parse_time_at(s, n, &pos, &time_ns))
            return -1;
        if (pos < n && (s[pos] == 'Z' || s[pos] == 'z')) {
            pos++;
            offset = 1;
        } else if (pos < n && (s[pos] == '+' || s[pos] == '-')) {
            int east = s[pos] == '+';
            unsigned oh, om = 0;
            pos++;
            if (read_digits(s, n, &pos, 2, &oh))
                return -1;
            if (pos < n) {
                if (s[pos] == ':')
                    pos++;
                if (read_digits(s, n, &pos, 2, &om))
                    return -1;
            }
            if (oh > 23 || om > 59)
                return -1;
            offset_secs = (int64_t)oh * 3600 + om * 60;
            if (!east)
                offset_secs = -offset_secs;
            offset = 1;
        }
        if (pos != n)
            return -1;
    }
    /* Local time minus its offset from UTC, in seconds: no overflow with at
     * most 9-digit years. */
    *secs_out = days * 86400 + time_ns / 1000000000 - offset_secs;
    *frac_out = time_ns % 1000000000;
    if (had_offset)
        *had_offset = offset;
    return 0;
}

int pq_parse_timestamp_ns(const char *s, size_t n, int64_t *ns, int *had_offset)
{
    int64_t secs, frac;
    if (parse_timestamp_parts(s, n, &secs, &frac, had_offset))
        return -1;
    /* Nanoseconds, refusing anything past int64.  A negative count takes the
     * fraction as negative too, so that the earliest representable instant
     * does not overflow on the way. */
    if (secs < 0 && frac > 0) {
        secs++;
        frac -= 1000000000;
    }
    int64_t t;
    if (__builtin_mul_overflow(secs, (int64_t)1000000000, &t) || __builtin_add_overflow(t, frac, &t))
        return -1;
    *ns = t;
    return 0;
}

int pq_parse_timestamp_units(const char *s, size_t n, int digits, int64_t *out, int *had_offset)
{
    int64_t secs, frac;
    if (digits < 0 || digits > 9 || parse_timestamp_parts(s, n, &secs, &frac, had_offset))
        return -1;
    int64_t div = (int64_t)pow10_u64[9 - digits];
    if (frac % div != 0)
        return -2;
    int64_t t;
    if (__builtin_mul_overflow(secs, (int64_t)pow10_u64[digits], &t) || __builtin_add_overflow(t, frac / div, &t))
        return -1;
    *out = t;
    return 0;
}

/* ------------------------------------------------------------------ shared by expressions and CSV input */

#define P18 ((__int128)1000000000000000000LL)
const __int128 pq_pow10_i128[39] = {
    (__int128)1LL, (__int128)10LL, (__int128)100LL,
    (__int128)1000LL, (__int128)10000LL, (__int128)100000LL,
    (__int128)1000000LL, (__int128)10000000LL, (__int128)100000000LL,
    (__int128)1000000000LL, (__int128)10000000000LL, (__int128)100000000000LL,
    (__int128)1000000000000LL, (__int128)10000000000000LL, (__int128)100000000000000LL,
    (__int128)1000000000000000LL, (__int128)10000000000000000LL, (__int128)100000000000000000LL,
    (__int128)1000000000000000000LL, P18 * 10LL, P18 * 100LL,
    P18 * 1000LL, P18 * 10000LL, P18 * 100000LL,
    P18 * 1000000LL, P18 * 10000000LL, P18 * 100000000LL,
    P18 * 1000000000LL, P18 * 10000000000LL, P18 * 100000000000LL,
    P18 * 1000000000000LL, P18 * 10000000000000LL, P18 * 100000000000000LL,
    P18 * 1000000000000000LL, P18 * 10000000000000000LL, P18 * 100000000000000000LL,
    P18 * 1000000000000000000LL, P18 * P18 * 10, P18 * P18 * 100,
};


int pq_parse_decimal(const char *s, size_t n, __int128 *unscaled, int32_t *scale)
{
    size_t i = 0;
    bool negative = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        negative = s[i] == '-';
        i++;
    }
    __int128 acc = 0;
    int significant = 0, frac = 0;
    bool any = false;
    for (int part = 0; part < 2; part++) {
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            any = true;
            if (acc != 0 || s[i] != '0') {
                if (++significant > 38)
                    return -2;
                acc = acc * 10 + (s[i] - '0');
            }
            frac += part;
            i++;
        }
        if (part == 0) {
            if (i < n && s[i] == '.')
                i++;
            else
                break;
        }
    }
    if (!any)
        return -1;
    long exponent = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i >= n || s[i] < '0' || s[i] > '9')
            return -1;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (exponent < 100000)
                exponent = exponent * 10 + (s[i] - '0');
            i++;
        }
        if (eneg)
            exponent = -exponent;
    }
    if (i != n)
        return -1;
    long sc = frac - exponent;
    if (acc == 0) {
        sc = sc < 0 ? 0 : sc > 38 ? 38 : sc;
    } else if (sc < 0) {
        if (-sc > 38 || __builtin_mul_overflow(acc, pq_pow10_i128[-sc], &acc) ||
            acc >= pq_pow10_i128[38])
            return -2;
        sc = 0;
    }
    while (sc > 38 && acc % 10 == 0) {
        acc /= 10;
        sc--;
    }
    if (sc > 38)
        return -2;
    *unscaled = negative ? -acc : acc;
    *scale = (int32_t)sc;
    return 0;
}

int pq_hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int pq_parse_uuid(const char *s, size_t n, uint8_t out[16])
{
    if (n >= 2 && s[0] == '{' && s[n - 1] == '}') {
        s++;
        n -= 2;
    }
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-')
            continue;
        int h = pq_hex_digit(s[i]);
        if (h < 0 || k >= 32)
            return -1;
        if (k % 2 == 0) out[k / 2] = (uint8_t)(h << 4);
        else out[k / 2] |= (uint8_t)h;
        k++;
    }
    return k == 32 ? 0 : -1;
}

int pq_unescape_binary(const char *s, size_t n, uint8_t *out, size_t *len)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\') {
            out[k++] = (uint8_t)s[i];
            continue;
        }
        int hi, lo;
        if (i + 3 >= n || s[i + 1] != 'x' || (hi = pq_hex_digit(s[i + 2])) < 0 || (lo = pq_hex_digit(s[i + 3])) < 0)
            return -1;
        out[k++] = (uint8_t)(hi << 4 | lo);
        i += 3;
    }
    *len = k;
    return 0;
}

uint16_t pq_float_to_half(float f)
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

/* ASCII runs eight bytes at a time: most text is ASCII. */
size_t pq_utf8_valid_prefix(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = s[i];
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || (len == 2 && c < 0xC2) || i + len > n) return i;
        uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return i;
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
            return i;
        i += len;
    }
    return n;
}
