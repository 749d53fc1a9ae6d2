/* fuzz_csv: the CSV reader and CSV -> Parquet import.  The input is a CSV
 * file (a header line, then records).
 *
 * The records are read with pq_csv_next and checked: each one starts on the
 * line after the previous one's line breaks (the '\n' in its quoted fields);
 * its unescaped fields and the commas between them are no longer than the
 * bytes it consumed; an unquoted field holds no ',' or '\n' and does not
 * start with '"'; at the end the offset is the input's size (less a BOM).
 * An error is PQ_E_USAGE naming the file and a line.
 *
 * Then pq_csv_infer.  When it succeeds every value must parse as the type it
 * inferred, and pq_csv_import with that schema must succeed (unless a header
 * name holds a NUL byte), into a memory sink with small row groups (1 to 8
 * rows), one thread, and for some inputs sorted by the first column, small
 * pages or no dictionary (chosen by a hash of the input).  The written file
 * is read back: the footer's rows, row groups and sorting columns match what
 * import reported and was asked for, and every column reads back the CSV's
 * values (an empty unquoted field is NULL), in the CSV's order or stably
 * sorted by the first column, NULLs last. */
#include "fuzz_common.h"

#include <math.h>
#include <stdbool.h>

#include "column.h"
#include "csvimport.h"
#include "csvread.h"
#include "footer.h"
#include "numfmt.h"
#include "rowgroup.h"

#define MAX_INPUT ((size_t)3 << 20) /* past two read blocks; bigger only repeats */
#define NAME "in.csv"

/* ------------------------------------------------------------------ the records */

typedef struct rfield {
    size_t off;                /* in records.text */
    uint32_t len;
    bool quoted;
} rfield;

typedef struct records {
    pq_buf text;
    rfield *f;
    size_t n_f, cap_f;
    size_t *first;             /* per record: its first field */
    int32_t *nf;
    size_t n, cap;
    bool ok;                   /* read to the end without an error */
} records;

static void records_free(records *r)
{
    pq_buf_free(&r->text);
    free(r->f);
    free(r->first);
    free(r->nf);
}

static void records_add(records *r, const pq_csv_text *fl, int32_t nf)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->first = realloc(r->first, sizeof *r->first * r->cap);
        r->nf = realloc(r->nf, sizeof *r->nf * r->cap);
        if (!r->first || !r->nf) abort();
    }
    r->first[r->n] = r->n_f;
    r->nf[r->n++] = nf;
    for (int32_t i = 0; i < nf; i++) {
        if (r->n_f == r->cap_f) {
            r->cap_f = r->cap_f ? 2 * r->cap_f : 256;
            r->f = realloc(r->f, sizeof *r->f * r->cap_f);
            if (!r->f) abort();
        }
        r->f[r->n_f++] = (rfield){r->text.len, fl[i].len, fl[i].quoted};
        if (pq_buf_append(&r->text, fl[i].p, fl[i].len) != 0) abort();
    }
}

static const rfield *field_of(const records *r, size_t rec, int32_t i)
{
    return &r->f[r->first[rec] + (size_t)i];
}

static const char *text_of(const records *r, const rfield *f)
{
    return r->text.data + f->off;
}

