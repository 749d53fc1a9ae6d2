/* The CSV reader (csvread.h) and the CSV importer's parsing (csvimport.h).
 *
 * Reader: plain and quoted fields, doubled quotes, line breaks inside quotes,
 * CRLF, a last record without a line end, empty lines, NULL (empty unquoted)
 * vs "" (quoted), the BOM, a bare quote inside an unquoted field, line
 * numbers, records across the 1 MiB read blocks and longer than one, and the
 * errors.  Importer: the types inference picks, a round trip through the file
 * writer and the reader (NULL vs "", row groups, sorting), and values that do
 * not fit a given schema, named by line and column. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "column.h"
#include "csvimport.h"
#include "csvread.h"
#include "footer.h"
#include "rowgroup.h"

#define MIB ((size_t)1 << 20)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static bool contains(const char *msg, const char *part)
{
    return strstr(msg, part) != NULL;
}

/* ------------------------------------------------------------------ reading to text */

/* Every record of `data` as text: "LINE:" then each field, [text] when
 * unquoted and <text> when quoted (line breaks shown as \n and \r), then
 * ';'.  An error ends the text with "ERR" and is left in *err (cls
 * PQ_E_NONE when there was none).  *offset gets pq_csv_offset at the end. */
static char *render(const char *data, size_t len, pq_error *err, uint64_t *offset)
{
    pq_buf out;
    pq_buf_init(&out);
    pq_error_clear(err);
    err->cls = PQ_E_NONE;
    pq_file *f = NULL;
    pq_csv_reader *r = NULL;
    if (pq_file_open_mem("t.csv", data, len, &f, err) != PQ_OK || pq_csv_open(f, "t.csv", &r, err) != PQ_OK) {
        pq_buf_puts(&out, "ERR");
    } else {
        for (;;) {
            const pq_csv_text *fl;
            int32_t nf;
            if (pq_csv_next(r, &fl, &nf, err) != PQ_OK) {
                pq_buf_puts(&out, "ERR");
                break;
            }
            if (nf == 0) break;
            pq_buf_printf(&out, "%lld:", (long long)pq_csv_line(r));
            for (int32_t i = 0; i < nf; i++) {
                pq_buf_puts(&out, fl[i].quoted ? "<" : "[");
                for (uint32_t k = 0; k < fl[i].len; k++) {
                    char c = fl[i].p[k];
                    if (c == '\n') pq_buf_puts(&out, "\\n");
                    else if (c == '\r') pq_buf_puts(&out, "\\r");
                    else pq_buf_append(&out, &c, 1);
                }
                pq_buf_puts(&out, fl[i].quoted ? ">" : "]");
            }
            pq_buf_puts(&out, ";");
        }
        if (offset) *offset = pq_csv_offset(r);
    }
    pq_buf_append(&out, "", 1);
    pq_csv_free(r);
    if (f) pq_file_close(f);
    return out.data;
}

/* Reads `s` and compares the records with `want`; no error expected. */
#define CHECK_CSV(s, want)                                                                                     \
    do {                                                                                                       \
        pq_error e_;                                                                                           \
        char *got_ = render((s), strlen(s), &e_, NULL);                                                        \
        CHECK_EQ_STR(got_, (want));                                                                            \
        if (e_.cls != PQ_E_NONE) fprintf(stderr, "  error: %s\n", e_.msg);                                     \
        free(got_);                                                                                            \
    } while (0)

static void test_plain(void)
{
    CHECK_CSV("a,b,c\n1,2,3\n", "1:[a][b][c];2:[1][2][3];");
    CHECK_CSV("", "");
    CHECK_CSV("x", "1:[x];");
    /* Spaces are content, not trimmed. */
    CHECK_CSV(" a , b \n", "1:[ a ][ b ];");
    /* CRLF line ends are not part of the last field. */
    CHECK_CSV("a,b\r\n1,2\r\n", "1:[a][b];2:[1][2];");
    /* A final record without a line end (LF, CRLF before it, a lone CR). */
    CHECK_CSV("a,b\n1,2", "1:[a][b];2:[1][2];");
    CHECK_CSV("a,b\r\n1,\"2\"", "1:[a][b];2:[1]<2>;");
    /* An empty line is one empty unquoted field; trailing commas are fields. */
    CHECK_CSV("a\n\nb\n", "1:[a];2:[];3:[b];");
    CHECK_CSV("a\r\n\r\nb\r\n", "1:[a];2:[];3:[b];");
    CHECK_CSV("a,\n,\n", "1:[a][];2:[][];");
    /* The offset counts every byte consumed. */
    pq_error e;
    uint64_t off = 0;
    const char *s = "a,b\r\n1,\"x\ny\"\n\n3,4";
    char *got = render(s, strlen(s), &e, &off);
    CHECK_EQ_STR(got, "1:[a][b];2:[1]<x\\ny>;4:[];5:[3][4];");
    CHECK_EQ_INT(off, strlen(s));
    free(got);
}

