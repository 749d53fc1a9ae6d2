/* The lake: the logic layer of a mount (lake.h).  Its state (tables
 * discovered, results kept, errors for /.pqfs/errors), its open and close,
 * and the public reads: stat, readdir, open and read of a path, which
 * lake_view.c resolves into a view and lake_results.c serves. */
#include "lake.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "fdcache.h"
#include "lake_internal.h"
#include "mem.h"
#include "numfmt.h"

void lake_logf(pq_lake *l, pq_log_level lv, const char *fmt, ...)
{
    if (!l->log) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    l->log(l->log_ctx, lv, msg);
}

static void lake_store_warn(void *ctx, const char *msg)
{
    lake_logf(ctx, PQ_LOG_WARN, "%s", msg);
}

/* in with each `from` that is followed by no further path character (or by
 * '/' when slash_too) replaced by `to`, into out (cap bytes, cut short). */
static void replace_path(const char *in, const char *from, bool slash_too, const char *to, char *out, size_t cap)
{
    size_t fl = strlen(from), tl = strlen(to), k = 0;
    while (*in && k + 1 < cap) {
        if (fl && !strncmp(in, from, fl)) {
            char next = in[fl];
            bool ends = slash_too ? next == '/' : !(next == '/' || next == '.' || next == '-' || next == '_' ||
                                                   (next >= '0' && next <= '9') || ((next | 32) >= 'a' && (next | 32) <= 'z'));
            if (ends) {
                size_t take = tl < cap - 1 - k ? tl : cap - 1 - k;
                memcpy(out + k, to, take);
                k += take;
                in += fl + (slash_too ? 1 : 0);
                continue;
            }
        }
        out[k++] = *in++;
    }
    out[k] = '\0';
}

/* An error as /.pqfs/errors shows it, which any reader of the mount may be
 * let see: paths relative to the lake, the cache directory by its name
 * (never the daemon's absolute lake or cache paths). */
static void shown_message(const pq_lake *l, const char *msg, char *out, size_t cap)
{
    char a[sizeof ((pq_error *)0)->msg + 64], b[sizeof a];
    snprintf(a, sizeof a, "%s", msg);
    const char *dir = l->store->local_dir;
    if (dir && dir[0]) {
        replace_path(a, dir, true, "", b, sizeof b);   /* /lake/t/x -> t/x */
        replace_path(b, dir, false, "/", a, sizeof a); /* /lake -> / */
    }
    if (l->cache_dir && l->cache_dir[0]) {
        replace_path(a, l->cache_dir, true, "cache_dir/", b, sizeof b);
        replace_path(b, l->cache_dir, false, "cache_dir", a, sizeof a);
    }
    snprintf(out, cap, "%s", a);
}

void pq_lake_report(pq_lake *l, const pq_error *err)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char line[sizeof err->msg + 64];
    size_t n = strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S ", &tm);
    shown_message(l, err->msg, line + n, sizeof line - n);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    lake_logf(l, err->cls == PQ_E_USAGE ? PQ_LOG_WARN : PQ_LOG_ERROR, "%s", err->msg);
    atomic_fetch_add(&l->c.errors, 1);
    pthread_mutex_lock(&l->mu);
    free(l->errors[l->err_head]);
    l->errors[l->err_head] = strdup(line);
    l->err_head = (l->err_head + 1) % ERROR_RING;
    if (l->n_errors < ERROR_RING) l->n_errors++;
    pthread_mutex_unlock(&l->mu);
}

/* ------------------------------------------------------------------ tables */

static void table_info_free(table_info *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_parts; i++) free(t->part_names[i]);
    free(t->part_names);
    free(t->part_types);
    free(t->name);
    free(t->root);
    free(t->ref_path);
    free(t->left_out);
    pq_footer_ref_put(NULL, t->typed_ref);
    pq_tf_snapshot_free(t->snap);
    free(t);
}

void lake_table_info_put(pq_lake *l, table_info *t)
{
    pthread_mutex_lock(&l->mu);
    bool last = --t->refs == 0;
    pthread_mutex_unlock(&l->mu);
    if (last) table_info_free(t);
}

const pq_lake_table_decl *lake_decl_of(const pq_lake *l, const char *name)
{
    for (int i = 0; i < l->n_decls; i++)
        if (!strcmp(l->decls[i].name, name)) return &l->decls[i];
    return NULL;
}

bool lake_table_was_made(pq_lake *l, const char *name)
{
    pthread_mutex_lock(&l->mu);
    bool made = false;
    for (int i = 0; i < l->n_made && !made; i++) made = !strcmp(l->made_tables[i], name);
    pthread_mutex_unlock(&l->mu);
    return made;
}

bool lake_table_known(pq_lake *l, const char *name)
{
    return lake_decl_of(l, name) || lake_table_was_made(l, name);
}

int lake_table_made(pq_lake *l, const char *name, pq_error *err)
{
    pthread_mutex_lock(&l->mu);
    char **m = realloc(l->made_tables, sizeof *m * (size_t)(l->n_made + 1));
    char *copy = strdup(name);
    if (m) l->made_tables = m;
    if (!m || !copy) {
        pthread_mutex_unlock(&l->mu);
        free(copy);
        return PQ_NOMEM(err);
    }
    l->made_tables[l->n_made++] = copy;
    pthread_mutex_unlock(&l->mu);
    return PQ_OK;
}

void lake_table_unmade(pq_lake *l, const char *name)
{
    pthread_mutex_lock(&l->mu);
    for (int i = 0; i < l->n_made; i++)
        if (!strcmp(l->made_tables[i], name)) {
            free(l->made_tables[i]);
            l->made_tables[i] = l->made_tables[--l->n_made];
            break;
        }
    pthread_mutex_unlock(&l->mu);
}

void lake_table_forget(pq_lake *l, const char *root)
{
    pthread_mutex_lock(&l->mu);
    table_info **pp = &l->tables;
    while (*pp) {
        table_info *t = *pp;
        if (strcmp(t->root, root)) {
            pp = &t->next;
            continue;
        }
        *pp = t->next; /* every version of it */
        if (--t->refs == 0) table_info_free(t);
    }
    pthread_mutex_unlock(&l->mu);
}

const char *lake_table_label(const char *name)
{
    return name[0] ? name : "(the mount root)";
}

