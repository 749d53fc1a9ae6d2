/* The results of views (the lake's result cache): the jobs that scan a
 * view's snapshot into data.csv or data.parquet (and plan.txt, schema.txt
 * as text), the results kept for reuse within cache_size beside the bytes
 * writes stage, and a data.parquet's version (a hash of its key). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lake_internal.h"
#include "query.h"
#include "render.h"
#include "result.h"
#include "scan.h"

/* How far a data.csv producer may run ahead of its furthest reader. */
#define RESULT_AHEAD (64u << 20)

/* ------------------------------------------------------------------ data.csv jobs */

typedef struct data_job {
    pq_lake *l;
    view v;                      /* owns its arena; v.t referenced */
    view_query vq;               /* its files, its query (against their union once the job runs) */
    bool plan_only;              /* plan.txt */
    bool parquet;                /* data.parquet */
    char what[512];              /* the view, for debug log lines */
} data_job;

static void data_job_free(void *p)
{
    data_job *j = p;
    lake_view_query_free(j->l, &j->vq);
    lake_view_free(j->l, &j->v);
    free(j);
}

static void account_scan(pq_lake *l, const pq_scan_stats *st)
{
    const pq_plan_totals *t = &st->plan;
    atomic_fetch_add(&l->c.files_total, t->files);
    atomic_fetch_add(&l->c.files_pruned, t->files_pruned);
    atomic_fetch_add(&l->c.files_pruned_log, t->files_pruned_log);
    atomic_fetch_add(&l->c.dirs_pruned, t->dirs_pruned);
    atomic_fetch_add(&l->c.row_groups_total, t->row_groups);
    for (int r = 0; r < PQ_RUNG_COUNT; r++) atomic_fetch_add(&l->c.row_groups_pruned[r], t->row_groups_pruned[r]);
    atomic_fetch_add(&l->c.row_groups_fully_matched, t->row_groups_fully_matched);
    atomic_fetch_add(&l->c.pages_total, t->pages);
    atomic_fetch_add(&l->c.pages_pruned, t->pages_pruned);
    atomic_fetch_add(&l->c.rows_decoded, st->values_decoded);
    atomic_fetch_add(&l->c.rows_out, st->rows_out);
}

/* Opens the snapshot's files and footers (the footer cache saves re-reads). */
/* The snapshot's files for a scan: names and partition values now, file and
 * footer when the scan reaches them (open_snapshot_file), so that the first
 * rows of a big table do not wait for every footer. */
typedef struct open_ctx {
    pq_lake *l;
    const snapshot *s;
    const char *table_root;      /* the view's table (forgotten when a file changed) */
    const table_info *t;         /* how its footers are seen */
    pq_scan_file *files;
    pq_footer_ref **refs;
    uint64_t **deleted;          /* a table format's deleted rows per file (NULL: Hive) */
} open_ctx;

int lake_forget_listed(pq_lake *l, const char *table_root, const char *path, pq_error *err)
{
    if (err->cls != PQ_E_STALE) return PQ_ERR;
    err->cls = PQ_E_IO; /* a view that fails: EIO, reported */
    const char *slash = path ? strrchr(path, '/') : NULL;
    char *dir = !path ? NULL : slash ? strndup(path, (size_t)(slash - path)) : strdup("");
    if (path && !dir) return PQ_ERR; /* out of memory: the next listing after the TTL sees the change */
    pq_store_cached_invalidate(l->store, dir);
    free(dir);
    if (table_root) lake_table_forget(l, table_root);
    return PQ_ERR;
}

