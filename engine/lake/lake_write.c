/* Writes into the lake (SPEC section 6): files created in a table or
 * partition directory are staged in cache_dir and become one new Parquet
 * part file each when they are closed; mkdir makes tables and partition
 * directories. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "csvimport.h"
#include "filewrite.h"
#include "lake_internal.h"
#include "numfmt.h"

struct pq_lake_upload {
    pq_lake *l;
    char *path;                  /* the new file's mount path, for messages */
    char *dir;                   /* its directory's mount path */
    char *name;
    int fd;                      /* the staged bytes */
    char *stage_path;
    _Atomic uint64_t size;       /* read without mu: a commit holds mu while it works */
    _Atomic bool committed;
    pthread_mutex_t mu;          /* the commit */
    int commit_rc;
    pq_error commit_err;
    uint64_t reserved;           /* bytes counted in the lake's staged_bytes (its mu) */
    /* A write that failed (the cache full, a disk error): the staged bytes
     * are not the file, so the commit writes nothing and says why. */
    pthread_mutex_t failed_mu;
    bool failed;
    pq_error failed_err;
    /* During a commit: whether the writer went away meanwhile (killed
     * while close() waited): then nothing is written. */
    bool (*abandon)(void *);
    void *abandon_ctx;
    /* A root daemon writing for another user: the part file and the
     * directories the write makes are given to them. */
    bool give;
    uint32_t uid, gid;
};

/* Splits "a/b/name" into a copy of the directory ("a/b", "" at the root)
 * and the last component. */
static int split_path(const char *path, char **dir, const char **name, pq_error *err)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    *dir = strndup(path, slash ? (size_t)(slash - path) : 0);
    if (!*dir) return PQ_NOMEM(err);
    return PQ_OK;
}

/* The partition columns of a write's directory and their values. */
typedef struct write_target {
    int n_parts;
    const char **names;
    char **vals;                 /* NULL: NULL */
    pq_part_type *types;
} write_target;

/* Resolves a directory that takes writes: a table root or a partition
 * directory.  Partition directories need not exist: COL=VALUE components on
 * the partition columns below the real ones (which the path grammar reads as
 * filters) name the directories the write creates.  A table without files
 * or partitions (made by mkdir) takes its COL=VALUE components, in order, as
 * its partition layout. */
static int resolve_target_dir(pq_lake *l, const char *dir, view *v, write_target *wt, pq_error *err)
{
    memset(wt, 0, sizeof *wt);
    if (lake_resolve(l, dir, v, err) != PQ_OK) return PQ_ERR;
    if (v->kind == K_ROOT)
        return pq_fail(err, PQ_E_DENIED, "files cannot be written at the root (mkdir makes a table)");
    if (v->kind != K_VIEW_DIR) return pq_fail(err, PQ_E_DENIED, "this directory takes no writes");
    if (v->n_wheres || v->n_select || v->limit >= 0 || v->as_of || v->sized >= 0)
        return pq_fail(err, PQ_E_DENIED, "a view (where=, select=, limit=, as_of=) takes no writes");
    const table_info *t = v->t;
    /* A table format's table takes appends its log can record: refused up
     * front when it asks of a writer what this one cannot do. */
    if (t->snap) {
        pq_error why;
        if (pq_tf_check_append(t->snap, &why) != PQ_OK)
            return pq_fail(err, PQ_E_DENIED, "table '%s' takes no appends from this build: %s",
                           lake_table_label(t->name), why.msg);
        if (!t->ref_path)
            return pq_fail(err, PQ_E_DENIED,
                           "table '%s' is a %s table without live files: this build takes the Parquet schema of an "
                           "append from one of them",
                           lake_table_label(t->name), pq_tf_kind_name(t->snap->kind));
    }
    bool new_layout = !t->ref_path && t->n_parts == 0;
    int n = new_layout ? v->n_eq : t->n_parts;
    wt->n_parts = n;
    wt->names = pq_arena_alloc(&v->arena, sizeof *wt->names * (size_t)(n + 1));
    wt->vals = pq_arena_alloc(&v->arena, sizeof *wt->vals * (size_t)(n + 1));
    wt->types = pq_arena_alloc(&v->arena, sizeof *wt->types * (size_t)(n + 1));
    bool *set = pq_arena_alloc(&v->arena, sizeof *set * (size_t)(n + 1));
    if (!wt->names || !wt->vals || !wt->types || !set) return PQ_NOMEM(err);
    if (new_layout) {
        for (int k = 0; k < n; k++) {
            for (int i = 0; i < k; i++)
                if (!strcmp(v->eq_cols[i], v->eq_cols[k]))
                    return pq_fail(err, PQ_E_DENIED, "%s=...: named twice", v->eq_cols[k]);
            wt->names[k] = v->eq_cols[k];
            wt->vals[k] = (char *)v->eq_vals[k];
            wt->types[k] = PQ_PART_INFER;
        }
        return PQ_OK;
    }
    for (int p = 0; p < n; p++) {
        wt->names[p] = t->part_names[p];
        wt->types[p] = t->part_types[p];
        set[p] = p < v->n_real;
        wt->vals[p] = p < v->n_real ? v->real_vals[p] : NULL;
    }
    for (int k = 0; k < v->n_eq; k++) {
        int p = v->n_real;
        while (p < n && strcmp(t->part_names[p], v->eq_cols[k])) p++;
        if (p == n || set[p])
            return pq_fail(err, PQ_E_DENIED, "%s=...: a filter on a data column (a view) takes no writes", v->eq_cols[k]);
        set[p] = true;
        wt->vals[p] = (char *)v->eq_vals[k];
    }
    for (int p = 0; p < n; p++)
        if (!set[p]) return pq_fail(err, PQ_E_DENIED, "write into a partition directory: %s=... is missing", t->part_names[p]);
    /* A value of another kind than the column's (dt=2024-1-7 or dt=x where
     * every dt is a date) would turn an inferred type into STRING for every
     * view, or not fit a declared one: bad input. */
    char hint[96] = "declare the column's type in the ini to change it"; /* a Hive table's types are inferred */
    if (t->snap) snprintf(hint, sizeof hint, "the column's type in the %s table's log", pq_tf_kind_name(t->snap->kind));
    for (int p = 0; p < n; p++)
        if (!pq_part_value_fits(wt->vals[p], t->part_types[p]))
            return pq_fail(err, PQ_E_USAGE, "%s=%s: not %s, as the table's %s values are (%s)", t->part_names[p],
                           wt->vals[p], pq_part_type_kind(t->part_types[p]), t->part_names[p], hint);
    /* A table format's log holds each value in its type's one spelling
     * (7, not 007; a byte within -128..127; no inf), as its readers parse
     * it: the directory and the add take that. */
    for (int p = 0; t->snap && p < n; p++) {
        char buf[PQ_FMT_MAX + 8];
        const char *canon;
        PQ_TRY(pq_tf_part_canonical(t->snap, p, wt->vals[p], buf, sizeof buf, &canon, err));
        if (canon == buf && !(wt->vals[p] = pq_arena_strndup(&v->arena, buf, strlen(buf)))) return PQ_NOMEM(err);
    }
    return PQ_OK;
}

