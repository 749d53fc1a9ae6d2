#include "csvimport.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvread.h"
#include "csvtype.h"
#include "filewrite.h"
#include "numfmt.h"
#include "rowsort.h"
#include "schema.h"
#include "threads.h"

#define ENCODE_SLICE_ROWS 65536
#define SLICE_ROWS 65536       /* rows parsed before the column tasks get them */

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
    /* At most 40 bytes of the field, as text: bytes that are not UTF-8
     * and control characters as \xHH, so the message (the log, the errors
     * file) stays text. */
    char shown[200];
    size_t o = 0, i = 0;
    while (i < len && i < 40 && o + 5 < sizeof shown) {
        const unsigned char *u = (const unsigned char *)p + i;
        size_t ok = pq_utf8_valid_prefix(u, len - i < 4 ? len - i : 4);
        size_t ch = u[0] < 0x80 ? 1 : (u[0] & 0xE0) == 0xC0 ? 2 : (u[0] & 0xF0) == 0xE0 ? 3 : 4;
        if (u[0] >= 0x20 && u[0] != 0x7f && ok >= ch && i + ch <= 40) {
            memcpy(shown + o, u, ch);
            o += ch;
            i += ch;
        } else {
            o += (size_t)snprintf(shown + o, sizeof shown - o, "\\x%02X", u[0]);
            i++;
        }
    }
    shown[o] = '\0';
    return pq_fail(err, PQ_E_USAGE, "%s: line %lld, column %s: '%s%s' is %s", name, (long long)line, col, shown,
                   i < len ? "..." : "", why);
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
    if (!cb->def || !cb->vals) return PQ_NOMEM(err);
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
        int rc = pq_csv_convert(t, text + start, end - start, cb->vals + t->vsize * cb->n_vals, &cb->heap, &why);
        if (rc == -2) return PQ_NOMEM(err);
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
    if (b->n_rows == b->cap_rows && rows_buf_grow(b) != 0) return PQ_NOMEM(err);
    int64_t r = b->n_rows;
    b->lines[r] = line;
    for (int32_t c = 0; c < n_cols; c++) {
        if (tc[c].csv_field < 0) continue;
        const pq_csv_text *f = &fields[tc[c].csv_field];
        col_text *t = &b->text[c];
        if (t->bytes.len + f->len > UINT32_MAX)
            return pq_fail(err, PQ_E_USAGE, "%s: line %lld: over 4 GiB of text in one row group's column %s", name,
                           (long long)line, tc[c].name);
        if (pq_buf_append(&t->bytes, f->p, f->len) != 0) return PQ_NOMEM(err);
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
    rows_buf *src;
    bool convert, encode;
    const uint32_t *perm;      /* encode: rows src[perm[0..n_rows)] */
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
    int32_t mismatch_element;  /* the schema element of the column whose error is returned (-1: none) */
} importer;

/* Adds n_rows rows of a column (levels, dense values) to its writer, in
 * batches of ENCODE_SLICE_ROWS. */
static int add_rows(pq_colwriter *w, const target_col *t, const uint16_t *def, const uint8_t *vals, int64_t n_rows,
                    pq_error *err)
{
    size_t at = 0;
    for (int64_t r0 = 0; r0 < n_rows; r0 += ENCODE_SLICE_ROWS) {
        int32_t n = (int32_t)(n_rows - r0 < ENCODE_SLICE_ROWS ? n_rows - r0 : ENCODE_SLICE_ROWS);
        int32_t nv = 0;
        for (int32_t i = 0; i < n; i++) nv += def[r0 + i];
        pq_col_batch bt = {.n_rows = n, .n_levels = n, .def = t->required ? NULL : def + r0,
                           .n_values = nv, .values = vals + t->vsize * at};
        PQ_TRY(pq_colwriter_add(w, &bt, err));
        at += (size_t)nv;
    }
    return PQ_OK;
}

/* A sorted row group's column: its rows gathered by the permutation, then
 * encoded into a sealed chunk. */
