/* Delta add.stats into pruning bounds (engine/tablefmt/delta_stats.c): per
 * type, what is taken and how it is widened (timestamps cut to the
 * millisecond, strings cut to a prefix or ending in a tie-breaker, floats,
 * decimals read as doubles), and what gives no bound at all (missing,
 * null, of another JSON type, wide null counts, no numRecords, not JSON,
 * timestamps with or without a zone where the type says otherwise). */
#include "check.h"
#include "delta_log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C_ID, C_TS, C_NTZ, C_S, C_D, C_F, C_DEC, C_DATE, C_B, C_BIN, C_ST, C_PART, N_COLS };

static const pq_delta_stats_col COLS[N_COLS] = {
    {"id", "long"},  {"ts", "timestamp"}, {"ntz", "timestamp_ntz"}, {"s", "string"},
    {"d", "double"}, {"f", "float"},      {"dec", "decimal(10,2)"}, {"dt", "date"},
    {"b", "boolean"}, {"bin", "binary"},  {"st", "struct"},         {NULL, NULL},
};

static pq_col_range R[N_COLS];
static pq_arena A;

static int ranges(const char *json, int32_t prefix_len)
{
    pq_arena_reset(&A);
    return pq_delta_stats_ranges(json, json ? strlen(json) : 0, COLS, N_COLS, prefix_len, &A, R);
}

/* "{numRecords: 10, minValues: {MIN}, maxValues: {MAX}, nullCount: {NULLS}}" */
static int stats3(const char *min, const char *max, const char *nulls)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "{\"numRecords\":10,\"minValues\":{%s},\"maxValues\":{%s},\"nullCount\":{%s}}", min, max,
             nulls);
    return ranges(buf, 32);
}

static bool str_is(const pq_value *v, const char *s)
{
    return v->type == PQ_V_STRING && v->u.s.len == strlen(s) && !memcmp(v->u.s.ptr, s, v->u.s.len);
}

static void test_numbers(void)
{
    CHECK_EQ_INT(stats3("\"id\":-5,\"d\":1.5,\"f\":0.1,\"b\":false", "\"id\":7,\"d\":2.5,\"f\":0.1,\"b\":true",
                        "\"id\":0,\"d\":3"),
                 4);
    CHECK(R[C_ID].known && R[C_ID].has_min && R[C_ID].has_max && R[C_ID].min.u.i == -5 && R[C_ID].max.u.i == 7);
    CHECK(R[C_ID].has_null_count && R[C_ID].null_count == 0 && R[C_ID].row_count == 10 && !R[C_ID].may_have_nan);
    /* doubles: widened, NaN possible */
    CHECK(R[C_D].has_min && R[C_D].min.u.d < 1.5 && R[C_D].min.u.d > 1.4999999);
    CHECK(R[C_D].has_max && R[C_D].max.u.d > 2.5 && R[C_D].may_have_nan && R[C_D].null_count == 3);
    /* a float's bounds hold its float value (0.1f is above 0.1) */
    CHECK(R[C_F].has_min && R[C_F].min.u.d < (double)0.1f && R[C_F].has_max && R[C_F].max.u.d > (double)0.1f);
    CHECK(R[C_B].min.type == PQ_V_BOOL && !R[C_B].min.u.b && R[C_B].max.u.b);
    /* another JSON type, null, NaN as a string, an integer given as real */
    CHECK_EQ_INT(stats3("\"id\":\"5\",\"d\":null", "\"id\":7.0,\"d\":\"NaN\"", ""), 0);
    CHECK(!R[C_ID].known && !R[C_D].known);
    /* inverted bounds: none */
    stats3("\"id\":9", "\"id\":1", "");
    CHECK(!R[C_ID].has_min && !R[C_ID].has_max);
}

static void test_decimals(void)
{
    stats3("\"dec\":-5.67", "\"dec\":12", "");
    CHECK(R[C_DEC].has_min && R[C_DEC].min.type == PQ_V_DECIMAL && R[C_DEC].min.u.dec.scale == 2);
    /* read as a double: one unit below and above */
    CHECK(R[C_DEC].min.u.dec.unscaled == -568);
    CHECK(R[C_DEC].has_max && R[C_DEC].max.u.dec.unscaled == 1200); /* an integer: exact */
    /* too many digits for a double to carry exactly: none */
    stats3("\"dec\":12345678901234567.5", "\"dec\":1e300", "");
    CHECK(!R[C_DEC].has_min && !R[C_DEC].has_max);
}

static void test_times(void)
{
    stats3("\"ts\":\"2024-01-01T12:00:00.000Z\",\"ntz\":\"2024-01-01T12:00:00.123\",\"dt\":\"2024-01-02\"",
           "\"ts\":\"2024-01-01T13:00:00.000+01:00\",\"ntz\":\"2024-01-01T12:00:00.123456\",\"dt\":\"2024-01-03\"", "");
    const __int128 noon = (__int128)1704110400 * 1000000000;
    CHECK(R[C_TS].has_min && R[C_TS].min.type == PQ_V_TIMESTAMP && R[C_TS].min.u.ts_ns == noon);
    /* max cut to the millisecond: up to the next one */
    CHECK(R[C_TS].has_max && R[C_TS].max.u.ts_ns == noon + 1000000);
    CHECK(R[C_NTZ].has_min && R[C_NTZ].min.u.ts_ns == noon + 123000000);
    CHECK(R[C_NTZ].has_max && R[C_NTZ].max.u.ts_ns == noon + 124000000); /* finer text: floored first */
    CHECK(R[C_DATE].has_min && R[C_DATE].min.type == PQ_V_DATE && R[C_DATE].min.u.date == 19724);
    CHECK(R[C_DATE].max.u.date == 19725);
    /* a UTC timestamp without its zone, a local one with a zone, not a date */
    stats3("\"ts\":\"2024-01-01T12:00:00.000\",\"ntz\":\"2024-01-01T12:00:00.000Z\",\"dt\":\"2024-01-02T00:00\"",
           "\"ts\":\"yesterday\"", "");
    CHECK(!R[C_TS].has_min && !R[C_TS].has_max && !R[C_NTZ].has_min && !R[C_DATE].has_min);
    /* before 1970: still floored */
    stats3("", "\"ts\":\"1969-12-31T23:59:59.999Z\"", "");
    CHECK(R[C_TS].has_max && R[C_TS].max.u.ts_ns == 0);
}