static void test_quoted(void)
{
    /* Commas, doubled quotes, \n and \r\n inside quotes. */
    CHECK_CSV("\"a,b\",\"he said \"\"hi\"\"\",\"l1\nl2\",\"c1\r\nc2\"\nx,y,z,w\n",
              "1:<a,b><he said \"hi\"><l1\\nl2><c1\\r\\nc2>;4:[x][y][z][w];");
    /* Only quotes, a quote at each end, an empty quoted field at the end. */
    CHECK_CSV("\"\"\"\"\"\",\"\"\"x\"\"\",\"\"\n", "1:<\"\"><\"x\"><>;");
    /* A CR inside quotes stays; the CR of the line end does not. */
    CHECK_CSV("\"a\r\"\r\n\"\r\"\n", "1:<a\\r>;2:<\\r>;");
    /* NULL (empty, unquoted) and "" (quoted empty) are told apart. */
    pq_file *f;
    pq_error e;
    const char *s = "a,,\"\",b\n";
    CHECK(pq_file_open_mem("m", s, strlen(s), &f, &e) == PQ_OK);
    pq_csv_reader *r;
    CHECK(pq_csv_open(f, "m", &r, &e) == PQ_OK);
    const pq_csv_text *fl;
    int32_t nf = -1;
    CHECK(pq_csv_next(r, &fl, &nf, &e) == PQ_OK);
    CHECK_EQ_INT(nf, 4);
    if (nf == 4) {
        CHECK(!fl[0].quoted && fl[0].len == 1);
        CHECK(!fl[1].quoted && fl[1].len == 0);
        CHECK(fl[2].quoted && fl[2].len == 0);
        CHECK(!fl[3].quoted && fl[3].len == 1 && fl[3].p[0] == 'b');
    }
    CHECK(pq_csv_next(r, &fl, &nf, &e) == PQ_OK);
    CHECK_EQ_INT(nf, 0);
    /* The end stays the end. */
    CHECK(pq_csv_next(r, &fl, &nf, &e) == PQ_OK);
    CHECK_EQ_INT(nf, 0);
    pq_csv_free(r);
    pq_file_close(f);
}

static void test_bom_and_bare_quotes(void)
{
    CHECK_CSV("\xEF\xBB\xBF" "a,b\n1,2\n", "1:[a][b];2:[1][2];");
    CHECK_CSV("\xEF\xBB\xBF\"q\",x\n", "1:<q>[x];");
    CHECK_CSV("\xEF\xBB\xBF", "");
    /* Only at the start, and only the whole mark. */
    CHECK_CSV("a\n\xEF\xBB\xBF" "b\n", "1:[a];2:[\xEF\xBB\xBF" "b];");
    CHECK_CSV("\xEF\xBB" "a\n", "1:[\xEF\xBB" "a];");
    /* A quote inside an unquoted field is kept as is, however many there are
     * and whatever follows them on later lines. */
    CHECK_CSV("h\n5'11\"\n", "1:[h];2:[5'11\"];");
    CHECK_CSV("h,w\n5'11\",x\n6'0\",y\n", "1:[h][w];2:[5'11\"][x];3:[6'0\"][y];");
    CHECK_CSV("a\"b,\"c,d\"\n", "1:[a\"b]<c,d>;");
    CHECK_CSV("x\"\"y,z\n1,2\n", "1:[x\"\"y][z];2:[1][2];");
}

static void test_lines(void)
{
    CHECK_CSV("a\n\"x\ny\nz\",b\nc\n", "1:[a];2:<x\\ny\\nz>[b];5:[c];");
    CHECK_CSV("a\r\n\"x\r\ny\"\r\n\r\n\"\n\n\"\r\nc", "1:[a];2:<x\\r\\ny>;4:[];5:<\\n\\n>;8:[c];");
}

/* ------------------------------------------------------------------ a model of records */

typedef struct mfield {
    size_t off;
    uint32_t len;
    bool quoted;
} mfield;

typedef struct mrec {
    size_t first;
    int32_t n;
    int64_t line;
} mrec;

/* Records with known fields and lines, and their CSV text. */
typedef struct model {
    pq_buf csv;
    pq_buf content;            /* the fields' text, back to back */
    mfield *fields;
    size_t n_fields, cap_fields;
    mrec *recs;
    size_t n_recs, cap_recs;
    int64_t line;              /* of the next record */
    int64_t rec_breaks;        /* line breaks inside quotes in the open record */
} model;

static void model_init(model *m)
{
    memset(m, 0, sizeof *m);
    pq_buf_init(&m->csv);
    pq_buf_init(&m->content);
    m->line = 1;
}

static void model_free(model *m)
{
    pq_buf_free(&m->csv);
    pq_buf_free(&m->content);
    free(m->fields);
    free(m->recs);
}

static void model_begin(model *m)
{
    if (m->n_recs == m->cap_recs) {
        m->cap_recs = m->cap_recs ? m->cap_recs * 2 : 256;
        m->recs = realloc(m->recs, sizeof *m->recs * m->cap_recs);
        if (!m->recs) abort();
    }
    m->recs[m->n_recs++] = (mrec){m->n_fields, 0, m->line};
    m->rec_breaks = 0;
}

/* Adds a field to the open record; unquoted text must hold no ',', '\r' or
 * '\n' and not start with '"'. */
static void model_field(model *m, const char *p, size_t n, bool quoted)
{
    mrec *r = &m->recs[m->n_recs - 1];
    if (m->n_fields == m->cap_fields) {
        m->cap_fields = m->cap_fields ? m->cap_fields * 2 : 1024;
        m->fields = realloc(m->fields, sizeof *m->fields * m->cap_fields);
        if (!m->fields) abort();
    }
    m->fields[m->n_fields++] = (mfield){m->content.len, (uint32_t)n, quoted};
    r->n++;
    if (pq_buf_append(&m->content, p, n) != 0) abort();
    if (r->n > 1) pq_buf_append(&m->csv, ",", 1);
    if (!quoted) {
        pq_buf_append(&m->csv, p, n);
        return;
    }
    if (pq_buf_reserve(&m->csv, 2 * n + 2) != 0) abort();
    pq_buf_append(&m->csv, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"') pq_buf_append(&m->csv, "\"", 1);
        if (p[i] == '\n') m->rec_breaks++;
        pq_buf_append(&m->csv, &p[i], 1);
    }
    pq_buf_append(&m->csv, "\"", 1);
}

static void model_end(model *m, const char *term)
{
    pq_buf_puts(&m->csv, term);
    m->line += m->rec_breaks + 1;
}

static void model_record1(model *m, const char *p, bool quoted, const char *term)
{
    model_begin(m);
    model_field(m, p, strlen(p), quoted);
    model_end(m, term);
}

