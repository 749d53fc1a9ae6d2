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
#include "numfmt.h"
#include "query.h"
#include "render.h"
#include "result.h"
#include "scan.h"
#include "sigv4.h"

/* How far a data.csv producer may run ahead of its furthest reader. */
#define RESULT_AHEAD (64u << 20)

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

/* Made by mkdir in this mount: on a store without directories (S3) such
 * a table is in no listing until its first file lands. */
static bool table_was_made(pq_lake *l, const char *name)
{
    pthread_mutex_lock(&l->mu);
    bool made = false;
    for (int i = 0; i < l->n_made && !made; i++) made = !strcmp(l->made_tables[i], name);
    pthread_mutex_unlock(&l->mu);
    return made;
}

bool lake_table_known(pq_lake *l, const char *name)
{
    return lake_decl_of(l, name) || table_was_made(l, name);
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
    for (table_info **pp = &l->tables; *pp; pp = &(*pp)->next) {
        table_info *t = *pp;
        if (strcmp(t->root, root)) continue;
        *pp = t->next;
        if (--t->refs == 0) table_info_free(t);
        break;
    }
    pthread_mutex_unlock(&l->mu);
}

/* The table's layout, types and schema file, from a (cached) discovery. */
/* A table's name in messages: a single-table mount's is empty. */
static const char *table_label(const char *name)
{
    return name[0] ? name : "(the mount root)";
}

int lake_table_get(pq_lake *l, const char *name, const char *root, table_info **out, pq_error *err)
{
    uint64_t now = pq_now_ms();
    char *was_left_out = NULL; /* the expired discovery's report, said once */
    pthread_mutex_lock(&l->mu);
    table_info **pp = &l->tables;
    while (*pp) {
        table_info *t = *pp;
        if (!strcmp(t->root, root)) {
            if (t->fetched_ms >= now || now - t->fetched_ms <= l->ttl_ms) {
                t->refs++;
                pthread_mutex_unlock(&l->mu);
                *out = t;
                return PQ_OK;
            }
            *pp = t->next;
            was_left_out = t->left_out;
            t->left_out = NULL;
            if (--t->refs == 0) table_info_free(t);
            break;
        }
        pp = &t->next;
    }
    pthread_mutex_unlock(&l->mu);

    const pq_lake_table_decl *d = lake_decl_of(l, name);
    pq_table_opts o = {0};
    if (d) {
        o.declared = d->parts;
        o.n_declared = d->n_parts;
    }
    pq_table *pt;
    if (pq_table_discover(l->store, root, &o, &pt, err) != PQ_OK) {
        free(was_left_out);
        return PQ_ERR;
    }
    const char *shown = table_label(name);
    lake_logf(l, PQ_LOG_DEBUG, "table '%s': discovered %d file%s, %d partition column%s, in %llu ms", shown,
              pt->n_files, pt->n_files == 1 ? "" : "s", pt->n_parts, pt->n_parts == 1 ? "" : "s",
              (unsigned long long)(pq_now_ms() - now));
    table_info *t = calloc(1, sizeof *t);
    if (!t) goto oom;
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
        t->ref_path = strdup(pt->files[0].path);
        if (!t->ref_path) goto oom;
        t->ref_id = pt->files[0].st;
    }
    if (pt->n_ignored > 0) {
        /* Paths that do not fit the layout are left out (SPEC section 2),
         * but not silently: a declared type the directories do not have
         * would empty the table without a word.  Said when it changes, not
         * at every rediscovery (every metadata_ttl). */
        pq_error why;
        pq_fail(&why, PQ_E_USAGE, "table '%s': %d path%s left out, not fitting the table's layout, e.g. %s", shown,
                pt->n_ignored, pt->n_ignored == 1 ? "" : "s", pt->ignored_first);
        if (!(t->left_out = strdup(why.msg))) goto oom;
        if (was_left_out && !strcmp(was_left_out, why.msg)) {
            /* unchanged */
        } else if (pt->n_files == 0) {
            pq_lake_report(l, &why); /* every file left out: an error */
        } else {
            lake_logf(l, PQ_LOG_WARN, "%s", why.msg);
        }
    }
    free(was_left_out);
    pq_table_free(pt);
    /* Trusted from when the discovery ended: a discovery that takes longer
     * than metadata_ttl (hundreds of directories over a slow link) was
     * stored already expired, and every lookup started another. */
    t->fetched_ms = pq_now_ms();
    t->refs = 2;
    pthread_mutex_lock(&l->mu);
    t->next = l->tables;
    l->tables = t;
    pthread_mutex_unlock(&l->mu);
    *out = t;
    return PQ_OK;
oom:
    free(was_left_out);
    pq_table_free(pt);
    table_info_free(t);
    return PQ_NOMEM(err);
}

/* ------------------------------------------------------------------ path resolution */

void lake_view_free(pq_lake *l, view *v)
{
    if (v->t) lake_table_info_put(l, v->t);
    pq_arena_free(&v->arena);
}

typedef struct find_ctx {
    const char *name;
    bool found;
    pq_stat st;
} find_ctx;

static int find_cb(void *ctx, const pq_dirent *e)
{
    find_ctx *f = ctx;
    if (strcmp(e->name, f->name)) return 0;
    f->found = true;
    f->st = e->st;
    return 1;
}

int lake_dir_find(pq_lake *l, const char *dir, const char *name, pq_stat *st, pq_error *err)
{
    find_ctx f = {.name = name};
    PQ_TRY(l->store->ops->list(l->store, dir, find_cb, &f, err));
    *st = f.st;
    return f.found ? 1 : 0;
}