static int open_snapshot_file(void *ctx, int f, pq_scan_file *sf, pq_error *err)
{
    open_ctx *oc = ctx;
    const pq_table_file *tf = &oc->s->files->files[f];
    if (!oc->files[f].file) {
        if (oc->l->store->ops->open(oc->l->store, tf->path, &oc->files[f].file, err) != PQ_OK) return PQ_ERR;
        /* Replaced since the snapshot's listing: the view fails rather than
         * mix versions (SPEC 8), and the next open lists anew.  A table
         * format's file is the one its log added when it has its size. */
        if ((oc->s->tf ? pq_file_check_size(oc->files[f].file, tf->st.size, err)
                       : pq_file_check_listed(oc->files[f].file, &tf->st, err)) != PQ_OK)
            return lake_forget_listed(oc->l, oc->table_root, tf->path, err);
    }
    pq_footer_view as;
    lake_footer_view(oc->t, &as);
    /* Read through the scan's own file: what the read brings in besides the
     * footer (all of a small file) is not read again for its row groups. */
    if (!oc->refs[f] && pq_footer_cache_get_from(oc->l->footers, oc->l->store, tf->path, &tf->st, &as,
                                                 oc->files[f].file, &oc->refs[f], err) != PQ_OK) {
        (void)lake_forget_listed(oc->l, oc->table_root, tf->path, err); /* when it changed since */
        pq_error_prefix(err, "%s: ", tf->path);
        return PQ_ERR;
    }
    oc->files[f].footer = pq_footer_ref_get(oc->refs[f]);
    sf->file = oc->files[f].file;
    sf->footer = oc->files[f].footer;
    /* A deletion vector: its rows are never output (the plan selects
     * around them, before any filter). */
    if (oc->deleted && !oc->deleted[f] && oc->s->tf->files[f].deletes.storage) {
        uint64_t n = 0;
        if (pq_tf_deleted_rows(oc->s->tf, oc->l->store, f, &oc->deleted[f], &n, err) != PQ_OK) return PQ_ERR;
        oc->files[f].deleted_rows = sf->deleted_rows = oc->deleted[f];
        oc->files[f].n_deleted = sf->n_deleted = n;
    }
    return PQ_OK;
}

/* The scan is done with file f: its descriptor and footer go (a scan of a
 * big table holds a batch of them, not the table's). */
static void release_snapshot_file(void *ctx, int f)
{
    open_ctx *oc = ctx;
    pq_file_close(oc->files[f].file);
    oc->files[f].file = NULL;
    oc->files[f].footer = NULL;
    if (oc->refs[f]) pq_footer_ref_put(oc->l->footers, oc->refs[f]);
    oc->refs[f] = NULL;
    if (oc->deleted) {
        free(oc->deleted[f]);
        oc->deleted[f] = NULL;
        oc->files[f].deleted_rows = NULL;
        oc->files[f].n_deleted = 0;
    }
}

/* pq_scan_opts.file_ranges: what a table format's log says of a file
 * (Delta add.stats), before its footer is read.  The snapshot's files are
 * the table's, in its order: the scan's index is the snapshot's. */
static int log_file_ranges(void *ctx, int index, const pq_expr_column *cols, int n_cols, pq_arena *arena,
                           pq_col_range *ranges)
{
    const open_ctx *oc = ctx;
    return pq_tf_file_ranges(oc->s->tf, index, cols, n_cols, arena, ranges);
}

/* The scan's options for the snapshot's files (oc, opened by open_files). */
static void scan_opts_for(pq_lake *l, const snapshot *s, open_ctx *oc, pq_scan_opts *o)
{
    pq_scan_opts_init(o);
    o->threads = l->threads;
    o->open_file = open_snapshot_file;
    o->release_file = release_snapshot_file;
    o->open_parallel = l->store->parallel_requests;
    o->dirs_pruned = (uint64_t)s->files->n_dirs_pruned;
    o->open_ctx = oc;
    if (s->tf) {
        o->file_ranges = log_file_ranges;
        o->ranges_ctx = oc;
    }
}

static int open_files(pq_lake *l, const snapshot *s, const view *v, open_ctx *oc, pq_error *err)
{
    int n = s->files->n_files;
    oc->l = l;
    oc->s = s;
    oc->table_root = v->t ? v->t->root : NULL;
    oc->t = v->t;
    oc->files = calloc((size_t)n + 1, sizeof *oc->files);
    oc->refs = calloc((size_t)n + 1, sizeof *oc->refs);
    if (!oc->files || !oc->refs) return PQ_NOMEM(err);
    if (s->tf && !(oc->deleted = calloc((size_t)n + 1, sizeof *oc->deleted))) return PQ_NOMEM(err);
    for (int f = 0; f < n; f++) {
        oc->files[f].name = s->files->files[f].path;
        oc->files[f].part_values = (const char *const *)s->values[f];
    }
    return PQ_OK;
}