/* Filler records up to exactly `target` bytes of CSV. */
static void model_pad_to(model *m, size_t target)
{
    static char xs[1001];
    memset(xs, 'x', 1000);
    while (m->csv.len < target) {
        size_t gap = target - m->csv.len;
        size_t n = gap > 1001 ? 1000 : gap - 1;
        xs[n] = '\0';
        model_record1(m, xs, false, "\n");
        xs[n] = 'x';
    }
}

/* Reads the model's CSV and compares every record; returns the mismatches. */
static int model_check(const model *m, const char *what)
{
    pq_file *f;
    pq_csv_reader *r;
    pq_error e;
    int bad = 0;
    if (pq_file_open_mem("m.csv", m->csv.data, m->csv.len, &f, &e) != PQ_OK) return 1;
    if (pq_csv_open(f, "m.csv", &r, &e) != PQ_OK) {
        pq_file_close(f);
        return 1;
    }
    size_t i = 0;
    for (;; i++) {
        const pq_csv_text *fl;
        int32_t nf;
        if (pq_csv_next(r, &fl, &nf, &e) != PQ_OK) {
            fprintf(stderr, "%s: record %zu: %s\n", what, i, e.msg);
            bad++;
            break;
        }
        if (nf == 0) break;
        if (i >= m->n_recs) {
            bad++;
            continue;
        }
        const mrec *want = &m->recs[i];
        int rec_bad = 0;
        if (nf != want->n || pq_csv_line(r) != want->line) rec_bad++;
        for (int32_t k = 0; !rec_bad && k < nf; k++) {
            const mfield *w = &m->fields[want->first + (size_t)k];
            if (fl[k].len != w->len || fl[k].quoted != w->quoted ||
                (w->len && memcmp(fl[k].p, m->content.data + w->off, w->len) != 0))
                rec_bad++;
        }
        if (rec_bad && bad < 3)
            fprintf(stderr, "%s: record %zu (line %lld): %d fields on line %lld differ from the model\n", what, i,
                    (long long)want->line, nf, (long long)pq_csv_line(r));
        bad += rec_bad;
    }
    if (i != m->n_recs) {
        fprintf(stderr, "%s: %zu records, the model has %zu\n", what, i, m->n_recs);
        bad++;
    }
    if (!bad && pq_csv_offset(r) != m->csv.len) bad++;
    pq_csv_free(r);
    pq_file_close(f);
    return bad;
}

/* A record placed so that a block boundary (a multiple of 1 MiB) falls k
 * bytes into it; `at` names the bytes that must straddle the boundary. */
typedef struct straddle {
    const char *f[3];
    bool q[3];
    int n;
    const char *term;
    size_t k;
    const char *at;            /* csv[B - 1], csv[B] */
} straddle;

static const straddle straddles[] = {
    {{"ab\"cd", "z"}, {true, false}, 2, "\n", 4, "\"\""},     /* between the quotes of "" */
    {{"p", "q"}, {false, false}, 2, "\r\n", 4, "\r\n"},       /* between CR and LF of the line end */
    {{"x\r\ny"}, {true}, 1, "\n", 3, "\r\n"},                 /* CRLF inside quotes */
    {{"q", "r"}, {true, false}, 2, "\n", 0, "\n\""},          /* the record starts at the boundary */
    {{"ab", "c"}, {true, false}, 2, "\n", 4, "\","},          /* after the closing quote */
    {{"ab", "c"}, {true, false}, 2, "\n", 3, "b\""},          /* before the closing quote */
    {{"ab", "c"}, {true, false}, 2, "\n", 1, "\"a"},          /* after the opening quote */
    {{"lo\nng", "e"}, {true, false}, 2, "\r\n", 9, "e\r"},    /* before the line end */
    {{"u", "v"}, {false, true}, 2, "\n", 2, ",\""},             /* at the start of the second field */
    {{"\"", "\"\""}, {true, true}, 2, "\n", 11, "\"\n"},      /* before the LF, after quotes only */
};

static void test_block_boundaries(void)
{
    size_t n_st = sizeof straddles / sizeof straddles[0];
    for (size_t s = 0; s < n_st; s += 2) {
        model m;
        model_init(&m);
        model_record1(&m, "head", false, "\n");
        for (size_t j = 0; j < 2 && s + j < n_st; j++) {
            const straddle *st = &straddles[s + j];
            size_t b = MIB * (j + 1);
            model_pad_to(&m, b - st->k);
            model_begin(&m);
            for (int k = 0; k < st->n; k++) model_field(&m, st->f[k], strlen(st->f[k]), st->q[k]);
            model_end(&m, st->term);
            CHECK(m.csv.len > b && m.csv.data[b - 1] == st->at[0] && m.csv.data[b] == st->at[1]);
        }
        model_record1(&m, "a\"\"b", true, "\r\n");
        model_record1(&m, "tail", false, "");
        char what[64];
        snprintf(what, sizeof what, "straddles %zu and %zu", s, s + 1);
        CHECK(m.csv.len > 2 * MIB);
        CHECK_EQ_INT(model_check(&m, what), 0);
        model_free(&m);
    }
}

/* One quoted field of 3 MiB (commas, quotes, line breaks), between records. */
static void test_long_record(void)
{
    size_t n = 3 * MIB + 12345;
    char *big = malloc(n);
    if (!big) abort();
    for (size_t i = 0; i < n; i++) {
        uint32_t x = next_rand() % 64;
        big[i] = x == 0 ? '"' : x == 1 ? ',' : x == 2 ? '\n' : x == 3 ? '\r' : (char)('a' + x % 26);
    }
    model m;
    model_init(&m);
    model_record1(&m, "id", false, "\r\n");
    model_begin(&m);
    model_field(&m, "1", 1, false);
    model_field(&m, big, n, true);
    model_field(&m, "end", 3, false);
    model_end(&m, "\r\n");
    model_record1(&m, "after", false, "\n");
    CHECK(m.csv.len > 3 * MIB);
    CHECK(m.recs[2].line > 1000); /* the lines inside count */
    CHECK_EQ_INT(model_check(&m, "a 3 MiB field"), 0);
    model_free(&m);

    /* The same as an unquoted field (no separators in it). */
    for (size_t i = 0; i < n; i++) big[i] = (char)('a' + i % 26);
    model_init(&m);
    model_record1(&m, "h", false, "\n");
    model_begin(&m);
    model_field(&m, big, n, false);
    model_end(&m, "");
    CHECK_EQ_INT(model_check(&m, "a 3 MiB unquoted field"), 0);
    model_free(&m);
    free(big);
}

