#include "scan.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "scan_parquet.h"
#include "scan_unit.h"
#include "threads.h"

#define DEFAULT_BATCH_ROWS 4096

void pq_scan_opts_init(pq_scan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->header = true;
}

/* Workers a scan (or a batch of footer reads) runs on. */
static int scan_threads(const pq_scan_opts *opts)
{
    return opts->threads > 0 ? opts->threads : pq_default_threads();
}

const char *scan_file_name(const pq_scan_file *f)
{
    return f->name ? f->name : f->file ? f->file->name : "(a file not opened)";
}

/* ------------------------------------------------------------------ per-file state */

static int add_leaf(int32_t *set, int32_t *n, int32_t leaf)
{
    for (int32_t i = 0; i < *n; i++)
        if (set[i] == leaf) return 0;
    set[(*n)++] = leaf;
    return 1;
}

/* Whether the file's partition values alone make the predicate FALSE: then
 * its footer is never needed (a remote table's footers are a request each).
 * An invalid value is not decided here: prepare_file reports it. */
static bool ruled_out_by_partition(const pq_query *q, const pq_scan_file *sf)
{
    if (!q->pred || q->n_parts == 0) return false;
    pq_arena a;
    pq_arena_init(&a, 4096);
    pq_expr *pred;
    int bad;
    bool out = pq_query_fold_parts(q, sf->part_values, q->n_parts, &a, &pred, &bad) == 0 && pred &&
               pq_expr_constant(pred) == PQ_TRI_FALSE;
    pq_arena_free(&a);
    return out;
}

/* The rung after the partition values, before the footer: whether what
 * the table format's log says of file `index` (opts->file_ranges) proves
 * `pred` (partition values folded in) FALSE.  Nothing known, or out of
 * memory: kept. */
static bool ruled_out_by_log(const pq_query *q, const pq_scan_opts *opts, int index, const pq_expr *pred)
{
    if (!opts->file_ranges || !pred || pq_expr_constant(pred) != PQ_TRI_MAYBE) return false;
    pq_arena a;
    pq_arena_init(&a, 4096);
    pq_col_range *ranges = pq_arena_alloc(&a, sizeof *ranges * (size_t)(q->n_cols + 1));
    bool out = false;
    if (ranges) {
        memset(ranges, 0, sizeof *ranges * (size_t)(q->n_cols + 1));
        out = opts->file_ranges(opts->ranges_ctx, index, q->cols, q->n_cols, &a, ranges) > 0 &&
              pq_expr_prune(pred, ranges) == PQ_TRI_FALSE;
    }
    pq_arena_free(&a);
    return out;
}

/* The rungs before a footer, for a file not opened yet: 0 kept, 1 pruned
 * by partition values, 2 by the log's statistics, 3 by its row groups'
 * statistics, read before (the union pass's verdict). */
static int ruled_out_before_footer(const pq_query *q, const pq_scan_opts *opts, int index, const pq_scan_file *sf)
{
    if (!q->pred) return 0;
    if (ruled_out_by_partition(q, sf)) return 1;
    if (sf->stats_out_rgs > 0) return 3;
    if (!opts->file_ranges) return 0;
    pq_arena a;
    pq_arena_init(&a, 4096);
    pq_expr *pred = q->pred;
    int bad = -1;
    int rc = q->n_parts ? pq_query_fold_parts(q, sf->part_values, q->n_parts, &a, &pred, &bad) : 0;
    bool out = rc == 0 && bad < 0 && ruled_out_by_log(q, opts, index, pred);
    pq_arena_free(&a);
    return out ? 2 : 0;
}

/* Schema evolution (pq_query_bind_file's fit): a column the file lacks is
 * NULL in every row of it, a constant as a partition value is (substituted
 * into the predicate and folded: `c IS NULL` holds, `c > 5` prunes the
 * file); a column of a type that does not read as the table's fails the
 * file only when the query reads it; a widened one's leaf is converted as
 * it is decoded (scan_unit.c). */
static int bind_evolved(scan_state *s, int f, pq_expr **pred, pq_error *err)
{
    const pq_query *q = s->q;
    file_state *fs = &s->fs[f];
    pq_arena *a = &s->arena;
    pq_value null = {.type = PQ_V_NULL, .is_null = true};
    for (int i = 0; i < q->n_data && *pred; i++)
        if (fs->fit[i].state == PQ_FIT_MISSING) *pred = pq_expr_substitute(a, *pred, i, &null);
    int *cols = pq_arena_alloc(a, sizeof *cols * (size_t)(q->n_cols + 1));
    if (!cols) return PQ_NOMEM(err);
    int n = *pred ? pq_expr_columns(*pred, cols, q->n_cols) : 0;
    for (int i = 0; i < q->n_data; i++) {
        if (fs->fit[i].state != PQ_FIT_CONFLICT) continue;
        bool reads = false;
        for (int k = 0; k < n && !reads; k++) reads = cols[k] == i;
        for (int j = 0; j < q->n_out && !reads; j++) reads = q->out[j] == i;
        if (reads) {
            pq_query_conflict(q, i, fs->col_node[i], scan_file_name(&s->files[f]), &fs->bind_err);
            fs->bind_failed = true;
            return PQ_OK;
        }
        fs->col_node[i] = NULL; /* not read */
    }
    int32_t n_leaves = s->files[f].footer->schema.n_leaves;
    for (int i = 0; i < q->n_data; i++) {
        if (fs->fit[i].widen == PQ_WIDEN_NONE || fs->col_leaf[i] < 0) continue;
        if (!fs->leaf_widen && !(fs->leaf_widen = pq_arena_alloc(a, (size_t)n_leaves + 1))) return PQ_NOMEM(err);
        fs->leaf_widen[fs->col_leaf[i]] = fs->fit[i].widen;
    }
    return PQ_OK;
}