/* A partition value as a directory name component: Hive's escapes. */
static char *encode_part_value(pq_arena *a, const char *v)
{
    if (!v) return pq_arena_strndup(a, "__HIVE_DEFAULT_PARTITION__", 26);
    size_t n = strlen(v);
    char *out = pq_arena_alloc(a, n * 3 + 1);
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c == 0x7f || strchr("/\\\"#%'*=?:[]^{}", c)) {
            k += (size_t)sprintf(out + k, "%%%02X", c);
        } else {
            out[k++] = (char)c;
        }
    }
    out[k] = '\0';
    return out;
}

/* The store path of the partition directory for `vals`, made when missing;
 * made[0..*n_made) are the directories made, outermost first. */
static int target_dir(pq_lake *l, const pq_lake_upload *u, view *v, const write_target *wt, char **out, char **made,
                      int *n_made, pq_error *err)
{
    char *d = v->real_dir;
    *n_made = 0;
    for (int p = v->n_real; p < wt->n_parts; p++) {
        char *ev = encode_part_value(&v->arena, wt->vals[p]);
        size_t n = strlen(wt->names[p]) + (ev ? strlen(ev) : 0) + 2;
        char *comp = ev ? pq_arena_alloc(&v->arena, n) : NULL;
        if (!comp) return PQ_NOMEM(err);
        snprintf(comp, n, "%s=%s", wt->names[p], ev);
        char *next = lake_join(&v->arena, d, comp);
        if (!next) return PQ_NOMEM(err);
        bool is_dir;
        int has = lake_dir_has(l, d, comp, &is_dir, err);
        if (has < 0) return PQ_ERR;
        if (!has) {
            PQ_TRY(l->store->ops->mkdir(l->store, next, err));
            made[(*n_made)++] = next;
            pq_store_cached_invalidate(l->store, d);
            if (u->give && l->store->ops->chown_dir)
                PQ_TRY(l->store->ops->chown_dir(l->store, next, u->uid, u->gid, err));
        }
        d = next;
    }
    *out = d;
    return PQ_OK;
}