static void read_records(const uint8_t *data, size_t size, records *out)
{
    memset(out, 0, sizeof *out);
    pq_buf_init(&out->text);
    pq_file *f;
    pq_csv_reader *rd;
    pq_error err;
    FUZZ_CHECK(pq_file_open_mem(NAME, data, size, &f, &err) == PQ_OK, "%s", err.msg);
    FUZZ_CHECK(pq_csv_open(f, NAME, &rd, &err) == PQ_OK, "%s", err.msg);
    int64_t want_line = 1;
    uint64_t prev_off = 0;
    for (;;) {
        const pq_csv_text *fl = NULL;
        int32_t nf = -1;
        if (pq_csv_next(rd, &fl, &nf, &err) != PQ_OK) {
            FUZZ_CHECK(err.cls == PQ_E_USAGE && strncmp(err.msg, NAME ": line ", strlen(NAME ": line ")) == 0,
                       "error %d: %s", err.cls, err.msg);
            break;
        }
        uint64_t off = pq_csv_offset(rd);
        if (nf == 0) {
            bool bom = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0;
            FUZZ_CHECK(off == size - (bom ? 3 : 0), "the end at offset %llu of %zu bytes", (unsigned long long)off,
                       size);
            out->ok = true;
            break;
        }
        FUZZ_CHECK(nf > 0 && fl != NULL, "%d fields", nf);
        FUZZ_CHECK(pq_csv_line(rd) == want_line, "record on line %lld, expected %lld", (long long)pq_csv_line(rd),
                   (long long)want_line);
        FUZZ_CHECK(off > prev_off && off <= size, "offset %llu after %llu (%zu bytes)", (unsigned long long)off,
                   (unsigned long long)prev_off, size);
        uint64_t bytes = (uint64_t)nf - 1;
        int64_t breaks = 0;
        for (int32_t i = 0; i < nf; i++) {
            const pq_csv_text *t = &fl[i];
            FUZZ_CHECK(t->len == 0 || t->p != NULL, "field %d: no text", i);
            FUZZ_CHECK(t->len <= size, "field %d: %u bytes of %zu", i, t->len, size);
            bytes += t->len;
            fuzz_sink ^= fuzz_touch((const uint8_t *)t->p, t->len);
            for (uint32_t k = 0; k < t->len; k++) {
                breaks += t->p[k] == '\n';
                FUZZ_CHECK(t->quoted || (t->p[k] != ',' && t->p[k] != '\n'), "unquoted field %d holds %#x", i,
                           (unsigned)(uint8_t)t->p[k]);
            }
            FUZZ_CHECK(t->quoted || t->len == 0 || t->p[0] != '"', "unquoted field %d starts with a quote", i);
        }
        FUZZ_CHECK(bytes <= off - prev_off, "%llu bytes of fields from %llu bytes of input",
                   (unsigned long long)bytes, (unsigned long long)(off - prev_off));
        want_line += 1 + breaks;
        prev_off = off;
        records_add(out, fl, nf);
    }
    pq_csv_free(rd);
    pq_file_close(f);
}

/* ------------------------------------------------------------------ typed values */

enum { K_STR, K_I64, K_DATE, K_DBL, K_BOOL };

typedef struct colkind {
    int kind;
    int digits;                /* TIMESTAMP: 6 or 9; else 0 */
    bool utc;
    pq_phys phys;
} colkind;

typedef struct cell {
    bool null;
    int64_t i;
    double d;
    const char *p;
    uint32_t len;
} cell;

static colkind kind_of(const pq_schema_element *e)
{
    colkind k = {0, 0, false, (pq_phys)e->type};
    FUZZ_CHECK(e->has_type && e->has_repetition && e->repetition == PQ_OPTIONAL, "column %s: not optional", e->name);
    bool lg = e->has_logical && e->logical.kind != PQ_LT_NONE;
    if (e->type == PQ_BYTE_ARRAY && lg && e->logical.kind == PQ_LT_STRING) k.kind = K_STR;
    else if (e->type == PQ_INT64 && !lg) k.kind = K_I64;
    else if (e->type == PQ_INT64 && e->logical.kind == PQ_LT_TIMESTAMP &&
             (e->logical.unit == PQ_UNIT_MICROS || e->logical.unit == PQ_UNIT_NANOS)) {
        k.kind = K_I64;
        k.digits = e->logical.unit == PQ_UNIT_MICROS ? 6 : 9;
        k.utc = e->logical.utc;
    } else if (e->type == PQ_INT32 && lg && e->logical.kind == PQ_LT_DATE) k.kind = K_DATE;
    else if (e->type == PQ_DOUBLE && !lg) k.kind = K_DBL;
    else if (e->type == PQ_BOOLEAN && !lg) k.kind = K_BOOL;
    else FUZZ_CHECK(false, "column %s: inferred type %d (logical %d)", e->name, e->type, e->logical.kind);
    return k;
}

static bool word_nocase(const char *p, size_t n, const char *w)
{
    if (n != strlen(w)) return false;
    for (size_t i = 0; i < n; i++)
        if ((p[i] | 0x20) != w[i]) return false;
    return true;
}