static int prepare_file(scan_state *s, int f, pq_error *err)
{
    const pq_query *q = s->q;
    const pq_scan_file *sf = &s->files[f];
    file_state *fs = &s->fs[f];
    pq_arena *a = &s->arena;
    if (!sf->footer) {
        /* Left unopened: its partition values rule it out, or else its row
         * groups' statistics or the log's did (ruled_out_before_footer). */
        fs->pruned = true;
        bool by_parts = ruled_out_by_partition(q, sf);
        fs->pruned_stats = !by_parts && sf->stats_out_rgs > 0;
        fs->pruned_log = !by_parts && !fs->pruned_stats;
        return PQ_OK;
    }
    int32_t n_leaves = sf->footer->schema.n_leaves;
    fs->col_leaf = pq_arena_alloc(a, sizeof *fs->col_leaf * (size_t)(q->n_cols + 1));
    fs->col_node = pq_arena_alloc(a, sizeof *fs->col_node * (size_t)(q->n_cols + 1));
    fs->filter_leaves = pq_arena_alloc(a, sizeof *fs->filter_leaves * (size_t)(n_leaves + 1));
    fs->col_filter_leaf = pq_arena_alloc(a, sizeof *fs->col_filter_leaf * (size_t)(q->n_cols + 1));
    fs->read_leaves = pq_arena_alloc(a, sizeof *fs->read_leaves * (size_t)(n_leaves + 1));
    fs->part_cells = pq_arena_alloc(a, sizeof *fs->part_cells * (size_t)(q->n_parts + 1));
    if (!fs->col_leaf || !fs->col_node || !fs->filter_leaves || !fs->col_filter_leaf || !fs->read_leaves ||
        !fs->part_cells)
        return PQ_NOMEM(err);
    fs->fit = pq_arena_alloc(a, sizeof *fs->fit * (size_t)(q->n_cols + 1));
    if (!fs->fit) return PQ_NOMEM(err);
    if (pq_query_bind_file(q, &sf->footer->schema, fs->col_leaf, fs->col_node, fs->fit, &fs->bind_err) != PQ_OK) {
        pq_error_prefix(&fs->bind_err, "%s: ", scan_file_name(sf));
        fs->bind_failed = true;
        return PQ_OK;
    }
    /* Rung 1: substitute the partition values and fold. */
    pq_expr *pred;
    int bad;
    if (pq_query_fold_parts(q, sf->part_values, q->n_parts, a, &pred, &bad) != 0)
        return PQ_NOMEM(err);
    if (bad >= 0) {
        pq_fail(&fs->bind_err, PQ_E_CORRUPT, "%s: partition value '%s' is not a valid %s", scan_file_name(sf),
                sf->part_values[bad], q->cols[q->n_data + bad].name);
        fs->bind_failed = true;
        return PQ_OK;
    }
    bool by_parts = pred && pq_expr_constant(pred) == PQ_TRI_FALSE;
    PQ_TRY(bind_evolved(s, f, &pred, err));
    if (fs->bind_failed) return PQ_OK;
    fs->pruned_missing = !by_parts && pred && pq_expr_constant(pred) == PQ_TRI_FALSE;
    for (int p = 0; p < q->n_parts; p++) {
        pq_buf_init(&fs->part_cells[p]);
        if (pq_query_part_cell(q, p, sf->part_values ? sf->part_values[p] : NULL, &fs->part_cells[p]))
            return PQ_NOMEM(err);
    }
    pq_tri t = pred ? pq_expr_constant(pred) : PQ_TRI_TRUE;
    fs->pruned = t == PQ_TRI_FALSE;
    /* A file given with its footer (the query's reference file) takes the
     * log's rung here; one the scan opened passed it already. */
    if (!fs->pruned && !(s->opened_here && s->opened_here[f]) && ruled_out_by_log(q, s->opts, s->first_index + f, pred))
        fs->pruned = fs->pruned_log = true;
    fs->pred = t == PQ_TRI_TRUE ? NULL : pred;
    for (int i = 0; i < q->n_cols; i++) {
        const pq_node *nd = fs->col_node[i];
        fs->col_filter_leaf[i] = fs->col_leaf[i] >= 0 ? fs->col_leaf[i]
                                 : nd && nd->kind != PQ_NODE_PRIMITIVE && nd->n_leaves ? nd->first_leaf : -1;
    }
    /* A predicate reads at most every column of the query. */
    int *cols = fs->pred ? pq_arena_alloc(a, sizeof *cols * (size_t)(q->n_cols + 1)) : NULL;
    if (fs->pred && !cols) return PQ_NOMEM(err);
    if (fs->pred) {
        int n = pq_expr_columns(fs->pred, cols, q->n_cols);
        for (int i = 0; i < n; i++)
            if (fs->col_filter_leaf[cols[i]] >= 0)
                add_leaf(fs->filter_leaves, &fs->n_filter, fs->col_filter_leaf[cols[i]]);
    }
    int n_conj = fs->pred ? pq_expr_conjuncts(fs->pred, NULL, 0) : 0;
    if (n_conj > 0 && n_conj <= 64 && fs->n_filter <= 64) {
        fs->conj = pq_arena_alloc(a, sizeof *fs->conj * (size_t)n_conj);
        fs->conj_leaves = pq_arena_alloc(a, sizeof *fs->conj_leaves * (size_t)n_conj);
        if (!fs->conj || !fs->conj_leaves) return PQ_NOMEM(err);
        fs->n_conj = pq_expr_conjuncts(fs->pred, fs->conj, n_conj);
        for (int j = 0; j < fs->n_conj; j++) {
            int nc = pq_expr_columns(fs->conj[j], cols, q->n_cols);
            for (int i = 0; i < nc; i++)
                for (int32_t k = 0; k < fs->n_filter; k++)
                    if (fs->filter_leaves[k] == fs->col_filter_leaf[cols[i]]) fs->conj_leaves[j] |= 1ull << k;
        }
    }
    for (int j = 0; j < q->n_out; j++) {
        const pq_node *nd = fs->col_node[q->out[j]];
        if (!nd) continue;
        for (int32_t k = 0; k < nd->n_leaves; k++) add_leaf(fs->read_leaves, &fs->n_read, nd->first_leaf + k);
    }
    for (int32_t i = 0; i < fs->n_filter; i++) add_leaf(fs->read_leaves, &fs->n_read, fs->filter_leaves[i]);
    return PQ_OK;
}

