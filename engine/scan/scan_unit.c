#include "scan_unit.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "render.h"
#include "rowgroup.h"

/* A unit that is not at the head of the output holds at most this much text
 * before its worker waits: bounds memory whatever the row group size. */
#define UNIT_BUFFER_CAP (32u << 20)
#define CHUNK_TARGET (1u << 20)

/* ------------------------------------------------------------------ output chunks */

/* Hands a finished chunk to the consumer; waits while this unit is not at
 * the head and holds too much.  Returns PQ_ERR when the scan was cancelled. */
static int push_chunk(scan_state *s, int32_t ui, pq_buf *text, int32_t rows, size_t *row_ends, pq_error *err)
{
    chunk *c = calloc(1, sizeof *c);
    if (!c) {
        free(row_ends);
        return PQ_NOMEM(err);
    }
    c->data = text->data;
    c->len = text->len;
    c->cap = text->cap;
    c->rows = rows;
    c->row_ends = row_ends;
    pq_buf_init(text);
    unit *u = &s->units[ui];
    pthread_mutex_lock(&s->mu);
    if (u->tail) u->tail->next = c;
    else u->head = c;
    u->tail = c;
    u->buffered += c->len;
    pthread_cond_broadcast(&s->out_cv);
    while (!s->cancel && ui != s->emit_pos && u->buffered > UNIT_BUFFER_CAP) pthread_cond_wait(&s->work_cv, &s->mu);
    bool cancelled = s->cancel;
    pthread_mutex_unlock(&s->mu);
    if (cancelled) return pq_fail(err, PQ_E_CANCELLED, "scan cancelled");
    return PQ_OK;
}

/* Hands a unit's sealed Parquet row group to the consumer. */
static int push_rg(scan_state *s, int32_t ui, pq_chunk_out *rg, int64_t rows, pq_error *err)
{
    chunk *c = calloc(1, sizeof *c);
    if (!c) {
        pq_chunks_free(rg, pq_parquet_out_leaves(s->pq_out));
        return PQ_NOMEM(err);
    }
    c->rg = rg;
    c->n_rg = pq_parquet_out_leaves(s->pq_out);
    c->rows = (int32_t)(rows > INT32_MAX ? INT32_MAX : rows);
    unit *u = &s->units[ui];
    pthread_mutex_lock(&s->mu);
    if (u->tail) u->tail->next = c;
    else u->head = c;
    u->tail = c;
    pthread_cond_broadcast(&s->out_cv);
    pthread_mutex_unlock(&s->mu);
    return PQ_OK;
}
/* ------------------------------------------------------------------ one row group */

typedef struct unit_ctx {
    scan_state *s;
    int32_t ui;
    const pq_footer *ft;
    const file_state *fs;
    pq_rg_reader rg;           /* fetched ranges and readers (built here, not by pq_rg_open) */
    pq_col_batch *by_leaf;     /* the batch rendered for each leaf */
    pq_col_batch *filter_batch;/* full-window batches of the filter leaves */
    bool *is_filter, *is_proj;
    int *reader_of;            /* leaf -> index in rg.cols, -1 */
    uint8_t *keep;
    int32_t *order;            /* filter leaf indexes, cheapest (compressed bytes) first */
    struct compact_buf *cbuf;  /* compaction scratch per leaf (filter ∩ projection) */
    uint16_t *rownull;         /* per column, nested filter columns: row-level nullness */
    pq_col_batch *rownull_batch;
    const pq_col_batch **by_col;
    pq_out_col *cols;
    pq_buf text;
    int32_t chunk_rows;
    size_t *row_ends;
    size_t n_row_ends;
    const pq_rg_plan *plan;
    pq_byte_range *fetched[2]; /* the filter columns' bytes, then the others' */
    int32_t n_fetched[2];
    int n_fetches;
    bool projection_open;
    const pq_plan_input *in;
    pq_arena *arena;
    pq_col_source *filter_src; /* per leaf: how its filter reader was opened */
    int64_t rows_cap;          /* > 0: no row at or past it is kept (the pre-pass) */
    int32_t *decode;           /* scratch: the leaves a window decodes */
    pq_rg_encoder *enc;        /* Parquet output: this row group's encoder */
    /* Schema evolution: a widened leaf's values in the table's type, per
     * leaf twice (the main pass, the pre-pass of last_kept_row, whose
     * batches must not overwrite the ones it saved). */
    struct widen_buf *wbuf;
    int prepass;
} unit_ctx;

typedef struct widen_buf {
    void *vals;
    size_t cap;
} widen_buf;

/* Bytes of one decoded value of a leaf as the scan holds it: the table's
 * type for a widened leaf (INT64, DOUBLE: 8 bytes). */
static size_t leaf_value_size(const unit_ctx *c, int32_t leaf)
{
    if (c->fs->leaf_widen && c->fs->leaf_widen[leaf]) return 8;
    return pq_value_size(c->ft->schema.leaves[leaf].node->phys);
}