/* Older versions of a table format's tables (as_of=N) kept besides the
 * ones views hold: a version never changes, so they are kept without a
 * TTL; past this many, the one fetched first goes. */
#define KEPT_VERSIONS 8

/* The cached discovery of root at version, fresh (a version always is),
 * one reference more; NULL when none.  An expired one is dropped, its
 * left-out report handed to *was_left_out. */
static table_info *cached_table_locked(pq_lake *l, const char *root, int64_t version, uint64_t now,
                                       char **was_left_out)
{
    for (table_info **pp = &l->tables; *pp; pp = &(*pp)->next) {
        table_info *t = *pp;
        if (strcmp(t->root, root) || t->version != version) continue;
        if (version >= 0 || t->fetched_ms >= now || now - t->fetched_ms <= l->ttl_ms) {
            t->refs++;
            return t;
        }
        *pp = t->next;
        *was_left_out = t->left_out;
        t->left_out = NULL;
        if (--t->refs == 0) table_info_free(t);
        return NULL;
    }
    return NULL;
}

/* Keeps t (a reference for the lake): the latest version of a table, or
 * one of KEPT_VERSIONS older ones. */
static void keep_table_locked(pq_lake *l, table_info *t)
{
    t->next = l->tables;
    l->tables = t;
    if (t->version < 0) return;
    int kept = 0;
    table_info **oldest = NULL;
    for (table_info **pp = &l->tables; *pp; pp = &(*pp)->next) {
        if ((*pp)->version < 0) continue;
        kept++;
        if (!oldest || (*pp)->fetched_ms <= (*oldest)->fetched_ms) oldest = pp;
    }
    if (kept <= KEPT_VERSIONS || !oldest || *oldest == t) return;
    table_info *drop = *oldest;
    *oldest = drop->next;
    if (--drop->refs == 0) table_info_free(drop);
}

/* A new table_info of pt's layout and files (the first in table order, or
 * for a table format the newest, is the schema file). */
static table_info *table_info_of(const char *name, const char *root, int64_t version, const pq_table *pt, bool newest)
{
    table_info *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->version = version;
    t->name = strdup(name);
    t->root = strdup(root);
    t->n_parts = pt->n_parts;
    t->part_names = calloc((size_t)pt->n_parts + 1, sizeof *t->part_names);
    t->part_types = calloc((size_t)pt->n_parts + 1, sizeof *t->part_types);
    if (!t->name || !t->root || !t->part_names || !t->part_types) goto oom;
    for (int i = 0; i < pt->n_parts; i++) {
        t->part_names[i] = strdup(pt->part_names[i]);
        if (!t->part_names[i]) goto oom;
        t->part_types[i] = pt->part_types[i];
    }
    t->n_files = pt->n_files;
    if (pt->n_files > 0) {
        const pq_table_file *ref = &pt->files[newest ? pt->n_files - 1 : 0];
        t->ref_path = strdup(ref->path);
        if (!t->ref_path) goto oom;
        t->ref_id = ref->st;
    }
    return t;
oom:
    table_info_free(t);
    return NULL;
}

/* Said once per change of a discovery's report of paths left out (SPEC
 * section 2: not silently, but not at every rediscovery either). */
static int report_left_out(pq_lake *l, table_info *t, const pq_table *pt, const char *was_left_out, pq_error *err)
{
    if (pt->n_ignored <= 0) return PQ_OK;
    pq_error why;
    pq_fail(&why, PQ_E_USAGE, "table '%s': %d path%s left out, not fitting the table's layout, e.g. %s",
            lake_table_label(t->name), pt->n_ignored, pt->n_ignored == 1 ? "" : "s", pt->ignored_first);
    if (!(t->left_out = strdup(why.msg))) return PQ_NOMEM(err);
    if (was_left_out && !strcmp(was_left_out, why.msg)) return PQ_OK; /* unchanged */
    if (pt->n_files == 0) pq_lake_report(l, &why); /* every file left out: an error */
    else lake_logf(l, PQ_LOG_WARN, "%s", why.msg);
    return PQ_OK;
}

/* Discovers the table at root: Hive, or a Delta table's log (at version;
 * a version of a Hive table is PQ_E_USAGE). */
static int discover_table(pq_lake *l, const char *name, const char *root, int64_t version, pq_table **hive,
                          pq_tf_snapshot **snap, pq_error *err)
{
    *hive = NULL;
    *snap = NULL;
    const pq_lake_table_decl *d = lake_decl_of(l, name);
    pq_table_opts o = {0};
    if (d) {
        o.declared = d->parts;
        o.n_declared = d->n_parts;
    }
    if (version < 0 && pq_table_discover(l->store, root, &o, hive, err) == PQ_OK) return PQ_OK;
    pq_tf_kind kind = PQ_TF_HIVE;
    if (version < 0) {
        /* Discovery stops at a table format's root (PQ_E_UNSUPPORTED). */
        pq_error why = *err;
        if (why.cls != PQ_E_UNSUPPORTED || pq_tf_detect(l->store, root, &kind, err) != PQ_OK) return PQ_ERR;
        if (kind == PQ_TF_HIVE) {
            *err = why;
            return PQ_ERR;
        }
    }
    pq_tf_opts fo = {.version = version, .hive = &o, .apply_deletes = true};
    if (pq_tf_open(l->store, root, &fo, snap, err) != PQ_OK) {
        if (err->cls == PQ_E_USAGE && version >= 0)
            pq_fail(err, PQ_E_USAGE, "as_of=%lld: table '%s' is a Hive table, which has no versions",
                    (long long)version, lake_table_label(name));
        return PQ_ERR;
    }
    return PQ_OK;
}

/* A table format's schema file: the newest live file that holds every
 * column of its schema (the newest, as a rule: one footer read; a column
 * added later is not in older files, and one added but not yet written
 * may be in none, which the views then say), and the schema in the
 * format's types made from it (lake_typed_schema). */