void scan_plan_input_of(const scan_state *s, int f, pq_plan_input *in)
{
    const file_state *fs = &s->fs[f];
    memset(in, 0, sizeof *in);
    in->file = s->files[f].file;
    in->footer = s->files[f].footer;
    in->pred = fs->pred;
    in->cols = s->q->cols;
    in->n_cols = s->q->n_cols;
    in->col_leaf = fs->col_leaf;
    in->leaf_widen = fs->leaf_widen;
    in->read_leaves = fs->read_leaves;
    in->n_read_leaves = fs->n_read;
    in->no_stats = s->opts->no_stats;
    in->no_dictionary = s->opts->no_dictionary;
    in->no_page_index = s->opts->no_page_index;
    in->no_bloom = s->opts->no_bloom;
    in->deleted_rows = s->files[f].deleted_rows;
    in->n_deleted = s->files[f].n_deleted;
}

/* ------------------------------------------------------------------ chunks */

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *next = c->next;
        free(c->data);
        free(c->row_ends);
        pq_chunks_free(c->rg, c->n_rg);
        free(c);
        c = next;
    }
}

/* ------------------------------------------------------------------ workers and consumer */

static void worker_main(void *arg, int worker)
{
    (void)worker;
    scan_state *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->cancel) break;
        if (s->task && s->task->next < s->task->n_leaves) {
            scan_help_task(s, s->task, true);
            continue;
        }
        if (s->next_unit >= s->n_units && s->running == 0) break;
        if (s->next_unit >= s->n_units || s->held >= s->window) {
            /* idle: wait for a unit, a task to help with, or the end */
            s->idle++;
            pthread_cond_wait(&s->work_cv, &s->mu);
            s->idle--;
            continue;
        }
        int32_t ui = s->next_unit++;
        s->units[ui].state = UNIT_RUNNING;
        s->units[ui].held = true;
        s->held++;
        s->running++;
        pthread_mutex_unlock(&s->mu);
        pq_error err;
        pq_error_clear(&err);
        int rc = scan_process_unit(s, ui, &err);
        pthread_mutex_lock(&s->mu);
        s->running--;
        if (s->running == 0 && s->next_unit >= s->n_units) pthread_cond_broadcast(&s->work_cv);
        unit *u = &s->units[ui];
        u->state = rc == PQ_OK ? UNIT_DONE : UNIT_FAILED;
        if (rc != PQ_OK) u->err = err;
        if (!u->head && u->held) {
            u->held = false;
            s->held--;
            pthread_cond_broadcast(&s->work_cv);
        }
        pthread_cond_broadcast(&s->out_cv);
    }
    pthread_mutex_unlock(&s->mu);
}