static void close_files(open_ctx *oc)
{
    for (int f = 0; oc->s && oc->s->files && f < oc->s->files->n_files; f++) {
        if (oc->files) pq_file_close(oc->files[f].file);
        if (oc->refs && oc->refs[f]) pq_footer_ref_put(oc->l->footers, oc->refs[f]);
        if (oc->deleted) free(oc->deleted[f]);
    }
    free(oc->files);
    free(oc->refs);
    free(oc->deleted);
}

static int data_job_run(void *ctx, const pq_sink *sink, pq_error *err)
{
    data_job *j = ctx;
    pq_lake *l = j->l;
    uint64_t started = pq_now_ms();
    open_ctx oc = {0};
    const snapshot *snap = &j->vq.s;
    int rc = open_files(l, snap, &j->v, &oc, err);
    pq_scan_opts o;
    if (rc == PQ_OK) scan_opts_for(l, snap, &oc, &o);
    /* The union of the files' schemas: on the job's thread, not the
     * open's, its footers kept for the scan. */
    lake_scan_files sf = {oc.files, &o};
    if (rc == PQ_OK && lake_view_query_complete(l, &j->v, &j->vq, &sf, err) != PQ_OK)
        rc = lake_forget_listed(l, oc.table_root, NULL, err); /* a file changed since: as the scan */
    const pq_query *q = j->vq.q;
    if (rc == PQ_OK) {
        pq_scan_stats st;
        memset(&st, 0, sizeof st);
        if (j->parquet) {
            /* With no file, a file of the view's schema and no rows. */
            /* The table's writer settings from the ini, else the defaults. */
            const pq_lake_table_decl *d = lake_decl_of(l, j->v.t->name);
            pq_write_opts wo;
            pq_write_opts_init(&wo);
            if (d && d->has_write) wo = d->write;
            rc = pq_scan_parquet(q, lake_view_schema(&j->vq), oc.files, snap->files->n_files, &o, &wo, sink, &st, err);
        } else if (snap->files->n_files == 0) {
            /* No file can match: the header only. */
            pq_buf h;
            pq_buf_init(&h);
            if (pq_query_header(q, &h)) rc = PQ_NOMEM(err);
            else rc = sink->write(sink->ctx, h.data, h.len, err);
            pq_buf_free(&h);
            st.plan.dirs_pruned = o.dirs_pruned;
        } else {
            rc = pq_scan_csv(q, oc.files, snap->files->n_files, &o, sink, &st, err);
        }
        /* A file found changed when it was opened again (the descriptor
         * set had closed it): the message names it, so every listing goes. */
        if (rc != PQ_OK) (void)lake_forget_listed(l, oc.table_root, NULL, err);
        account_scan(l, &st);
        if (l->log_level >= PQ_LOG_DEBUG)
            lake_logf(l, PQ_LOG_DEBUG,
                      "%s: scan %s in %llu ms: %llu rows out; row groups %llu read of %llu; %llu bytes fetched", j->what,
                      rc == PQ_OK ? "done" : "stopped", (unsigned long long)(pq_now_ms() - started),
                      (unsigned long long)st.rows_out, (unsigned long long)st.row_groups_read,
                      (unsigned long long)st.plan.row_groups, (unsigned long long)st.bytes_fetched);
    }
    close_files(&oc);
    if (rc != PQ_OK && err->cls != PQ_E_CANCELLED) pq_lake_report(l, err);
    return rc;
}

/* ------------------------------------------------------------------ text files */

int lake_schema_text(pq_lake *l, view *v, pq_buf *out, pq_error *err)
{
    view_query vq;
    PQ_TRY(lake_view_query(l, v, &vq, err));
    const pq_query *q = vq.q;
    int rc = pq_buf_puts(out, "name,type,nullable,partition\n");
    for (int j = 0; j < q->n_out && !rc; j++) {
        const pq_expr_column *c = &q->cols[q->out[j]];
        const pq_node *nd = c->partition ? c->node : pq_schema_find(q->schema, c->name);
        pq_buf ty;
        pq_buf_init(&ty);
        rc |= pq_node_type_text(nd, &ty);
        rc |= pq_csv_field(c->name, strlen(c->name), out);
        rc |= pq_buf_append(out, ",", 1);
        rc |= pq_csv_field(ty.data ? ty.data : "", ty.len, out);
        rc |= pq_buf_printf(out, ",%s,%s\n", nd->nullable ? "true" : "false", c->partition ? "true" : "false");
        pq_buf_free(&ty);
    }
    lake_view_query_free(l, &vq);
    return rc ? PQ_NOMEM(err) : PQ_OK;
}