/* A batch of a widened leaf, converted to the table's type. */
static int widen_batch(unit_ctx *c, int32_t leaf, pq_col_batch *b, pq_error *err)
{
    int w = c->fs->leaf_widen ? c->fs->leaf_widen[leaf] : PQ_WIDEN_NONE;
    if (w == PQ_WIDEN_NONE || b->n_values <= 0 || !c->wbuf) return PQ_OK;
    widen_buf *wb = &c->wbuf[2 * (size_t)leaf + (size_t)c->prepass];
    size_t n = (size_t)b->n_values;
    if (n > wb->cap) {
        void *grown = realloc(wb->vals, n * 8);
        if (!grown) return PQ_NOMEM(err);
        wb->vals = grown;
        wb->cap = n;
    }
    int64_t *d = wb->vals;
    const int32_t *i32 = b->values;
    const int64_t *i64 = b->values;
    switch (w) {
    case PQ_WIDEN_I32_I64:
        for (size_t i = 0; i < n; i++) d[i] = i32[i];
        break;
    case PQ_WIDEN_U32_I64:
        for (size_t i = 0; i < n; i++) d[i] = (int64_t)(uint32_t)i32[i];
        break;
    case PQ_WIDEN_F32_F64: {
        const float *f = b->values;
        double *dd = wb->vals;
        for (size_t i = 0; i < n; i++) dd[i] = (double)f[i];
        break;
    }
    /* Integers to DOUBLE: C's conversion, the nearest double (DuckDB's
     * BIGINT and UBIGINT to DOUBLE casts round alike). */
    case PQ_WIDEN_I32_F64:
    case PQ_WIDEN_U32_F64: {
        double *dd = wb->vals;
        if (w == PQ_WIDEN_I32_F64)
            for (size_t i = 0; i < n; i++) dd[i] = (double)i32[i];
        else
            for (size_t i = 0; i < n; i++) dd[i] = (double)(uint32_t)i32[i];
        break;
    }
    case PQ_WIDEN_I64_F64:
    case PQ_WIDEN_U64_F64: {
        double *dd = wb->vals;
        if (w == PQ_WIDEN_I64_F64)
            for (size_t i = 0; i < n; i++) dd[i] = (double)i64[i];
        else
            for (size_t i = 0; i < n; i++) dd[i] = (double)(uint64_t)i64[i];
        break;
    }
    case PQ_WIDEN_TS_X1000:
    case PQ_WIDEN_TS_X1000000: {
        int64_t k = w == PQ_WIDEN_TS_X1000 ? 1000 : 1000000;
        for (size_t i = 0; i < n; i++) {
            if (i64[i] > INT64_MAX / k || i64[i] < INT64_MIN / k)
                return pq_fail(err, PQ_E_UNSUPPORTED, "column '%s': timestamp %lld is out of the range of the "
                               "table's finer unit", c->ft->schema.leaves[leaf].path, (long long)i64[i]);
            d[i] = i64[i] * k;
        }
        break;
    }
    case PQ_WIDEN_INT96_MICROS: {
        /* As every reader here takes INT96 (CSV, expressions): whole
         * microseconds, in range whatever the value. */
        const pq_int96 *v = b->values;
        for (size_t i = 0; i < n; i++) d[i] = pq_int96_micros(v[i].b);
        break;
    }
    default:
        return pq_fail(err, PQ_E_UNSUPPORTED, "column '%s': no conversion %d to the table's type",
                       c->ft->schema.leaves[leaf].path, w);
    }
    b->values = wb->vals;
    return PQ_OK;
}

/* A projection opened for a window that kept at most one row in this many
 * (or a handful) reads its pages one by one, as the selected rows need them
 * (with an offset index): a point lookup then never fetches the pages it has
 * no row in. */
#define SPARSE_ONE_IN 64
#define SPARSE_KEPT_ROWS 4

/* Fetch what the plan needs: whole chunks, or (SELECT with an offset index)
 * the dictionary region and the pages that overlap the selected rows. */