/* Writes a chunk, cut at the limit; returns 1 when the limit was reached. */
static int emit_chunk(scan_state *s, const pq_sink *sink, chunk *c, int64_t limit, pq_error *err)
{
    if (c->rg) {
        /* Units stop at the limit themselves (pq_capped, row_cap). */
        int rc = pq_parquet_out_append(s->pq_out, c->rg, err);
        pq_chunks_free(c->rg, c->n_rg);
        c->rg = NULL;
        if (rc != PQ_OK) return -1;
        s->stats.rows_out += (uint64_t)c->rows;
        return limit >= 0 && (int64_t)s->stats.rows_out >= limit;
    }
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

static void free_state(scan_state *s)
{
    if (s->fs)
        for (int f = 0; f < s->n_files; f++)
            if (s->fs[f].part_cells)
                for (int p = 0; p < s->q->n_parts; p++) pq_buf_free(&s->fs[f].part_cells[p]);
    free(s->fs);
    if (s->units)
        for (int32_t i = 0; i < s->n_units; i++) free_chunks(s->units[i].head);
    for (int i = 0; i < s->n_spare; i++) pq_buf_free(&s->spare[i]);
    free(s->units);
    pq_arena_free(&s->arena);
}

static int init_state(scan_state *s, const pq_query *q, const pq_scan_file *files, int n_files, int first_index,
                      const bool *opened_here, const pq_scan_opts *opts, pq_error *err)
{
    memset(s, 0, sizeof *s);
    s->q = q;
    s->first_index = first_index;
    s->opened_here = opened_here;
    s->limit = q->limit;
    s->files = files;
    s->n_files = n_files;
    s->opts = opts;
    s->batch_rows = opts->batch_rows > 0 ? opts->batch_rows : DEFAULT_BATCH_ROWS;
    s->want_row_ends = s->limit >= 0;
    pq_arena_init(&s->arena, 64 * 1024);
    s->fs = calloc((size_t)(n_files ? n_files : 1), sizeof *s->fs);
    if (!s->fs) return PQ_NOMEM(err);
    for (int f = 0; f < n_files; f++) PQ_TRY(prepare_file(s, f, err));
    return PQ_OK;
}

/* Workers for a slow store (opts.open_parallel): as many as keep `requests`
 * reads going, each fetch making up to its file's parallel_reads; as many as
 * the largest row group's compressed bytes allow within PQ_SCAN_IO_BYTES; no
 * fewer than `threads`. */
static int io_workers_for(const scan_state *s, const pq_scan_file *files, int requests, int threads)
{
    int64_t largest = 1;
    int reads_per_fetch = 1;
    for (int32_t i = 0; i < s->n_units; i++) {
        const unit *u = &s->units[i];
        if (u->rg < 0) continue;
        if (files[u->file].file->parallel_reads > reads_per_fetch) reads_per_fetch = files[u->file].file->parallel_reads;
        const pq_row_group *g = &files[u->file].footer->meta.row_groups[u->rg];
        /* Sizes from the file: untrusted, summed without overflow. */
        int64_t bytes = g->has_total_compressed_size ? g->total_compressed_size : 0;
        if (bytes <= 0)
            for (int32_t c = 0; c < g->n_columns && bytes < PQ_SCAN_IO_BYTES; c++)
                if (g->columns[c].meta.total_compressed_size > 0)
                    bytes += g->columns[c].meta.total_compressed_size < PQ_SCAN_IO_BYTES
                                 ? g->columns[c].meta.total_compressed_size
                                 : PQ_SCAN_IO_BYTES;
        if (bytes > largest) largest = bytes;
    }
    int most = requests / reads_per_fetch;
    int64_t fit = PQ_SCAN_IO_BYTES / largest;
    int n = fit < most ? (int)fit : most;
    return n > threads ? n : threads;
}

/* One scan over files whose footers are all loaded; `limit` rows at most
 * (< 0: all), the header when `header`. */
static int scan_files(const pq_query *q, const pq_scan_file *files, int n_files, int first_index,
                      const bool *opened_here, const pq_scan_opts *opts, pq_parquet_out *po, const pq_sink *sink,
                      int64_t limit, bool header, pq_scan_stats *stats, pq_error *err)
{
    scan_state s;
    int rc = init_state(&s, q, files, n_files, first_index, opened_here, opts, err);
    s.stats.plan.log_rung = opts->file_ranges != NULL;
    s.limit = limit;
    s.pq_out = po;
    bool deletes = false;
    for (int f = 0; f < n_files; f++) deletes |= files[f].n_deleted > 0;
    s.pq_capped = po && (q->pred || deletes) && limit >= 0;
    s.want_row_ends = limit >= 0;
    if (rc != PQ_OK) {
        free_state(&s);
        return rc;
    }
    /* Units in table order.  Without a filter, a limit caps the units:
     * row groups past it are never touched. */
    int32_t total = 0;
    for (int f = 0; f < n_files; f++) total += (files[f].footer ? files[f].footer->meta.n_row_groups : 0) + 1;
    s.units = calloc((size_t)(total ? total : 1), sizeof *s.units);
    if (!s.units) {
        free_state(&s);
        return PQ_NOMEM(err);
    }
    int64_t planned = 0;
    for (int f = 0; f < n_files; f++) {
        const file_state *fs = &s.fs[f];
        s.stats.plan.files++;
        if (fs->bind_failed) {
            s.units[s.n_units++] = (unit){.file = f, .rg = -1, .row_cap = -1};
            continue;
        }
        if (fs->pruned_stats) {
            /* Its row groups, ruled out when its footer was read for the
             * schema: counted as the planning would have. */
            s.stats.plan.row_groups += (uint64_t)files[f].stats_out_rgs;
            s.stats.plan.row_groups_pruned[PQ_RUNG_STATS] += (uint64_t)files[f].stats_out_rgs;
            s.stats.plan.rows += (uint64_t)files[f].stats_out_rows;
            s.stats.plan.bytes_total += files[f].stats_out_bytes;
            continue;
        }
        if (fs->pruned) {
            /* Its row groups are not counted: its footer is not read (the
             * listing's pruning counts no row groups either). */
            if (fs->pruned_log) s.stats.plan.files_pruned_log++;
            else s.stats.plan.files_pruned++;
            continue;
        }
        const pq_file_meta *m = &files[f].footer->meta;
        /* Every row of a row group comes out: no filter, no deleted rows. */
        bool all_rows = !fs->pred && !files[f].n_deleted;
        for (int32_t g = 0; g < m->n_row_groups; g++) {
            if (s.limit >= 0 && all_rows && planned >= s.limit) break;
            unit *u = &s.units[s.n_units++];
            *u = (unit){.file = f, .rg = g, .row_cap = -1};
            if (s.limit >= 0 && all_rows) {
                int64_t left = s.limit - planned;
                if (m->row_groups[g].num_rows > left) u->row_cap = left;
                planned += m->row_groups[g].num_rows;
            }
        }
    }
    if (header) {
        pq_buf hdr;
        pq_buf_init(&hdr);
        if (pq_query_header(q, &hdr)) rc = PQ_NOMEM(err);
        else rc = sink->write(sink->ctx, hdr.data, hdr.len, err);
        pq_buf_free(&hdr);
    }
    if (rc != PQ_OK || s.n_units == 0 || s.limit == 0) {
        if (stats) *stats = s.stats;
        free_state(&s);
        return rc;
    }

    int threads = s.pq_capped ? 1 : scan_threads(opts);
    if (!s.pq_capped && opts->open_parallel > threads) threads = io_workers_for(&s, files, opts->open_parallel, threads);
    if (threads > s.n_units) threads = s.n_units;
    s.window = threads + 1;
    s.threads = threads;
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.work_cv, NULL);
    pthread_cond_init(&s.out_cv, NULL);
    pthread_cond_init(&s.task_cv, NULL);
    /* Workers on threads of their own (threads.h): they wait on this
     * consumer's window and on each other's shared reads. */
    pq_workers workers;
    if (pq_workers_start(&workers, threads, worker_main, &s) == 0)
        rc = pq_fail(err, PQ_E_NOMEM, "cannot start scan threads");

    /* Consumer: emit units strictly in order. */
    bool limit_reached = false;
    for (int32_t ui = 0; rc == PQ_OK && ui < s.n_units && !limit_reached; ui++) {
        unit *u = &s.units[ui];
        pthread_mutex_lock(&s.mu);
        for (;;) {
            while (!u->head && u->state != UNIT_DONE && u->state != UNIT_FAILED) pthread_cond_wait(&s.out_cv, &s.mu);
            chunk *list = u->head;
            u->head = u->tail = NULL;
            u->buffered = 0;
            bool finished = u->state == UNIT_DONE || u->state == UNIT_FAILED;
            pthread_cond_broadcast(&s.work_cv);
            pthread_mutex_unlock(&s.mu);
            for (chunk *c = list; c && rc == PQ_OK && !limit_reached; c = c->next) {
                int r = emit_chunk(&s, sink, c, s.limit, err);
                if (r < 0) rc = PQ_ERR;
                else if (r > 0) limit_reached = true;
            }
            pthread_mutex_lock(&s.mu);
            for (chunk *c = list; c && s.n_spare < (int)(sizeof s.spare / sizeof s.spare[0]); c = c->next) {
                s.spare[s.n_spare++] = (pq_buf){c->data, 0, c->cap};
                c->data = NULL;
            }
            pthread_mutex_unlock(&s.mu);
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
        if (u->held) {
            u->held = false;
            s.held--;
        }
        if (rc != PQ_OK || limit_reached) s.cancel = true;
        pthread_cond_broadcast(&s.work_cv);
        pthread_mutex_unlock(&s.mu);
    }
    pthread_mutex_lock(&s.mu);
    s.cancel = true;
    pthread_cond_broadcast(&s.work_cv);
    pthread_mutex_unlock(&s.mu);
    pq_workers_join(&workers);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.work_cv);
    pthread_cond_destroy(&s.out_cv);
    pthread_cond_destroy(&s.task_cv);
    if (stats) *stats = s.stats;
    free_state(&s);
    return rc;
}