static int format_ref(pq_lake *l, table_info *t, pq_error *err)
{
    const pq_table *pt = t->snap->table;
    for (int f = pt->n_files - 1; f >= 0; f--) {
        pq_footer_ref *ref;
        if (lake_footer_get(l, t, pt->files[f].path, &pt->files[f].st, &ref, err) != PQ_OK) {
            pq_error_prefix(err, "%s: ", pt->files[f].path);
            return PQ_ERR;
        }
        pq_error why;
        bool covers = pq_tf_check_file_schema(t->snap, &pq_footer_ref_get(ref)->schema, "", &why) == PQ_OK;
        int rc = covers ? lake_typed_schema(t, pq_footer_ref_get(ref), err) : PQ_OK;
        pq_footer_ref_put(l->footers, ref);
        if (rc != PQ_OK) return PQ_ERR;
        if (!covers) continue;
        if (f == pt->n_files - 1) return PQ_OK;
        char *path = strdup(pt->files[f].path);
        if (!path) return PQ_NOMEM(err);
        free(t->ref_path);
        t->ref_path = path;
        t->ref_id = pt->files[f].st;
        return PQ_OK;
    }
    return PQ_OK;
}

/* Whether the kept older version t is still of the table at its root: a
 * version never changes, but the table may be made anew at the same place
 * (deleted and created again), whose version N is another.  Its identity
 * (Delta metaData.id) must be the latest version's; without one to compare,
 * it is not known to be. */
static bool kept_version_current(pq_lake *l, const char *name, const table_info *t)
{
    table_info *latest;
    pq_error ignore;
    if (lake_table_get(l, name, t->root, -1, &latest, &ignore) != PQ_OK) return false;
    bool same = latest->snap && t->snap && latest->snap->table_id && t->snap->table_id &&
                !strcmp(latest->snap->table_id, t->snap->table_id) && latest->snap->version >= t->snap->version;
    lake_table_info_put(l, latest);
    return same;
}

int lake_table_get(pq_lake *l, const char *name, const char *root, int64_t version, table_info **out, pq_error *err)
{
    uint64_t now = pq_now_ms();
    char *was_left_out = NULL; /* the expired discovery's report, said once */
    pthread_mutex_lock(&l->mu);
    table_info *t = cached_table_locked(l, root, version, now, &was_left_out);
    /* A kept older version is checked against the table once a TTL. */
    bool check_kept = t && version >= 0 && now > t->fetched_ms && now - t->fetched_ms > l->ttl_ms;
    pthread_mutex_unlock(&l->mu);
    if (check_kept) {
        if (kept_version_current(l, name, t)) {
            pthread_mutex_lock(&l->mu);
            t->fetched_ms = now;
            pthread_mutex_unlock(&l->mu);
        } else {
            lake_logf(l, PQ_LOG_INFO, "table '%s': version %lld kept is no longer the table's (made anew?): read again",
                      lake_table_label(name), (long long)version);
            lake_table_info_put(l, t);
            lake_table_forget(l, root);
            t = NULL;
        }
    }
    if (t) {
        *out = t;
        return PQ_OK;
    }
    pq_table *hive;
    pq_tf_snapshot *snap;
    if (discover_table(l, name, root, version, &hive, &snap, err) != PQ_OK) {
        free(was_left_out);
        return PQ_ERR;
    }
    const pq_table *pt = snap ? snap->table : hive;
    const char *shown = lake_table_label(name);
    if (snap)
        lake_logf(l, PQ_LOG_DEBUG, "table '%s': Delta version %lld, %d file%s, %d partition column%s, in %llu ms",
                  shown, (long long)snap->version, pt->n_files, pt->n_files == 1 ? "" : "s", pt->n_parts,
                  pt->n_parts == 1 ? "" : "s", (unsigned long long)(pq_now_ms() - now));
    else
        lake_logf(l, PQ_LOG_DEBUG, "table '%s': discovered %d file%s, %d partition column%s, in %llu ms", shown,
                  pt->n_files, pt->n_files == 1 ? "" : "s", pt->n_parts, pt->n_parts == 1 ? "" : "s",
                  (unsigned long long)(pq_now_ms() - now));
    /* A table format's newest file is the likeliest to hold every column
     * of its schema (a column added later is not in older files). */
    t = table_info_of(name, root, version, pt, snap != NULL);
    int rc = t ? report_left_out(l, t, pt, was_left_out, err) : PQ_NOMEM(err);
    free(was_left_out);
    pq_table_free(hive);
    if (rc != PQ_OK) {
        pq_tf_snapshot_free(snap);
        table_info_free(t);
        return PQ_ERR;
    }
    t->snap = snap;
    if (snap && t->ref_path && format_ref(l, t, err) != PQ_OK) {
        table_info_free(t);
        return PQ_ERR;
    }
    /* Trusted from when the discovery ended: a discovery that takes longer
     * than metadata_ttl (hundreds of directories over a slow link) was
     * stored already expired, and every lookup started another. */
    t->fetched_ms = pq_now_ms();
    t->refs = 2;
    pthread_mutex_lock(&l->mu);
    keep_table_locked(l, t);
    pthread_mutex_unlock(&l->mu);
    *out = t;
    return PQ_OK;
}