static int fetch_and_open(unit_ctx *c, const pq_rg_plan *plan, bool filter_only, bool sparse, pq_error *err)
{
    const pq_scan_file *sf = &c->s->files[c->s->units[c->ui].file];
    const pq_footer *ft = c->ft;
    const pq_row_group *g = &ft->meta.row_groups[plan->row_group];
    const file_state *fs = c->fs;
    int32_t n = fs->n_read;
    size_t nn = n > 0 ? (size_t)n : 1;
    if (!c->rg.cols) {
        c->rg.cols = calloc(nn, sizeof *c->rg.cols);
        c->rg.leaf_of = calloc(nn, sizeof *c->rg.leaf_of);
        if (!c->rg.cols || !c->rg.leaf_of) return PQ_NOMEM(err);
        c->rg.n_cols = n;
        c->rg.row_group = plan->row_group;
        c->rg.num_rows = g->num_rows;
        for (int32_t i = 0; i < n; i++) c->rg.leaf_of[i] = fs->read_leaves[i];
    }
    /* This call's leaves: the filter's, or every one not open yet. */
    bool *take = calloc(nn, sizeof *take);
    size_t cap = 0;
    for (int32_t i = 0; take && i < n; i++) {
        int32_t leaf = fs->read_leaves[i];
        take[i] = !c->rg.cols[i] && (!filter_only || c->is_filter[leaf]);
        const pq_offset_index *oi = plan->decision == PQ_RG_SELECT ? plan->offset_index[leaf] : NULL;
        if (take[i]) cap += oi ? (size_t)oi->n_pages + 1 : 1;
    }
    /* A sparse selection: the projected columns' pages on demand, located by
     * their offset indexes (loaded now when the plan did not need them). */
    const pq_offset_index **on_demand = sparse && !filter_only ? calloc(nn, sizeof *on_demand) : NULL;
    for (int32_t i = 0; on_demand && i < n; i++) {
        int32_t leaf = fs->read_leaves[i];
        if (!take[i] || c->is_filter[leaf]) continue;
        const pq_offset_index *oi = plan->offset_index[leaf];
        if (!oi && pq_plan_offset_index(c->in, plan->row_group, leaf, c->arena, &oi, err) != PQ_OK) {
            free(on_demand);
            free(take);
            return PQ_ERR;
        }
        on_demand[i] = oi;
    }
    pq_byte_range *want = calloc(cap ? cap : 1, sizeof *want);
    pq_chunk_extent *ext = calloc(nn, sizeof *ext);
    bool *partial = calloc(nn, sizeof *partial);
    bool *reads_on = calloc(nn, sizeof *reads_on);
    /* no row past the selection's last is ever read, nor, for the projection,
     * past the last row the filter keeps (when the pre-pass found it) */
    int64_t rows_needed = plan->decision == PQ_RG_SELECT && plan->n_ranges > 0
                              ? plan->ranges[plan->n_ranges - 1].end : 0;
    if (!filter_only && c->rows_cap > 0 && (rows_needed == 0 || c->rows_cap < rows_needed))
        rows_needed = c->rows_cap;
    int rc = PQ_ERR;
    int fi = c->n_fetches;
    if (!take || !want || !ext || !partial || !reads_on || fi >= 2) {
        PQ_NOMEM(err);
        goto out;
    }
    int32_t nw = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!take[i]) continue;
        int32_t leaf = fs->read_leaves[i];
        if (pq_chunk_extent_of(&g->columns[leaf], ft->file_size, ft->legacy_chunk_sizes, &ext[i], err) != PQ_OK) {
            pq_error_prefix(err, "column '%s' (row group %d): ", ft->schema.leaves[leaf].path, plan->row_group);
            goto out;
        }
        if (on_demand && on_demand[i] && (uint64_t)on_demand[i]->pages[0].offset >= ext[i].start) {
            /* only the dictionary region up front */
            partial[i] = reads_on[i] = true;
            if ((uint64_t)on_demand[i]->pages[0].offset > ext[i].start)
                want[nw++] = (pq_byte_range){ext[i].start, (uint64_t)on_demand[i]->pages[0].offset - ext[i].start, NULL};
            continue;
        }
        pq_codec codec = (pq_codec)g->columns[leaf].meta.codec;
        const pq_offset_index *oi = plan->decision == PQ_RG_SELECT ? plan->offset_index[leaf] : NULL;
        if (!oi || (uint64_t)oi->pages[0].offset < ext[i].start) {
            /* Rows wanted only from the start of the row group (a limit):
             * fetch the chunk's start; the column reader reads on as far as
             * its pages need (and decodes only their first rows). */
            uint64_t len = pq_prefix_fetch_len(codec, ext[i].len, rows_needed, g->num_rows);
            reads_on[i] = len < ext[i].len;
            want[nw++] = (pq_byte_range){ext[i].start, len, NULL};
            continue;
        }
        bool flat = ft->schema.leaves[leaf].max_rep == 0;
        partial[i] = true;
        if ((uint64_t)oi->pages[0].offset > ext[i].start)
            want[nw++] = (pq_byte_range){ext[i].start, (uint64_t)oi->pages[0].offset - ext[i].start, NULL};
        int32_t r = 0;
        for (int32_t pg = 0; pg < oi->n_pages; pg++) {
            int64_t b = oi->pages[pg].first_row_index;
            int64_t e = pg + 1 < oi->n_pages ? oi->pages[pg + 1].first_row_index : g->num_rows;
            while (r < plan->n_ranges && plan->ranges[r].end <= b) r++;
            if (r < plan->n_ranges && plan->ranges[r].begin < e) {
                /* the page that holds the last row needed: only its start */
                uint64_t len = (uint64_t)oi->pages[pg].compressed_page_size;
                if (flat && rows_needed > b && rows_needed < e) {
                    len = pq_prefix_fetch_len(codec, len, rows_needed - b, e - b);
                    reads_on[i] |= len < (uint64_t)oi->pages[pg].compressed_page_size;
                }
                want[nw++] = (pq_byte_range){(uint64_t)oi->pages[pg].offset, len, NULL};
            }
        }
    }
    /* The second fetch (the projection after the filter columns) does not
     * merge across the first one's bytes. */
    if (pq_fetch_ranges(sf->file, want, nw, sf->file->merge_gap, fi > 0 ? c->fetched[0] : NULL,
                        fi > 0 ? c->n_fetched[0] : 0, &c->fetched[fi], &c->n_fetched[fi], &c->rg.bytes_fetched,
                        err) != PQ_OK)
        goto out;
    c->n_fetches++;
    for (int32_t i = 0; i < n; i++) {
        if (!take[i]) continue;
        int32_t leaf = fs->read_leaves[i];
        pq_col_source src = {
            .file_name = scan_file_name(sf),
            .chunk = &g->columns[leaf],
            .leaf = &ft->schema.leaves[leaf],
            .row_group = plan->row_group,
            .row_group_rows = g->num_rows,
            .ranges = c->fetched[fi],
            .n_ranges = c->n_fetched[fi],
            .first_page_off = ext[i].start,
            .end_off = ext[i].start + ext[i].len,
            .offset_index = !partial[i] ? NULL : on_demand && on_demand[i] ? on_demand[i] : plan->offset_index[leaf],
            .rows_needed = rows_needed,
            .file = reads_on[i] ? sf->file : NULL,
        };
        if (pq_col_reader_open(&src, &c->rg.cols[i], err) != PQ_OK) goto out;
        c->reader_of[leaf] = i;
        if (filter_only && c->filter_src) c->filter_src[leaf] = src;
    }
    rc = PQ_OK;
out:
    free(take);
    free(want);
    free(ext);
    free(partial);
    free(reads_on);
    free(on_demand);
    return rc;
}

static bool is_sparse(int32_t kept, int32_t window)
{
    return kept <= SPARSE_KEPT_ROWS || kept <= window / SPARSE_ONE_IN;
}

/* Opens the projected columns the first time a window keeps a row: a row
 * group whose filter keeps nothing never fetches them. */
static int open_projection(unit_ctx *c, int64_t at, int32_t kept, int32_t window, pq_error *err)
{
    if (c->projection_open) return PQ_OK;
    PQ_TRY(fetch_and_open(c, c->plan, false, is_sparse(kept, window), err));
    c->projection_open = true;
    for (int32_t i = 0; i < c->rg.n_cols; i++) {
        if (c->is_filter[c->rg.leaf_of[i]]) continue;
        int64_t pos = pq_col_position(c->rg.cols[i]);
        if (pos < at) PQ_TRY(pq_col_skip(c->rg.cols[i], at - pos, err));
    }
    return PQ_OK;
}