/* Footers of a batch of files, read by several threads: each read is a
 * round trip to storage (and a remote one for HTTP and S3), and the files
 * do not depend on one another.  opts->open_file must be thread-safe for
 * distinct indexes. */
typedef struct open_batch {
    const pq_scan_opts *opts;
    const pq_query *q;         /* files it rules out by partition stay unopened */
    pq_scan_file *files;       /* the batch's first file, index `at` */
    int at;
    int *rc;                   /* per index */
    pq_error *errs;            /* per index */
    _Atomic bool failed;       /* an open failed: files not yet started are left */
} open_batch;

static void open_batch_one(void *arg, size_t i)
{
    open_batch *b = arg;
    /* Indexes are handed out in order: one skipped comes after the failure
     * that is reported. */
    if (b->files[i].footer || atomic_load(&b->failed)) return;
    if (b->q && ruled_out_before_footer(b->q, b->opts, b->at + (int)i, &b->files[i])) return;
    b->rc[i] = b->opts->open_file(b->opts->open_ctx, b->at + (int)i, &b->files[i], &b->errs[i]);
    if (b->rc[i] != PQ_OK) atomic_store(&b->failed, true);
}

/* Opens files [at, at + m) that have no footer yet; on failure, the error
 * of the first failing file (as if they were opened in order). */
static int open_files_parallel(const pq_scan_opts *opts, const pq_query *q, pq_scan_file *files, int at, int m,
                               pq_error *err)
{
    int threads = scan_threads(opts);
    if (opts->open_parallel > threads) threads = opts->open_parallel;
    int *rc = calloc((size_t)m, sizeof *rc);
    pq_error *errs = calloc((size_t)m, sizeof *errs);
    if (!rc || !errs) {
        free(rc);
        free(errs);
        return PQ_NOMEM(err);
    }
    /* Indexes relative to `at` so that rc and errs hold m entries. */
    open_batch b = {.opts = opts, .q = q, .files = files + at, .at = at, .rc = rc, .errs = errs};
    pq_parallel_for((size_t)m, threads, open_batch_one, &b);
    int out = PQ_OK;
    for (int f = 0; f < m && out == PQ_OK; f++)
        if (rc[f] != PQ_OK) {
            *err = errs[f];
            out = PQ_ERR;
        }
    free(rc);
    free(errs);
    return out;
}