int lake_dir_has(pq_lake *l, const char *dir, const char *name, bool *is_dir, pq_error *err)
{
    pq_stat st;
    int has = lake_dir_find(l, dir, name, &st, err);
    *is_dir = has > 0 && st.is_dir;
    return has;
}

void lake_root_stat(pq_lake *l, pq_stat *st)
{
    memset(st, 0, sizeof *st);
    /* Only a local store has owners; a remote one's stat of the root would
     * cost a request for nothing. */
    pq_error ignore;
    if (l->store->local_dir && l->store->ops->stat(l->store, "", st, &ignore) != PQ_OK) memset(st, 0, sizeof *st);
}

bool pq_cred_allows(const pq_cred *c, uint32_t mode, uint32_t uid, uint32_t gid, int want)
{
    if (c->uid == 0) return true;
    unsigned shift;
    if (c->uid == uid) shift = 6;
    else {
        bool member = c->gid == gid;
        for (int i = 0; !member && i < c->n_groups; i++) member = c->groups[i] == gid;
        shift = member ? 3 : 0;
    }
    unsigned have = (mode >> shift) & 7u;
    return (have & (unsigned)want) == (unsigned)want;
}

/* The owner, group and mode an entry reports: its own stat's (st, may be
 * NULL), else the remote owner's; a file a view generates gets its
 * directory's mode without the execute (and special) bits. */
void lake_attr_owner(const pq_lake *l, const pq_stat *st, bool is_dir, bool generated, pq_lake_attr *a)
{
    a->has_owner = true;
    if (st && st->has_owner) {
        a->uid = st->uid;
        a->gid = st->gid;
        a->mode = generated ? st->mode & 0666 : st->mode;
        return;
    }
    a->uid = l->remote_owner.uid;
    a->gid = l->remote_owner.gid;
    a->mode = is_dir ? l->remote_owner.dir_mode : l->remote_owner.file_mode;
}

char *lake_join(pq_arena *a, const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char *p = pq_arena_alloc(a, dl + nl + 2);
    if (!p) return NULL;
    memcpy(p, dir, dl);
    size_t at = dl;
    if (dl) p[at++] = '/';
    memcpy(p + at, name, nl + 1);
    return p;
}

/* A path component percent-decoded (SPEC section 3, pq_percent_decode);
 * *decoded counts the escapes decoded, *has_nul says one was %00 (the text
 * then ends early: callers refuse it). */
static char *decode_counted(pq_arena *a, const char *s, size_t n, int *decoded, bool *has_nul)
{
    char *out = pq_arena_alloc(a, n + 1);
    if (!out) return NULL;
    int len = pq_percent_decode(s, n, out);
    if (len < 0) return NULL;
    *decoded = (int)((n - (size_t)len) / 2);
    *has_nul = memchr(out, '\0', (size_t)len) != NULL;
    return out;
}

/* A COL=VALUE component's key or value (values are C strings, so a %00
 * would cut one short: `region=a%00b` is not `region=a`); NULL with err set
 * for a NUL byte or out of memory. */
static char *decode_part(pq_arena *a, const char *comp, const char *s, size_t n, pq_error *err)
{
    int decoded;
    bool has_nul;
    char *out = decode_counted(a, s, n, &decoded, &has_nul);
    if (!out) PQ_NOMEM(err);
    else if (has_nul) pq_fail(err, PQ_E_USAGE, "%s: a %%00 escape decodes to a NUL byte, which no name or value can hold", comp);
    return has_nul ? NULL : out;
}

/* where=: an expression is text.  An escape that decodes to bytes that are
 * not UTF-8 (`LIKE '%bc'` is byte 0xBC) was meant as a literal `%` far more
 * often than as that byte: refused, with the way out, not run to no rows. */
static char *decode_expression(pq_arena *a, const char *comp, const char *s, pq_error *err)
{
    int decoded;
    bool has_nul;
    char *out = decode_counted(a, s, strlen(s), &decoded, &has_nul);
    if (!out) {
        PQ_NOMEM(err);
        return NULL;
    }
    if (has_nul) {
        pq_fail(err, PQ_E_USAGE, "%s: a %%00 escape decodes to a NUL byte, which an expression cannot hold", comp);
        return NULL;
    }
    size_t len = strlen(out);
    if (decoded && pq_utf8_valid_prefix((const unsigned char *)out, len) != len) {
        pq_fail(err, PQ_E_USAGE, "%s: a %%XX escape decodes to bytes that are not UTF-8 text (write %%25 for a literal %%)",
                comp);
        return NULL;
    }
    return out;
}

bool lake_is_hidden(const char *name)
{
    return name[0] == '.' || name[0] == '_';
}

int lake_view_file_of(const char *name, view_file *f)
{
    if (!strcmp(name, "data.csv")) *f = F_DATA_CSV;
    else if (!strcmp(name, "data.parquet")) *f = F_DATA_PARQUET;
    else if (!strcmp(name, "schema.txt")) *f = F_SCHEMA;
    else if (!strcmp(name, "plan.txt")) *f = F_PLAN;
    else return 0;
    return 1;
}

static int compile_view(pq_lake *l, const view *v, pq_query **q, pq_footer_ref **ref, pq_error *err);

/* Enters the real partition directory `comp` (KEY=VALUE, decoded as key
 * and value) when it is the next partition level of the view's table and
 * exists; *entered says whether it did. */