static void test_strings(void)
{
    stats3("\"s\":\"apple\"", "\"s\":\"pear\"", "");
    CHECK(str_is(&R[C_S].min, "apple") && str_is(&R[C_S].max, "pear"));
    /* 32 bytes: maybe cut.  min loses its last character, max is the
     * successor of that prefix */
    const char *a32 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    char min[128], max[128];
    snprintf(min, sizeof min, "\"s\":\"%s\"", a32);
    snprintf(max, sizeof max, "\"s\":\"%s\"", a32);
    stats3(min, max, "");
    CHECK(str_is(&R[C_S].min, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    CHECK(str_is(&R[C_S].max, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"));
    /* a tie-breaker (U+FFFD, U+10FFFF, DEL) at the end: cut whatever the length */
    stats3("", "\"s\":\"abc\\ufffd\"", "");
    CHECK(str_is(&R[C_S].max, "abd"));
    stats3("", "\"s\":\"ab\\udbff\\udfff\"", "");
    CHECK(str_is(&R[C_S].max, "ac"));
    stats3("", "\"s\":\"ab\\u007f\"", "");
    CHECK(str_is(&R[C_S].max, "ac"));
    /* a multi-byte last character goes whole */
    stats3("", "\"s\":\"x\\u00e9\\ufffd\"", "");
    CHECK(R[C_S].max.u.s.len == 3 && !memcmp(R[C_S].max.u.s.ptr, "x\xc3\xaa", 3));
    /* one character cut: no successor of "" */
    stats3("\"s\":\"\\ufffd\"", "\"s\":\"\\ufffd\"", "");
    CHECK(!R[C_S].has_max && R[C_S].has_min && R[C_S].min.u.s.len == 0);
    /* a smaller prefix length from the table */
    pq_arena_reset(&A);
    const char *j = "{\"numRecords\":1,\"minValues\":{\"s\":\"abcd\"},\"maxValues\":{\"s\":\"abcd\"}}";
    pq_delta_stats_ranges(j, strlen(j), COLS, N_COLS, 4, &A, R);
    CHECK(str_is(&R[C_S].min, "abc") && str_is(&R[C_S].max, "abd"));
    /* binary and structs: null counts only */
    stats3("\"bin\":\"xx\",\"st\":{\"a\":1}", "\"bin\":\"yy\",\"st\":{\"a\":2}", "\"bin\":1,\"st\":{\"a\":0}");
    CHECK(R[C_BIN].known && !R[C_BIN].has_min && R[C_BIN].has_null_count && R[C_BIN].null_count == 1);
    CHECK(!R[C_ST].known && !R[C_PART].known);
}

static void test_counts(void)
{
    /* wide bounds: a null count only when 0 */
    CHECK(ranges("{\"numRecords\":4,\"tightBounds\":false,\"nullCount\":{\"id\":4,\"s\":0}}", 32) == 1);
    CHECK(!R[C_ID].known && R[C_S].has_null_count && R[C_S].null_count == 0);
    ranges("{\"numRecords\":4,\"tightBounds\":\"yes\",\"nullCount\":{\"id\":4}}", 32);
    CHECK(!R[C_ID].known);
    /* tight: every row null */
    ranges("{\"numRecords\":4,\"tightBounds\":true,\"nullCount\":{\"id\":4}}", 32);
    CHECK(R[C_ID].has_null_count && R[C_ID].null_count == 4 && R[C_ID].row_count == 4);
    /* more nulls than rows, negative: none */
    ranges("{\"numRecords\":4,\"nullCount\":{\"id\":5,\"s\":-1}}", 32);
    CHECK(!R[C_ID].known && !R[C_S].known);
    /* no rows: every column known empty */
    CHECK_EQ_INT(ranges("{\"numRecords\":0}", 32), N_COLS - 1);
    CHECK(R[C_D].known && R[C_D].row_count == 0);
    /* nothing without numRecords, JSON, an object, unique keys */
    CHECK_EQ_INT(ranges("{\"minValues\":{\"id\":1},\"maxValues\":{\"id\":1}}", 32), 0);
    CHECK_EQ_INT(ranges("{\"numRecords\":-1,\"minValues\":{\"id\":1}}", 32), 0);
    CHECK_EQ_INT(ranges("{\"numRecords\":1,\"minValues\":{\"id\":1}", 32), 0);
    CHECK_EQ_INT(ranges("[1]", 32), 0);
    CHECK_EQ_INT(ranges("{\"numRecords\":1,\"minValues\":{\"id\":1,\"id\":0}}", 32), 0);
    CHECK_EQ_INT(ranges(NULL, 32), 0);
    CHECK(!R[C_ID].known);
}

int main(void)
{
    pq_arena_init(&A, 4096);
    test_numbers();
    test_decimals();
    test_times();
    test_strings();
    test_counts();
    pq_arena_free(&A);
    return check_report();
}