/* Random records of random fields, a few of them long: about 3.5 MiB. */
static void test_random_records(void)
{
    static const char qchars[] = "ab,\"\n\r x";
    static const char uchars[] = "abcxyz0189 '.-";
    model m;
    model_init(&m);
    char *tmp = malloc(1536 * 1024);
    if (!tmp) abort();
    while (m.csv.len < 3 * MIB + MIB / 2) {
        model_begin(&m);
        int nf = 1 + (int)(next_rand() % 6);
        for (int k = 0; k < nf; k++) {
            bool quoted = next_rand() % 3 != 0;
            uint32_t x = next_rand() % 1000;
            size_t len = !quoted || x < 900 ? next_rand() % 40 : x < 995 ? 1000 + next_rand() % 20000
                                                                          : 200000 + next_rand() % 1300000;
            for (size_t i = 0; i < len; i++)
                tmp[i] = quoted ? qchars[next_rand() % (sizeof qchars - 1)] : uchars[next_rand() % (sizeof uchars - 1)];
            model_field(&m, tmp, len, quoted);
        }
        model_end(&m, next_rand() % 2 ? "\r\n" : "\n");
    }
    model_record1(&m, "last", true, "");
    uint32_t longest = 0;
    for (size_t i = 0; i < m.n_fields; i++)
        if (m.fields[i].len > longest) longest = m.fields[i].len;
    CHECK(m.n_recs > 150 && longest > 200000);
    CHECK_EQ_INT(model_check(&m, "random records"), 0);
    model_free(&m);
    free(tmp);
}

/* ------------------------------------------------------------------ reader errors */

static void check_error(const char *data, size_t len, const char *want_prefix, const char *part1, const char *part2)
{
    pq_error e;
    char *got = render(data, len, &e, NULL);
    size_t pl = strlen(want_prefix);
    CHECK(strncmp(got, want_prefix, pl) == 0 && strcmp(got + pl, "ERR") == 0);
    CHECK_EQ_INT(e.cls, PQ_E_USAGE);
    CHECK(contains(e.msg, "t.csv"));
    CHECK(contains(e.msg, part1));
    CHECK(contains(e.msg, part2));
    if (strncmp(got, want_prefix, pl) != 0 || !contains(e.msg, part1) || !contains(e.msg, part2))
        fprintf(stderr, "  got %.200s / %s\n", got, e.msg);
    free(got);
}

static void test_reader_errors(void)
{
    const char *s1 = "a,b\n1,\"xy\nz\n";
    check_error(s1, strlen(s1), "1:[a][b];", "line 2", "not closed");
    const char *s2 = "a\n\"x\"\"\n";
    check_error(s2, strlen(s2), "1:[a];", "line 2", "not closed");
    const char *s3 = "a,b\n\"ab\"x,1\n";
    check_error(s3, strlen(s3), "1:[a][b];", "line 2", "after a closing quote");
    const char *s4 = "a,b\n\"x\ny\",\"z\"w\n";
    check_error(s4, strlen(s4), "1:[a][b];", "line 2", "field 2");
    const char *s5 = "a\n\"q\" \n";
    check_error(s5, strlen(s5), "1:[a];", "line 2", "after a closing quote");
    /* A quote left open at the end of 2 MiB of input: the line it opened on. */
    size_t n = 2 * MIB + 100;
    char *big = malloc(n);
    if (!big) abort();
    memcpy(big, "h\n1\n2\n\"", 7);
    for (size_t i = 7; i < n; i++) big[i] = i % 100 == 0 ? '\n' : 'y';
    check_error(big, n, "1:[h];2:[1];3:[2];", "line 4", "not closed");
    free(big);
}

/* ------------------------------------------------------------------ importer */

static int buf_sink(void *ctx, const char *data, size_t len, pq_error *err)
{
    (void)err;
    return pq_buf_append(ctx, data, len) ? PQ_ERR : PQ_OK;
}

static int infer_text(const char *csv, pq_csv_schema *s, pq_error *err)
{
    pq_file *f;
    if (pq_file_open_mem("in.csv", csv, strlen(csv), &f, err) != PQ_OK) return PQ_ERR;
    int rc = pq_csv_infer(f, "in.csv", s, err);
    pq_file_close(f);
    return rc;
}

static int import_text(const char *csv, const pq_schema_element *el, int32_t n_el, const pq_import_opts *o,
                       pq_buf *file, int64_t *rows, pq_error *err)
{
    pq_file *f;
    pq_error_clear(err);
    if (pq_file_open_mem("in.csv", csv, strlen(csv), &f, err) != PQ_OK) return PQ_ERR;
    pq_sink sink = {buf_sink, file};
    int rc = pq_csv_import(f, "in.csv", el, n_el, o, &sink, rows, err);
    pq_file_close(f);
    return rc;
}

static const pq_schema_element *find_el(const pq_csv_schema *s, const char *name)
{
    for (int32_t i = 1; i < s->n_elements; i++)
        if (strcmp(s->elements[i].name, name) == 0) return &s->elements[i];
    return NULL;
}

enum { T_INT64, T_DOUBLE, T_BOOL, T_DATE, T_TS_US, T_TS_NS, T_TS_US_UTC, T_TS_NS_UTC, T_STRING };