int pq_lake_check_data_name(const char *name, pq_error *err)
{
    view_file vf;
    /* data.csv and data.parquet are data, whatever their name: a view's
     * own output copied into another directory lands as
     * data-<unique>.parquet (issue 23: EPERM, nothing logged). */
    if (lake_view_file_of(name, &vf) && vf != F_DATA_CSV && vf != F_DATA_PARQUET)
        return pq_fail(err, PQ_E_DENIED, "%s is a view file: read-only", name);
    if (name[0] == '_' || !name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
        return pq_fail(err, PQ_E_DENIED, "%s: names starting with '_' are not data", name);
    return PQ_OK;
}

int pq_lake_check_write(pq_lake *l, const char *dir, const pq_cred *c, pq_error *err)
{
    if (!c) return PQ_OK;
    view v;
    int rc = lake_resolve(l, dir, &v, err);
    if (rc == PQ_OK && (v.kind == K_ROOT || v.kind == K_VIEW_DIR)) {
        /* The directory a new entry goes in: the path's own, or, for
         * COL=VALUE directories still to be made, the one they are made in. */
        pq_lake_attr a = {0};
        lake_attr_owner(l, &v.real_st, true, false, &a);
        if (!pq_cred_allows(c, a.mode, a.uid, a.gid, 3)) {
            const char *shown = v.kind == K_ROOT || !v.real_dir[0] ? "/" : v.real_dir;
            rc = pq_fail(err, PQ_E_ACCESS,
                         "%s: permission denied: uid %u may not write into %s (mode %04o, owner %u, group %u)",
                         dir[0] ? dir : "/", (unsigned)c->uid, shown, (unsigned)a.mode, (unsigned)a.uid,
                         (unsigned)a.gid);
            /* A refusal, not an error of the lake: logged, not kept. */
            lake_logf(l, PQ_LOG_INFO, "%s", err->msg);
        }
    } else if (rc != PQ_OK) {
        /* What the write itself then says (not found, a bad component). */
        pq_error_clear(err);
        rc = PQ_OK;
    }
    lake_view_free(l, &v);
    return rc;
}

int pq_lake_create(pq_lake *l, const char *path, pq_lake_upload **out, pq_error *err)
{
    return pq_lake_create_as(l, path, NULL, out, err);
}

int pq_lake_create_as(pq_lake *l, const char *path, const pq_cred *c, pq_lake_upload **out, pq_error *err)
{
    *out = NULL;
    char *dir;
    const char *name;
    PQ_TRY(split_path(path, &dir, &name, err));
    if (pq_lake_check_write(l, dir, c, err) != PQ_OK) {
        free(dir);
        return PQ_ERR;
    }
    int rc = pq_lake_check_data_name(name, err);
    view v;
    bool resolved = false;
    write_target wt;
    if (rc == PQ_OK) {
        rc = resolve_target_dir(l, dir, &v, &wt, err);
        resolved = true;
    }
    if (resolved) lake_view_free(l, &v);
    pq_lake_upload *u = NULL;
    if (rc == PQ_OK) {
        u = calloc(1, sizeof *u);
        if (!u) rc = PQ_NOMEM(err);
    }
    if (rc == PQ_OK) {
        u->l = l;
        u->fd = -1;
        u->give = c && geteuid() == 0;
        if (c) {
            u->uid = c->uid;
            u->gid = c->gid;
        }
        u->path = strdup(path);
        u->name = strdup(name);
        u->dir = dir;
        dir = NULL;
        const char *base = l->cache_dir ? l->cache_dir : "/tmp";
        size_t n = strlen(base) + 32;
        u->stage_path = malloc(n);
        if (!u->path || !u->name || !u->stage_path) rc = PQ_NOMEM(err);
        else {
            snprintf(u->stage_path, n, "%s/stage-XXXXXX", base);
            u->fd = mkostemp(u->stage_path, O_CLOEXEC);
            if (u->fd < 0)
                rc = pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "cannot stage a write in %s: %s", base,
                             strerror(errno));
        }
        pthread_mutex_init(&u->mu, NULL);
        pthread_mutex_init(&u->failed_mu, NULL);
    }
    free(dir);
    if (rc != PQ_OK) {
        if (u && u->fd < 0) {
            free(u->stage_path);
            u->stage_path = NULL;
        }
        pq_lake_upload_free(u);
        return lake_fail_logged(l, err, path);
    }
    *out = u;
    return PQ_OK;
}

/* Remembers the first failed write (and reports it); returns PQ_ERR. */
static int upload_failed(pq_lake_upload *u, pq_error *err)
{
    pthread_mutex_lock(&u->failed_mu);
    bool first = !u->failed;
    if (first) {
        u->failed = true;
        u->failed_err = *err;
    }
    pthread_mutex_unlock(&u->failed_mu);
    if (first) {
        pq_error logged = *err;
        pq_lake_report(u->l, &logged);
    }
    return PQ_ERR;
}

int pq_lake_upload_write(pq_lake_upload *u, const void *buf, size_t len, uint64_t off, pq_error *err)
{
    if (u->committed) return pq_fail(err, PQ_E_DENIED, "%s: already written into the lake", u->path);
    if (off + len < off) return pq_fail(err, PQ_E_USAGE, "%s: offset out of range", u->path);
    if (lake_stage_reserve(u->l, &u->reserved, off + len, err) != PQ_OK) {
        pq_error_prefix(err, "%s: ", u->path);
        return upload_failed(u, err);
    }
    size_t at = 0;
    while (at < len) {
        ssize_t n = pwrite(u->fd, (const char *)buf + at, len - at, (off_t)(off + at));
        if (n < 0) {
            if (errno == EINTR) continue;
            pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: staging failed: %s", u->path,
                    strerror(errno));
            return upload_failed(u, err);
        }
        at += (size_t)n;
    }
    uint64_t end = off + len, cur = u->size;
    while (end > cur && !atomic_compare_exchange_weak(&u->size, &cur, end)) {
    }
    return PQ_OK;
}

int pq_lake_upload_truncate(pq_lake_upload *u, uint64_t size, pq_error *err)
{
    if (lake_stage_reserve(u->l, &u->reserved, size, err) != PQ_OK) {
        pq_error_prefix(err, "%s: ", u->path);
        return PQ_ERR;
    }
    if (ftruncate(u->fd, (off_t)size) != 0)
        return pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: %s", u->path, strerror(errno));
    u->size = size;
    lake_stage_release(u->l, &u->reserved, size);
    return PQ_OK;
}

uint64_t pq_lake_upload_size(pq_lake_upload *u)
{
    return u->size;
}

const char *pq_lake_upload_path(const pq_lake_upload *u)
{
    return u->path;
}

int pq_lake_upload_rename(pq_lake_upload *u, const char *path, pq_error *err)
{
    char *dir;
    const char *name;
    PQ_TRY(split_path(path, &dir, &name, err));
    int rc = strcmp(dir, u->dir) ? pq_fail(err, PQ_E_DENIED, "%s: a file is renamed within its directory", path)
                                  : pq_lake_check_data_name(name, err);
    char *p = rc == PQ_OK ? strdup(path) : NULL, *n = rc == PQ_OK ? strdup(name) : NULL;
    if (rc == PQ_OK && (!p || !n)) rc = PQ_NOMEM(err);
    free(dir);
    /* Under the commit's lock: a commit reads the names. */
    pthread_mutex_lock(&u->mu);
    if (rc == PQ_OK && u->committed) rc = pq_fail(err, PQ_E_DENIED, "%s: already written under %s", path, u->path);
    if (rc == PQ_OK) {
        free(u->path);
        free(u->name);
        u->path = p;
        u->name = n;
        p = n = NULL;
    }
    pthread_mutex_unlock(&u->mu);
    free(p);
    free(n);
    return rc;
}