static int enter_real_dir(pq_lake *l, view *v, const char *comp, const char *key, const char *value, bool *entered,
                          pq_error *err)
{
    const table_info *t = v->t;
    *entered = false;
    if (v->n_real >= t->n_parts || strcmp(key, t->part_names[v->n_real])) return PQ_OK;
    pq_stat st;
    int has = lake_dir_find(l, v->real_dir, comp, &st, err);
    if (has < 0) return PQ_ERR;
    if (!has || !st.is_dir) return PQ_OK;
    v->real_st = st;
    v->real_dir = lake_join(&v->arena, v->real_dir, comp);
    if (!v->real_dir) return PQ_NOMEM(err);
    const char *eq = strchr(comp, '=');
    v->real_vals[v->n_real++] = eq && !strcmp(eq + 1, "__HIVE_DEFAULT_PARTITION__") ? NULL : (char *)value;
    *entered = true;
    return PQ_OK;
}

/* Resolves a path into a view (or a special entry).  Validates every
 * component, compiling the view's query when it has filters. */
int lake_resolve(pq_lake *l, const char *path, view *v, pq_error *err)
{
    memset(v, 0, sizeof *v);
    pq_arena_init(&v->arena, 4096);
    v->limit = -1;
    char *comps[MAX_COMPONENTS];
    int n = 0;
    char *copy = pq_arena_strndup(&v->arena, path, strlen(path));
    if (!copy) return PQ_NOMEM(err);
    char *save = NULL; /* strtok_r: FUSE resolves paths on several threads at once */
    for (char *tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (n == MAX_COMPONENTS) return pq_fail(err, PQ_E_USAGE, "path has too many components");
        comps[n++] = tok;
    }
    if (n == 0 && !l->single_table) {
        v->kind = K_ROOT;
        lake_root_stat(l, &v->real_st);
        return PQ_OK;
    }
    if (n >= 1 && !strcmp(comps[0], ".pqfs")) {
        if (n == 1) v->kind = K_META_DIR;
        else if (n == 2 && !strcmp(comps[1], "stats")) v->kind = K_META_STATS;
        else if (n == 2 && !strcmp(comps[1], "errors")) v->kind = K_META_ERRORS;
        else return pq_fail(err, PQ_E_NOTFOUND, "no such file");
        return PQ_OK;
    }
    int i = 0;
    if (l->single_table) {
        PQ_TRY(lake_table_get(l, "", "", &v->t, err));
        lake_root_stat(l, &v->real_st);
    } else {
        pq_stat st;
        if (lake_is_hidden(comps[0])) return pq_fail(err, PQ_E_NOTFOUND, "no such table");
        int has = lake_dir_find(l, "", comps[0], &st, err);
        if (has < 0) return PQ_ERR;
        bool is_dir = has && st.is_dir;
        if (is_dir) v->real_st = st;
        if (!is_dir && !table_was_made(l, comps[0]))
            return pq_fail(err, PQ_E_NOTFOUND, "no such table '%s'", comps[0]);
        PQ_TRY(lake_table_get(l, comps[0], comps[0], &v->t, err));
        /* As the root's listing: a directory without Parquet files is not
         * a table (SPEC section 2), unless the ini declares it. */
        if (v->t->n_files == 0 && !lake_table_known(l, comps[0]))
            return pq_fail(err, PQ_E_NOTFOUND, "no such table '%s'", comps[0]);
        i = 1;
    }
    table_info *t = v->t;
    v->real_dir = pq_arena_strndup(&v->arena, t->root, strlen(t->root));
    v->real_vals = pq_arena_alloc(&v->arena, sizeof *v->real_vals * (size_t)(t->n_parts + 1));
    if (!v->real_dir || !v->real_vals) return PQ_NOMEM(err);
    v->kind = K_VIEW_DIR;
    bool has_limit = false, has_select = false;
    for (; i < n; i++) {
        const char *c = comps[i];
        if (i == n - 1 && lake_view_file_of(c, &v->file)) {
            v->kind = K_VIEW_FILE;
            break;
        }
        const char *eq = strchr(c, '=');
        if (!eq) return pq_fail(err, PQ_E_NOTFOUND, "no such file or view component '%s'", c);
        size_t kl = (size_t)(eq - c);
        const char *val = eq + 1;
        bool keyword = (kl == 5 && (!strncmp(c, "where", 5) || !strncmp(c, "limit", 5))) ||
                       (kl == 6 && !strncmp(c, "select", 6));
        if (keyword) {
            /* A partition column named where, select or limit: its real
             * directories, which readdir lists, are directories (SPEC
             * section 3); other values of it are the keyword. */
            bool entered;
            char *value = decode_part(&v->arena, c, val, strlen(val), err);
            if (!value) return PQ_ERR;
            char *key = pq_arena_strndup(&v->arena, c, kl);
            if (!key) return PQ_NOMEM(err);
            if (enter_real_dir(l, v, c, key, value, &entered, err) != PQ_OK) return PQ_ERR;
            if (entered) continue;
        }
        if (kl == 5 && !strncmp(c, "where", 5)) {
            char *w = decode_expression(&v->arena, c, val, err);
            if (!w) return PQ_ERR;
            if (pq_arena_push_str(&v->arena, &v->wheres, &v->n_wheres, w)) return PQ_NOMEM(err);
        } else if (kl == 6 && !strncmp(c, "select", 6)) {
            if (has_select) return pq_fail(err, PQ_E_USAGE, "%s: at most one select= per path", c);
            has_select = true;
            if (pq_select_parse(val, true, &v->arena, &v->select, &v->n_select, err) != PQ_OK) {
                pq_error_prefix(err, "%s: ", c);
                return PQ_ERR;
            }
            if (v->n_select == 0) return pq_fail(err, PQ_E_USAGE, "%s: no columns", c);
        } else if (kl == 5 && !strncmp(c, "limit", 5)) {
            if (has_limit) return pq_fail(err, PQ_E_USAGE, "%s: at most one limit= per path", c);
            int64_t lim;
            if (pq_parse_row_count(val, strlen(val), &lim) != 0)
                return pq_fail(err, PQ_E_USAGE, "%s: not a row count (0 to %lld)", c, (long long)INT64_MAX);
            v->limit = lim;
            has_limit = true;
        } else {
            char *key = decode_part(&v->arena, c, c, kl, err);
            char *value = key ? decode_part(&v->arena, c, val, strlen(val), err) : NULL;
            if (!key || !value) return PQ_ERR;
            bool is_null = !strcmp(val, "__HIVE_DEFAULT_PARTITION__");
            /* The next level of real partition directories, also after
             * virtual components (filters commute): readdir below a where=
             * lists these directories, and entering one must show its own
             * subdirectories, not the same name again. */
            bool entered;
            if (enter_real_dir(l, v, c, key, value, &entered, err) != PQ_OK) return PQ_ERR;
            if (entered) continue;
            int ne = v->n_eq;
            if (pq_arena_push_str(&v->arena, &v->eq_cols, &ne, key)) return PQ_NOMEM(err);
            ne = v->n_eq;
            if (pq_arena_push_str(&v->arena, &v->eq_vals, &ne, is_null ? NULL : value))
                return PQ_NOMEM(err);
            v->n_eq = ne;
        }
    }
    /* A table without files yet (made by mkdir, or declared) has no schema
     * to check against: its COL=VALUE directories must resolve, so that a
     * first write can go into them. */
    if ((v->n_eq || v->n_wheres || v->n_select) && t->ref_path) {
        /* Validate: unknown columns, bad expressions fail the lookup. */
        pq_query *q;
        pq_footer_ref *ref;
        if (compile_view(l, v, &q, &ref, err) != PQ_OK) return PQ_ERR;
        pq_query_free(q);
        pq_footer_ref_put(l->footers, ref);
    }
    return PQ_OK;
}

