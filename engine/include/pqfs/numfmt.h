/* Number and date/time to text, without printf: the CSV output's hot path.
 *
 * Every function writes into `out`, which must have room for PQ_FMT_MAX bytes
 * unless said otherwise, does not NUL-terminate, and returns the number of
 * bytes written. */
#ifndef PQ_NUMFMT_H
#define PQ_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#define PQ_FMT_MAX 48

/* "00" "01" ... "99" back to back (and a NUL): two digits per table lookup,
 * shared by the integer, float and date formatters. */
extern const char pq_digit_pairs[201];

size_t pq_fmt_u64(uint64_t v, char *out);
size_t pq_fmt_i64(int64_t v, char *out);
size_t pq_fmt_u32(uint32_t v, char *out);
size_t pq_fmt_i32(int32_t v, char *out);

/* Shortest text that reads back (strtod/strtof) to exactly the same value.
 * Fixed notation when 1e-5 <= |v| < 1e16, with ".0" added to integral values
 * ("1.0", "-0.0", "30.299999999999997", "0.0001"); otherwise scientific with
 * a signed two-digit-minimum exponent ("1e+16", "1.5e-07", "-2.2250738585072014e-308").
 * Specials: "nan", "inf", "-inf". */
size_t pq_fmt_double(double v, char *out);
size_t pq_fmt_float(float v, char *out);

/* IEEE half precision (FLOAT16, little-endian bits) to float, exactly. */
float pq_half_to_float(uint16_t bits);
/* float to IEEE half bits, rounded to nearest even (inf past the range). */
uint16_t pq_float_to_half(float f);

/* Calendar: days since 1970-01-01 (proleptic Gregorian) as YYYY-MM-DD.
 * Years outside 0000..9999 are written with as many digits as needed and a
 * leading '-' for negative years. */
size_t pq_fmt_date(int64_t days_since_epoch, char *out);

/* Time of day: `value` in units of 10^-digits seconds since midnight
 * (digits = 3 millis, 6 micros, 9 nanos), as HH:MM:SS[.f...] with trailing
 * zeros of the fraction removed (no fraction when it is zero).  Values outside
 * one day are written with hours >= 24 rather than rejected. */
size_t pq_fmt_time(int64_t value, int digits, char *out);

/* An INT96 timestamp (8 bytes of nanoseconds of the day, 4 of Julian day,
 * little endian) as microseconds since the epoch, as every reader here
 * takes it (CSV, expressions, the scan's widening to TIMESTAMP(MICROS)):
 * the nanoseconds floored to whole microseconds, the sum in wrapping
 * 64-bit arithmetic as in Spark, which writes timestamps beyond the
 * nanosecond range that way (its reader wraps them back): see
 * int96_from_spark.md in parquet-testing. */
int64_t pq_int96_micros(const uint8_t b[12]);

/* Timestamp: `value` units of 10^-digits seconds since the epoch, as
 * "YYYY-MM-DD HH:MM:SS[.f...]" (fraction as pq_fmt_time), floor division for
 * values before 1970. */
size_t pq_fmt_timestamp(int64_t value, int digits, char *out);

/* Exact decimal text of a big-endian two's complement integer of `len` bytes
 * (1..N; any length) scaled by 10^-scale: "1.20", "-0.05", "12".  `out` must
 * have room for pq_fmt_decimal_max(len, scale) bytes. */
size_t pq_fmt_decimal_be(const uint8_t *be, size_t len, int32_t scale, char *out);
size_t pq_fmt_decimal_max(size_t len, int32_t scale);
/* Same for a 64-bit unscaled value (INT32/INT64 decimals). */
size_t pq_fmt_decimal_i64(int64_t unscaled, int32_t scale, char *out);
/* Same for a 128-bit one (a pq_value's DECIMAL); out holds 42 bytes. */
size_t pq_fmt_decimal_i128(__int128 unscaled, int32_t scale, char *out);

/* Parsing helpers for expressions and CSV input (not hot): strict, whole
 * string, return 0 on success. */
int pq_parse_i64(const char *s, size_t n, int64_t *out);
/* A row count (limit= and --limit): digits only, no sign or space, up to
 * INT64_MAX. */
int pq_parse_row_count(const char *s, size_t n, int64_t *out);
int pq_parse_double(const char *s, size_t n, double *out);
/* YYYY-MM-DD -> days since epoch */
int pq_parse_date(const char *s, size_t n, int64_t *days);
/* "YYYY-MM-DD[ T]HH:MM[:SS[.fffffffff]]" with optional "Z"/"+HH[:MM]"/"-HH[:MM]"
 * offset -> nanoseconds since the epoch (UTC when an offset is given, else
 * taken as is).  *had_offset tells which. */
int pq_parse_timestamp_ns(const char *s, size_t n, int64_t *ns, int *had_offset);
/* The same text -> units of 10^-digits seconds since the epoch: -2 when the
 * text is finer than the unit, -1 when it is not a timestamp or overflows. */
int pq_parse_timestamp_units(const char *s, size_t n, int digits, int64_t *out, int *had_offset);
/* Decimal text ([-+]digits[.digits][e[-+]digits]) -> unscaled integer and
 * scale (0..38): -2 past 38 digits, -1 not a decimal. */
int pq_parse_decimal(const char *s, size_t n, __int128 *unscaled, int32_t *scale);
/* 10^0 .. 10^38. */
extern const __int128 pq_pow10_i128[39];
/* UUID text (8-4-4-4-12; hyphens optional, braces allowed) -> 16 bytes. */
int pq_parse_uuid(const char *s, size_t n, uint8_t out[16]);
/* Binary text as canonical CSV and DuckDB write it: \xHH is a byte, any
 * other backslash an error (-1), the rest as is.  out has room for n bytes. */
int pq_unescape_binary(const char *s, size_t n, uint8_t *out, size_t *len);
/* HH:MM[:SS[.f...]] -> nanoseconds since midnight */
int pq_parse_time_ns(const char *s, size_t n, int64_t *ns);

/* The value of one hex digit (either case), or -1. */
int pq_hex_digit(char c);

/* The length of the longest prefix of s that is valid UTF-8 (no overlong
 * forms, no surrogates, nothing past U+10FFFF): n when all of it is. */
size_t pq_utf8_valid_prefix(const unsigned char *s, size_t n);

#endif