static int stats_text(pq_lake *l, pq_buf *out)
{
    lake_counters *c = &l->c;
    int rc = 0;
#define LINE(name, val) rc |= pq_buf_printf(out, "%s %llu\n", name, (unsigned long long)(val))
    LINE("source_read_requests", atomic_load(&l->io->read_requests));
    LINE("source_read_bytes", atomic_load(&l->io->read_bytes));
    LINE("source_list_requests", atomic_load(&l->io->list_requests));
    LINE("listing_cache_hits", atomic_load(&l->cc.list_hits));
    LINE("listing_cache_misses", atomic_load(&l->cc.list_misses));
    LINE("footer_cache_hits", atomic_load(&l->cc.footer_hits));
    LINE("footer_cache_misses", atomic_load(&l->cc.footer_misses));
    LINE("views_opened", atomic_load(&c->views_opened));
    LINE("result_cache_hits", atomic_load(&c->results_reused));
    LINE("results_started", atomic_load(&c->results_started));
    LINE("results_cancelled", atomic_load(&c->results_cancelled));
    LINE("files_total", atomic_load(&c->files_total));
    LINE("files_pruned_partition", atomic_load(&c->files_pruned));
    LINE("files_pruned_log_statistics", atomic_load(&c->files_pruned_log));
    LINE("partition_dirs_pruned", atomic_load(&c->dirs_pruned));
    LINE("row_groups_total", atomic_load(&c->row_groups_total));
    LINE("row_groups_pruned_statistics", atomic_load(&c->row_groups_pruned[PQ_RUNG_STATS]));
    LINE("row_groups_pruned_dictionary", atomic_load(&c->row_groups_pruned[PQ_RUNG_DICTIONARY]));
    LINE("row_groups_pruned_page_index", atomic_load(&c->row_groups_pruned[PQ_RUNG_PAGE_INDEX]));
    LINE("row_groups_pruned_bloom_filter", atomic_load(&c->row_groups_pruned[PQ_RUNG_BLOOM]));
    LINE("row_groups_fully_matched", atomic_load(&c->row_groups_fully_matched));
    LINE("pages_total", atomic_load(&c->pages_total));
    LINE("pages_pruned_page_index", atomic_load(&c->pages_pruned));
    LINE("values_decoded", atomic_load(&c->rows_decoded));
    LINE("rows_out", atomic_load(&c->rows_out));
    LINE("errors", atomic_load(&c->errors));
    pq_fd_stats fds;
    pq_fd_stats_get(&fds);
    LINE("lake_files_open", fds.open);
    LINE("lake_files_open_budget", fds.budget);
    LINE("lake_files_reopened", fds.reopens);
    LINE("staged_files_expired", atomic_load(&c->staged_expired));
    LINE("leftover_temporaries_removed", atomic_load(&c->leftover_temporaries));
    LINE("leftover_dirs_removed", atomic_load(&c->leftover_dirs));
    /* Memory: the metadata caches against their budgets, and the heap. */
    size_t footer_bytes, footer_budget;
    pq_footer_cache_usage(l->footers, &footer_bytes, &footer_budget);
    LINE("footer_cache_bytes", footer_bytes);
    LINE("footer_cache_budget", footer_budget);
    LINE("listing_cache_bytes", pq_store_cached_bytes(l->store));
    pq_heap_stats heap;
    pq_heap_stats_get(&heap);
    LINE("heap_in_use_bytes", heap.in_use);
    LINE("heap_free_bytes", heap.free_held);
#undef LINE
    return rc;
}

static int errors_text(pq_lake *l, pq_buf *out)
{
    int rc = 0;
    pthread_mutex_lock(&l->mu);
    int start = (l->err_head - l->n_errors + ERROR_RING) % ERROR_RING;
    for (int i = 0; i < l->n_errors; i++) {
        const char *e = l->errors[(start + i) % ERROR_RING];
        if (e) rc |= pq_buf_printf(out, "%s\n", e);
    }
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* ------------------------------------------------------------------ public API */

struct pq_lake_handle {
    pq_lake *l;
    pq_result *res;              /* data.csv */
    char *key;
    pq_buf text;                 /* other files */
    /* /.pqfs/errors: a handle reads on past the text it opened with as
     * lines are logged (tail -f polls its size, then reads from where it
     * stopped), while the new text extends the old; texts it replaced
     * stay until release, since a reply may still point into them.  The
     * text extends only until the ring of ERROR_RING lines is full (then
     * its first line goes): at most ERROR_RING texts retired a handle. */
    bool live;
    pthread_mutex_t mu;
    pq_buf *retired;
    size_t n_retired;
};

/* A live handle's text, extended to the errors as they are now when they
 * extend it (a ring that dropped its oldest line does not: the size then
 * stays, as a file that is not appended to). */
static void handle_refresh(pq_lake_handle *h)
{
    pq_buf now;
    pq_buf_init(&now);
    pthread_mutex_lock(&h->mu);
    pq_buf *retired = NULL;
    if (errors_text(h->l, &now) == 0 && now.len > h->text.len && !memcmp(now.data, h->text.data ? h->text.data : "", h->text.len) &&
        (retired = realloc(h->retired, sizeof *retired * (h->n_retired + 1)))) {
        h->retired = retired;
        h->retired[h->n_retired++] = h->text;
        h->text = now;
        pq_buf_init(&now);
    }
    pthread_mutex_unlock(&h->mu);
    pq_buf_free(&now);
}

int pq_lake_open(const pq_lake_opts *o, pq_lake **out, pq_error *err)
{
    pq_lake *l = calloc(1, sizeof *l);
    if (!l) {
        pq_store_destroy(o->store);
        return PQ_NOMEM(err);
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->dirs_mu, NULL);
    pthread_mutex_init(&l->first_write_mu, NULL);
    l->io = &o->store->counters;
    l->ttl_ms = o->metadata_ttl_ms;
    l->sized_csv = o->sized_csv;
    l->threads = o->threads;
    l->cache_size = o->cache_size;
    l->log = o->log;
    l->log_ctx = o->log_ctx;
    l->log_level = o->log_level;
    l->remote_owner = o->remote_owner;
    /* The store's warnings (a symbolic link out of the lake) go to the log. */
    if (!o->store->warn) {
        o->store->warn = lake_store_warn;
        o->store->warn_ctx = l;
    }
    if (o->cache_dir && !(l->cache_dir = strdup(o->cache_dir))) goto oom;
    if (o->n_tables) {
        l->decls = calloc((size_t)o->n_tables, sizeof *l->decls);
        if (!l->decls) goto oom;
        for (int i = 0; i < o->n_tables; i++) {
            pq_lake_table_decl *d = &l->decls[i];
            d->name = strdup(o->tables[i].name);
            pq_part_decl *parts = calloc((size_t)o->tables[i].n_parts + 1, sizeof *parts);
            if (!d->name || !parts) {
                free(parts);
                goto oom;
            }
            for (int p = 0; p < o->tables[i].n_parts; p++) {
                parts[p].name = strdup(o->tables[i].parts[p].name);
                parts[p].type = o->tables[i].parts[p].type;
                if (!parts[p].name) {
                    d->parts = parts;
                    d->n_parts = p;
                    goto oom;
                }
            }
            d->parts = parts;
            d->n_parts = o->tables[i].n_parts;
            d->has_write = o->tables[i].has_write;
            d->write = o->tables[i].write;
            d->row_group_rows = o->tables[i].row_group_rows;
            d->write.bloom_columns = NULL;
            d->write.n_bloom_columns = 0;
            d->sort_by = NULL;
            d->n_sort_by = 0;
            l->n_decls = i + 1;
            if (o->tables[i].n_sort_by > 0) {
                const int ns = o->tables[i].n_sort_by;
                char **names = calloc((size_t)ns, sizeof *names);
                if (!names) goto oom;
                d->sort_by = (const char *const *)names;
                for (int b = 0; b < ns; b++) {
                    if (!(names[b] = strdup(o->tables[i].sort_by[b]))) goto oom;
                    d->n_sort_by = b + 1;
                }
            }
            if (d->has_write && o->tables[i].write.n_bloom_columns > 0) {
                const int nb = o->tables[i].write.n_bloom_columns;
                char **names = calloc((size_t)nb, sizeof *names);
                if (!names) goto oom;
                d->write.bloom_columns = (const char *const *)names;
                for (int b = 0; b < nb; b++) {
                    if (!(names[b] = strdup(o->tables[i].write.bloom_columns[b]))) goto oom;
                    d->write.n_bloom_columns = b + 1;
                }
            }
        }
    }
    l->footers = pq_footer_cache_new(64u << 20, &l->cc);
    if (!l->footers) goto oom;
    if (pq_store_cached_new(o->store, o->metadata_ttl_ms, &l->cc, &l->store, err) != PQ_OK) {
        pq_store_destroy(o->store);
        l->io = NULL;
        pq_lake_close(l);
        return PQ_ERR;
    }
    if (pq_dir_is_table_root(l->store, "", &l->single_table, err) != PQ_OK) {
        pq_lake_close(l);
        return PQ_ERR;
    }
    *out = l;
    return PQ_OK;
oom:
    pq_store_destroy(o->store);
    pq_lake_close(l);
    return PQ_NOMEM(err);
}

void pq_lake_shutdown(pq_lake *l)
{
    pthread_mutex_lock(&l->mu);
    l->shutting_down = true;
    for (result_entry *e = l->results; e; e = e->next) pq_result_cancel(e->res);
    pthread_mutex_unlock(&l->mu);
}

void pq_lake_close(pq_lake *l)
{
    if (!l) return;
    pq_lake_shutdown(l);
    while (l->results) {
        result_entry *e = l->results;
        l->results = e->next;
        pq_result_unref(e->res);
        free(e->key);
        free(e);
    }
    while (l->tables) {
        table_info *t = l->tables;
        l->tables = t->next;
        if (--t->refs == 0) table_info_free(t);
    }
    lake_unions_free(l);
    lake_plans_free(l);
    for (int i = 0; i < ERROR_RING; i++) free(l->errors[i]);
    for (int i = 0; i < l->n_decls; i++) {
        for (int p = 0; p < l->decls[i].n_parts; p++) free((char *)l->decls[i].parts[p].name);
        free((void *)l->decls[i].parts);
        free((char *)l->decls[i].name);
        for (int b = 0; b < l->decls[i].write.n_bloom_columns; b++) free((char *)l->decls[i].write.bloom_columns[b]);
        free((void *)l->decls[i].write.bloom_columns);
        for (int b = 0; b < l->decls[i].n_sort_by; b++) free((char *)l->decls[i].sort_by[b]);
        free((void *)l->decls[i].sort_by);
    }
    for (int i = 0; i < l->n_made; i++) free(l->made_tables[i]);
    free(l->made_tables);
    free(l->decls);
    pq_footer_cache_free(l->footers);
    pq_store_destroy(l->store);
    free(l->cache_dir);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->dirs_mu);
    pthread_mutex_destroy(&l->first_write_mu);
    free(l);
}