int lake_format_no_files_text(const view *v, pq_buf *out, pq_error *err)
{
    const pq_tf_snapshot *snap = v->t->snap;
    int n = v->n_select ? v->n_select : snap->n_cols;
    int rc = 0;
    if (v->file == F_SCHEMA) rc |= pq_buf_puts(out, "name,type,nullable,partition\n");
    if (v->file == F_PLAN) rc |= pq_tf_describe(snap, out) | pq_buf_puts(out, "no live files (a table without rows)\n");
    for (int j = 0; j < n && v->file != F_PLAN; j++) {
        const char *name = v->n_select ? v->select[j] : snap->cols[j].name;
        const pq_tf_column *c = NULL;
        for (int i = 0; i < snap->n_cols && !c; i++)
            if (!strcmp(snap->cols[i].name, name)) c = &snap->cols[i];
        if (!c) return pq_fail(err, PQ_E_USAGE, "select: unknown column '%s'", name);
        if (v->file == F_DATA_CSV) {
            rc |= j ? pq_buf_append(out, ",", 1) : 0;
            rc |= pq_csv_field(name, strlen(name), out);
        } else {
            rc |= pq_csv_field(name, strlen(name), out);
            rc |= pq_buf_append(out, ",", 1);
            rc |= pq_csv_field(c->type, strlen(c->type), out);
            rc |= pq_buf_printf(out, ",%s,%s\n", c->nullable ? "true" : "false", c->part >= 0 ? "true" : "false");
        }
    }
    if (v->file == F_DATA_CSV && n) rc |= pq_buf_append(out, "\n", 1);
    return rc ? PQ_NOMEM(err) : PQ_OK;
}

/* plan.txt's texts, by the view's result key (its files' identities, its
 * query, the table's version): a plan once read has its exact size in a
 * stat, and the next open serves that same text (tools that copy by size,
 * or with sendfile, copied a size-0 plan.txt as empty).  At most
 * PLAN_MEMO_BYTES in all, the oldest dropped; a larger plan is not kept
 * (its size stays 0). */
#define PLAN_MEMO_BYTES ((size_t)4 << 20)

typedef struct lake_plan {
    struct lake_plan *next;
    char *key;
    pq_buf text;
} lake_plan;

static void plan_free(lake_plan *p)
{
    free(p->key);
    pq_buf_free(&p->text);
    free(p);
}

void lake_plans_free(pq_lake *l)
{
    for (lake_plan *p = l->plans, *next; p; p = next) {
        next = p->next;
        plan_free(p);
    }
    l->plans = NULL;
}

/* Under l->mu: the plan kept for key, moved to the front. */
static lake_plan *plan_find_locked(pq_lake *l, const char *key)
{
    for (lake_plan **p = &l->plans; *p; p = &(*p)->next)
        if (!strcmp((*p)->key, key)) {
            lake_plan *found = *p;
            *p = found->next;
            found->next = l->plans;
            l->plans = found;
            return found;
        }
    return NULL;
}

static void plan_keep(pq_lake *l, const char *key, const pq_buf *text)
{
    if (text->len > PLAN_MEMO_BYTES / 4) return;
    lake_plan *p = calloc(1, sizeof *p);
    if (!p || !(p->key = strdup(key)) || pq_buf_append(&p->text, text->data ? text->data : "", text->len)) {
        if (p) plan_free(p);
        return;
    }
    pthread_mutex_lock(&l->mu);
    if (plan_find_locked(l, key)) {
        pthread_mutex_unlock(&l->mu);
        plan_free(p);
        return;
    }
    p->next = l->plans;
    l->plans = p;
    size_t total = 0;
    lake_plan **at = &l->plans;
    while (*at && total + (*at)->text.len <= PLAN_MEMO_BYTES) {
        total += (*at)->text.len;
        at = &(*at)->next;
    }
    lake_plan *dropped = *at;
    *at = NULL;
    pthread_mutex_unlock(&l->mu);
    for (lake_plan *next; dropped; dropped = next) {
        next = dropped->next;
        plan_free(dropped);
    }
}