static int compile_view(pq_lake *l, const view *v, pq_query **q, pq_footer_ref **ref, pq_error *err)
{
    const table_info *t = v->t;
    *q = NULL;
    *ref = NULL;
    if (!t->ref_path)
        return pq_fail(err, PQ_E_CORRUPT, "table '%s' has no data files", table_label(t->name));
    if (pq_footer_cache_get(l->footers, l->store, t->ref_path, &t->ref_id, ref, err) != PQ_OK) {
        /* The schema file unreadable (replaced since the listing, say): the
         * next lookup lists and discovers again rather than fail until the
         * TTL runs out. */
        (void)lake_forget_listed(l, t->root, t->ref_path, err);
        pq_error_prefix(err, "%s: ", t->ref_path);
        return PQ_ERR;
    }
    pq_query_spec spec = {
        .wheres = v->wheres, .n_wheres = v->n_wheres,
        .eq_cols = v->eq_cols, .eq_vals = v->eq_vals, .n_eq = v->n_eq,
        .select = v->n_select ? v->select : NULL, .n_select = v->n_select,
        .limit = v->limit,
    };
    if (pq_query_compile(&pq_footer_ref_get(*ref)->schema, (const char *const *)t->part_names, t->part_types,
                         t->n_parts, &spec, q, err) != PQ_OK) {
        pq_footer_ref_put(l->footers, *ref);
        *ref = NULL;
        return PQ_ERR;
    }
    /* Real partition directories are filters too. */
    return PQ_OK;
}

/* ------------------------------------------------------------------ snapshots */

typedef struct snapshot {
    pq_table *files;             /* discovered under real_dir */
    int n_parts;
    char ***values;              /* full partition values per file */
    char *key;                   /* normalized view + file identities */
} snapshot;

static void snapshot_free(snapshot *s)
{
    if (s->values) {
        for (int i = 0; s->files && i < s->files->n_files; i++) free(s->values[i]);
        free(s->values);
    }
    pq_table_free(s->files);
    free(s->key);
    memset(s, 0, sizeof *s);
}

typedef struct prune_ctx {
    const view *v;
    const pq_query *q;
} prune_ctx;

/* Listing-time pruning: a partition directory whose values make the
 * predicate FALSE is never listed. */
static bool prune_dir(void *ctx, int depth, const char *const *names, const char *const *values)
{
    (void)names;
    prune_ctx *pc = ctx;
    const pq_query *q = pc->q;
    if (!q || !q->pred) return true;
    /* The real directories' values, then the ones below them so far. */
    const char *known[PQ_TABLE_MAX_DEPTH * 2];
    int n = 0;
    for (int i = 0; i < pc->v->n_real + depth && i < q->n_parts && n < (int)(sizeof known / sizeof *known); i++)
        known[n++] = i < pc->v->n_real ? pc->v->real_vals[i] : values[i - pc->v->n_real];
    pq_arena a;
    pq_arena_init(&a, 4096);
    pq_expr *e;
    bool keep = pq_query_fold_parts(q, known, n, &a, &e, NULL) != 0 || !e || pq_expr_constant(e) != PQ_TRI_FALSE;
    pq_arena_free(&a);
    return keep;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first part of a result's key: the table's layout and schema file,
 * the view's normalized components and its format (the files' identities
 * follow).  Nonzero when out of memory. */