int lake_fail_logged(pq_lake *l, pq_error *err, const char *path)
{
    pq_error_prefix(err, "%s: ", path[0] ? path : "/");
    if (err->cls != PQ_E_NOTFOUND && err->cls != PQ_E_STALE) pq_lake_report(l, err);
    return PQ_ERR;
}

/* A view file's result made on its lookup, its size exact; versioned
 * (data.parquet): its inode holds that result's bytes.  One that cannot be
 * made from what the lake holds (a table without files, a file of a type
 * that does not widen, bytes that are no Parquet) is still a file to ls
 * -l: size 0, its open says why (EIO and the reason logged; issue 23:
 * `-?????????` before).  Storage that failed (a file changed since it was
 * listed, no cache file) fails, as a read of the moment would; *job_ran
 * false: not logged yet. */
static int stat_materialized(pq_lake *l, view *v, bool versioned, pq_lake_attr *out, bool (*stop)(void *),
                             void *stop_ctx, bool *job_ran, pq_error *err)
{
    pq_result *res;
    char *key;
    int rc = lake_materialize(l, v, &res, &key, stop, stop_ctx, job_ran, err);
    if (rc != PQ_OK && (err->cls == PQ_E_CORRUPT || err->cls == PQ_E_UNSUPPORTED)) {
        pq_error_clear(err);
        return PQ_OK;
    }
    if (rc != PQ_OK) return PQ_ERR;
    pq_result_state st;
    pq_result_state_of(res, &st);
    out->size = st.size;
    out->size_final = true;
    if (versioned) out->version = lake_version_of_key(key);
    lake_release_result(l, res, key);
    free(key);
    return PQ_OK;
}