bool lake_plan_size(pq_lake *l, const char *key, uint64_t *size)
{
    pthread_mutex_lock(&l->mu);
    lake_plan *p = plan_find_locked(l, key);
    if (p) *size = p->text.len;
    pthread_mutex_unlock(&l->mu);
    return p != NULL;
}

static int plan_make(pq_lake *l, view *v, view_query *vq, pq_buf *out, pq_error *err);

int lake_plan_text(pq_lake *l, view *v, pq_buf *out, pq_error *err)
{
    view_query vq;
    PQ_TRY(lake_view_query(l, v, &vq, err));
    pthread_mutex_lock(&l->mu);
    lake_plan *p = plan_find_locked(l, vq.s.key);
    int rc = p && pq_buf_append(out, p->text.data ? p->text.data : "", p->text.len) ? PQ_NOMEM(err) : PQ_OK;
    pthread_mutex_unlock(&l->mu);
    if (!p && rc == PQ_OK) {
        rc = plan_make(l, v, &vq, out, err);
        if (rc == PQ_OK) plan_keep(l, vq.s.key, out);
    }
    lake_view_query_free(l, &vq);
    return rc;
}

static int plan_make(pq_lake *l, view *v, view_query *vq, pq_buf *out, pq_error *err)
{
    /* Which snapshot of a table format the plan is of. */
    if (v->t->snap && pq_tf_describe(v->t->snap, out)) return PQ_NOMEM(err);
    const snapshot *s = &vq->s;
    open_ctx oc = {0};
    int rc = open_files(l, s, v, &oc, err);
    if (rc == PQ_OK) {
        pq_scan_opts o;
        scan_opts_for(l, s, &oc, &o);
        o.release_file = NULL; /* the plan holds what it opened until it is done, as before */
        if (s->files->n_files == 0) {
            int e = pq_buf_puts(out, "no files can match\n");
            if (o.dirs_pruned)
                e |= pq_buf_printf(out, "files: 0 total; %llu partition director%s pruned at listing (files not listed)\n",
                                   (unsigned long long)o.dirs_pruned, o.dirs_pruned == 1 ? "y" : "ies");
            rc = e ? PQ_NOMEM(err) : PQ_OK;
        }
        else rc = pq_scan_plan(vq->q, oc.files, s->files->n_files, &o, out, NULL, err);
        if (rc != PQ_OK) (void)lake_forget_listed(l, oc.table_root, NULL, err); /* as data_job_run */
    }
    close_files(&oc);
    return rc;
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int lake_view_match_values(pq_lake *l, const view *v, int level, lake_values *out, pq_error *err)
{
    memset(out, 0, sizeof *out);
    view_query vq;
    PQ_TRY(lake_view_files(l, v, &vq, err));
    const snapshot *s = &vq.s;
    int n = s->files->n_files;
    open_ctx oc = {0};
    bool *may = calloc((size_t)n + 1, sizeof *may);
    out->vals = calloc((size_t)n + 1, sizeof *out->vals);
    int rc = may && out->vals ? open_files(l, s, v, &oc, err) : PQ_NOMEM(err);
    if (rc == PQ_OK) {
        pq_scan_opts o;
        scan_opts_for(l, s, &oc, &o);
        /* A table format's log says it without a footer: no file opened. */
        rc = pq_scan_files_may_match(vq.q, oc.files, n, &o, !s->tf, may, err);
    }
    for (int f = 0; rc == PQ_OK && f < n; f++) {
        if (!may[f]) continue;
        const char *val = s->values[f][level];
        if (!val) out->has_null = true;
        /* A partition's files are listed together: one copy of its value. */
        else if (out->n && !strcmp(out->vals[out->n - 1], val)) continue;
        else if (!(out->vals[out->n++] = strdup(val))) rc = PQ_NOMEM(err);
    }
    close_files(&oc);
    free(may);
    lake_view_query_free(l, &vq);
    if (rc != PQ_OK) {
        lake_values_free(out);
        return PQ_ERR;
    }
    qsort(out->vals, (size_t)out->n, sizeof *out->vals, cmp_strp);
    out->known = true;
    return PQ_OK;
}

bool lake_values_has(const lake_values *vs, const char *val)
{
    if (!vs->known) return true;
    if (!val) return vs->has_null;
    return bsearch(&val, vs->vals, (size_t)vs->n, sizeof *vs->vals, cmp_strp) != NULL;
}

void lake_values_free(lake_values *vs)
{
    for (int i = 0; vs->vals && i < vs->n; i++) free(vs->vals[i]);
    free(vs->vals);
    memset(vs, 0, sizeof *vs);
}

/* The union of the snapshot's files' schemas, their footers read as a
 * scan reads them (through the footer cache, open_parallel at once), none
 * held after: the cache keeps them for the scan within its budget. */
int lake_files_union(pq_lake *l, const view *v, const snapshot *s, const pq_query *q, const pq_footer *seed,
                     pq_footer **out, pq_error *err)
{
    open_ctx oc = {0};
    int rc = open_files(l, s, v, &oc, err);
    if (rc == PQ_OK) {
        pq_scan_opts o;
        scan_opts_for(l, s, &oc, &o);
        /* No scan follows with these files: no statistics verdicts to make
         * (q still keeps out the files its partition values rule out). */
        o.no_stats = true;
        rc = pq_scan_schema_union_from(seed, v->t->ref_path, oc.files, s->files->n_files, q, &o, 0, out, err);
        if (rc != PQ_OK) (void)lake_forget_listed(l, oc.table_root, NULL, err); /* as data_job_run */
    }
    close_files(&oc);
    return rc;
}

/* ------------------------------------------------------------------ results */

/* A view in a log line: its deepest real directory, then its virtual
 * components (as written) and its file. */
static void describe_view(const view *v, char *out, size_t cap)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_buf_puts(&b, v->real_dir && v->real_dir[0] ? v->real_dir : "/");
    for (int i = 0; i < v->n_eq; i++)
        pq_buf_printf(&b, "/%s=%s", v->eq_cols[i], v->eq_vals[i] ? v->eq_vals[i] : "NULL");
    for (int i = 0; i < v->n_wheres; i++) pq_buf_printf(&b, "/where=%s", v->wheres[i]);
    for (int i = 0; i < v->n_select; i++) pq_buf_printf(&b, "%s%s", i ? "," : "/select=", v->select[i]);
    if (v->limit >= 0) pq_buf_printf(&b, "/limit=%lld", (long long)v->limit);
    if (v->sized >= 0) pq_buf_printf(&b, "/sized=%d", v->sized);
    pq_buf_printf(&b, "/%s", v->file == F_DATA_PARQUET ? "data.parquet" : "data.csv");
    snprintf(out, cap, "%s", b.data ? b.data : "(out of memory)");
    pq_buf_free(&b);
}