/* Parquet output: the rows go to the row group's encoder; at the end the
 * sealed row group goes to the consumer. */
static int encode_rows(unit_ctx *c, int32_t n, bool last, pq_error *err)
{
    scan_state *s = c->s;
    if (n > 0 && s->pq_capped) {
        int64_t left = s->limit - s->pq_rows_before - pq_rg_encoder_rows(c->enc);
        if (left < n) n = left > 0 ? (int32_t)left : 0;
    }
    if (n > 0) PQ_TRY(pq_rg_encoder_add(c->enc, c->cols, n, err));
    if (!last) return PQ_OK;
    int64_t rows = pq_rg_encoder_rows(c->enc);
    if (s->pq_capped) s->pq_rows_before += rows; /* one worker: units in order */
    if (rows == 0) return PQ_OK;
    pq_chunk_out *rg;
    PQ_TRY(pq_rg_encoder_finish(c->enc, &rg, err));
    return push_rg(s, c->ui, rg, rows, err);
}

static int emit_rows(unit_ctx *c, int32_t n, bool last, pq_error *err)
{
    scan_state *s = c->s;
    if (c->enc) return encode_rows(c, n, last, err);
    if (n > 0) {
        size_t *ends = NULL;
        if (s->want_row_ends) {
            if (c->n_row_ends + (size_t)n > SIZE_MAX / sizeof(size_t)) return PQ_NOMEM(err);
            size_t *grown = realloc(c->row_ends, sizeof *grown * (c->n_row_ends + (size_t)n));
            if (!grown) return PQ_NOMEM(err);
            c->row_ends = grown;
            ends = c->row_ends + c->n_row_ends;
        }
        /* One allocation per chunk: growing by doubling would copy it. */
        if (c->text.cap == 0) {
            pthread_mutex_lock(&s->mu);
            if (s->n_spare) c->text = s->spare[--s->n_spare];
            pthread_mutex_unlock(&s->mu);
            c->text.len = 0;
            if (pq_buf_reserve(&c->text, CHUNK_TARGET + CHUNK_TARGET / 2))
                return PQ_NOMEM(err);
        }
        PQ_TRY(pq_csv_rows(c->cols, s->q->n_out, n, NULL, &c->text, ends, err));
        c->n_row_ends += s->want_row_ends ? (size_t)n : 0;
        c->chunk_rows += n;
    }
    if (c->text.len >= CHUNK_TARGET || (last && c->chunk_rows > 0)) {
        size_t *ends = c->row_ends;
        c->row_ends = NULL;
        c->n_row_ends = 0;
        int32_t rows = c->chunk_rows;
        c->chunk_rows = 0;
        return push_chunk(s, c->ui, &c->text, rows, ends, err);
    }
    return PQ_OK;
}

typedef struct compact_buf {
    uint16_t *def, *rep;
    uint8_t *vals;
    size_t cap_levels, cap_vals;
} compact_buf;

static void compact_buf_free(compact_buf *b)
{
    free(b->def);
    free(b->rep);
    free(b->vals);
}

/* Keeps the rows with keep[row] set of a batch (flat or repeated: a row is
 * every level entry from one rep == 0 to the next), into scratch arrays. */
static int compact_batch(const pq_col_batch *in, const pq_leaf *leaf, size_t vs, const uint8_t *keep,
                         compact_buf *b, pq_col_batch *out, pq_error *err)
{
    size_t nl = (size_t)in->n_levels, nv_in = (size_t)in->n_values;
    if (nl > b->cap_levels) {
        uint16_t *d = realloc(b->def, nl * sizeof *d);
        if (d) b->def = d;
        uint16_t *r = realloc(b->rep, nl * sizeof *r);
        if (r) b->rep = r;
        if (!d || !r) return PQ_NOMEM(err);
        b->cap_levels = nl;
    }
    if (nv_in > b->cap_vals) {
        uint8_t *v = realloc(b->vals, nv_in * vs + 1);
        if (!v) return PQ_NOMEM(err);
        b->vals = v;
        b->cap_vals = nv_in;
    }
    const uint8_t *src = in->values;
    int32_t n = 0, nv = 0, v = 0, rows = 0, row = -1;
    for (int32_t e = 0; e < in->n_levels; e++) {
        if (!in->rep || in->rep[e] == 0) {
            row++;
            rows += keep[row] != 0;
        }
        bool present = !in->def || in->def[e] == leaf->max_def;
        if (keep[row]) {
            if (in->def) b->def[n] = in->def[e];
            if (in->rep) b->rep[n] = in->rep[e];
            if (present) memcpy(b->vals + (size_t)nv++ * vs, src + (size_t)v * vs, vs);
            n++;
        }
        v += present;
    }
    out->n_rows = rows;
    out->n_levels = n;
    out->def = in->def ? b->def : NULL;
    out->rep = in->rep ? b->rep : NULL;
    out->n_values = nv;
    out->values = b->vals;
    return PQ_OK;
}

/* Row-level nullness of a nested column from its first leaf: the value is
 * NULL when the definition level at the row's first entry is below the
 * column's own level. */
static void row_nullness(const pq_col_batch *in, const pq_node *node, uint16_t *def, pq_col_batch *out)
{
    int32_t row = 0;
    for (int32_t e = 0; e < in->n_levels; e++) {
        if (in->rep && in->rep[e] != 0) continue;
        def[row++] = !in->def || in->def[e] >= node->def_level ? 1 : 0;
    }
    memset(out, 0, sizeof *out);
    out->n_rows = out->n_levels = row;
    out->def = def;
}