/* The value inference promised: it must parse. */
static cell parse_cell(const colkind *k, const char *p, const rfield *f, const char *col, size_t rec)
{
    cell c = {0};
    c.p = p;
    c.len = f->len;
    if (f->len == 0 && (!f->quoted || k->kind != K_STR)) {
        FUZZ_CHECK(!f->quoted, "column %s, record %zu: \"\" in a column inferred as kind %d", col, rec, k->kind);
        c.null = true;
        return c;
    }
    int rc = 0;
    switch (k->kind) {
    case K_STR: break;
    case K_I64:
        if (k->digits == 0) {
            rc = pq_parse_i64(p, f->len, &c.i);
        } else {
            int off = 0;
            rc = pq_parse_timestamp_units(p, f->len, k->digits, &c.i, &off);
            FUZZ_CHECK(rc != 0 || !off || k->utc, "column %s, record %zu: an offset in a local timestamp column",
                       col, rec);
            FUZZ_CHECK(rc != 0 || off || !k->utc, "column %s, record %zu: no offset in a UTC timestamp column", col,
                       rec);
        }
        break;
    case K_DATE:
        rc = pq_parse_date(p, f->len, &c.i);
        FUZZ_CHECK(rc != 0 || (c.i >= INT32_MIN && c.i <= INT32_MAX), "column %s, record %zu: date out of INT32", col,
                   rec);
        break;
    case K_DBL: rc = pq_parse_double(p, f->len, &c.d); break;
    case K_BOOL:
        c.i = word_nocase(p, f->len, "true");
        rc = c.i || word_nocase(p, f->len, "false") ? 0 : -1;
        break;
    }
    FUZZ_CHECK(rc == 0, "column %s, record %zu: '%.*s' does not parse as kind %d (digits %d)", col, rec,
               (int)(f->len > 60 ? 60 : f->len), p, k->kind, k->digits);
    return c;
}

static int cmp_cell(int kind, const cell *a, const cell *b)
{
    if (a->null || b->null) return a->null == b->null ? 0 : a->null ? 1 : -1; /* NULLs last */
    switch (kind) {
    case K_DBL: {
        bool na = isnan(a->d), nb = isnan(b->d);
        if (na || nb) return na == nb ? 0 : na ? 1 : -1;
        return a->d < b->d ? -1 : a->d > b->d;
    }
    case K_STR: {
        uint32_t m = a->len < b->len ? a->len : b->len;
        int c = m ? memcmp(a->p, b->p, m) : 0;
        return c ? c : a->len < b->len ? -1 : a->len > b->len;
    }
    default: return a->i < b->i ? -1 : a->i > b->i;
    }
}

/* qsort of row numbers by column 0, stable through the row number. */
static const cell *sort_cells;
static int32_t sort_ncols;
static int sort_kind;
static int cmp_rows(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int c = cmp_cell(sort_kind, &sort_cells[a * (size_t)sort_ncols], &sort_cells[b * (size_t)sort_ncols]);
    return c ? c : a < b ? -1 : a > b;
}

/* ------------------------------------------------------------------ import and read back */

static int buf_sink(void *ctx, const char *data, size_t len, pq_error *err)
{
    (void)err;
    return pq_buf_append(ctx, data, len) ? PQ_ERR : PQ_OK;
}

/* Whether row `r` of a batch holds the expected cell. */
static bool same(const colkind *k, const pq_col_batch *b, int32_t r, int32_t v, const cell *want)
{
    bool is_null = b->def && b->def[r] == 0;
    if (is_null || want->null) return is_null == want->null;
    switch (k->kind) {
    case K_STR: {
        const pq_bytes *x = &((const pq_bytes *)b->values)[v];
        return x->len == want->len && (x->len == 0 || memcmp(x->ptr, want->p, x->len) == 0);
    }
    case K_I64: return ((const int64_t *)b->values)[v] == want->i;
    case K_DATE: return ((const int32_t *)b->values)[v] == want->i;
    case K_BOOL: return ((const uint8_t *)b->values)[v] == want->i;
    case K_DBL: {
        double d = ((const double *)b->values)[v];
        return memcmp(&d, &want->d, sizeof d) == 0 || (isnan(d) && isnan(want->d));
    }
    }
    return false;
}