/* Whether the element is the type inference would give for `t`. */
static bool is_type(const pq_schema_element *e, int t)
{
    if (!e || !e->has_type || !e->has_repetition || e->repetition != PQ_OPTIONAL) return false;
    bool lg = e->has_logical;
    switch (t) {
    case T_INT64: return e->type == PQ_INT64 && (!lg || e->logical.kind == PQ_LT_NONE);
    case T_DOUBLE: return e->type == PQ_DOUBLE && (!lg || e->logical.kind == PQ_LT_NONE);
    case T_BOOL: return e->type == PQ_BOOLEAN && (!lg || e->logical.kind == PQ_LT_NONE);
    case T_DATE: return e->type == PQ_INT32 && lg && e->logical.kind == PQ_LT_DATE;
    case T_TS_US:
    case T_TS_NS:
    case T_TS_US_UTC:
    case T_TS_NS_UTC:
        return e->type == PQ_INT64 && lg && e->logical.kind == PQ_LT_TIMESTAMP &&
               e->logical.unit == (t == T_TS_US || t == T_TS_US_UTC ? PQ_UNIT_MICROS : PQ_UNIT_NANOS) &&
               e->logical.utc == (t == T_TS_US_UTC || t == T_TS_NS_UTC);
    case T_STRING: return e->type == PQ_BYTE_ARRAY && lg && e->logical.kind == PQ_LT_STRING;
    }
    return false;
}

/* `csv` (one column `col`, two rows) is inferred as STRING and imports with
 * the types inferred. */
static void check_inferred_imports(const char *csv, const char *col)
{
    pq_csv_schema s;
    pq_error e;
    CHECK(infer_text(csv, &s, &e) == PQ_OK);
    CHECK(is_type(find_el(&s, col), T_STRING));
    if (s.n_elements == 2) {
        pq_import_opts o;
        pq_import_opts_init(&o);
        pq_buf file;
        pq_buf_init(&file);
        int64_t rows = -1;
        int rc = import_text(csv, s.elements, s.n_elements, &o, &file, &rows, &e);
        CHECK(rc == PQ_OK && rows == 2);
        if (rc != PQ_OK) fprintf(stderr, "  %s\n", e.msg);
        pq_buf_free(&file);
    }
    pq_csv_schema_free(&s);
}

static void test_infer(void)
{
    const char *csv =
        "i,d,b,bi,dt,tu,tn,tz,tzn,tm,dts,nul,q,s\n"
        "1,1,true,0,2024-01-01,2024-01-01 10:00:00,2024-01-01 10:00:00.1234567,2024-01-01 10:00:00Z,"
        "2024-01-01 10:00:00.000000001Z,2024-01-01 10:00:00,2024-01-01,,1,x\n"
        "-5,1.5,false,1,2023-12-31,2024-01-01T10:00:00.123456,2024-01-01 10:00:00,2024-01-01 10:00:00+00,"
        "2024-01-01 10:00:00+01:30,2024-01-01 10:00:00+00,2024-01-01 10:00:00,,\"\",1\n"
        ",nan,TRUE,1,,,,,,,,,3,\n"
        "7,inf,False,0,2000-02-29,2024-01-01 10:00,2024-01-01 10:00:00.5,2024-01-01T10:00:00.5-02,"
        ",,,,4,\"\"\n"
        "9223372036854775807,-inf,,,,,,,,,,,,\n";
    pq_csv_schema s;
    pq_error e;
    CHECK(infer_text(csv, &s, &e) == PQ_OK);
    CHECK_EQ_INT(s.n_elements, 15);
    if (s.n_elements == 15) {
        CHECK(s.elements[0].has_num_children && s.elements[0].num_children == 14 && !s.elements[0].has_type);
        CHECK_EQ_STR(s.elements[1].name, "i");
        CHECK_EQ_STR(s.elements[14].name, "s");
    }
    CHECK(is_type(find_el(&s, "i"), T_INT64));
    CHECK(is_type(find_el(&s, "d"), T_DOUBLE));
    CHECK(is_type(find_el(&s, "b"), T_BOOL));
    CHECK(is_type(find_el(&s, "bi"), T_INT64));
    CHECK(is_type(find_el(&s, "dt"), T_DATE));
    CHECK(is_type(find_el(&s, "tu"), T_TS_US));
    CHECK(is_type(find_el(&s, "tn"), T_TS_NS));
    CHECK(is_type(find_el(&s, "tz"), T_TS_US_UTC));
    CHECK(is_type(find_el(&s, "tzn"), T_TS_NS_UTC));
    CHECK(is_type(find_el(&s, "tm"), T_STRING));  /* an offset on some values only */
    CHECK(is_type(find_el(&s, "dts"), T_TS_US));  /* dates and timestamps */
    CHECK(is_type(find_el(&s, "nul"), T_STRING)); /* only NULLs */
    CHECK(is_type(find_el(&s, "q"), T_STRING));   /* "" among integers */
    CHECK(is_type(find_el(&s, "s"), T_STRING));
    pq_csv_schema_free(&s);

    /* An integer too large for INT64 makes the column DOUBLE; 1e3 too. */
    CHECK(infer_text("a,b\n1,1\n9223372036854775808,1e3\n", &s, &e) == PQ_OK);
    CHECK(is_type(find_el(&s, "a"), T_DOUBLE));
    CHECK(is_type(find_el(&s, "b"), T_DOUBLE));
    pq_csv_schema_free(&s);

    /* A leading zero before a digit keeps a column STRING (zip codes keep
     * their zeros, as DuckDB's sniffer does); 0, 0.5 and -01 are numbers. */
    CHECK(infer_text("zip,dec,zero,half,neg\n00123,01.5,0,0.5,-01\n02134,2,10,1,5\n", &s, &e) == PQ_OK);
    CHECK(is_type(find_el(&s, "zip"), T_STRING));
    CHECK(is_type(find_el(&s, "dec"), T_STRING));
    CHECK(is_type(find_el(&s, "zero"), T_INT64));
    CHECK(is_type(find_el(&s, "half"), T_DOUBLE));
    CHECK(is_type(find_el(&s, "neg"), T_INT64));
    pq_csv_schema_free(&s);

    /* A header alone: every column STRING.  One column: a blank line is a
     * NULL row, not skipped, and does not change the type. */
    CHECK(infer_text("x,y\r\n", &s, &e) == PQ_OK);
    CHECK(s.n_elements == 3 && is_type(find_el(&s, "x"), T_STRING) && is_type(find_el(&s, "y"), T_STRING));
    pq_csv_schema_free(&s);
    CHECK(infer_text("\xEF\xBB\xBFn\n1\n\n2\n", &s, &e) == PQ_OK);
    CHECK(s.n_elements == 2 && is_type(find_el(&s, "n"), T_INT64));
    pq_csv_schema_free(&s);

    /* Errors name the file and the line. */
    CHECK(infer_text("a,b\n1,2\n3\n", &s, &e) == PQ_ERR);
    CHECK_EQ_INT(e.cls, PQ_E_USAGE);
    CHECK(contains(e.msg, "in.csv") && contains(e.msg, "line 3"));
    CHECK(s.elements == NULL && s.n_elements == 0);
    CHECK(infer_text("a,b\n\"1\n2\",3\n4,5,6\n", &s, &e) == PQ_ERR);
    CHECK(contains(e.msg, "line 4") && contains(e.msg, "3 fields"));
    CHECK(infer_text("a,,b\n", &s, &e) == PQ_ERR);
    CHECK(e.cls == PQ_E_USAGE && contains(e.msg, "line 1") && contains(e.msg, "column 2"));
    CHECK(infer_text("a,b,a\n", &s, &e) == PQ_ERR);
    CHECK(e.cls == PQ_E_USAGE && contains(e.msg, "'a' appears twice"));
    CHECK(infer_text("", &s, &e) == PQ_ERR);
    CHECK(e.cls == PQ_E_USAGE && contains(e.msg, "header"));
    CHECK(infer_text("a\n\"open\n", &s, &e) == PQ_ERR);
    CHECK(e.cls == PQ_E_USAGE && contains(e.msg, "line 2"));
}