/* The scan of every file, footers loaded as it goes; CSV to sink, or rows to
 * po (Parquet).  Footers are loaded as the scan reaches their files: the
 * first file alone (the first rows come after one footer), then, under a
 * limit, batches of 2, 4, 8... files, so that a limit the first files satisfy
 * never reads the others; without a limit, batches of PQ_SCAN_FILES_AT_ONCE
 * (each batch ends in a barrier that idles the workers, so not smaller).
 * Once a batch is scanned its files are handed back (opts->release_file), so
 * a scan of any number of files holds at most a batch of footers. */
static int scan_all(const pq_query *q, const pq_scan_file *files, int n_files, const pq_scan_opts *opts,
                    pq_parquet_out *po, const pq_sink *sink, pq_scan_stats *stats, pq_error *err)
{
    bool lazy = false;
    for (int f = 0; f < n_files; f++) lazy |= files[f].footer == NULL;
    bool header = opts->header && !po;
    if (!lazy) {
        int rc = scan_files(q, files, n_files, 0, NULL, opts, po, sink, q->limit, header, stats, err);
        if (stats) stats->plan.dirs_pruned = opts->dirs_pruned;
        return rc;
    }
    if (!opts->open_file) return pq_fail(err, PQ_E_USAGE, "a file without a footer and no way to open it");
    pq_scan_file *own = malloc(sizeof *own * (size_t)n_files);
    bool *lazy_file = malloc((size_t)n_files); /* opened by the scan: released by it too */
    if (!own || !lazy_file) {
        free(own);
        free(lazy_file);
        return PQ_NOMEM(err);
    }
    memcpy(own, files, sizeof *own * (size_t)n_files);
    for (int f = 0; f < n_files; f++) lazy_file[f] = files[f].footer == NULL;
    pq_scan_stats total;
    memset(&total, 0, sizeof total);
    total.plan.log_rung = opts->file_ranges != NULL;
    int64_t left = q->limit;
    int rc = PQ_OK;
    for (int at = 0, batch = 1; at < n_files && rc == PQ_OK; batch *= 2) {
        if (batch > PQ_SCAN_FILES_AT_ONCE || (left < 0 && at > 0)) batch = PQ_SCAN_FILES_AT_ONCE;
        int m = n_files - at < batch ? n_files - at : batch;
        rc = open_files_parallel(opts, q, own, at, m, err);
        pq_scan_stats st;
        memset(&st, 0, sizeof st);
        if (rc == PQ_OK) rc = scan_files(q, own + at, m, at, lazy_file + at, opts, po, sink, left, header, &st, err);
        header = false;
        pq_plan_totals_merge(&total.plan, &st.plan);
        total.row_groups_read += st.row_groups_read;
        total.rows_out += st.rows_out;
        total.rows_filtered += st.rows_filtered;
        total.bytes_fetched += st.bytes_fetched;
        total.pages_read += st.pages_read;
        total.pages_skipped += st.pages_skipped;
        total.values_decoded += st.values_decoded;
        total.reads_shared += st.reads_shared;
        total.row_groups_copied += st.row_groups_copied;
        if (opts->release_file)
            for (int f = at; f < at + m; f++) {
                if (!lazy_file[f] || (!own[f].footer && !own[f].file)) continue;
                opts->release_file(opts->open_ctx, f);
                own[f].footer = NULL;
                own[f].file = NULL;
            }
        at += m;
        if (left >= 0) {
            left -= (int64_t)st.rows_out;
            if (left <= 0) break;
        }
    }
    free(own);
    free(lazy_file);
    total.plan.dirs_pruned = opts->dirs_pruned;
    if (stats) *stats = total;
    return rc;
}

/* The memory a footer holds: its encoded metadata and what was decoded. */
static size_t footer_bytes(const pq_footer *ft)
{
    return ft ? sizeof *ft + ft->meta_len + ft->arena.reserved + ft->schema.arena.reserved : 0;
}

void pq_scan_files_forget_verdicts(pq_scan_file *files, int n_files)
{
    for (int f = 0; f < n_files; f++) {
        files[f].stats_out_rgs = 0;
        files[f].stats_out_rows = 0;
        files[f].stats_out_bytes = 0;
    }
}

/* The union pass's verdict on files[0] (index `index`), whose footer it read
 * and is about to let go: whether q's scan would rule out every row group
 * by its min/max statistics.  The scan's own binding and planning, with the
 * rungs that read (dictionary, page index, bloom filter) off; a file whose
 * binding fails, or that another rung prunes, gets none (the scan decides
 * it as before). */
static int stats_verdict(const pq_query *q, const pq_scan_opts *opts, pq_scan_file *sf, int index, pq_error *err)
{
    sf->stats_out_rgs = 0;
    if (!q->pred || opts->no_stats || sf->footer->meta.n_row_groups <= 0) return PQ_OK;
    pq_scan_opts o = *opts;
    o.no_dictionary = o.no_page_index = o.no_bloom = true;
    const bool opened = true;
    scan_state s;
    int rc = init_state(&s, q, sf, 1, index, &opened, &o, err);
    const file_state *fs = &s.fs[0];
    if (rc == PQ_OK && !fs->bind_failed && !fs->pruned && fs->pred) {
        pq_plan_input in;
        scan_plan_input_of(&s, 0, &in);
        pq_arena arena;
        pq_arena_init(&arena, 4096);
        int64_t rows = 0;
        uint64_t bytes = 0;
        bool all = true;
        int32_t n = sf->footer->meta.n_row_groups;
        for (int32_t g = 0; g < n && all && rc == PQ_OK; g++) {
            pq_rg_plan p;
            rc = pq_plan_row_group(&in, g, &arena, &p, err);
            all = rc == PQ_OK && p.decision == PQ_RG_SKIP && p.pruned_by == PQ_RUNG_STATS;
            rows += p.rows;
            bytes += p.bytes_total;
        }
        pq_arena_free(&arena);
        if (rc == PQ_OK && all) {
            sf->stats_out_rgs = n;
            sf->stats_out_rows = rows;
            sf->stats_out_bytes = bytes;
        }
    }
    free_state(&s);
    return rc;
}