void pq_lake_upload_free(pq_lake_upload *u)
{
    if (!u) return;
    if (u->fd >= 0) close(u->fd);
    if (u->stage_path) unlink(u->stage_path);
    lake_stage_release(u->l, &u->reserved, 0);
    free(u->stage_path);
    free(u->path);
    free(u->dir);
    free(u->name);
    pthread_mutex_destroy(&u->mu);
    pthread_mutex_destroy(&u->failed_mu);
    free(u);
}

void pq_lake_upload_expire(pq_lake_upload *u)
{
    if (!u) return;
    atomic_fetch_add(&u->l->c.staged_expired, 1);
    lake_logf(u->l, PQ_LOG_INFO, "%s: a temporary file never renamed: discarded", u->path);
    pq_lake_upload_free(u);
}

/* ------------------------------------------------------------------ commit */

typedef struct upload_sink {
    pq_upload *up;
    pq_store *store;           /* for a restart: the upload begun again */
    const char *path;
    const pq_lake_upload *u;   /* its abandon check, at each write */
} upload_sink;

/* Whether the commit must stop and write nothing (pq_lake_upload_commit). */
static int check_abandoned(const pq_lake_upload *u, pq_error *err)
{
    if (u && u->abandon && u->abandon(u->abandon_ctx))
        return pq_fail(err, PQ_E_CANCELLED, "the writer was killed while its file was being written: nothing written");
    return PQ_OK;
}

/* Empties the upload for a second pass (pq_csv_import_inferred). */
static int upload_restart(void *ctx, pq_error *err)
{
    upload_sink *s = ctx;
    s->up->ops->abort(s->up);
    s->up = NULL;
    return s->store->ops->create(s->store, s->path, &s->up, err);
}

static int upload_sink_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    upload_sink *s = ctx;
    PQ_TRY(check_abandoned(s->u, err));
    return s->up->ops->write(s->up, data, len, err);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* <stem>-<unique>.parquet: the stem is the name without its extension (a
 * temporary '.' name is committed only under the name it is renamed to). */
static char *part_name(pq_arena *a, const char *name)
{
    static _Atomic uint64_t counter;
    size_t len = strlen(name);
    const char *dot = memrchr(name, '.', len);
    size_t stem = dot && dot != name ? (size_t)(dot - name) : len;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t unique = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
                      ((uint64_t)getpid() << 48) ^ (counter++ * 0x9E3779B97F4A7C15ull);
    char buf[4200];
    if (stem > 4000) stem = 4000;
    snprintf(buf, sizeof buf, "%.*s-%016llx.parquet", (int)stem, name, (unsigned long long)unique);
    return pq_arena_strndup(a, buf, strlen(buf));
}

/* The leaves of a Parquet input must be the table's: same paths, types and
 * levels; its top-level names must not be partition columns. */
static int check_parquet_schema(const pq_schema *table, const pq_schema *in, const write_target *wt, const char *name,
                                pq_error *err)
{
    for (int32_t c = 0; c < in->root->n_children; c++)
        for (int p = 0; p < wt->n_parts; p++)
            if (!strcmp(in->root->children[c]->name, wt->names[p]))
                return pq_fail(err, PQ_E_USAGE, "%s: has the partition column '%s': partition values come from the path",
                               name, wt->names[p]);
    if (!table) return PQ_OK;
    if (table->n_leaves != in->n_leaves)
        return pq_fail(err, PQ_E_USAGE, "%s: %d columns, the table has %d", name, in->n_leaves, table->n_leaves);
    for (int32_t c = 0; c < in->n_leaves; c++) {
        const pq_leaf *a = &table->leaves[c], *b = &in->leaves[c];
        if (strcmp(a->path, b->path))
            return pq_fail(err, PQ_E_USAGE, "%s: column %d is %s, the table's is %s", name, c + 1, b->path, a->path);
        /* The scan's test (pq_schema_equal): a file it would refuse to read
         * with the others is refused here, not found out by every view. */
        if (a->max_rep != b->max_rep || !pq_node_same_type(a->node, b->node) || a->max_def < b->max_def) {
            pq_buf ta, tb;
            pq_buf_init(&ta);
            pq_buf_init(&tb);
            (void)pq_node_type_text(a->node, &ta);
            (void)pq_node_type_text(b->node, &tb);
            bool nulls = b->max_def > a->max_def, reps = b->max_rep != a->max_rep;
            pq_fail(err, PQ_E_USAGE, "%s: column %s is %.*s%s, the table's is %.*s%s", name, b->path, (int)tb.len,
                    tb.data ? tb.data : "", nulls ? " NULL" : reps ? " (another nesting)" : "", (int)ta.len,
                    ta.data ? ta.data : "", nulls ? " NOT NULL" : "");
            pq_buf_free(&ta);
            pq_buf_free(&tb);
            return PQ_ERR;
        }
    }
    return PQ_OK;
}

/* A table format's append: the part file written (at path), its add
 * committed to the log (pq_tf_append); the file removed again when that
 * fails, so that it is not left in the table's directory unnamed. */