static int evaluate(unit_ctx *c, const pq_expr *e, int32_t n, bool only_kept, pq_error *err)
{
    pq_arena scratch;
    pq_arena_init(&scratch, 64 * 1024);
    int rc = pq_expr_filter(e, c->by_col, n, c->keep, only_kept, &scratch, err);
    pq_arena_free(&scratch);
    return rc;
}

/* The row filter over the next n rows: decodes the filter columns cheapest
 * first, evaluates each conjunct as soon as its columns are there, and once
 * no row is left skips the remaining filter columns instead of decoding them.
 * Leaves the selection in c->keep and its size in *out_rows. */
static int filter_window(unit_ctx *c, int32_t n, int32_t *out_rows, pq_error *err)
{
    scan_state *s = c->s;
    const file_state *fs = c->fs;
    const pq_query *q = s->q;
    memset(c->keep, 1, (size_t)n);
    for (int col = 0; col < q->n_cols; col++) c->by_col[col] = NULL;
    uint64_t have = 0, done = 0;
    int32_t alive = n;
    for (int32_t o = 0; o < fs->n_filter; o++) {
        int32_t k = c->order[o];
        int32_t leaf = fs->filter_leaves[k];
        pq_col_reader *r = c->rg.cols[c->reader_of[leaf]];
        if (alive == 0) {
            PQ_TRY(pq_col_skip(r, n, err));
            continue;
        }
        PQ_TRY(pq_col_read(r, n, &c->filter_batch[leaf], err));
        if (c->filter_batch[leaf].n_rows != n)
            return pq_fail(err, PQ_E_CORRUPT, "column '%s' ends before the row group's %lld rows",
                           c->ft->schema.leaves[leaf].path, (long long)c->rg.num_rows);
        PQ_TRY(widen_batch(c, leaf, &c->filter_batch[leaf], err));
        for (int col = 0; col < q->n_cols; col++) {
            if (fs->col_filter_leaf[col] != leaf) continue;
            if (fs->col_leaf[col] == leaf) {
                c->by_col[col] = &c->filter_batch[leaf];
            } else {
                row_nullness(&c->filter_batch[leaf], fs->col_node[col], c->rownull + (size_t)col * s->batch_rows,
                             &c->rownull_batch[col]);
                c->by_col[col] = &c->rownull_batch[col];
            }
        }
        if (!fs->n_conj) continue; /* no conjuncts: n_filter may pass 64 */
        have |= 1ull << k;
        for (int j = 0; j < fs->n_conj; j++) {
            if ((done >> j & 1) || (fs->conj_leaves[j] & ~have)) continue;
            PQ_TRY(evaluate(c, fs->conj[j], n, true, err));
            done |= 1ull << j;
        }
        alive = 0;
        for (int32_t i = 0; i < n; i++) alive += c->keep[i] != 0;
    }
    if (!fs->n_conj) {
        PQ_TRY(evaluate(c, fs->pred, n, false, err));
    } else if (alive) {
        /* conjuncts that read no column (left after folding) */
        for (int j = 0; j < fs->n_conj; j++)
            if (!(done >> j & 1)) PQ_TRY(evaluate(c, fs->conj[j], n, true, err));
    }
    int32_t kept = 0;
    for (int32_t i = 0; i < n; i++) kept += c->keep[i] != 0;
    *out_rows = kept;
    pthread_mutex_lock(&s->mu);
    s->stats.rows_filtered += (uint64_t)n;
    pthread_mutex_unlock(&s->mu);
    return PQ_OK;
}

/* Index of the last kept row of a window, -1 when none. */
static int32_t last_kept_in(const uint8_t *keep, int32_t n)
{
    int32_t i = n - 1;
    while (i >= 0 && !keep[i]) i--;
    return i;
}

/* Whether the kept rows of a window are one run that is not the whole
 * window: the mark of a range over clustered or sorted data, which may end
 * early in the row group (a scattered or dense selection is several runs or
 * all of the window). */
static bool one_inner_run(const uint8_t *keep, int32_t n)
{
    int32_t b = 0;
    while (b < n && !keep[b]) b++;
    int32_t e = b;
    while (e < n && keep[e]) e++;
    if (b == 0 && e == n) return false;
    for (int32_t i = e; i < n; i++)
        if (keep[i]) return false;
    return e > b;
}

/* Whether the pre-pass can run: flat filter columns that the predicate reads
 * directly (no row-level nullness of nested columns). */
static bool prepass_possible(const unit_ctx *c)
{
    const file_state *fs = c->fs;
    if (!c->filter_src) return false;
    for (int32_t k = 0; k < fs->n_filter; k++)
        if (c->ft->schema.leaves[fs->filter_leaves[k]].max_rep > 0) return false;
    for (int col = 0; col < c->s->q->n_cols; col++)
        if (fs->col_filter_leaf[col] >= 0 && fs->col_filter_leaf[col] != fs->col_leaf[col]) return false;
    return true;
}

/* The last row of [from, end) the filter keeps (-1: none), found before the
 * projection is opened: fresh readers decode the filter columns again from
 * the bytes already fetched, while the scan's own readers, selection and
 * batches stay as they are.  With it the projection's pages are fetched and
 * decoded only as far as that row. */