int pq_scan_schema_union(pq_scan_file *files, int n_files, const pq_query *q, const pq_scan_opts *opts,
                         size_t keep_bytes, pq_footer **out, pq_error *err)
{
    return pq_scan_schema_union_from(NULL, NULL, files, n_files, q, opts, keep_bytes, out, err);
}

int pq_scan_schema_union_from(const pq_footer *seed, const char *seed_name, pq_scan_file *files, int n_files,
                              const pq_query *q, const pq_scan_opts *opts, size_t keep_bytes, pq_footer **out,
                              pq_error *err)
{
    size_t kept = 0;
    *out = NULL;
    pq_scan_files_forget_verdicts(files, n_files); /* every file read for the union, none ruled out by an older pass */
    pq_schema_union *u;
    PQ_TRY(pq_schema_union_new(false, &u, err));
    int rc = seed ? pq_schema_union_add(u, seed, seed_name, err) : PQ_OK;
    /* The first file alone: its footer's size is what the others' tail
     * reads are sized from (pqtool's open_file), not a 64 KiB guess each. */
    for (int at = 0, m = 1; at < n_files && rc == PQ_OK; at += m, m = PQ_SCAN_FILES_AT_ONCE) {
        if (m > n_files - at) m = n_files - at;
        bool opened[PQ_SCAN_FILES_AT_ONCE];
        for (int f = 0; f < m; f++) opened[f] = !files[at + f].footer;
        bool lazy = false;
        for (int f = 0; f < m; f++) lazy |= opened[f];
        if (lazy && !opts->open_file) rc = pq_fail(err, PQ_E_USAGE, "a file without a footer and no way to open it");
        if (rc == PQ_OK && lazy) rc = open_files_parallel(opts, q, files, at, m, err);
        /* A file q's rungs before the footer rule out is not opened (its
         * rows are none of the scan's) and is not part of its schema. */
        for (int f = 0; f < m && rc == PQ_OK; f++)
            if (files[at + f].footer && !(q && ruled_out_before_footer(q, opts, at + f, &files[at + f])))
                rc = pq_schema_union_add(u, files[at + f].footer, scan_file_name(&files[at + f]), err);
        for (int f = 0; f < m && opts->release_file; f++) {
            if (!opened[f] || (!files[at + f].footer && !files[at + f].file)) continue;
            /* Kept for the scan while they fit the budget. */
            size_t len = footer_bytes(files[at + f].footer);
            if (rc == PQ_OK && kept + len <= keep_bytes) {
                kept += len;
                continue;
            }
            /* Let go, with what its statistics prove for q (an I/O error
             * reading them is the scan's to report: no verdict). */
            if (rc == PQ_OK && q && files[at + f].footer) {
                pq_error ignore;
                if (stats_verdict(q, opts, &files[at + f], at + f, &ignore) != PQ_OK) files[at + f].stats_out_rgs = 0;
            }
            opts->release_file(opts->open_ctx, at + f);
            files[at + f].footer = NULL;
            files[at + f].file = NULL;
        }
    }
    if (rc == PQ_OK && pq_schema_union_files(u) == 0 && n_files > 0 && files[0].footer)
        rc = pq_schema_union_add(u, files[0].footer, scan_file_name(&files[0]), err);
    if (rc == PQ_OK) rc = pq_schema_union_finish(u, out, err);
    pq_schema_union_free(u);
    return rc;
}

int pq_scan_files_may_match(const pq_query *q, pq_scan_file *files, int n_files, const pq_scan_opts *opts,
                            bool footers, bool *may, pq_error *err)
{
    for (int f = 0; f < n_files; f++) may[f] = true;
    if (!q->pred) return PQ_OK;
    if (!footers || !opts->open_file) {
        for (int f = 0; f < n_files; f++) may[f] = files[f].footer || !ruled_out_before_footer(q, opts, f, &files[f]);
        return PQ_OK;
    }
    for (int at = 0; at < n_files; at += PQ_SCAN_FILES_AT_ONCE) {
        int m = n_files - at < PQ_SCAN_FILES_AT_ONCE ? n_files - at : PQ_SCAN_FILES_AT_ONCE;
        bool opened[PQ_SCAN_FILES_AT_ONCE];
        for (int f = 0; f < m; f++) opened[f] = !files[at + f].footer;
        pq_error open_err;
        /* A footer that cannot be read: its file may (the rest of the batch too). */
        bool read = open_files_parallel(opts, q, files, at, m, &open_err) == PQ_OK;
        for (int f = 0; f < m; f++) {
            pq_scan_file *sf = &files[at + f];
            if (!sf->footer) {
                may[at + f] = !read || !ruled_out_before_footer(q, opts, at + f, sf);
                continue;
            }
            pq_error ignore;
            if (read && stats_verdict(q, opts, sf, at + f, &ignore) == PQ_OK && sf->stats_out_rgs > 0) may[at + f] = false;
            sf->stats_out_rgs = 0;
            if (opened[f] && opts->release_file) {
                opts->release_file(opts->open_ctx, at + f);
                sf->footer = NULL;
                sf->file = NULL;
            }
        }
    }
    (void)err;
    return PQ_OK;
}