static int commit_to_log(pq_lake *l, const table_info *t, const write_target *wt, const char *path, int64_t rows,
                         pq_error *err)
{
    pq_store *inner = pq_store_cached_inner(l->store);
    pq_file *f = NULL;
    pq_footer *ft = NULL;
    uint64_t size = 0;
    int rc = inner->ops->open(inner, path, &f, err);
    if (rc == PQ_OK) rc = pq_file_size(f, &size, err);
    if (rc == PQ_OK) rc = pq_footer_read(f, &ft, err);
    if (rc == PQ_OK) pq_tf_apply_types(t->snap, &ft->schema);
    size_t rl = strlen(t->root);
    const char *rel = rl && !strncmp(path, t->root, rl) && path[rl] == '/' ? path + rl + 1 : path;
    pq_tf_new_file nf = {.path = rel, .size = size, .modified_ms = (int64_t)time(NULL) * 1000,
                         .part_values = (const char *const *)wt->vals, .footer = ft, .rows = rows};
    int64_t version = -1;
    bool maybe = false;
    if (rc == PQ_OK) rc = pq_tf_append(l->store, t->snap, &nf, &version, &maybe, err);
    pq_footer_free(ft);
    if (f) pq_file_close(f);
    if (rc == PQ_OK) {
        /* The next replay lists the log anew, so sees this commit. */
        char *logdir = pq_path_join(t->root, "_delta_log");
        pq_store_cached_invalidate(l->store, logdir);
        lake_logf(l, PQ_LOG_INFO, "table '%s': committed version %lld adding %s", lake_table_label(t->name),
                  (long long)version, rel);
        /* Every PQ_TF_CHECKPOINT_INTERVAL versions a checkpoint, so that
         * replays stay short; the append stands whether or not it is made. */
        if (version > 0 && version % PQ_TF_CHECKPOINT_INTERVAL == 0) {
            pq_error why;
            if (pq_tf_checkpoint(l->store, t->snap, version, &why) == PQ_OK)
                lake_logf(l, PQ_LOG_INFO, "table '%s': wrote the checkpoint of version %lld", lake_table_label(t->name),
                          (long long)version);
            else
                lake_logf(l, PQ_LOG_WARN, "table '%s': no checkpoint of version %lld: %s", lake_table_label(t->name),
                          (long long)version, why.msg);
            pq_store_cached_invalidate(l->store, logdir);
        }
        free(logdir);
        if (!logdir) pq_store_cached_invalidate(l->store, NULL);
        return PQ_OK;
    }
    pq_error ignore;
    if (maybe) /* a commit that may have landed names it: an orphan is better than a table without its file */
        lake_logf(l, PQ_LOG_WARN, "%s: kept: whether its commit landed is not known", path);
    else if (l->store->ops->remove(l->store, path, &ignore) != PQ_OK)
        lake_logf(l, PQ_LOG_WARN, "%s: not removed after its commit failed: %s", path, ignore.msg);
    pq_error_prefix(err, "table '%s': the append's commit: ", lake_table_label(t->name));
    return PQ_ERR;
}

/* Makes the partition directory and starts the upload of name into it. */
static int open_output(pq_lake *l, view *v, const write_target *wt, const char *name, char **dir_out, char **made,
                       int *n_made, upload_sink *us, pq_error *err)
{
    pthread_mutex_lock(&l->dirs_mu);
    int rc = target_dir(l, us->u, v, wt, dir_out, made, n_made, err);
    if (rc == PQ_OK) {
        us->path = lake_join(&v->arena, *dir_out, name);
        if (!us->path) rc = PQ_NOMEM(err);
    }
    if (rc == PQ_OK) rc = l->store->ops->create(l->store, us->path, &us->up, err);
    pthread_mutex_unlock(&l->dirs_mu);
    return rc;
}

/* Whether the table's column at schema element `e` is an integer that
 * schema evolution widens to DOUBLE (schema_union.c decides, as it does
 * for reads). */
static bool widens_to_double(const pq_footer *table_ft, int32_t e)
{
    static const pq_node dbl = {.kind = PQ_NODE_PRIMITIVE, .phys = PQ_DOUBLE, .converted = PQ_CT_NONE};
    const pq_node *n = NULL;
    for (int32_t i = 0; i < table_ft->schema.root->n_children && !n; i++)
        if (table_ft->schema.root->children[i]->element_index == e) n = table_ft->schema.root->children[i];
    pq_node u;
    return n && n->kind == PQ_NODE_PRIMITIVE && n->phys != PQ_FLOAT && n->phys != PQ_DOUBLE &&
           pq_node_union_type(n, &dbl, &u) == 0 && u.phys == PQ_DOUBLE;
}

/* A CSV into a Hive table that has a schema: written with the table's
 * types, except that an integer column one of whose values does not fit
 * (`12.5` where the table wrote `30`) is DOUBLE in this file, as schema
 * evolution widens it (SPEC section 2: int to double), and the import
 * starts again; once per column.  A value that is not a number either
 * fails as it did against the table's type.  (A Delta table's types are
 * its log's: never widened by a write.) */
static int import_widening(pq_file *in, const char *name, const pq_footer *table_ft, pq_import_opts *io,
                           const pq_sink *sink, upload_sink *us, int64_t *rows, pq_error *err)
{
    int32_t n = table_ft->meta.n_schema;
    const pq_schema_element *use = table_ft->meta.schema;
    pq_schema_element *widened = NULL;
    pq_error *why = NULL; /* per widened element: its failure against the table's type */
    int rc;
    for (;;) {
        int32_t bad = -1;
        io->mismatch_element = &bad;
        rc = pq_csv_import(in, name, use, n, io, sink, rows, err);
        io->mismatch_element = NULL;
        if (rc == PQ_OK || err->cls != PQ_E_USAGE || bad <= 0 || bad >= n) break;
        bool can_widen = widens_to_double(table_ft, bad);
        if (widened && widened[bad].type == PQ_DOUBLE && can_widen) {
            *err = why[bad]; /* not a number either */
            break;
        }
        if (!can_widen) break;
        if (!widened) {
            widened = malloc(sizeof *widened * (size_t)n);
            why = calloc((size_t)n, sizeof *why);
            if (!widened || !why) {
                rc = PQ_NOMEM(err);
                break;
            }
            memcpy(widened, use, sizeof *widened * (size_t)n);
            use = widened;
        }
        why[bad] = *err;
        widened[bad].type = PQ_DOUBLE;
        widened[bad].type_length = 0;
        widened[bad].converted_type = PQ_CT_NONE;
        widened[bad].has_logical = false;
        widened[bad].has_scale = widened[bad].has_precision = false;
        *rows = 0;
        if ((rc = upload_restart(us, err)) != PQ_OK) break;
    }
    free(widened);
    free(why);
    return rc;
}