static int view_key(const view *v, const pq_query *q, pq_buf *k)
{
    const table_info *t = v->t;
    int bad = 0;
    /* The table's layout and schema: a partition type inferred anew (a
     * directory pn=x turns INT64 into STRING) or a replaced schema file
     * changes the answer without changing the view's own files. */
    bad |= pq_buf_printf(k, "%s\n", t->root);
    for (int i = 0; i < t->n_parts; i++)
        bad |= pq_buf_printf(k, "part %zu:%s %d\n", strlen(t->part_names[i]), t->part_names[i], (int)t->part_types[i]);
    bad |= pq_buf_printf(k, "schema %s %llu %lld\n", t->ref_path ? t->ref_path : "", (unsigned long long)t->ref_id.size,
                  (long long)t->ref_id.mtime_ns);
    const char *parts[MAX_COMPONENTS * 2];
    int np = 0;
    pq_buf tmp;
    pq_buf_init(&tmp);
    for (int i = 0; i < v->n_real && np < MAX_COMPONENTS; i++) {
        size_t at = tmp.len;
        bad |= pq_buf_printf(&tmp, "eq %s=%s", t->part_names[i], v->real_vals[i] ? v->real_vals[i] : "\x01NULL");
        bad |= pq_buf_append(&tmp, "", 1);
        parts[np++] = (const char *)(uintptr_t)at;
    }
    if (bad) {
        pq_buf_free(&tmp);
        return -1;
    }
    for (int i = 0; i < np; i++) parts[i] = tmp.data + (uintptr_t)parts[i];
    qsort(parts, (size_t)np, sizeof *parts, cmp_str);
    for (int i = 0; i < np; i++) bad |= pq_buf_printf(k, "%s\n", parts[i]);
    pq_buf_free(&tmp);
    /* The filters (where= and COL=VALUE components) as the one bound,
     * normalized predicate they compile to: views that differ only in how
     * an expression is written share a result. */
    bad |= pq_buf_puts(k, "pred ");
    if (pq_expr_key(q ? q->pred : NULL, k)) return -1;
    bad |= pq_buf_puts(k, "\n");
    /* Names counted, not separated: a column may be named "a b". */
    bad |= pq_buf_puts(k, "select");
    for (int i = 0; i < v->n_select; i++) bad |= pq_buf_printf(k, " %zu:%s", strlen(v->select[i]), v->select[i]);
    bad |= pq_buf_printf(k, "\nlimit %lld\n", (long long)v->limit);
    if (v->kind == K_VIEW_FILE && v->file == F_DATA_PARQUET) bad |= pq_buf_puts(k, "format parquet\n");
    return bad ? -1 : 0;
}

static int take_snapshot(pq_lake *l, const view *v, const pq_query *q, snapshot *s, pq_error *err)
{
    memset(s, 0, sizeof *s);
    const table_info *t = v->t;
    int sub = t->n_parts - v->n_real;
    pq_part_decl *decl = calloc((size_t)(t->n_parts + 1), sizeof *decl);
    if (!decl) return PQ_NOMEM(err);
    for (int i = 0; i < sub; i++) decl[i] = (pq_part_decl){t->part_names[v->n_real + i], t->part_types[v->n_real + i]};
    prune_ctx pc = {v, q};
    pq_table_opts o = {
        .declared = decl, .n_declared = sub, .prune = prune_dir, .prune_ctx = &pc,
        .expected_layout = (const char *const *)(t->part_names + v->n_real), .n_expected_layout = sub,
    };
    int rc = pq_table_discover(l->store, v->real_dir, &o, &s->files, err);
    free(decl);
    if (rc != PQ_OK) return PQ_ERR;
    s->n_parts = t->n_parts;
    s->values = calloc((size_t)s->files->n_files + 1, sizeof *s->values);
    if (!s->values) goto oom;
    for (int f = 0; f < s->files->n_files; f++) {
        s->values[f] = calloc((size_t)t->n_parts + 1, sizeof **s->values);
        if (!s->values[f]) goto oom;
        for (int p = 0; p < t->n_parts; p++)
            s->values[f][p] = p < v->n_real ? v->real_vals[p] : s->files->files[f].values[p - v->n_real];
    }
    /* The key: the view's normalized components, then the SHA-256 of every
     * file's identity (path, size, mtime). Kept whole, the file list made
     * each cached result's key as long as the table's listing (0.5 MB at
     * 7,000 files, held by the cache entry and each handle). */
    pq_buf k;
    pq_buf_init(&k);
    if (view_key(v, q, &k)) {
        pq_buf_free(&k);
        goto oom;
    }
    pq_sha256_ctx files_digest;
    if (pq_sha256_init(&files_digest, err) != PQ_OK) goto fail_key;
    char line[64];
    for (int f = 0; f < s->files->n_files; f++) {
        const pq_table_file *tf = &s->files->files[f];
        int n = snprintf(line, sizeof line, " %llu %lld\n", (unsigned long long)tf->st.size, (long long)tf->st.mtime_ns);
        pq_sha256_update(&files_digest, tf->path, strlen(tf->path) + 1); /* with its NUL: paths hold no NUL */
        pq_sha256_update(&files_digest, line, (size_t)n);
    }
    uint8_t digest[32];
    if (pq_sha256_final(&files_digest, digest, err) != PQ_OK) goto fail_key;
    pq_buf_printf(&k, "files %d ", s->files->n_files);
    for (int i = 0; i < 32; i++) pq_buf_printf(&k, "%02x", digest[i]);
    if (pq_buf_append(&k, "\n", 2)) {
        pq_buf_free(&k);
        goto oom;
    }
    s->key = k.data;
    return PQ_OK;
oom:
    snapshot_free(s);
    return PQ_NOMEM(err);
fail_key:
    pq_buf_free(&k);
    snapshot_free(s);
    return PQ_ERR;
}