int pq_scan_csv(const pq_query *q, const pq_scan_file *files, int n_files, const pq_scan_opts *opts,
                const pq_sink *sink, pq_scan_stats *stats, pq_error *err)
{
    return scan_all(q, files, n_files, opts, NULL, sink, stats, err);
}

int pq_scan_parquet(const pq_query *q, const pq_footer *ref, const pq_scan_file *files, int n_files,
                    const pq_scan_opts *opts, const pq_write_opts *wopts, const pq_sink *sink, pq_scan_stats *stats,
                    pq_error *err)
{
    pq_parquet_out *po;
    if (pq_parquet_out_new(q, ref, wopts, sink, &po, err) != PQ_OK) {
        if (n_files > 0) pq_error_prefix(err, "%s: ", scan_file_name(&files[0]));
        return PQ_ERR;
    }
    int rc = scan_all(q, files, n_files, opts, po, sink, stats, err);
    if (rc == PQ_OK) rc = pq_parquet_out_finish(po, err);
    pq_parquet_out_free(po);
    return rc;
}

int pq_scan_plan(const pq_query *q, const pq_scan_file *files_in, int n_files, const pq_scan_opts *opts,
                 pq_buf *out, pq_plan_totals *totals, pq_error *err)
{
    pq_scan_file *files = malloc(sizeof *files * (size_t)(n_files ? n_files : 1));
    if (!files) return PQ_NOMEM(err);
    memcpy(files, files_in, sizeof *files * (size_t)n_files);
    pq_scan_files_forget_verdicts(files, n_files); /* the plan shows each file's row groups */
    bool *opened = malloc((size_t)(n_files ? n_files : 1));
    if (!opened) {
        free(files);
        return PQ_NOMEM(err);
    }
    bool lazy = false;
    for (int f = 0; f < n_files; f++) lazy |= (opened[f] = files[f].footer == NULL);
    if (lazy && !opts->open_file) {
        free(files);
        free(opened);
        return pq_fail(err, PQ_E_USAGE, "a file without a footer and no way to open it");
    }
    if (lazy && open_files_parallel(opts, q, files, 0, n_files, err) != PQ_OK) {
        free(files);
        free(opened);
        return PQ_ERR;
    }
    scan_state s;
    int rc = init_state(&s, q, files, n_files, 0, opened, opts, err);
    pq_plan_totals t;
    memset(&t, 0, sizeof t);
    t.dirs_pruned = opts->dirs_pruned;
    t.log_rung = opts->file_ranges != NULL;
    int64_t planned = 0; /* rows before the row group, under a limit without a filter (as the scan caps units) */
    for (int f = 0; rc == PQ_OK && f < n_files; f++) {
        const file_state *fs = &s.fs[f];
        t.files++;
        if (fs->bind_failed) {
            *err = fs->bind_err;
            rc = PQ_ERR;
            break;
        }
        if (fs->pruned) {
            /* its row groups uncounted: its footer is not read */
            if (fs->pruned_log) t.files_pruned_log++;
            else t.files_pruned++;
            if (pq_buf_printf(out,
                              fs->pruned_log       ? "file %s: pruned by log statistics\n"
                              : fs->pruned_missing ? "file %s: pruned: it lacks a column the filter needs (NULL in "
                                                     "every row)\n"
                                                   : "file %s: pruned by partition values\n",
                              scan_file_name(&files[f])))
                rc = PQ_NOMEM(err);
            continue;
        }
        const pq_file_meta *m = &files[f].footer->meta;
        if (pq_buf_printf(out, "file %s: %d row groups\n", scan_file_name(&files[f]), m->n_row_groups)) {
            rc = PQ_NOMEM(err);
            break;
        }
        pq_plan_input in;
        scan_plan_input_of(&s, f, &in);
        for (int32_t g = 0; g < m->n_row_groups && rc == PQ_OK; g++) {
            pq_arena arena;
            pq_arena_init(&arena, 16384);
            pq_rg_plan p;
            rc = pq_plan_row_group(&in, g, &arena, &p, err);
            bool capped = s.q->limit >= 0 && !fs->pred;
            if (rc == PQ_OK && capped && planned >= s.q->limit) {
                t.row_groups++;
                t.row_groups_past_limit++;
                t.rows += (uint64_t)p.rows;
                t.bytes_total += p.bytes_total;
                if (pq_buf_printf(out, "  row group %d: %lld rows: past the limit, not read\n", (int)g, (long long)p.rows))
                    rc = PQ_NOMEM(err);
                pq_arena_free(&arena);
                continue;
            }
            if (rc == PQ_OK && capped) {
                int64_t left = s.q->limit - planned;
                planned += m->row_groups[g].num_rows;
                if (m->row_groups[g].num_rows > left) rc = pq_plan_limit_rows(&in, left, &arena, &p, err);
            }
            if (rc == PQ_OK) {
                pq_plan_totals_add(&t, &p);
                if (pq_plan_rg_text(&p, out)) rc = PQ_NOMEM(err);
            } else {
                pq_error_prefix(err, "%s: ", scan_file_name(&files[f]));
            }
            pq_arena_free(&arena);
        }
    }
    if (rc == PQ_OK && s.q->pred) {
        pq_buf_puts(out, "predicate: ");
        pq_expr_text(s.q->pred, out);
        pq_buf_puts(out, "\n");
    }
    if (rc == PQ_OK && pq_plan_totals_text(&t, out)) rc = PQ_NOMEM(err);
    if (totals) *totals = t;
    free_state(&s);
    free(files);
    free(opened);
    return rc;
}