static int encode_column(importer *im, rg_job *j, int32_t c, pq_chunk_out *out, pq_error *err)
{
    const target_col *t = &im->tc[c];
    const col_buf *cb = &j->src->cols[c];
    size_t vsize = t->vsize, n = (size_t)(j->n_rows ? j->n_rows : 1);
    uint16_t *def = malloc(sizeof *def * n);
    uint8_t *vals = malloc(vsize * n);
    pq_colwriter *w = NULL;
    int rc = def && vals ? PQ_OK : PQ_NOMEM(err);
    size_t nv = 0;
    for (int64_t i = 0; rc == PQ_OK && i < j->n_rows; i++) {
        uint32_t r = j->perm[i];
        def[i] = cb->def[r];
        if (cb->def[r]) memcpy(vals + vsize * nv++, cb->vals + vsize * im->vidx[c][r], vsize);
    }
    if (rc == PQ_OK) rc = pq_colwriter_new(t->leaf, im->wopts, &w, err);
    if (rc == PQ_OK) rc = add_rows(w, t, def, vals, j->n_rows, err);
    if (rc == PQ_OK) rc = pq_colwriter_finish(w, out, err);
    pq_colwriter_free(w);
    free(def);
    free(vals);
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
        if (rc == PQ_OK) rc = add_rows(j->w[c], t, cb->def, cb->vals, sl->n_rows, err);
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

static void column_worker(void *arg, int worker)
{
    (void)worker;
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
            return PQ_NOMEM(err);
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
        if (j->bad_row[failed] != INT64_MAX && im->mismatch_element < 0)
            im->mismatch_element = im->tc[failed].leaf->node->element_index;
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

typedef struct sort_keys {
    const sort_key *keys;
    int n_keys;
} sort_keys;

/* pq_row_cmp over the rows' converted values. */
static int cmp_rows(const void *ctx, uint32_t a, uint32_t b)
{
    const sort_key *keys = ((const sort_keys *)ctx)->keys;
    int n_keys = ((const sort_keys *)ctx)->n_keys;
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
        if (tc[hit].nested)
            return pq_fail(err, PQ_E_UNSUPPORTED,
                           "%s: line 1: column '%s' is nested (a list, map or struct): CSV cannot hold it (leave it "
                           "out to write NULL, or write Parquet)",
                           name, tc[hit].name);
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

/* Sorted import: converts every column of the staged rows (in parallel),
 * sorts a permutation by the sort keys, then encodes row groups in its
 * order.  *perm_out (freed by the caller) is the permutation. */
static int sort_and_encode(importer *im, pq_filewriter *fw, rows_buf *b, const pq_sorting_column *sorting,
                           sort_key *keys, int n_sort, int64_t rg_rows, int max_inflight, int *inflight_io,
                           int64_t *total_io, uint32_t **perm_out, pq_error *err)
{
    const target_col *tc = im->tc;
    int32_t n_cols = im->n_cols;
    int inflight = *inflight_io;
    int64_t total = *total_io;
    uint32_t *perm = NULL;
    int rc = PQ_OK;
    rg_job *j = rg_job_new(n_cols);
    if (!j) rc = PQ_NOMEM(err);
    else {
        j->src = b;
        j->convert = true;
        j->n_rows = b->n_rows;
        submit(im, j);
        rc = finish_job(im, fw, err);
    }
    int64_t n = b->n_rows;
    uint32_t *tmp = NULL;
    if (rc == PQ_OK) {
        *perm_out = perm = malloc(sizeof *perm * (size_t)n);
        tmp = malloc(sizeof *tmp * (size_t)(n / 2 + 1));
        im->vidx = calloc((size_t)n_cols, sizeof *im->vidx);
        if (!perm || !tmp || !im->vidx) rc = PQ_NOMEM(err);
    }
    for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++) {
        if (!(im->vidx[c] = malloc(sizeof **im->vidx * (size_t)n))) {
            rc = PQ_NOMEM(err);
            break;
        }
        uint32_t v = 0;
        for (int64_t r = 0; r < n; r++) im->vidx[c][r] = b->cols[c].def[r] ? v++ : UINT32_MAX;
    }
    if (rc == PQ_OK) {
        for (int k = 0; k < n_sort; k++) {
            int32_t c = sorting[k].column_idx;
            keys[k] = (sort_key){&tc[c], &b->cols[c], im->vidx[c]};
        }
        for (int64_t r = 0; r < n; r++) perm[r] = (uint32_t)r;
        sort_keys sk = {keys, n_sort};
        pq_stable_sort_rows(perm, tmp, n, cmp_rows, &sk);
    }
    free(tmp);
    for (int64_t r0 = 0; rc == PQ_OK && r0 < n; r0 += rg_rows) {
        if (!(j = rg_job_new(n_cols))) {
            rc = PQ_NOMEM(err);
            break;
        }
        j->src = b;
        j->encode = true;
        j->perm = perm + r0;
        j->n_rows = n - r0 < rg_rows ? n - r0 : rg_rows;
        total += j->n_rows;
        submit(im, j);
        if (++inflight > max_inflight) {
            rc = finish_job(im, fw, err);
            inflight--;
        }
    }
    *inflight_io = inflight;
    *total_io = total;
    return rc;
}

/* The sort_by names as the writer's sorting columns. */
static int resolve_sort_by(const target_col *tc, int32_t n_cols, const pq_import_opts *opts, const char *name,
                           pq_sorting_column *sorting, pq_error *err)
{
    for (int k = 0; k < opts->n_sort_by; k++) {
        int32_t hit = -1;
        for (int32_t c = 0; c < n_cols; c++)
            if (strcmp(tc[c].name, opts->sort_by[k]) == 0) hit = c;
        if (hit < 0) return pq_fail(err, PQ_E_USAGE, "%s: sort_by: no column '%s'", name, opts->sort_by[k]);
        if (tc[hit].nested)
            return pq_fail(err, PQ_E_UNSUPPORTED, "%s: sort_by: column '%s' is nested", name, opts->sort_by[k]);
        if (tc[hit].kind == CV_DECIMAL_BYTES || tc[hit].kind == CV_INT96 || tc[hit].kind == CV_FLOAT16)
            return pq_fail(err, PQ_E_UNSUPPORTED, "%s: sort_by: column '%s' has a type rows cannot be sorted by yet",
                           name, opts->sort_by[k]);
        sorting[k] = (pq_sorting_column){hit, false, false};
    }
    return PQ_OK;
}

/* A record's fields for the fixed (path) columns must match the path. */
static int check_fixed(const pq_import_opts *opts, const int32_t *fixed_field, const pq_csv_text *f,
                       const char *name, int64_t line, pq_error *err)
{
    for (int k = 0; k < opts->n_fixed; k++)
        if (fixed_field[k] >= 0 && !fixed_matches(&opts->fixed[k], &f[fixed_field[k]])) {
            const pq_csv_text *x = &f[fixed_field[k]];
            return pq_fail(err, PQ_E_USAGE, "%s: line %lld, column %s: '%.*s' contradicts the path (%s=%s)", name,
                           (long long)line, opts->fixed[k].name, (int)(x->len > 40 ? 40 : x->len), x->p,
                           opts->fixed[k].name, opts->fixed[k].value ? opts->fixed[k].value : "NULL");
        }
    return PQ_OK;
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
    int rc = tc && sorting && keys ? PQ_OK : PQ_NOMEM(err);
    for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++)
        if ((rc = pq_csv_classify(&schema.leaves[c], &tc[c], err)) != PQ_OK) pq_error_prefix(err, "%s: ", name);
    if (rc == PQ_OK) rc = resolve_sort_by(tc, n_cols, opts, name, sorting, err);
    pq_csv_reader *rd = NULL;
    int32_t n_fields = 0;
    if (rc == PQ_OK) rc = pq_csv_open(in, name, &rd, err);
    int32_t *fixed_field = calloc((size_t)opts->n_fixed + 1, sizeof *fixed_field);
    if (rc == PQ_OK && !fixed_field) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) rc = map_header(rd, name, tc, n_cols, opts, fixed_field, &n_fields, err);
    pq_filewriter *fw = NULL;
    if (rc == PQ_OK) rc = pq_filewriter_new(sink, elements, n_elements, n_cols, &fw, err);
    if (rc == PQ_OK && n_sort > 0) rc = pq_filewriter_set_sorting(fw, sorting, n_sort, err);

    importer im = {.tc = tc, .n_cols = n_cols, .name = name, .wopts = &opts->write, .mismatch_element = -1};
    pthread_mutex_init(&im.mu, NULL);
    pthread_cond_init(&im.work, NULL);
    pthread_cond_init(&im.done, NULL);
    pthread_cond_init(&im.space, NULL);
    int threads = opts->threads > 0 ? opts->threads : pq_default_threads();
    if (threads > 64) threads = 64;
    /* Column workers on threads of their own (threads.h): this thread
     * parses and waits on them, and they on its slices. */
    pq_workers workers;
    if (pq_workers_start(&workers, rc == PQ_OK ? threads : 0, column_worker, &im) < threads && rc == PQ_OK)
        rc = pq_fail(err, PQ_E_NOMEM, "cannot start a writer thread");

    /* Parse.  Without a sort, each row group is a streamed job: slices of
     * SLICE_ROWS rows go to its column tasks while the rest is parsed, and
     * at most `threads` + 1 row groups are held.  With a sort, all rows are
     * staged first. */
    int64_t rg_rows = opts->row_group_rows > 0 ? opts->row_group_rows : PQ_DEFAULT_ROW_GROUP_ROWS;
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
        if ((rc = check_fixed(opts, fixed_field, f, name, pq_csv_line(rd), err)) != PQ_OK) break;
        if (!sorted && !cur) {
            if (!(cur = stream_job_new(n_cols))) {
                rc = PQ_NOMEM(err);
                break;
            }
            submit(&im, cur);
        }
        if (!b && !(b = rows_buf_new(n_cols))) {
            rc = PQ_NOMEM(err);
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
    if (rc == PQ_OK && sorted && b && b->n_rows > 0)
        rc = sort_and_encode(&im, fw, b, sorting, keys, n_sort, rg_rows, max_inflight, &inflight, &total, &perm, err);
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
    pq_workers_join(&workers);
    if (rc == PQ_OK) rc = pq_filewriter_finish(fw, err);
    if (rc == PQ_OK && rows_out) *rows_out = total;
    if (opts->mismatch) *opts->mismatch = rc != PQ_OK && im.mismatch;
    if (opts->mismatch_element) *opts->mismatch_element = rc != PQ_OK ? im.mismatch_element : -1;
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

/* Header names must be distinct: checked with a hash table (a header can
 * hold many thousands of names). */
static int check_unique_names(const pq_csv_text *f, int32_t n, const char *name, pq_error *err)
{
    size_t cap = 16;
    while (cap < (size_t)n * 2) cap *= 2;
    int32_t *slot = malloc(sizeof *slot * cap);
    if (!slot) return PQ_NOMEM(err);
    for (size_t i = 0; i < cap; i++) slot[i] = -1;
    int rc = PQ_OK;
    for (int32_t c = 0; c < n && rc == PQ_OK; c++) {
        uint64_t h = pq_hash_bytes(f[c].p, f[c].len);
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
        if (!out->elements || !st) rc = PQ_NOMEM(err);
    }
    for (int32_t c = 0; rc == PQ_OK && c < n_cols; c++) {
        if (f[c].len == 0) {
            rc = pq_fail(err, PQ_E_USAGE, "%s: line 1: column %d has no name", name, c + 1);
            break;
        }
        pq_schema_element *e = &out->elements[c + 1];
        e->name = pq_arena_strndup(&out->arena, f[c].p, f[c].len);
        if (!e->name) rc = PQ_NOMEM(err);
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
        for (int32_t c = 0; c < n_cols; c++) pq_csv_infer_value(&st[c], f[c].p, f[c].len, f[c].quoted);
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