int lake_get_result(pq_lake *l, view *v, pq_result **out, char **key_out, pq_error *err)
{
    data_job *j = calloc(1, sizeof *j);
    if (!j) return PQ_NOMEM(err);
    if (lake_view_files(l, v, &j->vq, err) != PQ_OK) {
        free(j);
        return PQ_ERR;
    }
    uint64_t now = pq_now_ms();
    pthread_mutex_lock(&l->mu);
    for (result_entry *e = l->results; e; e = e->next) {
        if (strcmp(e->key, j->vq.s.key)) continue;
        pq_result_state st;
        pq_result_state_of(e->res, &st);
        if (st.failed) continue;
        e->readers++;
        e->last_used_ms = now;
        pq_result_ref(e->res);
        *out = e->res;
        *key_out = strdup(e->key);
        pthread_mutex_unlock(&l->mu);
        atomic_fetch_add(&l->c.results_reused, 1);
        if (l->log_level >= PQ_LOG_DEBUG) {
            char what[512];
            describe_view(v, what, sizeof what);
            lake_logf(l, PQ_LOG_DEBUG, "%s: served from the result cache (%llu bytes%s)", what,
                      (unsigned long long)st.size, st.done ? "" : " so far, still running");
        }
        lake_view_query_free(l, &j->vq);
        free(j);
        return *key_out ? PQ_OK : PQ_NOMEM(err);
    }
    pthread_mutex_unlock(&l->mu);
    result_entry *e = calloc(1, sizeof *e);
    char *key = strdup(j->vq.s.key);
    if (!e || !key) {
        free(e);
        free(key);
        lake_view_query_free(l, &j->vq);
        free(j);
        return PQ_NOMEM(err);
    }
    e->key = strdup(key);
    if (l->log_level >= PQ_LOG_DEBUG) {
        describe_view(v, j->what, sizeof j->what);
        lake_logf(l, PQ_LOG_DEBUG, "%s: scan started over %d file%s", j->what, j->vq.s.files->n_files,
                  j->vq.s.files->n_files == 1 ? "" : "s");
    }
    j->l = l;
    j->parquet = v->kind == K_VIEW_FILE && v->file == F_DATA_PARQUET;
    j->v = *v;
    memset(v, 0, sizeof *v); /* the job owns the view now */
    pq_result *res;
    /* data.parquet is read only once complete: nothing may hold it back. */
    uint64_t ahead = j->parquet ? UINT64_MAX / 4 : RESULT_AHEAD;
    if (pq_result_start(l->cache_dir, ahead, data_job_run, j, data_job_free, &res, err) != PQ_OK) {
        free(e->key);
        free(e);
        free(key);
        return PQ_ERR;
    }
    atomic_fetch_add(&l->c.results_started, 1);
    e->res = res; /* the cache's reference */
    e->readers = 1;
    e->last_used_ms = now;
    pq_result_ref(res); /* the caller's */
    pthread_mutex_lock(&l->mu);
    e->next = l->results;
    l->results = e;
    pthread_mutex_unlock(&l->mu);
    *out = res;
    *key_out = key;
    return PQ_OK;
}