/* ------------------------------------------------------------------ data.csv jobs */

typedef struct data_job {
    pq_lake *l;
    view v;                      /* owns its arena; v.t referenced */
    snapshot snap;
    bool plan_only;              /* plan.txt */
    bool parquet;                /* data.parquet */
    char what[512];              /* the view, for debug log lines */
} data_job;

static void data_job_free(void *p)
{
    data_job *j = p;
    snapshot_free(&j->snap);
    lake_view_free(j->l, &j->v);
    free(j);
}

static void account_scan(pq_lake *l, const pq_scan_stats *st)
{
    const pq_plan_totals *t = &st->plan;
    atomic_fetch_add(&l->c.files_total, t->files);
    atomic_fetch_add(&l->c.files_pruned, t->files_pruned);
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
    pq_scan_file *files;
    pq_footer_ref **refs;
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
         * mix versions (SPEC 8), and the next open lists anew. */
        if (pq_file_check_listed(oc->files[f].file, &tf->st, err) != PQ_OK)
            return lake_forget_listed(oc->l, oc->table_root, tf->path, err);
    }
    if (!oc->refs[f] && pq_footer_cache_get(oc->l->footers, oc->l->store, tf->path, &tf->st, &oc->refs[f], err) != PQ_OK) {
        (void)lake_forget_listed(oc->l, oc->table_root, tf->path, err); /* when it changed since */
        pq_error_prefix(err, "%s: ", tf->path);
        return PQ_ERR;
    }
    oc->files[f].footer = pq_footer_ref_get(oc->refs[f]);
    sf->file = oc->files[f].file;
    sf->footer = oc->files[f].footer;
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
}

static int open_files(pq_lake *l, const snapshot *s, const view *v, open_ctx *oc, pq_error *err)
{
    int n = s->files->n_files;
    oc->l = l;
    oc->s = s;
    oc->table_root = v->t ? v->t->root : NULL;
    oc->files = calloc((size_t)n + 1, sizeof *oc->files);
    oc->refs = calloc((size_t)n + 1, sizeof *oc->refs);
    if (!oc->files || !oc->refs) return PQ_NOMEM(err);
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
    }
    free(oc->files);
    free(oc->refs);
}