static int last_kept_row(unit_ctx *c, int64_t from, int64_t end, int64_t *last, pq_error *err)
{
    const file_state *fs = c->fs;
    scan_state *s = c->s;
    int32_t nf = fs->n_filter;
    *last = -1;
    pq_col_reader **saved = calloc((size_t)nf + 1, sizeof *saved);
    pq_col_batch *saved_batch = calloc((size_t)nf + 1, sizeof *saved_batch);
    uint8_t *saved_keep = malloc((size_t)s->batch_rows);
    int rc = PQ_OK;
    bool swapped = false;
    if (!saved || !saved_batch || !saved_keep) {
        rc = PQ_NOMEM(err);
        goto out;
    }
    swapped = true;
    memcpy(saved_keep, c->keep, (size_t)s->batch_rows);
    for (int32_t k = 0; k < nf; k++) {
        int32_t leaf = fs->filter_leaves[k];
        saved[k] = c->rg.cols[c->reader_of[leaf]];
        saved_batch[k] = c->filter_batch[leaf];
        c->rg.cols[c->reader_of[leaf]] = NULL;
    }
    for (int32_t k = 0; k < nf && rc == PQ_OK; k++) {
        int32_t leaf = fs->filter_leaves[k];
        pq_col_reader **slot = &c->rg.cols[c->reader_of[leaf]];
        rc = pq_col_reader_open(&c->filter_src[leaf], slot, err);
        if (rc == PQ_OK) rc = pq_col_skip(*slot, from, err);
    }
    uint64_t filtered = 0;
    c->prepass = 1;
    for (int64_t at = from; rc == PQ_OK && at < end;) {
        int32_t n = end - at < s->batch_rows ? (int32_t)(end - at) : s->batch_rows;
        int32_t kept;
        rc = filter_window(c, n, &kept, err);
        if (rc == PQ_OK) filtered += (uint64_t)n;
        if (rc == PQ_OK && kept > 0) *last = at + last_kept_in(c->keep, n);
        at += n;
    }
    c->prepass = 0;
    pthread_mutex_lock(&s->mu);
    s->stats.rows_filtered -= filtered; /* counted by the main pass */
    pthread_mutex_unlock(&s->mu);
out:
    for (int32_t k = 0; swapped && k < nf; k++) {
        int32_t leaf = fs->filter_leaves[k];
        pq_col_reader_free(c->rg.cols[c->reader_of[leaf]]);
        c->rg.cols[c->reader_of[leaf]] = saved[k];
        c->filter_batch[leaf] = saved_batch[k];
    }
    if (swapped) memcpy(c->keep, saved_keep, (size_t)s->batch_rows);
    free(saved);
    free(saved_batch);
    free(saved_keep);
    return rc;
}

static int read_leaf(unit_ctx *c, int32_t leaf, int32_t n, bool selected, pq_error *err)
{
    pq_col_reader *r = c->reader_of[leaf] >= 0 ? c->rg.cols[c->reader_of[leaf]] : NULL;
    if (selected) {
        PQ_TRY(pq_col_read_selected(r, n, c->keep, &c->by_leaf[leaf], err));
        return widen_batch(c, leaf, &c->by_leaf[leaf], err);
    }
    PQ_TRY(pq_col_read(r, n, &c->by_leaf[leaf], err));
    if (c->by_leaf[leaf].n_rows != n)
        return pq_fail(err, PQ_E_CORRUPT, "column '%s' ends before the row group's %lld rows",
                       c->ft->schema.leaves[leaf].path, (long long)c->rg.num_rows);
    return widen_batch(c, leaf, &c->by_leaf[leaf], err);
}

/* Claims and reads the task's columns (scan_unit.h). */
void scan_help_task(scan_state *s, col_task *t, bool helper)
{
    while (t->next < t->n_leaves) {
        int32_t leaf = t->leaves[t->next++];
        t->busy++;
        if (helper) s->stats.reads_shared++;
        pthread_mutex_unlock(&s->mu);
        pq_error e;
        pq_error_clear(&e);
        int rc = read_leaf(t->c, leaf, t->n, t->selected, &e);
        pthread_mutex_lock(&s->mu);
        if (rc != PQ_OK && t->rc == PQ_OK) {
            t->rc = rc;
            t->err = e;
            t->next = t->n_leaves;
        }
        if (--t->busy == 0 && t->next >= t->n_leaves) pthread_cond_broadcast(&s->task_cv);
    }
}

/* Reads the window's rows of these leaves, shared with the other workers
 * when one is idle or all units are taken (each will be idle once its own
 * unit ends) and no other unit shares its reads now; else one by one. */
static int read_leaves(unit_ctx *c, const int32_t *leaves, int32_t n_leaves, int32_t n, bool selected,
                       pq_error *err)
{
    scan_state *s = c->s;
    if (n_leaves >= 2) {
        col_task t = {.c = c, .n = n, .selected = selected, .leaves = leaves, .n_leaves = n_leaves, .rc = PQ_OK};
        pthread_mutex_lock(&s->mu);
        bool share = !s->task && s->threads > 1 && (s->idle > 0 || s->next_unit >= s->n_units);
        if (share) {
            pq_error_clear(&t.err);
            s->task = &t;
            pthread_cond_broadcast(&s->work_cv);
            scan_help_task(s, &t, false);
            while (t.busy > 0) pthread_cond_wait(&s->task_cv, &s->mu);
            s->task = NULL;
        }
        pthread_mutex_unlock(&s->mu);
        if (share) {
            if (t.rc != PQ_OK) *err = t.err;
            return t.rc;
        }
    }
    for (int32_t k = 0; k < n_leaves; k++) PQ_TRY(read_leaf(c, leaves[k], n, selected, err));
    return PQ_OK;
}