static void import_and_check(const uint8_t *data, size_t size, const records *recs, const pq_csv_schema *s,
                             uint64_t h)
{
    int32_t n_cols = s->n_elements - 1;
    FUZZ_CHECK(n_cols >= 1 && recs->ok && recs->n >= 1 && recs->nf[0] == n_cols,
               "inferred %d columns; the reader saw %zu records (ok %d)", n_cols, recs->n, recs->ok);
    bool nul_name = false;
    for (int32_t c = 0; c < n_cols; c++) {
        const rfield *hf = field_of(recs, 0, c);
        FUZZ_CHECK(hf->len > 0, "column %d: an empty name", c + 1);
        if (strlen(s->elements[c + 1].name) != hf->len) nul_name = true;
        else FUZZ_CHECK(memcmp(s->elements[c + 1].name, text_of(recs, hf), hf->len) == 0, "column %d: name", c + 1);
    }
    colkind *kinds = malloc(sizeof *kinds * (size_t)n_cols);
    if (!kinds) abort();
    for (int32_t c = 0; c < n_cols; c++) kinds[c] = kind_of(&s->elements[c + 1]);

    /* The data rows: records after the header, less blank lines (with more
     * than one column), as cells of the inferred types. */
    size_t n_rows = 0;
    bool bad_utf8 = false; /* a STRING cell that is not UTF-8: the import must refuse it */
    cell *cells = malloc(sizeof *cells * (recs->n * (size_t)n_cols + 1));
    if (!cells) abort();
    for (size_t r = 1; r < recs->n; r++) {
        const rfield *f0 = field_of(recs, r, 0);
        if (recs->nf[r] == 1 && n_cols > 1 && f0->len == 0 && !f0->quoted) continue;
        FUZZ_CHECK(recs->nf[r] == n_cols, "record %zu: %d fields, inferred %d columns", r, recs->nf[r], n_cols);
        for (int32_t c = 0; c < n_cols; c++) {
            const rfield *f = field_of(recs, r, c);
            cells[n_rows * (size_t)n_cols + (size_t)c] =
                parse_cell(&kinds[c], text_of(recs, f), f, s->elements[c + 1].name, r);
            if (kinds[c].kind == K_STR && pq_utf8_valid_prefix((const unsigned char *)text_of(recs, f), f->len) != f->len)
                bad_utf8 = true;
        }
        n_rows++;
    }

    pq_import_opts o;
    pq_import_opts_init(&o);
    o.threads = 1;
    o.row_group_rows = 1 + (int64_t)(h % 8);
    bool sorted = (h >> 8) & 1;
    const char *by[1] = {s->elements[1].name};
    if (sorted) {
        o.sort_by = by;
        o.n_sort_by = 1;
    }
    o.write.no_dictionary = (h >> 9) & 1;
    if ((h >> 10) & 1) o.write.page_size = 64;
    pq_file *in;
    pq_error err;
    FUZZ_CHECK(pq_file_open_mem(NAME, data, size, &in, &err) == PQ_OK, "%s", err.msg);
    pq_buf out;
    pq_buf_init(&out);
    pq_sink sink = {buf_sink, &out};
    int64_t rows = -1;
    int rc = pq_csv_import(in, NAME, s->elements, s->n_elements, &o, &sink, &rows, &err);
    pq_file_close(in);
    if (rc != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0' && rows == 0, "an error without a message");
        FUZZ_CHECK(nul_name || (bad_utf8 && strstr(err.msg, "not valid UTF-8")),
                   "import of the inferred schema failed: %s", err.msg);
        goto done;
    }
    FUZZ_CHECK(!bad_utf8, "a STRING value that is not UTF-8 was imported");
    FUZZ_CHECK(rows >= 0 && (size_t)rows == n_rows, "import wrote %lld rows of %zu", (long long)rows, n_rows);

    size_t *perm = malloc(sizeof *perm * (n_rows + 1));
    if (!perm) abort();
    for (size_t r = 0; r < n_rows; r++) perm[r] = r;
    if (sorted) {
        sort_cells = cells;
        sort_ncols = n_cols;
        sort_kind = kinds[0].kind;
        qsort(perm, n_rows, sizeof *perm, cmp_rows);
    }

    pq_file *f;
    pq_footer *ft = NULL;
    FUZZ_CHECK(pq_file_open_mem("out", out.data, out.len, &f, &err) == PQ_OK, "%s", err.msg);
    FUZZ_CHECK(pq_footer_read(f, &ft, &err) == PQ_OK, "the written file: %s", err.msg);
    FUZZ_CHECK(ft->meta.num_rows == rows, "footer: %lld rows, import said %lld", (long long)ft->meta.num_rows,
               (long long)rows);
    FUZZ_CHECK(ft->schema.n_leaves == n_cols, "footer: %d columns of %d", ft->schema.n_leaves, n_cols);
    int64_t rgr = o.row_group_rows;
    FUZZ_CHECK(ft->meta.n_row_groups == (rows + rgr - 1) / rgr, "%d row groups for %lld rows of %lld",
               ft->meta.n_row_groups, (long long)rows, (long long)rgr);
    int32_t *leaves = malloc(sizeof *leaves * (size_t)n_cols);
    if (!leaves) abort();
    for (int32_t c = 0; c < n_cols; c++) leaves[c] = c;
    int32_t max_batch = 1 + (int32_t)((h >> 11) % 40);
    size_t row0 = 0;
    for (int32_t g = 0; g < ft->meta.n_row_groups; g++) {
        const pq_row_group *rg = &ft->meta.row_groups[g];
        int64_t want = rows - (int64_t)row0 < rgr ? rows - (int64_t)row0 : rgr;
        FUZZ_CHECK(rg->num_rows == want, "row group %d: %lld rows, expected %lld", g, (long long)rg->num_rows,
                   (long long)want);
        if (sorted)
            FUZZ_CHECK(rg->n_sorting == 1 && rg->sorting[0].column_idx == 0 && !rg->sorting[0].descending &&
                           !rg->sorting[0].nulls_first,
                       "row group %d: sorting columns", g);
        else FUZZ_CHECK(rg->n_sorting <= 0, "row group %d: sorting columns on an unsorted import", g);
        pq_rg_reader *rgr_ = NULL;
        FUZZ_CHECK(pq_rg_open(f, ft, g, leaves, n_cols, &rgr_, &err) == PQ_OK, "row group %d: %s", g, err.msg);
        for (int32_t c = 0; c < n_cols; c++) {
            pq_col_reader *cr = pq_rg_column(rgr_, c);
            FUZZ_CHECK(cr != NULL, "column %d: no reader", c);
            size_t row = row0;
            while (pq_col_position(cr) < rg->num_rows) {
                pq_col_batch b;
                FUZZ_CHECK(pq_col_read(cr, max_batch, &b, &err) == PQ_OK && b.n_rows > 0,
                           "row group %d, column %d: %s", g, c, err.msg);
                int32_t v = 0;
                for (int32_t i = 0; i < b.n_rows; i++, row++) {
                    FUZZ_CHECK(row < row0 + (size_t)rg->num_rows, "column %d: too many rows", c);
                    const cell *w = &cells[perm[row] * (size_t)n_cols + (size_t)c];
                    FUZZ_CHECK(same(&kinds[c], &b, i, v, w), "row %zu (record of data row %zu), column %s: "
                               "the value read back differs", row, perm[row], s->elements[c + 1].name);
                    if (!b.def || b.def[i]) v++;
                }
                FUZZ_CHECK(v == b.n_values, "column %d: %d values, %d read", c, b.n_values, v);
            }
            FUZZ_CHECK(row == row0 + (size_t)rg->num_rows, "column %d: %zu rows", c, row - row0);
        }
        pq_rg_close(rgr_);
        row0 += (size_t)rg->num_rows;
    }
    free(leaves);
    pq_footer_free(ft);
    pq_file_close(f);
    free(perm);
done:
    pq_buf_free(&out);
    free(cells);
    free(kinds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    /* An exact-size copy: ASan flags a read one byte past the input. */
    uint8_t *copy = fuzz_copy(data, size);
    records recs;
    read_records(copy, size, &recs);

    pq_file *f;
    pq_error err;
    FUZZ_CHECK(pq_file_open_mem(NAME, copy, size, &f, &err) == PQ_OK, "%s", err.msg);
    pq_csv_schema s;
    int rc = pq_csv_infer(f, NAME, &s, &err);
    pq_file_close(f);
    if (rc == PQ_OK) {
        import_and_check(copy, size, &recs, &s, fuzz_hash(data, size));
        pq_csv_schema_free(&s);
    } else {
        FUZZ_CHECK(err.msg[0] != '\0' && s.elements == NULL, "an error without a message: %s", err.msg);
        FUZZ_CHECK(err.cls == PQ_E_USAGE, "infer: error class %d: %s", err.cls, err.msg);
    }
    records_free(&recs);
    free(copy);
    return 0;
}