static int data_job_run(void *ctx, const pq_sink *sink, pq_error *err)
{
    data_job *j = ctx;
    pq_lake *l = j->l;
    uint64_t started = pq_now_ms();
    pq_query *q = NULL;
    pq_footer_ref *ref = NULL;
    open_ctx oc = {0};
    int rc = compile_view(l, &j->v, &q, &ref, err);
    if (rc == PQ_OK) rc = open_files(l, &j->snap, &j->v, &oc, err);
    if (rc == PQ_OK) {
        pq_scan_opts o;
        pq_scan_opts_init(&o);
        o.threads = l->threads;
        o.open_file = open_snapshot_file;
        o.release_file = release_snapshot_file;
        o.open_parallel = l->store->parallel_requests;
        o.dirs_pruned = (uint64_t)j->snap.files->n_dirs_pruned;
        o.open_ctx = &oc;
        pq_scan_stats st;
        memset(&st, 0, sizeof st);
        if (j->parquet) {
            /* With no file, a file of the view's schema and no rows. */
            /* The table's writer settings from the ini, else the defaults. */
            const pq_lake_table_decl *d = lake_decl_of(l, j->v.t->name);
            pq_write_opts wo;
            pq_write_opts_init(&wo);
            if (d && d->has_write) wo = d->write;
            rc = pq_scan_parquet(q, pq_footer_ref_get(ref), oc.files, j->snap.files->n_files, &o, &wo, sink, &st, err);
        } else if (j->snap.files->n_files == 0) {
            /* No file can match: the header only. */
            pq_buf h;
            pq_buf_init(&h);
            if (pq_query_header(q, &h)) rc = PQ_NOMEM(err);
            else rc = sink->write(sink->ctx, h.data, h.len, err);
            pq_buf_free(&h);
            st.plan.dirs_pruned = o.dirs_pruned;
        } else {
            rc = pq_scan_csv(q, oc.files, j->snap.files->n_files, &o, sink, &st, err);
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
    pq_query_free(q);
    pq_footer_ref_put(l->footers, ref);
    if (rc != PQ_OK && err->cls != PQ_E_CANCELLED) pq_lake_report(l, err);
    return rc;
}

/* ------------------------------------------------------------------ text files */

static int schema_text(pq_lake *l, view *v, pq_buf *out, pq_error *err)
{
    pq_query *q;
    pq_footer_ref *ref;
    PQ_TRY(compile_view(l, v, &q, &ref, err));
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
    pq_query_free(q);
    pq_footer_ref_put(l->footers, ref);
    return rc ? PQ_NOMEM(err) : PQ_OK;
}

static int plan_text(pq_lake *l, view *v, pq_buf *out, pq_error *err)
{
    pq_query *q;
    pq_footer_ref *ref;
    PQ_TRY(compile_view(l, v, &q, &ref, err));
    snapshot s;
    open_ctx oc = {0};
    int rc = take_snapshot(l, v, q, &s, err);
    if (rc == PQ_OK) rc = open_files(l, &s, v, &oc, err);
    if (rc == PQ_OK) {
        pq_scan_opts o;
        pq_scan_opts_init(&o);
        o.open_file = open_snapshot_file;
        o.open_parallel = l->store->parallel_requests;
        o.dirs_pruned = (uint64_t)s.files->n_dirs_pruned;
        o.open_ctx = &oc;
        if (s.files->n_files == 0) {
            int e = pq_buf_puts(out, "no files can match\n");
            if (o.dirs_pruned)
                e |= pq_buf_printf(out, "files: 0 total; %llu partition director%s pruned at listing (files not listed)\n",
                                   (unsigned long long)o.dirs_pruned, o.dirs_pruned == 1 ? "y" : "ies");
            rc = e ? PQ_NOMEM(err) : PQ_OK;
        }
        else rc = pq_scan_plan(q, oc.files, s.files->n_files, &o, out, NULL, err);
        if (rc != PQ_OK) (void)lake_forget_listed(l, oc.table_root, NULL, err); /* as data_job_run */
    }
    close_files(&oc);
    snapshot_free(&s);
    pq_query_free(q);
    pq_footer_ref_put(l->footers, ref);
    return rc;
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

/* ------------------------------------------------------------------ results */

/* Finds or starts the result of a data.csv view.  Takes over the view on
 * success (the job owns it). */
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
    pq_buf_printf(&b, "/%s", v->file == F_DATA_PARQUET ? "data.parquet" : "data.csv");
    snprintf(out, cap, "%s", b.data ? b.data : "(out of memory)");
    pq_buf_free(&b);
}

static int get_result(pq_lake *l, view *v, pq_result **out, char **key_out, pq_error *err)
{
    pq_query *q;
    pq_footer_ref *ref;
    PQ_TRY(compile_view(l, v, &q, &ref, err));
    data_job *j = calloc(1, sizeof *j);
    if (!j) {
        pq_query_free(q);
        pq_footer_ref_put(l->footers, ref);
        return PQ_NOMEM(err);
    }
    int rc = take_snapshot(l, v, q, &j->snap, err);
    pq_query_free(q);
    pq_footer_ref_put(l->footers, ref);
    if (rc != PQ_OK) {
        free(j);
        return PQ_ERR;
    }
    uint64_t now = pq_now_ms();
    pthread_mutex_lock(&l->mu);
    for (result_entry *e = l->results; e; e = e->next) {
        if (strcmp(e->key, j->snap.key)) continue;
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
        snapshot_free(&j->snap);
        free(j);
        return *key_out ? PQ_OK : PQ_NOMEM(err);
    }
    pthread_mutex_unlock(&l->mu);
    result_entry *e = calloc(1, sizeof *e);
    char *key = strdup(j->snap.key);
    if (!e || !key) {
        free(e);
        free(key);
        snapshot_free(&j->snap);
        free(j);
        return PQ_NOMEM(err);
    }
    e->key = strdup(key);
    if (l->log_level >= PQ_LOG_DEBUG) {
        describe_view(v, j->what, sizeof j->what);
        lake_logf(l, PQ_LOG_DEBUG, "%s: scan started over %d file%s", j->what, j->snap.files->n_files,
                  j->snap.files->n_files == 1 ? "" : "s");
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

static void release_result(pq_lake *l, pq_result *res, const char *key)
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

/* data.parquet: its result, complete (SPEC: materialized on first lookup or
 * open, with an exact size).  A failed result is not kept. */
static int materialize(pq_lake *l, view *v, pq_result **out, char **key_out, bool (*stop)(void *), void *stop_ctx,
                       bool *job_ran, pq_error *err)
{
    *job_ran = false;
    PQ_TRY(get_result(l, v, out, key_out, err));
    *job_ran = true; /* its failures are reported by the job */
    if (pq_result_wait(*out, stop, stop_ctx, err) == PQ_OK) return PQ_OK;
    release_result(l, *out, *key_out);
    free(*key_out);
    *out = NULL;
    *key_out = NULL;
    return PQ_ERR;
}

/* ------------------------------------------------------------------ public API */

struct pq_lake_handle {
    pq_lake *l;
    pq_result *res;              /* data.csv */
    char *key;
    pq_buf text;                 /* other files */
};

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
    l->footers = pq_footer_cache_new(256u << 20, &l->cc);
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

/* A result's version for the file system (pq_lake_attr.version). */
static uint64_t version_of_key(const char *key)
{
    return pq_hash_str(key) | 1;
}

int lake_fail_logged(pq_lake *l, pq_error *err, const char *path)
{
    pq_error_prefix(err, "%s: ", path[0] ? path : "/");
    if (err->cls != PQ_E_NOTFOUND && err->cls != PQ_E_STALE) pq_lake_report(l, err);
    return PQ_ERR;
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
            if (!v.t->ref_path || schema_text(l, &v, &text, err) == PQ_OK) {
                out->size = text.len;
                out->size_final = true;
            }
            pq_buf_free(&text);
            pq_error_clear(err); /* reported when the file is opened */
        } else if (v.file == F_DATA_PARQUET) {
            /* Materialized here, on the first lookup: its size is exact. */
            pq_result *res;
            char *key;
            bool job_ran;
            rc = materialize(l, &v, &res, &key, stop, stop_ctx, &job_ran, err);
            /* A result that could not start (no cache file): said here, as
             * an open of data.csv says it. */
            if (rc != PQ_OK && !job_ran) {
                lake_view_free(l, &v);
                return lake_fail_logged(l, err, path);
            }
            if (rc == PQ_OK) {
                pq_result_state st;
                pq_result_state_of(res, &st);
                out->size = st.size;
                out->size_final = true;
                out->version = version_of_key(key);
                release_result(l, res, key);
                free(key);
            }
        } else if (v.file == F_DATA_CSV) {
            /* The exact size once a complete result exists for the view as
             * the lake is now; 0 before (procfs convention). */
            pq_query *q;
            pq_footer_ref *ref;
            snapshot s;
            if (compile_view(l, &v, &q, &ref, err) == PQ_OK) {
                if (take_snapshot(l, &v, q, &s, err) == PQ_OK) {
                    pthread_mutex_lock(&l->mu);
                    for (result_entry *e = l->results; e; e = e->next) {
                        if (strcmp(e->key, s.key)) continue;
                        pq_result_state st;
                        pq_result_state_of(e->res, &st);
                        if (st.done && !st.failed) {
                            out->size = st.size;
                            out->size_final = true;
                        }
                        break;
                    }
                    pthread_mutex_unlock(&l->mu);
                    snapshot_free(&s);
                }
                pq_query_free(q);
                pq_footer_ref_put(l->footers, ref);
            }
            pq_error_clear(err);
        }
        break;
    }
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
    pq_error ignore;
    if (lake_table_get(r->l, e->name, e->name, &t, &ignore) != PQ_OK) return 0;
    bool has_files = t->n_files > 0 || lake_table_known(r->l, e->name);
    lake_table_info_put(r->l, t);
    if (!has_files) return 0;
    pq_lake_attr a = {.is_dir = true, .mtime_ns = e->st.mtime_ns};
    lake_attr_owner(r->l, &e->st, true, false, &a);
    return r->cb(r->ctx, e->name, &a) ? 1 : 0;
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
        bool keep = prune_dir(&pc, 1, NULL, vals);
        free(val);
        if (!keep) return 0;
    }
    pq_lake_attr a = {.is_dir = true, .mtime_ns = e->st.mtime_ns};
    lake_attr_owner(r->l, &e->st, true, false, &a);
    return r->cb(r->ctx, e->name, &a) ? 1 : 0;
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
        if (v.n_eq || v.n_wheres) {
            if (compile_view(l, &v, &q, &ref, err) != PQ_OK) {
                rc = PQ_ERR;
                break;
            }
        }
        r.q = q;
        rc = l->store->ops->list(l->store, v.real_dir, partition_entry, &r, err);
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

/* Takes (one reader more) the complete result whose version the file
 * system's data.parquet inode names, while the lake still holds it: what
 * the lookup that made the inode saw, though a write may have landed
 * since (the kernel looks data.parquet up at every open, so an open after
 * a write's close() gets the newer version).  The view part of the key
 * must match too, so a hash collision cannot hand out another view. */
static bool take_held_version(pq_lake *l, const view *v, uint64_t version, pq_result **out, char **key_out)
{
    pq_query *q;
    pq_footer_ref *ref;
    pq_error err;
    pq_error_clear(&err);
    if (compile_view(l, v, &q, &ref, &err) != PQ_OK) return false;
    pq_buf prefix;
    pq_buf_init(&prefix);
    int bad = view_key(v, q, &prefix);
    pq_query_free(q);
    pq_footer_ref_put(l->footers, ref);
    bool found = false;
    pthread_mutex_lock(&l->mu);
    for (result_entry *e = bad ? NULL : l->results; e; e = e->next) {
        if (version_of_key(e->key) != version || strncmp(e->key, prefix.data, prefix.len)) continue;
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
    case K_META_ERRORS: rc = errors_text(l, &h->text) ? PQ_NOMEM(err) : PQ_OK; break;
    case K_VIEW_FILE:
        atomic_fetch_add(&l->c.views_opened, 1);
        /* A table without files yet (made by mkdir, or declared): no
         * columns, no rows, nothing to plan; only data.parquet, which needs
         * a schema, fails. */
        if (!v.t->ref_path && v.file != F_DATA_PARQUET) break;
        if (v.file == F_SCHEMA) rc = schema_text(l, &v, &h->text, err);
        else if (v.file == F_PLAN) rc = plan_text(l, &v, &h->text, err);
        else if (v.file == F_DATA_CSV) rc = get_result(l, &v, &h->res, &h->key, err);
        else if (!version || !take_held_version(l, &v, version, &h->res, &h->key)) {
            bool job_ran;
            rc = materialize(l, &v, &h->res, &h->key, stop, stop_ctx, &job_ran, err);
        }
        if (rc == PQ_OK && version && h->res && version_of_key(h->key) != version) {
            release_result(l, h->res, h->key);
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
    if (off >= h->text.len) return PQ_OK;
    *n = h->text.len - off < len ? (size_t)(h->text.len - off) : len;
    *data = h->text.data + off;
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
        *size = h->text.len;
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
    if (h->res) release_result(h->l, h->res, h->key);
    free(h->key);
    pq_buf_free(&h->text);
    free(h);
}