/* Decodes and renders rows [begin, end) of the row group. */
static int scan_range(unit_ctx *c, int64_t begin, int64_t end, pq_error *err)
{
    scan_state *s = c->s;
    const file_state *fs = c->fs;
    bool filter = fs->pred != NULL;
    for (int32_t i = 0; i < c->rg.n_cols; i++) {
        if (!c->rg.cols[i]) continue;
        int64_t pos = pq_col_position(c->rg.cols[i]);
        if (pos < begin) PQ_TRY(pq_col_skip(c->rg.cols[i], begin - pos, err));
    }
    for (int64_t at = begin; at < end;) {
        int32_t n = end - at < s->batch_rows ? (int32_t)(end - at) : s->batch_rows;
        int32_t out_rows = n;
        if (filter) {
            PQ_TRY(filter_window(c, n, &out_rows, err));
            /* A handful of rows (a point lookup), or one run of rows that
             * starts or ends inside the window (a range of clustered or
             * sorted data): worth decoding the filter columns twice to bound
             * the projection. */
            if (out_rows > 0 && !c->projection_open && (out_rows <= SPARSE_KEPT_ROWS || one_inner_run(c->keep, n)) &&
                prepass_possible(c)) {
                int64_t last = at + last_kept_in(c->keep, n);
                int64_t later;
                pq_error ignore;
                /* A failure here (a bad page the main pass may never reach,
                 * under a limit) only leaves the projection unbounded. */
                if (last_kept_row(c, at + n, c->rg.num_rows, &later, &ignore) == PQ_OK)
                    c->rows_cap = (later > last ? later : last) + 1;
            }
            if (out_rows > 0) PQ_TRY(open_projection(c, at, out_rows, n, err));
        }
        int32_t n_decode = 0;
        for (int32_t i = 0; i < fs->n_read; i++) {
            int32_t leaf = fs->read_leaves[i];
            if (!c->is_proj[leaf]) continue;
            pq_col_reader *r = c->reader_of[leaf] >= 0 ? c->rg.cols[c->reader_of[leaf]] : NULL;
            if (!filter || (out_rows > 0 && !c->is_filter[leaf])) {
                c->decode[n_decode++] = leaf;
            } else if (out_rows == 0) {
                if (!c->is_filter[leaf] && r) PQ_TRY(pq_col_skip(r, n, err));
            } else {
                PQ_TRY(compact_batch(&c->filter_batch[leaf], &c->ft->schema.leaves[leaf], leaf_value_size(c, leaf),
                                     c->keep, &c->cbuf[leaf], &c->by_leaf[leaf], err));
            }
        }
        PQ_TRY(read_leaves(c, c->decode, n_decode, n, filter, err));
        PQ_TRY(emit_rows(c, out_rows, false, err));
        at += n;
    }
    return PQ_OK;
}

/* The unit's per-leaf and per-column arrays, from its arena. */
static int unit_arrays(unit_ctx *c, pq_arena *a, size_t nl)
{
    c->by_leaf = pq_arena_alloc(a, sizeof *c->by_leaf * nl);
    c->filter_batch = pq_arena_alloc(a, sizeof *c->filter_batch * nl);
    c->is_filter = pq_arena_alloc(a, sizeof *c->is_filter * nl);
    c->is_proj = pq_arena_alloc(a, sizeof *c->is_proj * nl);
    c->reader_of = pq_arena_alloc(a, sizeof *c->reader_of * nl);
    c->cbuf = pq_arena_alloc(a, sizeof *c->cbuf * nl);
    c->rownull = pq_arena_alloc(a, sizeof *c->rownull * (size_t)(c->s->q->n_cols + 1) * (size_t)c->s->batch_rows);
    c->rownull_batch = pq_arena_alloc(a, sizeof *c->rownull_batch * (size_t)(c->s->q->n_cols + 1));
    c->keep = pq_arena_alloc(a, (size_t)c->s->batch_rows);
    c->order = pq_arena_alloc(a, sizeof *c->order * (size_t)(c->fs->n_filter + 1));
    c->by_col = pq_arena_alloc(a, sizeof *c->by_col * (size_t)(c->s->q->n_cols + 1));
    c->cols = pq_arena_alloc(a, sizeof *c->cols * (size_t)(c->s->q->n_out + 1));
    c->decode = pq_arena_alloc(a, sizeof *c->decode * nl);
    /* Freed by the unit (its vals): a table with widened columns only. */
    if (c->fs->leaf_widen && !(c->wbuf = pq_arena_alloc(a, sizeof *c->wbuf * 2 * nl))) return PQ_ERR;
    if (!c->by_leaf || !c->filter_batch || !c->is_filter || !c->is_proj || !c->reader_of || !c->cbuf || !c->rownull || !c->rownull_batch ||
        !c->keep || !c->order || !c->by_col || !c->cols || !c->decode)
        return PQ_ERR;
    return PQ_OK;
}

/* Adds a read row group's counters to the scan's. */
static void account_unit(scan_state *s, const unit_ctx *c)
{
    pthread_mutex_lock(&s->mu);
    s->stats.row_groups_read++;
    s->stats.bytes_fetched += c->rg.bytes_fetched;
    for (int32_t k = 0; k < c->rg.n_cols; k++) {
        if (!c->rg.cols[k]) continue;
        const pq_col_counters *cc = pq_col_reader_counters(c->rg.cols[k]);
        s->stats.pages_read += cc->pages_read;
        s->stats.pages_skipped += cc->pages_skipped;
        s->stats.values_decoded += cc->values_decoded;
        s->stats.bytes_fetched += cc->bytes_fetched;
    }
    pthread_mutex_unlock(&s->mu);
}