int pq_lake_stat(pq_lake *l, const char *path, pq_lake_attr *out, bool (*stop)(void *), void *stop_ctx,
                 pq_error *err)
{
    memset(out, 0, sizeof *out);
    view v;
    if (lake_resolve(l, path, &v, err) != PQ_OK) {
        lake_view_free(l, &v);
        return lake_fail_logged(l, err, path);
    }
    int rc = PQ_OK;
    /* Times (issue 23: every entry had the mount's, so make, rsync -u and
     * find -newer saw nothing change): a directory its own (a view its
     * nearest real directory's), a view file the newest of the files it
     * reads.  Taken first: a materialization may take the view over. */
    int64_t mtime_ns = 0;
    if (v.kind == K_ROOT || v.kind == K_VIEW_DIR || v.kind == K_VIEW_FILE) mtime_ns = lake_time_ns(&v.real_st);
    /* A view file's files, listed once for its time and its size. */
    view_query vq;
    pq_error why;
    bool listed = v.kind == K_VIEW_FILE && v.t && v.t->ref_path && lake_view_files(l, &v, &vq, &why) == PQ_OK;
    if (listed && vq.s.newest_ns > 0) mtime_ns = vq.s.newest_ns;
    switch (v.kind) {
    case K_ROOT: case K_META_DIR: case K_VIEW_DIR: out->is_dir = true; break;
    case K_META_STATS: case K_META_ERRORS: {
        /* Exact sizes (the text as it is now): tools that copy by size or
         * with sendfile (Python's shutil, tar, rsync) copy no bytes of a
         * size-0 file, since FUSE's splice read stops at the size. */
        pq_buf text;
        pq_buf_init(&text);
        if ((v.kind == K_META_STATS ? stats_text(l, &text) : errors_text(l, &text)) == 0) {
            out->size = text.len;
            out->size_final = true;
        }
        pq_buf_free(&text);
        break;
    }
    case K_VIEW_FILE:
        if (v.file == F_SCHEMA) {
            /* Exact, as above; cheap (the lookup compiled the view, its
             * footer is cached).  A table without files: empty. */
            pq_buf text;
            pq_buf_init(&text);
            int got = !v.t->ref_path ? (v.t->snap ? lake_format_no_files_text(&v, &text, err) : PQ_OK)
                                     : lake_schema_text(l, &v, &text, err);
            if (got == PQ_OK) {
                out->size = text.len;
                out->size_final = true;
            }
            pq_buf_free(&text);
            pq_error_clear(err); /* reported when the file is opened */
        } else if (v.file == F_DATA_PARQUET ||
                   (v.file == F_DATA_CSV && (v.sized > 0 || (v.sized < 0 && l->sized_csv)))) {
            /* Materialized here, on the first lookup: its size is exact
             * (data.csv when sized=1 or the mount's sized_csv says so). */
            bool job_ran;
            rc = stat_materialized(l, &v, v.file == F_DATA_PARQUET, out, stop, stop_ctx, &job_ran, err);
            if (rc != PQ_OK && !job_ran) {
                if (listed) lake_view_query_free(l, &vq);
                lake_view_free(l, &v);
                return lake_fail_logged(l, err, path);
            }
        } else if (v.file == F_DATA_CSV) {
            /* The exact size once a complete result exists for the view as
             * the lake is now; 0 before (procfs convention). */
            out->size_final = listed && lake_result_size(l, vq.s.key, &out->size);
        } else if (v.file == F_PLAN && v.t->ref_path) {
            /* Likewise once the view's plan was made (a plan reads every
             * footer: too much for an ls -l before). */
            out->size_final = listed && lake_plan_size(l, vq.s.key, &out->size);
        }
        break;
    }
    if (listed) lake_view_query_free(l, &vq);
    if (mtime_ns) out->mtime_ns = mtime_ns;
    out->owner_only = v.kind == K_META_ERRORS;
    if (v.kind == K_ROOT || v.kind == K_VIEW_DIR || v.kind == K_VIEW_FILE)
        lake_attr_owner(l, &v.real_st, v.kind != K_VIEW_FILE, v.kind == K_VIEW_FILE, out);
    lake_view_free(l, &v);
    return rc;
}

typedef struct readdir_ctx {
    pq_lake *l;
    const view *v;
    const pq_query *q;
    lake_values match;           /* the next level's values with files that may match (known: the filter reads data) */
    pq_lake_dir_cb cb;
    void *ctx;
    bool stop;
    int rc;
    pq_error *err;
} readdir_ctx;

static int root_entry(void *ctx, const pq_dirent *e)
{
    readdir_ctx *r = ctx;
    if (!e->st.is_dir || lake_is_hidden(e->name)) return 0;
    table_info *t;
    pq_error why;
    if (lake_table_get(r->l, e->name, e->name, -1, &t, &why) == PQ_OK) {
        /* A Delta table is a table without files too: its log says so. */
        bool has_files = t->n_files > 0 || t->snap || lake_table_known(r->l, e->name);
        lake_table_info_put(r->l, t);
        if (!has_files) return 0;
    } else if (why.cls != PQ_E_UNSUPPORTED) {
        return 0;
    } /* else a table this build refuses (a Delta table): listed, so that its
       * views say why they fail (EIO, /.pqfs/errors) */
    pq_lake_attr a = {.is_dir = true, .mtime_ns = lake_time_ns(&e->st)};
    lake_attr_owner(r->l, &e->st, true, false, &a);
    return r->cb(r->ctx, e->name, &a) ? 1 : 0;
}

/* Whether q's predicate reads a data column (not only partition values). */
static bool reads_data_columns(const pq_query *q)
{
    if (!q->pred) return false;
    int cols[64];
    int n = pq_expr_columns(q->pred, cols, 64);
    if (n > 64) return true;
    for (int i = 0; i < n; i++)
        if (cols[i] < q->n_data) return true;
    return false;
}

static int partition_entry(void *ctx, const pq_dirent *e)
{
    readdir_ctx *r = ctx;
    const view *v = r->v;
    const table_info *t = v->t;
    if (!e->st.is_dir || v->n_real >= t->n_parts || lake_is_hidden(e->name)) return 0;
    const char *eq = strchr(e->name, '=');
    if (!eq) return 0;
    char key[1024];
    size_t kl = (size_t)(eq - e->name);
    if (kl >= sizeof key) return 0;
    int klen = pq_percent_decode(e->name, kl, key); /* kl < sizeof key: never fails */
    if (memchr(key, '\0', (size_t)klen) || strcmp(key, t->part_names[v->n_real])) return 0;
    /* A name with a %00 is not listed: no lookup can enter it (decode_part). */
    size_t vl = strlen(eq + 1);
    char *val = malloc(vl + 1);
    if (!val) return 0;
    if (memchr(val, '\0', (size_t)pq_percent_decode(eq + 1, vl, val))) {
        free(val);
        return 0;
    }
    if (!(r->q && r->q->pred)) {
        free(val);
    } else {
        /* Only directories that can hold matching rows. */
        const char *vals[1] = {strcmp(eq + 1, "__HIVE_DEFAULT_PARTITION__") ? val : NULL};
        prune_ctx pc = {v, r->q};
        bool keep = lake_prune_dir(&pc, 1, NULL, vals) && lake_values_has(&r->match, vals[0]);
        free(val);
        if (!keep) return 0;
    }
    pq_lake_attr a = {.is_dir = true, .mtime_ns = lake_time_ns(&e->st)};
    lake_attr_owner(r->l, &e->st, true, false, &a);
    return r->cb(r->ctx, e->name, &a) ? 1 : 0;
}