static int do_commit(pq_lake_upload *u, pq_error *err)
{
    pq_lake *l = u->l;
    view v;
    write_target wt;
    if (resolve_target_dir(l, u->dir, &v, &wt, err) != PQ_OK) {
        lake_view_free(l, &v);
        return PQ_ERR;
    }
    table_info *t = v.t;
    const pq_lake_table_decl *d = lake_decl_of(l, t->name);
    pq_file *in = NULL;
    pq_footer_ref *ref = NULL;
    pq_footer *in_ft = NULL;
    pq_csv_schema inferred = {0};
    upload_sink us = {NULL, l->store, NULL, u};
    pq_import_fixed *fixed = NULL;
    int rc = pq_file_open_local(u->stage_path, NULL, &in, err);
    if (rc == PQ_OK && t->ref_path) {
        rc = lake_footer_get(l, t, t->ref_path, &t->ref_id, &ref, err);
        if (rc != PQ_OK) (void)lake_forget_listed(l, t->root, t->ref_path, err); /* as lake_compile_view */
        if (rc != PQ_OK) pq_error_prefix(err, "%s: ", t->ref_path);
    }
    const pq_footer *table_ft = ref ? pq_footer_ref_get(ref) : NULL;
    char *out_path = rc == PQ_OK ? part_name(&v.arena, u->name) : NULL;
    if (rc == PQ_OK && !out_path) rc = PQ_NOMEM(err);
    /* Checks the input before making directories: a bad file leaves nothing. */
    char *out_dir = NULL;
    char **made = pq_arena_alloc(&v.arena, sizeof *made * (size_t)(wt.n_parts + 1));
    int n_made = 0;
    if (rc == PQ_OK && !made) rc = PQ_NOMEM(err);
    bool parquet = has_suffix(u->name, ".parquet");
    /* sort_by without the partition columns: the path fixes them, so they
     * are constant in the file (and not in it at all when it is Parquet). */
    const char **sort_by = d && d->n_sort_by ? pq_arena_alloc(&v.arena, sizeof *sort_by * (size_t)d->n_sort_by) : NULL;
    int n_sort_by = 0;
    for (int k = 0; sort_by && k < d->n_sort_by; k++) {
        bool is_part = false;
        for (int p = 0; p < wt.n_parts; p++) is_part |= !strcmp(d->sort_by[k], wt.names[p]);
        if (!is_part) sort_by[n_sort_by++] = d->sort_by[k];
    }
    if (rc == PQ_OK && d && d->n_sort_by && !sort_by) rc = PQ_NOMEM(err);
    int64_t rows = 0;
    if (rc == PQ_OK && parquet) {
        rc = pq_footer_read(in, &in_ft, err);
        if (rc != PQ_OK) {
            err->cls = PQ_E_USAGE; /* the input is bad, not the lake */
            pq_error_prefix(err, "%s: not a readable Parquet file: ", u->name);
        }
        if (rc == PQ_OK) rc = check_parquet_schema(table_ft ? &table_ft->schema : NULL, &in_ft->schema, &wt, u->name, err);
        if (rc == PQ_OK) rc = open_output(l, &v, &wt, out_path, &out_dir, made, &n_made, &us, err);
        if (rc == PQ_OK) {
            pq_sink sink = {upload_sink_write, &us};
            pq_rewrite_opts ro;
            pq_rewrite_opts_init(&ro);
            if (d && d->has_write) ro.write = d->write;
            /* The table's row groups and order, as a CSV write gets them. */
            ro.row_group_rows = d && d->row_group_rows > 0 ? d->row_group_rows : PQ_DEFAULT_ROW_GROUP_ROWS;
            if (d) {
                ro.sort_by = sort_by;
                ro.n_sort_by = n_sort_by;
            }
            ro.threads = l->threads;
            rc = pq_file_rewrite(in, in_ft, u->path, &ro, &sink, err);
            /* The rows its row groups hold (what was written), not the
             * footer's total, which nothing checks against them. */
            for (int32_t g = 0; g < in_ft->meta.n_row_groups; g++)
                if (in_ft->meta.row_groups[g].num_rows > 0 && rows <= INT64_MAX - in_ft->meta.row_groups[g].num_rows)
                    rows += in_ft->meta.row_groups[g].num_rows;
        }
    } else if (rc == PQ_OK) {
        if (rc == PQ_OK && wt.n_parts > 0) {
            fixed = calloc((size_t)wt.n_parts, sizeof *fixed);
            if (!fixed) rc = PQ_NOMEM(err);
            for (int p = 0; rc == PQ_OK && p < wt.n_parts; p++)
                fixed[p] = (pq_import_fixed){wt.names[p], wt.vals[p], wt.types[p]};
        }
        if (rc == PQ_OK) rc = open_output(l, &v, &wt, out_path, &out_dir, made, &n_made, &us, err);
        if (rc == PQ_OK) {
            pq_sink sink = {upload_sink_write, &us};
            pq_import_opts io;
            pq_import_opts_init(&io);
            if (d && d->has_write) io.write = d->write;
            if (d) {
                io.row_group_rows = d->row_group_rows;
                io.sort_by = sort_by;
                io.n_sort_by = n_sort_by;
            }
            io.threads = l->threads;
            io.fixed = fixed;
            io.n_fixed = wt.n_parts;
            /* A new table's types: from the CSV. */
            if (table_ft) {
                rc = t->snap ? pq_csv_import(in, u->path, table_ft->meta.schema, table_ft->meta.n_schema, &io, &sink,
                                             &rows, err)
                             : import_widening(in, u->path, table_ft, &io, &sink, &us, &rows, err);
                /* A table CSV cannot fill (nested columns, an odd type): the
                 * input does not fit, EINVAL, not a storage error. */
                if (rc != PQ_OK && err->cls == PQ_E_UNSUPPORTED) err->cls = PQ_E_USAGE;
            } else
                rc = pq_csv_import_inferred(in, u->path, &io, &sink, upload_restart, &us, &inferred, &rows, err);
        }
    }
    /* No rows (a CSV with only its header, an empty Parquet file): nothing
     * to add.  Only a Parquet file defines a new table's schema without rows:
     * a header alone has no types. */
    bool nothing = rc == PQ_OK && rows == 0 && (!parquet || table_ft);
    if (us.up && rc == PQ_OK && !nothing) rc = check_abandoned(u, err); /* the last moment before it is in the lake */
    if (us.up && rc == PQ_OK && !nothing && u->give && us.up->ops->set_owner) us.up->ops->set_owner(us.up, u->uid, u->gid);
    if (us.up && rc == PQ_OK && !nothing) {
        rc = us.up->ops->commit(us.up, err);
        if (rc == PQ_OK && t->snap) rc = commit_to_log(l, t, &wt, us.path, rows, err);
    } else if (us.up) {
        us.up->ops->abort(us.up);
    }
    if ((rc != PQ_OK || nothing) && n_made && l->store->ops->rmdir) {
        /* A failed write leaves no directory behind either (one another
         * writer has put a file in stays: rmdir fails on it). */
        pthread_mutex_lock(&l->dirs_mu);
        for (int i = n_made - 1; i >= 0; i--) {
            pq_error ignore;
            (void)l->store->ops->rmdir(l->store, made[i], &ignore);
        }
        pq_store_cached_invalidate(l->store, NULL);
        pthread_mutex_unlock(&l->dirs_mu);
    }
    if (nothing) {
        lake_logf(l, PQ_LOG_INFO, "%s: no rows, nothing written", u->path);
    } else if (rc == PQ_OK) {
        /* The next listing sees the file; the table's schema file may be it. */
        pq_store_cached_invalidate(l->store, out_dir);
        lake_table_forget(l, t->root);
        lake_logf(l, PQ_LOG_INFO, "wrote %s%s%s: %lld rows", out_dir, out_dir[0] ? "/" : "", out_path, (long long)rows);
    }
    free(fixed);
    pq_csv_schema_free(&inferred);
    pq_footer_free(in_ft);
    if (ref) pq_footer_ref_put(l->footers, ref);
    if (in) pq_file_close(in);
    lake_view_free(l, &v);
    return rc;
}

