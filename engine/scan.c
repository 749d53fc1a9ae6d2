#include "scan.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"
#include "rowgroup.h"

#define DEFAULT_BATCH_ROWS 4096
/* A unit that is not at the head of the output holds at most this much text
 * before its worker waits: bounds memory whatever the row group size. */
#define UNIT_BUFFER_CAP (8u << 20)
#define CHUNK_TARGET (1u << 20)

typedef struct chunk {
    struct chunk *next;
    char *data;
    size_t len;
    int32_t rows;
    size_t *row_ends;          /* with a limit: end offset of each row */
} chunk;

enum { UNIT_PENDING, UNIT_RUNNING, UNIT_DONE, UNIT_FAILED };

typedef struct unit {
    int32_t file;
    int32_t rg;
    int64_t row_cap;           /* rows to produce, -1: all */
    int state;
    chunk *head, *tail;
    size_t buffered;
    pq_error err;
} unit;

/* The columns a file contributes, resolved against its own schema. */
typedef struct file_proj {
    const pq_node **nodes;     /* per output column */
    int32_t *leaves;           /* distinct leaves to read */
    int32_t n_leaves;
} file_proj;

typedef struct scan_state {
    pthread_mutex_t mu;
    pthread_cond_t work_cv;    /* workers: a unit may be claimed, or space freed */
    pthread_cond_t out_cv;     /* consumer: a chunk arrived or a unit ended */
    unit *units;
    int32_t n_units;
    int32_t next_unit;
    int32_t emit_pos;
    int32_t window;
    bool cancel;

    const pq_scan_file *files;
    file_proj *proj;
    int n_out;
    int32_t batch_rows;
    bool want_row_ends;
    pq_scan_stats stats;
} scan_state;

void pq_scan_opts_init(pq_scan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->limit = -1;
    o->header = true;
}

int pq_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *next = c->next;
        free(c->data);
        free(c->row_ends);
        free(c);
        c = next;
    }
}

/* Hands a finished chunk to the consumer; waits while this unit is not at
 * the head and holds too much.  Returns PQ_ERR when the scan was cancelled. */