/* Column `leaf` of a written file as "v|v|NULL|..." (strings quoted with ''). */
static char *column_text(const pq_buf *file, int32_t leaf, pq_footer **ft_out)
{
    pq_buf out;
    pq_buf_init(&out);
    pq_file *f = NULL;
    pq_footer *ft = NULL;
    pq_error e;
    if (pq_file_open_mem("out", file->data, file->len, &f, &e) != PQ_OK || pq_footer_read(f, &ft, &e) != PQ_OK) {
        pq_buf_printf(&out, "ERR %s", e.msg);
    } else {
        for (int32_t g = 0; g < ft->meta.n_row_groups; g++) {
            pq_rg_reader *rg;
            if (pq_rg_open(f, ft, g, &leaf, 1, &rg, &e) != PQ_OK) {
                pq_buf_printf(&out, "ERR %s", e.msg);
                break;
            }
            pq_col_reader *cr = pq_rg_column(rg, leaf);
            pq_phys phys = ft->schema.leaves[leaf].node->phys;
            while (pq_col_position(cr) < rg->num_rows) {
                pq_col_batch b;
                if (pq_col_read(cr, 3, &b, &e) != PQ_OK || b.n_rows == 0) {
                    pq_buf_printf(&out, "ERR %s", e.msg);
                    break;
                }
                int32_t v = 0;
                for (int32_t i = 0; i < b.n_rows; i++) {
                    if (out.len) pq_buf_puts(&out, "|");
                    if (b.def && !b.def[i]) {
                        pq_buf_puts(&out, "NULL");
                        continue;
                    }
                    if (phys == PQ_INT64) pq_buf_printf(&out, "%lld", (long long)((const int64_t *)b.values)[v]);
                    else if (phys == PQ_DOUBLE) pq_buf_printf(&out, "%g", ((const double *)b.values)[v]);
                    else if (phys == PQ_BYTE_ARRAY) {
                        const pq_bytes *x = &((const pq_bytes *)b.values)[v];
                        pq_buf_printf(&out, "'%.*s'", (int)x->len, (const char *)x->ptr);
                    } else pq_buf_puts(&out, "?");
                    v++;
                }
            }
            pq_rg_close(rg);
        }
    }
    pq_buf_append(&out, "", 1);
    if (ft_out) *ft_out = ft;
    else pq_footer_free(ft);
    if (f) pq_file_close(f);
    return out.data;
}