/* The first file of a table defines its schema and layout (SPEC section 6).
 * While a table has none, its commits run one at a time, each resolving the
 * table again when its turn comes: a second concurrent first write meets the
 * first one's schema instead of defining a conflicting one. */
static int commit_in_turn(pq_lake_upload *u, pq_error *err)
{
    pq_lake *l = u->l;
    view v;
    write_target wt;
    bool empty = resolve_target_dir(l, u->dir, &v, &wt, err) == PQ_OK && !v.t->ref_path;
    lake_view_free(l, &v);
    if (!empty) return do_commit(u, err);
    pthread_mutex_lock(&l->first_write_mu);
    int rc = do_commit(u, err);
    pthread_mutex_unlock(&l->first_write_mu);
    return rc;
}

bool pq_lake_upload_committed(pq_lake_upload *u)
{
    return u->committed;
}

int pq_lake_upload_commit(pq_lake_upload *u, bool (*abandon)(void *), void *abandon_ctx, pq_error *err)
{
    pthread_mutex_lock(&u->mu);
    if (!u->committed) {
        u->committed = true;
        u->abandon = abandon;
        u->abandon_ctx = abandon_ctx;
        pq_error_clear(&u->commit_err);
        pthread_mutex_lock(&u->failed_mu);
        bool failed = u->failed;
        if (failed) u->commit_err = u->failed_err;
        pthread_mutex_unlock(&u->failed_mu);
        /* Already reported when the write failed. */
        if (failed) u->commit_rc = PQ_ERR;
        else u->commit_rc = commit_in_turn(u, &u->commit_err);
        u->abandon = NULL;
        if (u->commit_rc != PQ_OK && !failed && u->commit_err.cls != PQ_E_CANCELLED) {
            /* Messages about the input already name it. */
            if (strncmp(u->commit_err.msg, u->path, strlen(u->path)))
                pq_error_prefix(&u->commit_err, "%s: ", u->path);
            pq_lake_report(u->l, &u->commit_err);
        }
    }
    int rc = u->commit_rc;
    if (rc != PQ_OK) *err = u->commit_err;
    pthread_mutex_unlock(&u->mu);
    return rc;
}

/* ------------------------------------------------------------------ mkdir */