/* Evicts complete, unread results beyond the cache budget (oldest first):
 * cache_size less the bytes being staged by writes. */
static void evict_locked(pq_lake *l, result_entry **victims)
{
    uint64_t budget = l->cache_size > l->staged_bytes ? l->cache_size - l->staged_bytes : 0;
    for (;;) {
        uint64_t total = 0;
        result_entry *oldest = NULL, **oldest_pp = NULL;
        for (result_entry **pp = &l->results; *pp; pp = &(*pp)->next) {
            result_entry *e = *pp;
            if (e->readers) continue;
            total += e->size;
            if (!oldest || e->last_used_ms < oldest->last_used_ms) {
                oldest = e;
                oldest_pp = pp;
            }
        }
        if (!oldest || total <= budget) return;
        *oldest_pp = oldest->next;
        oldest->next = *victims;
        *victims = oldest;
    }
}

static void free_victims(result_entry *victims)
{
    while (victims) {
        result_entry *next = victims->next;
        pq_result_unref(victims->res);
        free(victims->key);
        free(victims);
        victims = next;
    }
}

int lake_stage_reserve(pq_lake *l, uint64_t *reserved, uint64_t end, pq_error *err)
{
    result_entry *victims = NULL;
    int rc = PQ_OK;
    pthread_mutex_lock(&l->mu);
    if (end > *reserved) {
        uint64_t more = end - *reserved;
        if (l->staged_bytes + more > l->cache_size || l->staged_bytes + more < l->staged_bytes) {
            rc = pq_fail(err, PQ_E_NOSPACE, "the cache is full: %llu bytes of writes are staged, cache_size is %llu",
                         (unsigned long long)(l->staged_bytes + more), (unsigned long long)l->cache_size);
        } else {
            l->staged_bytes += more;
            *reserved = end;
            evict_locked(l, &victims);
        }
    }
    pthread_mutex_unlock(&l->mu);
    free_victims(victims);
    return rc;
}

void lake_stage_release(pq_lake *l, uint64_t *reserved, uint64_t end)
{
    pthread_mutex_lock(&l->mu);
    if (end < *reserved) {
        l->staged_bytes -= *reserved - end;
        *reserved = end;
    }
    pthread_mutex_unlock(&l->mu);
}