static void test_import_round_trip(void)
{
    const char *csv = "k,s,v\n"
                      "3,x,1.5\n"
                      ",\"\",2\n"
                      "1,,nan\n"
                      "\n" /* a blank line between records: skipped */
                      "2,\"a,b\",\n"
                      "5,\"q\"\"q\",-1\r\n";
    pq_csv_schema s;
    pq_error e;
    CHECK(infer_text(csv, &s, &e) == PQ_OK);
    CHECK(s.n_elements == 4 && is_type(&s.elements[1], T_INT64) && is_type(&s.elements[2], T_STRING) &&
          is_type(&s.elements[3], T_DOUBLE));
    for (int sorted = 0; sorted < 2 && s.n_elements == 4; sorted++) {
        pq_import_opts o;
        pq_import_opts_init(&o);
        o.row_group_rows = 2;
        o.threads = 2;
        const char *by[] = {"k"};
        if (sorted) {
            o.sort_by = by;
            o.n_sort_by = 1;
        }
        pq_buf file;
        pq_buf_init(&file);
        int64_t rows = -1;
        CHECK(import_text(csv, s.elements, s.n_elements, &o, &file, &rows, &e) == PQ_OK);
        CHECK_EQ_INT(rows, 5);
        pq_footer *ft = NULL;
        char *k = column_text(&file, 0, &ft);
        char *sv = column_text(&file, 1, NULL);
        char *v = column_text(&file, 2, NULL);
        CHECK(ft != NULL);
        if (ft) {
            CHECK_EQ_INT(ft->meta.num_rows, 5);
            CHECK_EQ_INT(ft->meta.n_row_groups, 3);
            int bad = 0;
            for (int32_t g = 0; g < ft->meta.n_row_groups; g++) {
                const pq_row_group *rg = &ft->meta.row_groups[g];
                if (rg->num_rows != (g < 2 ? 2 : 1)) bad++;
                if (sorted && (rg->n_sorting != 1 || rg->sorting[0].column_idx != 0 || rg->sorting[0].descending ||
                               rg->sorting[0].nulls_first))
                    bad++;
                if (!sorted && rg->n_sorting > 0) bad++;
            }
            CHECK_EQ_INT(bad, 0);
        }
        if (!sorted) {
            CHECK_EQ_STR(k, "3|NULL|1|2|5");
            CHECK_EQ_STR(sv, "'x'|''|NULL|'a,b'|'q\"q'");
            CHECK_EQ_STR(v, "1.5|2|nan|NULL|-1");
        } else {
            CHECK_EQ_STR(k, "1|2|3|5|NULL");
            CHECK_EQ_STR(sv, "NULL|'a,b'|'x'|'q\"q'|''");
            CHECK_EQ_STR(v, "nan|NULL|1.5|-1|2");
        }
        free(k);
        free(sv);
        free(v);
        pq_footer_free(ft);
        pq_buf_free(&file);
    }
    pq_csv_schema_free(&s);
}

/* A flat schema of up to 4 columns, all optional unless marked. */
typedef struct test_schema {
    pq_schema_element el[5];
    int32_t n;
} test_schema;

static void ts_init(test_schema *t)
{
    memset(t, 0, sizeof *t);
    t->el[0].name = "schema";
    t->el[0].has_num_children = true;
    t->el[0].converted_type = PQ_CT_NONE;
    t->n = 1;
}

static pq_schema_element *ts_add(test_schema *t, const char *name, pq_phys phys, bool required)
{
    pq_schema_element *e = &t->el[t->n++];
    e->name = name;
    e->has_type = true;
    e->type = phys;
    e->has_repetition = true;
    e->repetition = required ? PQ_REQUIRED : PQ_OPTIONAL;
    e->converted_type = PQ_CT_NONE;
    t->el[0].num_children = t->n - 1;
    return e;
}

/* Imports `csv` into `t`; returns the rc and leaves the error in *e. */
static int import_into(const test_schema *t, const char *csv, int64_t *rows, pq_error *e)
{
    pq_import_opts o;
    pq_import_opts_init(&o);
    o.threads = 1;
    pq_buf file;
    pq_buf_init(&file);
    int rc = import_text(csv, t->el, t->n, &o, &file, rows, e);
    pq_buf_free(&file);
    return rc;
}

static void check_import_error(const test_schema *t, const char *csv, const char *part1, const char *part2)
{
    pq_error e;
    int64_t rows = -1;
    CHECK(import_into(t, csv, &rows, &e) == PQ_ERR);
    CHECK_EQ_INT(e.cls, PQ_E_USAGE);
    CHECK(contains(e.msg, "in.csv"));
    CHECK(contains(e.msg, part1));
    CHECK(contains(e.msg, part2));
    CHECK_EQ_INT(rows, 0);
    if (!contains(e.msg, part1) || !contains(e.msg, part2)) fprintf(stderr, "  got: %s\n", e.msg);
}

static void check_import_ok(const test_schema *t, const char *csv, int64_t want_rows)
{
    pq_error e;
    int64_t rows = -1;
    int rc = import_into(t, csv, &rows, &e);
    CHECK(rc == PQ_OK);
    CHECK_EQ_INT(rows, want_rows);
    if (rc != PQ_OK) fprintf(stderr, "  import failed: %s\n", e.msg);
}