static int push_chunk(scan_state *s, int32_t ui, pq_buf *text, int32_t rows, size_t *row_ends,
                      pq_error *err)
{
    chunk *c = calloc(1, sizeof *c);
    if (!c) {
        free(row_ends);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    c->data = text->data;
    c->len = text->len;
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
    while (!s->cancel && ui != s->emit_pos && u->buffered > UNIT_BUFFER_CAP)
        pthread_cond_wait(&s->work_cv, &s->mu);
    bool cancelled = s->cancel;
    pthread_mutex_unlock(&s->mu);
    if (cancelled) return pq_fail(err, PQ_E_CANCELLED, "scan cancelled");
    return PQ_OK;
}

static int process_unit(scan_state *s, int32_t ui, pq_error *err)
{
    unit *u = &s->units[ui];
    const pq_scan_file *sf = &s->files[u->file];
    const pq_footer *ft = sf->footer;
    const file_proj *fp = &s->proj[u->file];
    pq_rg_reader *rg = NULL;
    pq_col_batch *by_leaf = NULL;
    pq_out_col *cols = NULL;
    size_t *row_ends = NULL;
    pq_buf text;
    pq_buf_init(&text);
    int rc = PQ_ERR;

    if (pq_rg_open(sf->file, ft, u->rg, fp->leaves, fp->n_leaves, &rg, err) != PQ_OK) goto out;
    by_leaf = calloc((size_t)ft->schema.n_leaves, sizeof *by_leaf);
    cols = calloc((size_t)(s->n_out ? s->n_out : 1), sizeof *cols);
    if (!by_leaf || !cols) {
        pq_fail(err, PQ_E_NOMEM, "out of memory");
        goto out;
    }
    for (int j = 0; j < s->n_out; j++) {
        cols[j].node = fp->nodes[j];
        cols[j].leaves = &by_leaf[fp->nodes[j]->first_leaf];
    }
    int64_t rows_left = rg->num_rows;
    if (u->row_cap >= 0 && u->row_cap < rows_left) rows_left = u->row_cap;
    int32_t chunk_rows = 0;
    while (rows_left > 0) {
        int32_t n = rows_left < s->batch_rows ? (int32_t)rows_left : s->batch_rows;
        for (int32_t k = 0; k < fp->n_leaves; k++) {
            int32_t leaf = fp->leaves[k];
            if (pq_col_read(rg->cols[k], n, &by_leaf[leaf], err) != PQ_OK) goto out;
            if (by_leaf[leaf].n_rows != n) {
                pq_fail(err, PQ_E_CORRUPT, "column '%s' (row group %d) ends after %lld of %lld rows",
                        ft->schema.leaves[leaf].path, u->rg,
                        (long long)(pq_col_position(rg->cols[k])), (long long)rg->num_rows);
                goto out;
            }
        }
        if (s->want_row_ends) {
            row_ends = malloc(sizeof *row_ends * (size_t)n);
            if (!row_ends) {
                pq_fail(err, PQ_E_NOMEM, "out of memory");
                goto out;
            }
        }
        if (pq_csv_rows(cols, s->n_out, n, NULL, &text, row_ends, err) != PQ_OK) goto out;
        chunk_rows += n;
        rows_left -= n;
        if (s->want_row_ends || text.len >= CHUNK_TARGET || rows_left == 0) {
            int prc = push_chunk(s, ui, &text, chunk_rows, row_ends, err);
            row_ends = NULL;
            chunk_rows = 0;
            if (prc != PQ_OK) goto out;
        }
    }
    rc = PQ_OK;
out:
    if (rg) {
        pthread_mutex_lock(&s->mu);
        s->stats.row_groups_read++;
        s->stats.bytes_fetched += rg->bytes_fetched;
        for (int32_t k = 0; k < rg->n_cols; k++) {
            const pq_col_counters *cc = pq_col_reader_counters(rg->cols[k]);
            s->stats.pages_read += cc->pages_read;
            s->stats.pages_skipped += cc->pages_skipped;
            s->stats.values_decoded += cc->values_decoded;
        }
        pthread_mutex_unlock(&s->mu);
    }
    free(row_ends);
    pq_buf_free(&text);
    free(cols);
    free(by_leaf);
    pq_rg_close(rg);
    if (rc != PQ_OK && err->cls != PQ_E_CANCELLED) pq_error_prefix(err, "%s: ", sf->file->name);
    return rc;
}

static void *worker_main(void *arg)
{
    scan_state *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->cancel || s->next_unit >= s->n_units) break;
        if (s->next_unit >= s->emit_pos + s->window) {
            pthread_cond_wait(&s->work_cv, &s->mu);
            continue;
        }
        int32_t ui = s->next_unit++;
        s->units[ui].state = UNIT_RUNNING;
        pthread_mutex_unlock(&s->mu);
        pq_error err;
        pq_error_clear(&err);
        int rc = process_unit(s, ui, &err);
        pthread_mutex_lock(&s->mu);
        s->units[ui].state = rc == PQ_OK ? UNIT_DONE : UNIT_FAILED;
        if (rc != PQ_OK) s->units[ui].err = err;
        pthread_cond_broadcast(&s->out_cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Writes a chunk, cut at the limit; returns 1 when the limit was reached. */
static int emit_chunk(scan_state *s, const pq_sink *sink, chunk *c, int64_t limit, pq_error *err)
{
    size_t len = c->len;
    int32_t rows = c->rows;
    int reached = 0;
    if (limit >= 0 && (int64_t)s->stats.rows_out + rows >= limit) {
        int64_t take = limit - (int64_t)s->stats.rows_out;
        len = take > 0 ? c->row_ends[take - 1] : 0;
        rows = (int32_t)take;
        reached = 1;
    }
    if (len && sink->write(sink->ctx, c->data, len, err) != PQ_OK) return -1;
    s->stats.rows_out += (uint64_t)rows;
    return reached;
}

static int resolve_projection(scan_state *s, const pq_scan_file *files, int n_files,
                              const pq_scan_opts *o, const char ***names_out, pq_error *err)
{
    const pq_schema *first = &files[0].footer->schema;
    int n_out = o->select ? o->n_select : first->root->n_children;
    const char **names = calloc((size_t)(n_out ? n_out : 1), sizeof *names);
    if (!names) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    for (int j = 0; j < n_out; j++) {
        names[j] = o->select ? o->select[j] : first->root->children[j]->name;
        if (!pq_schema_find(first, names[j])) {
            free(names);
            return pq_fail(err, PQ_E_USAGE, "%s: no column named '%s'", files[0].file->name,
                           o->select[j]);
        }
    }
    s->n_out = n_out;
    s->proj = calloc((size_t)n_files, sizeof *s->proj);
    if (!s->proj) {
        free(names);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    for (int f = 0; f < n_files; f++) {
        const pq_schema *sc = &files[f].footer->schema;
        file_proj *fp = &s->proj[f];
        fp->nodes = calloc((size_t)(n_out ? n_out : 1), sizeof *fp->nodes);
        fp->leaves = calloc((size_t)(sc->n_leaves ? sc->n_leaves : 1), sizeof *fp->leaves);
        bool *seen = calloc((size_t)(sc->n_leaves ? sc->n_leaves : 1), sizeof *seen);
        if (!fp->nodes || !fp->leaves || !seen) {
            free(seen);
            free(names);
            return pq_fail(err, PQ_E_NOMEM, "out of memory");
        }
        for (int j = 0; j < n_out; j++) {
            const pq_node *nd = pq_schema_find(sc, names[j]);
            const pq_node *ref = pq_schema_find(first, names[j]);
            pq_schema tmp_a = {.root = (pq_node *)nd}, tmp_b = {.root = (pq_node *)ref};
            if (!nd || !pq_schema_equal(&tmp_a, &tmp_b)) {
                free(seen);
                free(names);
                return pq_fail(err, PQ_E_USAGE, "%s: column '%s' %s than in %s", files[f].file->name,
                               names[j], nd ? "has another type" : "is missing, other", files[0].file->name);
            }
            fp->nodes[j] = nd;
            for (int32_t k = 0; k < nd->n_leaves; k++) {
                int32_t leaf = nd->first_leaf + k;
                if (!seen[leaf]) {
                    seen[leaf] = true;
                    fp->leaves[fp->n_leaves++] = leaf;
                }
            }
        }
        free(seen);
    }
    *names_out = names;
    return PQ_OK;
}

static void free_state(scan_state *s, int n_files)
{
    if (s->proj)
        for (int f = 0; f < n_files; f++) {
            free(s->proj[f].nodes);
            free(s->proj[f].leaves);
        }
    free(s->proj);
    if (s->units)
        for (int32_t i = 0; i < s->n_units; i++) free_chunks(s->units[i].head);
    free(s->units);
}

int pq_scan_csv(const pq_scan_file *files, int n_files, const pq_scan_opts *opts, const pq_sink *sink,
                pq_scan_stats *stats, pq_error *err)
{
    if (n_files <= 0) return pq_fail(err, PQ_E_USAGE, "nothing to scan");
    scan_state s;
    memset(&s, 0, sizeof s);
    s.files = files;
    s.batch_rows = opts->batch_rows > 0 ? opts->batch_rows : DEFAULT_BATCH_ROWS;
    s.want_row_ends = opts->limit >= 0;
    const char **names = NULL;
    int rc = resolve_projection(&s, files, n_files, opts, &names, err);
    if (rc != PQ_OK) {
        free_state(&s, n_files);
        return rc;
    }

    /* Units in table order; with a limit and no filter, units past it are
     * never scheduled and the last one is capped. */
    int32_t total = 0;
    for (int f = 0; f < n_files; f++) total += files[f].footer->meta.n_row_groups;
    s.units = calloc((size_t)(total ? total : 1), sizeof *s.units);
    if (!s.units) {
        free(names);
        free_state(&s, n_files);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    int64_t planned = 0;
    for (int f = 0; f < n_files; f++) {
        const pq_file_meta *m = &files[f].footer->meta;
        for (int32_t g = 0; g < m->n_row_groups; g++) {
            s.stats.row_groups_total++;
            if (opts->limit >= 0 && planned >= opts->limit) continue;
            unit *u = &s.units[s.n_units++];
            u->file = f;
            u->rg = g;
            u->row_cap = -1;
            if (opts->limit >= 0) {
                int64_t left = opts->limit - planned;
                if (m->row_groups[g].num_rows > left) u->row_cap = left;
                planned += m->row_groups[g].num_rows;
            }
        }
    }

    if (opts->header) {
        pq_buf hdr;
        pq_buf_init(&hdr);
        if (pq_csv_header(names, s.n_out, &hdr)) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
        else rc = sink->write(sink->ctx, hdr.data, hdr.len, err);
        pq_buf_free(&hdr);
    }
    free(names);
    if (rc != PQ_OK || s.n_units == 0) {
        free_state(&s, n_files);
        return rc;
    }

    int threads = opts->threads > 0 ? opts->threads : pq_default_threads();
    if (threads > s.n_units) threads = s.n_units;
    s.window = threads + 1;
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.work_cv, NULL);
    pthread_cond_init(&s.out_cv, NULL);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    int started = 0;
    if (!tids) rc = pq_fail(err, PQ_E_NOMEM, "out of memory");
    for (int i = 0; tids && i < threads; i++) {
        if (pthread_create(&tids[i], NULL, worker_main, &s) != 0) break;
        started++;
    }
    if (tids && started == 0) rc = pq_fail(err, PQ_E_NOMEM, "cannot start scan threads");

    /* Consumer: emit units strictly in order. */
    bool limit_reached = false;
    for (int32_t ui = 0; rc == PQ_OK && ui < s.n_units && !limit_reached; ui++) {
        unit *u = &s.units[ui];
        pthread_mutex_lock(&s.mu);
        for (;;) {
            while (!u->head && u->state != UNIT_DONE && u->state != UNIT_FAILED)
                pthread_cond_wait(&s.out_cv, &s.mu);
            chunk *list = u->head;
            u->head = u->tail = NULL;
            u->buffered = 0;
            bool finished = u->state == UNIT_DONE || u->state == UNIT_FAILED;
            pthread_cond_broadcast(&s.work_cv);
            pthread_mutex_unlock(&s.mu);
            for (chunk *c = list; c && rc == PQ_OK && !limit_reached; c = c->next) {
                int r = emit_chunk(&s, sink, c, opts->limit, err);
                if (r < 0) rc = PQ_ERR;
                else if (r > 0) limit_reached = true;
            }
            free_chunks(list);
            pthread_mutex_lock(&s.mu);
            if (rc != PQ_OK || limit_reached) break;
            if (finished && !u->head) {
                if (u->state == UNIT_FAILED) {
                    *err = u->err;
                    rc = PQ_ERR;
                }
                break;
            }
        }
        s.emit_pos = ui + 1;
        if (rc != PQ_OK || limit_reached) s.cancel = true;
        pthread_cond_broadcast(&s.work_cv);
        pthread_mutex_unlock(&s.mu);
    }
    pthread_mutex_lock(&s.mu);
    s.cancel = true;
    pthread_cond_broadcast(&s.work_cv);
    pthread_mutex_unlock(&s.mu);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    free(tids);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.work_cv);
    pthread_cond_destroy(&s.out_cv);
    if (stats) *stats = s.stats;
    free_state(&s, n_files);
    return rc;
}