int scan_process_unit(scan_state *s, int32_t ui, pq_error *err)
{
    unit *u = &s->units[ui];
    const pq_scan_file *sf = &s->files[u->file];
    const file_state *fs = &s->fs[u->file];
    if (u->rg < 0) {
        *err = fs->bind_err;
        return PQ_ERR;
    }
    const pq_footer *ft = sf->footer;
    const pq_query *q = s->q;
    int32_t n_leaves = ft->schema.n_leaves;
    unit_ctx c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.ui = ui;
    c.ft = ft;
    c.fs = fs;
    pq_buf_init(&c.text);
    pq_arena arena;
    pq_arena_init(&arena, 64 * 1024);
    int rc = PQ_ERR;

    pq_plan_input in;
    scan_plan_input_of(s, u->file, &in);
    pq_rg_plan plan;
    if (pq_plan_row_group(&in, u->rg, &arena, &plan, err) != PQ_OK) goto out;
    if (u->row_cap >= 0 && pq_plan_limit_rows(&in, u->row_cap, &arena, &plan, err) != PQ_OK) goto out;
    pthread_mutex_lock(&s->mu);
    pq_plan_totals_add(&s->stats.plan, &plan);
    pthread_mutex_unlock(&s->mu);
    if (plan.decision == PQ_RG_SKIP) {
        rc = PQ_OK;
        goto out;
    }

    size_t nl = (size_t)(n_leaves ? n_leaves : 1);
    if (unit_arrays(&c, &arena, nl) != PQ_OK) {
        PQ_NOMEM(err);
        goto out;
    }
    for (int32_t l = 0; l < n_leaves; l++) c.reader_of[l] = -1;
    /* A fully matched row group runs no row filter. */
    file_state local = *fs;
    if (plan.fully_matched) {
        local.pred = NULL;
        local.n_filter = 0;
    }
    c.fs = &local;
    for (int32_t k = 0; k < local.n_filter; k++) c.is_filter[local.filter_leaves[k]] = true;
    /* Cheapest filter column first: fewer bytes to decode before the
     * selection can rule a window out. */
    const pq_row_group *g = &ft->meta.row_groups[u->rg];
    for (int32_t k = 0; k < local.n_filter; k++) {
        int32_t at = k;
        int64_t size = g->columns[local.filter_leaves[k]].meta.total_compressed_size;
        while (at > 0 && g->columns[local.filter_leaves[c.order[at - 1]]].meta.total_compressed_size > size) {
            c.order[at] = c.order[at - 1];
            at--;
        }
        c.order[at] = k;
    }
    for (int j = 0; j < q->n_out; j++) {
        int col = q->out[j];
        const pq_node *nd = fs->col_node[col];
        if (nd) {
            for (int32_t k = 0; k < nd->n_leaves; k++) c.is_proj[nd->first_leaf + k] = true;
            /* A widened column's values are the table's type: its node
             * renders them (a primitive: its levels are the file's). */
            c.cols[j].node = fs->fit && fs->fit[col].widen != PQ_WIDEN_NONE ? q->cols[col].node : nd;
            c.cols[j].leaves = &c.by_leaf[nd->first_leaf];
        } else if (col < q->n_data) {
            c.cols[j].constant = ""; /* not in this file: NULL */
            c.cols[j].constant_len = 0;
        } else {
            const pq_buf *cell = &fs->part_cells[col - q->n_data];
            c.cols[j].constant = cell->data ? cell->data : "";
            c.cols[j].constant_len = cell->len;
        }
    }
    /* Read only what is rendered or filtered on (a fully matched row group
     * does not read filter-only columns). */
    int32_t n_read;
    int32_t *own = pq_arena_alloc(&arena, sizeof *own * nl);
    if (!own) {
        PQ_NOMEM(err);
        goto out;
    }
    n_read = 0;
    for (int32_t i = 0; i < fs->n_read; i++) {
        int32_t leaf = fs->read_leaves[i];
        if (c.is_proj[leaf] || c.is_filter[leaf]) own[n_read++] = leaf;
    }
    local.read_leaves = own;
    local.n_read = n_read;
    c.plan = &plan;
    if (s->pq_out) {
        if (pq_rg_encoder_new(s->pq_out, &ft->schema, fs->col_node, sf->part_values, &c.enc, err) != PQ_OK) goto out;
        /* A row group that matches entirely, with nothing cut by a limit, is
         * copied byte for byte. */
        if (plan.decision == PQ_RG_SCAN && (plan.fully_matched || !fs->pred) && u->row_cap < 0 && !s->pq_capped &&
            pq_rg_encoder_can_copy(c.enc, ft, u->rg)) {
            if (pq_rg_encoder_copy(c.enc, sf->file, ft, u->rg, err) != PQ_OK) goto out;
            pthread_mutex_lock(&s->mu);
            s->stats.row_groups_copied++;
            pthread_mutex_unlock(&s->mu);
            rc = emit_rows(&c, 0, true, err);
            goto out;
        }
    }
    /* With a row filter, the filter columns first; the rest when a row survives. */
    c.projection_open = local.pred == NULL;
    c.in = &in;
    c.arena = &arena;
    c.filter_src = pq_arena_alloc(&arena, sizeof *c.filter_src * nl);
    if (fetch_and_open(&c, &plan, local.pred != NULL, false, err) != PQ_OK) goto out;

    if (plan.decision == PQ_RG_SELECT) {
        for (int32_t r = 0; r < plan.n_ranges; r++)
            if (scan_range(&c, plan.ranges[r].begin, plan.ranges[r].end, err) != PQ_OK) goto out;
    } else {
        int64_t end = plan.rows;
        if (u->row_cap >= 0 && u->row_cap < end) end = u->row_cap;
        if (scan_range(&c, 0, end, err) != PQ_OK) goto out;
    }
    if (emit_rows(&c, 0, true, err) != PQ_OK) goto out;
    rc = PQ_OK;
out:
    if (c.rg.cols) {
        account_unit(s, &c);
        for (int32_t k = 0; k < c.rg.n_cols; k++) pq_col_reader_free(c.rg.cols[k]);
    }
    if (c.cbuf)
        for (int32_t l = 0; l < n_leaves; l++) compact_buf_free(&c.cbuf[l]);
    if (c.wbuf)
        for (size_t l = 0; l < 2 * (size_t)n_leaves; l++) free(c.wbuf[l].vals);
    free(c.rg.cols);
    free(c.rg.leaf_of);
    for (int f = 0; f < c.n_fetches; f++) pq_free_ranges(c.fetched[f], c.n_fetched[f]);
    free(c.row_ends);
    pq_buf_free(&c.text);
    pq_rg_encoder_free(c.enc);
    pq_arena_free(&arena);
    if (rc != PQ_OK && err->cls != PQ_E_CANCELLED) pq_error_prefix(err, "%s: ", scan_file_name(sf));
    return rc;
}