static void test_import_errors(void)
{
    test_schema t;
    ts_init(&t);
    ts_add(&t, "a", PQ_INT64, false);
    ts_add(&t, "s", PQ_BYTE_ARRAY, false);
    check_import_ok(&t, "a,s\n1,x\n-2,\"y\nz\"\n", 2);
    check_import_ok(&t, "s,a\n\"1\",2\n", 1); /* any column order */
    check_import_ok(&t, "s\nq\n", 1);         /* a missing column is NULL */
    check_import_error(&t, "a,s\n1,x\nabc,y\n", "line 3, column a", "'abc' is not an integer");
    check_import_error(&t, "a,s\n1,\"x\ny\"\nbad,z\n", "line 4, column a", "not an integer");
    check_import_error(&t, "a,s\n1,x\n2\n", "line 3", "1 fields, the header has 2");
    check_import_error(&t, "a,zz\n1,x\n", "line 1", "'zz' is not in the table's schema");
    check_import_error(&t, "a,a\n1,2\n", "line 1", "'a' appears twice");
    check_import_error(&t, "a,s\n\"1\"x,y\n", "line 2", "after a closing quote");
    check_import_error(&t, "a,s\n1,\"x\n", "line 2", "not closed");
    check_import_ok(&t, "a,s\n,x\n", 1);

    /* INTEGER(8, signed) on INT32: -128..127. */
    ts_init(&t);
    pq_schema_element *i8 = ts_add(&t, "small", PQ_INT32, false);
    i8->has_logical = true;
    i8->logical.kind = PQ_LT_INTEGER;
    i8->logical.bit_width = 8;
    i8->logical.is_signed = true;
    i8->converted_type = PQ_CT_INT_8;
    check_import_ok(&t, "small\n-128\n127\n0\n", 3);
    check_import_error(&t, "small\n-128\n127\n300\n", "line 4, column small", "out of the column's range");
    check_import_error(&t, "small\n-129\n", "line 2, column small", "out of the column's range");

    /* DECIMAL(9,2) on INT32. */
    ts_init(&t);
    pq_schema_element *d = ts_add(&t, "price", PQ_INT32, false);
    d->has_logical = true;
    d->logical.kind = PQ_LT_DECIMAL;
    d->logical.precision = 9;
    d->logical.scale = 2;
    d->converted_type = PQ_CT_DECIMAL;
    d->has_scale = d->has_precision = true;
    d->scale = 2;
    d->precision = 9;
    check_import_ok(&t, "price\n1.23\n-7\n9999999.99\n", 3);
    check_import_error(&t, "price\n1.23\n1.234\n", "line 3, column price", "precision and scale");
    check_import_error(&t, "price\n10000000\n", "line 2, column price", "precision and scale");
    /* Exact values in other spellings (the expression parser's decimal
     * reading): zeros past the scale, an exponent. */
    check_import_ok(&t, "price\n1.2300\n1e2\n-0.5e1\n", 3);
    check_import_error(&t, "price\n1e-3\n", "line 2, column price", "precision and scale");

    /* A required column refuses NULL, not "". */
    ts_init(&t);
    ts_add(&t, "r", PQ_BYTE_ARRAY, true)->converted_type = PQ_CT_UTF8;
    ts_add(&t, "o", PQ_INT64, false);
    check_import_ok(&t, "r,o\n\"\",1\nx,\n", 2);
    check_import_ok(&t, "r,o\n\"\",1\n", 1); /* a row group whose text is all "" */
    check_import_error(&t, "r,o\nx,1\n,2\n", "line 3, column r", "NULL in a required column");

    /* A timestamp column without UTC refuses an offset; a micros one refuses
     * nanoseconds. */
    ts_init(&t);
    pq_schema_element *ts = ts_add(&t, "t", PQ_INT64, false);
    ts->has_logical = true;
    ts->logical.kind = PQ_LT_TIMESTAMP;
    ts->logical.unit = PQ_UNIT_MICROS;
    check_import_ok(&t, "t\n2024-01-01 10:00:00.123456\n", 1);
    check_import_error(&t, "t\n2024-01-01 10:00:00\n2024-01-01 10:00:00Z\n", "line 3, column t", "offset");
    check_import_error(&t, "t\n2024-01-01 10:00:00.1234567\n", "line 2, column t", "finer");

    /* Inferred types accept their own input: DATE out of INT32 range is not
     * a DATE, and a NANOS column does not take a year nanoseconds cannot
     * hold. */
    check_inferred_imports("d\n2024-01-01\n100000000-01-01\n", "d");
    pq_csv_schema s;
    pq_error e;
    check_inferred_imports("t\n2024-01-01 00:00:00.1234567\n2300-01-01 00:00:00\n", "t");
    /* Alone, such a year is a MICROS timestamp, and a nanosecond one is NANOS. */
    CHECK(infer_text("t\n2300-01-01 00:00:00\n", &s, &e) == PQ_OK);
    CHECK(is_type(find_el(&s, "t"), T_TS_US));
    pq_csv_schema_free(&s);
    CHECK(infer_text("t\n2262-01-01 00:00:00\n2024-01-01 00:00:00.1234567\n", &s, &e) == PQ_OK);
    CHECK(is_type(find_el(&s, "t"), T_TS_NS));
    pq_csv_schema_free(&s);
}

/* sort_by on a double column: -inf first, NaN above every number, NULLs
 * last; ties keep the input order. */
static void test_sort_order(void)
{
    const char *csv = "i,v\n0,1.5\n1,\n2,nan\n3,-inf\n4,2\n5,-1\n6,1.5\n";
    pq_csv_schema s;
    pq_error e;
    CHECK(infer_text(csv, &s, &e) == PQ_OK);
    pq_import_opts o;
    pq_import_opts_init(&o);
    const char *by[] = {"v"};
    o.sort_by = by;
    o.n_sort_by = 1;
    pq_buf file;
    pq_buf_init(&file);
    int64_t rows = -1;
    CHECK(import_text(csv, s.elements, s.n_elements, &o, &file, &rows, &e) == PQ_OK);
    char *ids = column_text(&file, 0, NULL);
    CHECK_EQ_STR(ids, "3|5|0|6|4|2|1");
    free(ids);
    pq_buf_free(&file);
    pq_csv_schema_free(&s);
}

/* Fixed columns (partition values from a path) compare as their type: an
 * INT64 partition takes 02024 for 2024, a DATE one only that date. */
static void test_fixed_columns(void)
{
    test_schema t;
    ts_init(&t);
    ts_add(&t, "a", PQ_INT64, false);
    for (int k = 0; k < 4; k++) {
        static const char *csv[] = {"a,year\n1,02024\n2,2024\n", "a,year\n1,2024\n2,2025\n",
                                    "a,day\n1,2024-03-01\n", "a,day\n1,2024-03-02\n"};
        pq_import_fixed fx = k < 2 ? (pq_import_fixed){"year", "2024", PQ_PART_INT64}
                                   : (pq_import_fixed){"day", "2024-03-01", PQ_PART_DATE};
        pq_import_opts o;
        pq_import_opts_init(&o);
        o.fixed = &fx;
        o.n_fixed = 1;
        pq_buf file;
        pq_buf_init(&file);
        pq_error e;
        int64_t rows = -1;
        int rc = import_text(csv[k], t.el, t.n, &o, &file, &rows, &e);
        if (k % 2 == 0) {
            CHECK(rc == PQ_OK);
        } else {
            CHECK(rc == PQ_ERR && contains(e.msg, "line ") && contains(e.msg, "contradicts the path"));
        }
        pq_buf_free(&file);
    }
}

int main(void)
{
    test_plain();
    test_quoted();
    test_bom_and_bare_quotes();
    test_lines();
    test_block_boundaries();
    test_long_record();
    test_random_records();
    test_reader_errors();
    test_infer();
    test_import_round_trip();
    test_import_errors();
    test_sort_order();
    test_fixed_columns();
    return check_report();
}