int pq_lake_mkdir(pq_lake *l, const char *path, pq_error *err)
{
    return pq_lake_mkdir_as(l, path, NULL, err);
}

int pq_lake_mkdir_as(pq_lake *l, const char *path, const pq_cred *c, pq_error *err)
{
    char *dir;
    const char *name;
    PQ_TRY(split_path(path, &dir, &name, err));
    if (pq_lake_check_write(l, dir, c, err) != PQ_OK) {
        free(dir);
        return PQ_ERR;
    }
    view_file vf;
    int rc = PQ_OK;
    if (!name[0] || lake_is_hidden(name) || lake_view_file_of(name, &vf))
        rc = pq_fail(err, PQ_E_DENIED, "%s: not a table or partition name", name);
    if (rc == PQ_OK && !dir[0] && !l->single_table) {
        /* A new table: a directory at the root, known as a table until it
         * has files (its schema comes from the first file written). */
        if (strchr(name, '=')) rc = pq_fail(err, PQ_E_DENIED, "%s: a table name has no '='", name);
        bool is_dir;
        int has = rc == PQ_OK ? lake_dir_has(l, "", name, &is_dir, err) : 0;
        if (has < 0) rc = PQ_ERR;
        else if (has) rc = pq_fail(err, PQ_E_DENIED, "%s exists", name); /* EEXIST comes from the lookup */
        if (rc == PQ_OK) rc = l->store->ops->mkdir(l->store, name, err);
        if (rc == PQ_OK && c && geteuid() == 0 && l->store->ops->chown_dir &&
            l->store->ops->chown_dir(l->store, name, c->uid, c->gid, err) != PQ_OK) {
            pq_error ignore;
            if (l->store->ops->rmdir) (void)l->store->ops->rmdir(l->store, name, &ignore);
            rc = PQ_ERR;
        }
        if (rc == PQ_OK) rc = lake_table_made(l, name, err);
        if (rc == PQ_OK) pq_store_cached_invalidate(l->store, "");
    } else if (rc == PQ_OK) {
        /* Below a table, COL=VALUE on a partition column already resolves
         * (as a filter until the directory exists) and a write into it makes
         * the directory: anything else is not part of the layout. */
        rc = pq_fail(err, PQ_E_DENIED, "%s: only tables are made with mkdir; a partition directory COL=VALUE is "
                                       "made by the first file written into it", name);
    }
    free(dir);
    if (rc != PQ_OK) return lake_fail_logged(l, err, path);
    lake_logf(l, PQ_LOG_INFO, "made directory %s", path);
    return PQ_OK;
}

int pq_lake_rmdir(pq_lake *l, const char *path, pq_error *err)
{
    char *dir;
    const char *name;
    PQ_TRY(split_path(path, &dir, &name, err));
    int rc = PQ_OK;
    if (dir[0] || l->single_table || !name[0] || lake_is_hidden(name))
        rc = pq_fail(err, PQ_E_DENIED, "%s: only an empty table is removed (data is not deleted through the mount)", path);
    free(dir);
    /* Its files as the lake has them now, not as a cached discovery did. */
    table_info *t = NULL;
    if (rc == PQ_OK) {
        lake_table_forget(l, name);
        pq_store_cached_invalidate(l->store, name);
        rc = lake_table_get(l, name, name, -1, &t, err);
    }
    if (rc == PQ_OK && t->n_files > 0)
        rc = pq_fail(err, PQ_E_DENIED, "%s: the table has %d file%s (data is not deleted through the mount)", name,
                     t->n_files, t->n_files == 1 ? "" : "s");
    if (t) lake_table_info_put(l, t);
    /* The directory itself: the store refuses one that is not empty (a
     * partition directory, a file that is not a part file); object stores
     * have no directories to remove. */
    if (rc == PQ_OK && l->store->ops->rmdir && l->store->ops->rmdir(l->store, name, err) != PQ_OK) {
        pq_error why = *err;
        rc = pq_fail(err, PQ_E_DENIED, "%s: not empty: %s", name, why.msg);
    }
    /* A refusal is the answer (EPERM), not an error of the lake: not logged,
     * as with every other EPERM of a path. */
    if (rc != PQ_OK) return err->cls == PQ_E_DENIED ? PQ_ERR : lake_fail_logged(l, err, path);
    lake_table_unmade(l, name);
    lake_table_forget(l, name);
    pq_store_cached_invalidate(l->store, "");
    lake_logf(l, PQ_LOG_INFO, "removed the empty table %s", name);
    return PQ_OK;
}

/* ------------------------------------------------------------------ leftovers */

int pq_lake_sweep_leftovers(pq_lake *l, int64_t min_age_s, const _Atomic bool *stop, pq_error *err)
{
    pq_sweep_counts n = {0};
    int rc = pq_store_local_sweep(pq_store_cached_inner(l->store), min_age_s, stop, &n, err);
    atomic_fetch_add(&l->c.leftover_temporaries, n.temporaries);
    atomic_fetch_add(&l->c.leftover_dirs, n.dirs);
    if (n.dirs) pq_store_cached_invalidate(l->store, NULL);
    bool stopped = stop && atomic_load(stop);
    if (n.walked)
        lake_logf(l, PQ_LOG_INFO,
                  "swept the lake for what crashed writes left: %llu temporar%s and %llu empty partition director%s "
                  "removed%s%s%s", (unsigned long long)n.temporaries, n.temporaries == 1 ? "y" : "ies",
                  (unsigned long long)n.dirs, n.dirs == 1 ? "y" : "ies", stopped ? " (stopped by the unmount)" : "",
                  rc == PQ_OK ? "" : "; stopped: ", rc == PQ_OK ? "" : err->msg);
    return rc;
}