static bool view_fixes(const view *v, const char *col)
{
    for (int i = 0; i < v->n_eq; i++)
        if (!strcmp(v->eq_cols[i], col)) return true;
    return false;
}

static int cmp_value(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Lists one COL=VALUE entry (VALUE NULL: the NULL partition), encoded as
 * a Hive directory name, which resolves back to that filter. */
static int list_value(pq_lake *l, const view *v, const char *col, const char *val, pq_lake_dir_cb cb, void *ctx,
                      pq_error *err)
{
    static const char marker[] = "__HIVE_DEFAULT_PARTITION__";
    bool is_null = !val;
    if (is_null) val = marker;
    size_t cl = strlen(col), vl = strlen(val);
    char *name = malloc(3 * (cl + vl) + 3);
    if (!name) return PQ_NOMEM(err);
    int k = pq_percent_encode(col, cl, name, 3 * cl + 1);
    name[k++] = '=';
    if (is_null) {
        memcpy(name + k, val, vl + 1);
    } else if (!strcmp(val, marker)) {
        /* The marker's text as a string value: its first byte escaped, so
         * that the name is that string and not NULL. */
        memcpy(name + k, "%5F", 3);
        (void)pq_percent_encode(val + 1, vl - 1, name + k + 3, 3 * vl + 1);
    } else {
        (void)pq_percent_encode(val, vl, name + k, 3 * vl + 1);
    }
    pq_lake_attr a = {.is_dir = true};
    lake_attr_owner(l, &v->real_st, true, false, &a);
    int stop = cb(ctx, name, &a);
    free(name);
    return stop ? 1 : 0;
}

/* A table format's partitions, as directories: the distinct values (from
 * its log, not its directories) of the first partition column the view
 * does not fix, among the files that can match. */
/* The partition level a table format's view lists: the first its path does
 * not fix. */
static int format_level(const view *v)
{
    int level = 0;
    while (level < v->t->n_parts && view_fixes(v, v->t->part_names[level])) level++;
    return level;
}

static int list_format_partitions(pq_lake *l, const view *v, const pq_query *q, const lake_values *match,
                                  pq_lake_dir_cb cb, void *ctx, pq_error *err)
{
    const table_info *t = v->t;
    int level = format_level(v);
    if (level == t->n_parts) return PQ_OK;
    const pq_table *pt = t->snap->table;
    const char **vals = malloc(sizeof *vals * ((size_t)pt->n_files + 1));
    if (!vals) return PQ_NOMEM(err);
    int n = 0;
    bool has_null = false;
    prune_ctx pc = {v, q};
    pq_arena texts;
    pq_arena_init(&texts, 4096);
    for (int f = 0; f < pt->n_files; f++) {
        const char *const *fv = (const char *const *)pt->files[f].values;
        if (q && q->pred && !lake_prune_dir(&pc, t->n_parts, NULL, fv)) continue;
        if (!lake_values_has(match, fv[level])) continue;
        if (!fv[level]) {
            has_null = true;
            continue;
        }
        /* One value, one name: "05" and "5" of a long are one partition. */
        char buf[PQ_FMT_MAX + 8];
        const char *canon;
        pq_error why;
        if (pq_tf_part_canonical(t->snap, level, fv[level], buf, sizeof buf, &canon, &why) != PQ_OK) canon = fv[level];
        const char *kept = canon == buf ? pq_arena_strndup(&texts, buf, strlen(buf)) : canon;
        if (!kept) {
            pq_arena_free(&texts);
            free(vals);
            return PQ_NOMEM(err);
        }
        vals[n++] = kept;
    }
    qsort(vals, (size_t)n, sizeof *vals, cmp_value);
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        if (i == 0 || strcmp(vals[i], vals[i - 1])) rc = list_value(l, v, t->part_names[level], vals[i], cb, ctx, err);
    if (rc == 0 && has_null) rc = list_value(l, v, t->part_names[level], NULL, cb, ctx, err);
    pq_arena_free(&texts);
    free(vals);
    return rc < 0 ? PQ_ERR : PQ_OK;
}

/* Tables made by mkdir that the root's listing does not show (a store
 * without directories): listed all the same. */
static int list_unlisted_made(pq_lake *l, pq_lake_dir_cb cb, void *ctx, pq_error *err)
{
    for (int i = 0;; i++) {
        char name[4096];
        pthread_mutex_lock(&l->mu);
        bool more = i < l->n_made;
        if (more) snprintf(name, sizeof name, "%s", l->made_tables[i]);
        pthread_mutex_unlock(&l->mu);
        if (!more) return PQ_OK;
        bool is_dir;
        int has = lake_dir_has(l, "", name, &is_dir, err);
        if (has < 0) return PQ_ERR;
        pq_lake_attr a = {.is_dir = true};
        lake_attr_owner(l, NULL, true, false, &a);
        if (!has && cb(ctx, name, &a)) return PQ_OK;
    }
}

int pq_lake_readdir(pq_lake *l, const char *path, pq_lake_dir_cb cb, void *ctx, pq_error *err)
{
    view v;
    if (lake_resolve(l, path, &v, err) != PQ_OK) {
        lake_view_free(l, &v);
        return lake_fail_logged(l, err, path);
    }
    int rc = PQ_OK;
    readdir_ctx r = {.l = l, .v = &v, .cb = cb, .ctx = ctx, .err = err};
    switch (v.kind) {
    case K_ROOT:
        rc = l->store->ops->list(l->store, "", root_entry, &r, err);
        if (rc == PQ_OK) rc = list_unlisted_made(l, cb, ctx, err);
        break;
    case K_META_DIR: {
        pq_lake_attr a = {0}, e = {.owner_only = true};
        if (!cb(ctx, "stats", &a)) cb(ctx, "errors", &e);
        break;
    }
    case K_VIEW_DIR: {
        pq_query *q = NULL;
        pq_footer_ref *ref = NULL;
        /* The filters prune the listing; one that names a column only
         * later files have (lake_resolve checked it) prunes nothing. */
        if ((v.n_eq || v.n_wheres) && lake_compile_view(l, &v, &q, &ref, err) != PQ_OK) {
            if (!lake_schema_may_evolve(v.t)) {
                rc = PQ_ERR;
                break;
            }
            q = NULL;
        }
        r.q = q;
        /* A filter on data columns: only the partitions with a file whose
         * statistics may hold a matching row (SPEC section 3: `ls` below
         * where=id < 1000 listed every dt); a Delta table's by its log's.
         * Unknown: all are listed. */
        int level = v.t->snap ? format_level(&v) : v.n_real;
        if (q && reads_data_columns(q) && level < v.t->n_parts) {
            pq_error why;
            if (lake_view_match_values(l, &v, level, &r.match, &why) != PQ_OK) memset(&r.match, 0, sizeof r.match);
        }
        if (v.t->snap) rc = list_format_partitions(l, &v, q, &r.match, cb, ctx, err);
        else rc = l->store->ops->list(l->store, v.real_dir, partition_entry, &r, err);
        lake_values_free(&r.match);
        pq_query_free(q);
        pq_footer_ref_put(l->footers, ref);
        static const char *const files[] = {"data.csv", "data.parquet", "schema.txt", "plan.txt"};
        pq_lake_attr a = {0};
        lake_attr_owner(l, &v.real_st, false, true, &a);
        for (size_t i = 0; rc == PQ_OK && i < sizeof files / sizeof files[0]; i++)
            if (cb(ctx, files[i], &a)) break;
        break;
    }
    default:
        rc = pq_fail(err, PQ_E_USAGE, "not a directory");
    }
    lake_view_free(l, &v);
    if (rc != PQ_OK) return lake_fail_logged(l, err, path);
    return PQ_OK;
}

int pq_lake_open_file(pq_lake *l, const char *path, uint64_t version, pq_lake_handle **out, bool (*stop)(void *),
                      void *stop_ctx, pq_error *err)
{
    view v;
    if (lake_resolve(l, path, &v, err) != PQ_OK) {
        lake_view_free(l, &v);
        return lake_fail_logged(l, err, path);
    }
    pq_lake_handle *h = calloc(1, sizeof *h);
    if (!h) {
        lake_view_free(l, &v);
        return PQ_NOMEM(err);
    }
    h->l = l;
    pq_buf_init(&h->text);
    int rc = PQ_OK;
    switch (v.kind) {
    case K_META_STATS: rc = stats_text(l, &h->text) ? PQ_NOMEM(err) : PQ_OK; break;
    case K_META_ERRORS:
        rc = errors_text(l, &h->text) ? PQ_NOMEM(err) : PQ_OK;
        h->live = true;
        pthread_mutex_init(&h->mu, NULL);
        break;
    case K_VIEW_FILE:
        atomic_fetch_add(&l->c.views_opened, 1);
        /* A table without files yet (made by mkdir, or declared): no
         * columns, no rows, nothing to plan; only data.parquet, which needs
         * a schema, fails. */
        if (!v.t->ref_path && v.t->snap && v.file != F_DATA_PARQUET) {
            rc = lake_format_no_files_text(&v, &h->text, err);
            break;
        }
        if (!v.t->ref_path && v.file != F_DATA_PARQUET) break;
        if (v.file == F_SCHEMA) rc = lake_schema_text(l, &v, &h->text, err);
        else if (v.file == F_PLAN) rc = lake_plan_text(l, &v, &h->text, err);
        else if (v.file == F_DATA_CSV) rc = lake_get_result(l, &v, &h->res, &h->key, err);
        else if (!version || !lake_take_held_version(l, &v, version, &h->res, &h->key)) {
            bool job_ran;
            rc = lake_materialize(l, &v, &h->res, &h->key, stop, stop_ctx, &job_ran, err);
        }
        if (rc == PQ_OK && version && h->res && lake_version_of_key(h->key) != version) {
            lake_release_result(l, h->res, h->key);
            free(h->key);
            h->res = NULL;
            h->key = NULL;
            rc = pq_fail(err, PQ_E_STALE, "the view's result changed since it was looked up");
        }
        break;
    default:
        rc = pq_fail(err, PQ_E_USAGE, "is a directory");
    }
    lake_view_free(l, &v);
    if (rc != PQ_OK) {
        pq_buf_free(&h->text);
        free(h);
        return lake_fail_logged(l, err, path);
    }
    *out = h;
    return PQ_OK;
}

int pq_lake_peek(pq_lake_handle *h, uint64_t off, size_t len, const char **data, size_t *n, bool (*stop)(void *),
                 void *stop_ctx, pq_error *err)
{
    if (h->res) return pq_result_peek(h->res, off, len, data, n, stop, stop_ctx, err);
    *data = NULL;
    *n = 0;
    if (h->live && off >= h->text.len) handle_refresh(h);
    if (h->live) pthread_mutex_lock(&h->mu);
    if (off < h->text.len) {
        *n = h->text.len - off < len ? (size_t)(h->text.len - off) : len;
        *data = h->text.data + off;
    }
    if (h->live) pthread_mutex_unlock(&h->mu);
    return PQ_OK;
}

int pq_lake_read(pq_lake_handle *h, void *buf, size_t len, uint64_t off, size_t *n, bool (*stop)(void *),
                 void *stop_ctx, pq_error *err)
{
    if (h->res) return pq_result_read(h->res, buf, len, off, n, stop, stop_ctx, err);
    const char *data;
    PQ_TRY(pq_lake_peek(h, off, len, &data, n, stop, stop_ctx, err));
    if (*n) memcpy(buf, data, *n);
    return PQ_OK;
}

bool pq_lake_handle_size(pq_lake_handle *h, uint64_t *size)
{
    if (!h->res) {
        if (h->live) {
            handle_refresh(h);
            pthread_mutex_lock(&h->mu);
        }
        *size = h->text.len;
        if (h->live) pthread_mutex_unlock(&h->mu);
        return true;
    }
    pq_result_state st;
    pq_result_state_of(h->res, &st);
    *size = st.size;
    return st.done && !st.failed;
}

void pq_lake_release(pq_lake_handle *h)
{
    if (!h) return;
    if (h->res) lake_release_result(h->l, h->res, h->key);
    free(h->key);
    pq_buf_free(&h->text);
    for (size_t i = 0; i < h->n_retired; i++) pq_buf_free(&h->retired[i]);
    free(h->retired);
    if (h->live) pthread_mutex_destroy(&h->mu);
    free(h);
}