void lake_release_result(pq_lake *l, pq_result *res, const char *key)
{
    result_entry *victims = NULL;
    bool kept = false;
    pthread_mutex_lock(&l->mu);
    for (result_entry **pp = &l->results; *pp; pp = &(*pp)->next) {
        result_entry *e = *pp;
        if (e->res != res || strcmp(e->key, key)) continue;
        if (--e->readers == 0) {
            pq_result_state st;
            pq_result_state_of(res, &st);
            if (!st.done || st.failed) {
                /* Nobody reads it any more: stop the scan, forget it. */
                *pp = e->next;
                e->next = victims;
                victims = e;
                if (!st.done) atomic_fetch_add(&l->c.results_cancelled, 1);
            } else {
                e->size = st.size;
                e->last_used_ms = pq_now_ms();
                /* Kept, unread: its pages leave the daemon's RSS (under mu,
                 * so no reader takes it meanwhile). */
                pq_result_unmap(res);
                kept = true;
            }
        }
        break;
    }
    evict_locked(l, &victims);
    pthread_mutex_unlock(&l->mu);
    if (kept) pq_result_reap(res); /* its ended producer's stack goes (our reference keeps res) */
    pq_result_unref(res);
    free_victims(victims);
}

int lake_materialize(pq_lake *l, view *v, pq_result **out, char **key_out, bool (*stop)(void *), void *stop_ctx,
                       bool *job_ran, pq_error *err)
{
    *job_ran = false;
    PQ_TRY(lake_get_result(l, v, out, key_out, err));
    *job_ran = true; /* its failures are reported by the job */
    if (pq_result_wait(*out, stop, stop_ctx, err) == PQ_OK) return PQ_OK;
    lake_release_result(l, *out, *key_out);
    free(*key_out);
    *out = NULL;
    *key_out = NULL;
    return PQ_ERR;
}

uint64_t lake_version_of_key(const char *key)
{
    return pq_hash_str(key) | 1;
}

bool lake_take_held_version(pq_lake *l, const view *v, uint64_t version, pq_result **out, char **key_out)
{
    /* The key's view part: the query against the schema file, without a
     * listing when it compiles there (lake_view_files). */
    view_query vq = {0};
    pq_query *q;
    pq_footer_ref *ref;
    pq_error err;
    pq_error_clear(&err);
    if (lake_compile_view(l, v, &q, &ref, &err) == PQ_OK) pq_footer_ref_put(l->footers, ref);
    else if (lake_view_files(l, v, &vq, &err) == PQ_OK) q = vq.q, vq.q = NULL;
    else return false;
    pq_buf prefix;
    pq_buf_init(&prefix);
    int bad = lake_view_key(v, q, &prefix);
    pq_query_free(q);
    lake_view_query_free(l, &vq);
    bool found = false;
    pthread_mutex_lock(&l->mu);
    for (result_entry *e = bad ? NULL : l->results; e; e = e->next) {
        if (lake_version_of_key(e->key) != version || strncmp(e->key, prefix.data, prefix.len)) continue;
        pq_result_state st;
        pq_result_state_of(e->res, &st);
        if (!st.done || st.failed) continue;
        char *key = strdup(e->key);
        if (!key) break;
        e->readers++;
        e->last_used_ms = pq_now_ms();
        pq_result_ref(e->res);
        *out = e->res;
        *key_out = key;
        found = true;
        break;
    }
    pthread_mutex_unlock(&l->mu);
    pq_buf_free(&prefix);
    if (found) atomic_fetch_add(&l->c.results_reused, 1);
    return found;
}


bool lake_result_size(pq_lake *l, const char *key, uint64_t *size)
{
    bool found = false;
    pthread_mutex_lock(&l->mu);
    for (result_entry *e = l->results; e; e = e->next) {
        if (strcmp(e->key, key)) continue;
        pq_result_state st;
        pq_result_state_of(e->res, &st);
        if (st.done && !st.failed) {
            *size = st.size;
            found = true;
        }
        break;
    }
    pthread_mutex_unlock(&l->mu);
    return found;
}
