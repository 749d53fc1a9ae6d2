/* A path into a view (SPEC section 3): its components resolved, decoded
 * and validated (real partition directories, COL=VALUE filters, where=,
 * select=, limit=, a view file), the view compiled against its table's
 * schema, and its snapshot: the files it reads now and the key of its
 * result.  The owners and modes views report come from here too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lake_internal.h"
#include "numfmt.h"
#include "query.h"
#include "sigv4.h"

/* ------------------------------------------------------------------ footers as a table sees them */

static void prepare_footer(void *ctx, pq_footer *ft)
{
    pq_tf_apply_types(ctx, &ft->schema);
}

void lake_footer_view(const table_info *t, pq_footer_view *as)
{
    memset(as, 0, sizeof *as);
    if (!t->snap) return;
    as->tag = t->snap->schema_tag;
    as->size_only = true;
    as->prepare = prepare_footer;
    as->ctx = t->snap;
}

int lake_footer_get(pq_lake *l, const table_info *t, const char *path, const pq_stat *id, pq_footer_ref **out,
                    pq_error *err)
{
    pq_footer_view as;
    lake_footer_view(t, &as);
    return pq_footer_cache_get_as(l->footers, l->store, path, id, &as, out, err);
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

/* where=: an expression is text, decoded only where a path cannot hold it
 * (%2F, %25: pq_path_text_decode), so LIKE patterns read as typed, as
 * pqtool --where reads them (before: `LIKE '%Ada%'` was EINVAL, byte 0xAD,
 * and `LIKE '%41da%'` ran as `LIKE 'Ada%'`). */
static char *decode_expression(pq_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *out = pq_arena_alloc(a, n + 1);
    if (out) (void)pq_path_text_decode(s, n, out);
    return out;
}

/* A COL=VALUE value that is not a directory's: `'DE'` (a quoted SQL
 * literal, '' for a quote) is DE; on a partition column, one that begins
 * or ends with a space (`country= DE`) is refused, naming it, with the
 * ways to say it (a data column's values are not known without a scan). */
static int plain_value(pq_arena *a, const char *comp, bool partition, char **value, pq_error *err)
{
    char *s = *value;
    size_t n = strlen(s);
    if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'') {
        char *out = pq_arena_alloc(a, n);
        if (!out) return PQ_NOMEM(err);
        size_t o = 0;
        for (size_t i = 1; i + 1 < n; i++) {
            if (s[i] == '\'' && (i + 2 >= n || s[i + 1] != '\''))
                return pq_fail(err, PQ_E_USAGE, "%s: a quoted value with a lone quote inside (write '' for a quote)",
                               comp);
            out[o++] = s[i];
            if (s[i] == '\'') i++;
        }
        out[o] = '\0';
        *value = out;
        return PQ_OK;
    }
    if (partition && n && (s[0] == ' ' || s[n - 1] == ' '))
        return pq_fail(err, PQ_E_USAGE,
                       "%s: the value '%s' begins or ends with a space, and no partition directory has it (without "
                       "the space: COL=VALUE; with it: where=COL = '...')",
                       comp, s);
    return PQ_OK;
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

/* Enters the real partition directory `comp` (KEY=VALUE, decoded as key
 * and value) when it is the next partition level of the view's table and
 * exists; *entered says whether it did. */
static int enter_real_dir(pq_lake *l, view *v, const char *comp, const char *key, const char *value, bool *entered,
                          pq_error *err)
{
    const table_info *t = v->t;
    *entered = false;
    /* A table format's partition values are its log's, whatever
     * directories its files are in: COL=VALUE is a filter there. */
    if (t->snap || v->n_real >= t->n_parts || strcmp(key, t->part_names[v->n_real])) return PQ_OK;
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

static bool is_as_of(const char *c)
{
    return !strncmp(c, "as_of=", 6);
}

/* Whether key=value (value NULL: the NULL partition) names a partition of
 * a table format's table: key one of its partition columns, and value one
 * of that column's values in its log.  Such a component is that filter,
 * also where key is a path keyword (a table partitioned by a column named
 * as_of or limit): the partitions readdir lists resolve to themselves. */
static bool format_partition_of(const table_info *t, const char *key, const char *value)
{
    int p = 0;
    while (p < t->n_parts && strcmp(t->part_names[p], key)) p++;
    if (!t->snap || p == t->n_parts) return false;
    char want_buf[PQ_FMT_MAX + 8], buf[PQ_FMT_MAX + 8];
    const char *want, *have;
    pq_error why;
    if (value && pq_tf_part_canonical(t->snap, p, value, want_buf, sizeof want_buf, &want, &why) != PQ_OK)
        return false;
    const pq_table *pt = t->snap->table;
    for (int f = 0; f < pt->n_files; f++) {
        const char *fv = pt->files[f].values[p];
        if (!value || !fv) {
            if (!value && !fv) return true;
            continue;
        }
        if (pq_tf_part_canonical(t->snap, p, fv, buf, sizeof buf, &have, &why) == PQ_OK && !strcmp(have, want))
            return true;
    }
    return false;
}

/* The value of KEY=VALUE (raw) as a filter: decoded, NULL for the marker. */
static const char *filter_value(pq_arena *a, const char *comp, const char *raw, bool *is_null, pq_error *err)
{
    *is_null = !strcmp(raw, "__HIVE_DEFAULT_PARTITION__");
    return decode_part(a, comp, raw, strlen(raw), err);
}

/* as_of=N or as_of=TIMESTAMP among comps[from..n): the view's table at
 * that version (SPEC section 3).  Only a table format's table has
 * versions; on a Hive table as_of= is COL=VALUE, as any other name. */
static int resolve_as_of(pq_lake *l, view *v, char **comps, int from, int n, pq_error *err)
{
    if (!v->t->snap) return PQ_OK;
    for (int i = from; i < n; i++) {
        if (!is_as_of(comps[i])) continue;
        bool is_null;
        const char *val = filter_value(&v->arena, comps[i], comps[i] + 6, &is_null, err);
        if (!val) return PQ_ERR;
        if (format_partition_of(v->t, "as_of", is_null ? NULL : val)) continue; /* a partition, not time travel */
        if (v->as_of) return pq_fail(err, PQ_E_USAGE, "%s: at most one as_of= per path", comps[i]);
        v->as_of = val;
    }
    if (!v->as_of) return PQ_OK;
    int64_t version, ns;
    int had_offset;
    size_t len = strlen(v->as_of);
    if (pq_parse_row_count(v->as_of, len, &version) != 0) {
        /* A time (UTC unless it says otherwise): the newest commit at or
         * before it. */
        char day[32];
        if (len == 10 && len < sizeof day) {
            snprintf(day, sizeof day, "%s 00:00:00", v->as_of); /* a date: its midnight */
            if (pq_parse_timestamp_ns(day, strlen(day), &ns, &had_offset) != 0) len = 0;
        } else if (pq_parse_timestamp_ns(v->as_of, len, &ns, &had_offset) != 0) {
            len = 0;
        }
        if (!len)
            return pq_fail(err, PQ_E_USAGE,
                           "as_of=%s: neither a version (digits) nor a time (YYYY-MM-DD[ HH:MM:SS[.fff]][Z|+HH:MM])",
                           v->as_of);
        int64_t ms = ns / 1000000 - (ns % 1000000 < 0);
        /* Commits timed otherwise than by their files: refused, also when
         * the table took in-commit timestamps up after older versions. */
        if (pq_tf_check_timed(v->t->snap, err) != PQ_OK || pq_tf_version_at(l->store, v->t->root, ms, &version, err) != PQ_OK) {
            pq_error_prefix(err, "as_of=%s: ", v->as_of);
            return PQ_ERR;
        }
    }
    table_info *at;
    if (lake_table_get(l, v->t->name, v->t->root, (int64_t)version, &at, err) != PQ_OK) {
        pq_error_prefix(err, "as_of=%s: ", v->as_of);
        return PQ_ERR;
    }
    bool by_time = !(pq_parse_row_count(v->as_of, strlen(v->as_of), &version) == 0);
    if (by_time && pq_tf_check_timed(at->snap, err) != PQ_OK) {
        lake_table_info_put(l, at);
        pq_error_prefix(err, "as_of=%s: ", v->as_of);
        return PQ_ERR;
    }
    lake_table_info_put(l, v->t);
    v->t = at;
    return PQ_OK;
}

/* KEY=VALUE (comp; kl bytes of key, val the raw value) as a filter when it
 * names a partition of v's table format table: 1 taken, 0 not, -1 error. */
static int take_format_partition(view *v, const char *comp, size_t kl, const char *val, pq_error *err)
{
    char *key = decode_part(&v->arena, comp, comp, kl, err);
    bool is_null;
    const char *value = key ? filter_value(&v->arena, comp, val, &is_null, err) : NULL;
    if (!value) return -1;
    if (!format_partition_of(v->t, key, is_null ? NULL : value)) return 0;
    int ne = v->n_eq;
    if (pq_arena_push_str(&v->arena, &v->eq_cols, &ne, key)) return PQ_NOMEM(err), -1;
    ne = v->n_eq;
    if (pq_arena_push_str(&v->arena, &v->eq_vals, &ne, is_null ? NULL : value)) return PQ_NOMEM(err), -1;
    v->n_eq = ne;
    return 1;
}

/* COL=VALUE (c, the key kl bytes long, val after '='): the next level's
 * real partition directory, else an equality filter. */
static int take_col_value(pq_lake *l, view *v, const char *c, size_t kl, const char *val, pq_error *err)
{
    const table_info *t = v->t;
    char *key = decode_part(&v->arena, c, c, kl, err);
    char *value = key ? decode_part(&v->arena, c, val, strlen(val), err) : NULL;
    if (!key || !value) return PQ_ERR;
    bool is_null = !strcmp(val, "__HIVE_DEFAULT_PARTITION__");
    /* The next level of real partition directories, also after virtual
     * components (filters commute): readdir below a where= lists these
     * directories, and entering one must show its own subdirectories, not
     * the same name again. */
    bool entered;
    PQ_TRY(enter_real_dir(l, v, c, key, value, &entered, err));
    if (entered) return PQ_OK;
    /* Not a directory of a Hive table: a typo must not read as a filter
     * matching nothing (issue 23).  A Delta table's values are its log's,
     * whatever they hold. */
    if (!is_null && !t->snap) {
        char *plain = value;
        bool partition = false;
        for (int p = 0; p < t->n_parts && !partition; p++) partition = !strcmp(t->part_names[p], key);
        PQ_TRY(plain_value(&v->arena, c, partition, &plain, err));
        if (plain != value) {
            value = plain;
            PQ_TRY(enter_real_dir(l, v, c, key, value, &entered, err));
            if (entered) return PQ_OK;
        }
    }
    int ne = v->n_eq;
    if (pq_arena_push_str(&v->arena, &v->eq_cols, &ne, key)) return PQ_NOMEM(err);
    ne = v->n_eq;
    if (pq_arena_push_str(&v->arena, &v->eq_vals, &ne, is_null ? NULL : value)) return PQ_NOMEM(err);
    v->n_eq = ne;
    return PQ_OK;
}

/* Resolves a path into a view (or a special entry).  Validates every
 * component, compiling the view's query when it has filters. */
int lake_resolve(pq_lake *l, const char *path, view *v, pq_error *err)
{
    memset(v, 0, sizeof *v);
    pq_arena_init(&v->arena, 4096);
    v->limit = -1;
    v->sized = -1;
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
        PQ_TRY(lake_table_get(l, "", "", -1, &v->t, err));
        lake_root_stat(l, &v->real_st);
    } else {
        pq_stat st;
        if (lake_is_hidden(comps[0])) return pq_fail(err, PQ_E_NOTFOUND, "no such table");
        int has = lake_dir_find(l, "", comps[0], &st, err);
        if (has < 0) return PQ_ERR;
        bool is_dir = has && st.is_dir;
        if (is_dir) v->real_st = st;
        if (!is_dir && !lake_table_was_made(l, comps[0]))
            return pq_fail(err, PQ_E_NOTFOUND, "no such table '%s'", comps[0]);
        PQ_TRY(lake_table_get(l, comps[0], comps[0], -1, &v->t, err));
        /* As the root's listing: a directory without Parquet files is not
         * a table (SPEC section 2), unless the ini declares it or it is a
         * table format's. */
        if (v->t->n_files == 0 && !v->t->snap && !lake_table_known(l, comps[0]))
            return pq_fail(err, PQ_E_NOTFOUND, "no such table '%s'", comps[0]);
        i = 1;
    }
    PQ_TRY(resolve_as_of(l, v, comps, i, n, err));
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
        bool keyword = (kl == 5 && (!strncmp(c, "where", 5) || !strncmp(c, "limit", 5) || !strncmp(c, "sized", 5))) ||
                       (kl == 6 && !strncmp(c, "select", 6)) || is_as_of(c);
        /* A partition of a table format's table whose column is named as a
         * keyword (as_of, limit, where, select): that filter when VALUE is
         * one of the column's values in the log (any other COL=VALUE is a
         * filter anyway, below: no need to look through the files). */
        int taken = t->snap && keyword ? take_format_partition(v, c, kl, val, err) : 0;
        if (taken < 0) return PQ_ERR;
        if (taken || (t->snap && is_as_of(c))) continue; /* as_of=: resolve_as_of took it */
        keyword &= !is_as_of(c);
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
            char *w = decode_expression(&v->arena, val);
            if (!w) return PQ_NOMEM(err);
            if (pq_arena_push_str(&v->arena, &v->wheres, &v->n_wheres, w)) return PQ_NOMEM(err);
        } else if (kl == 6 && !strncmp(c, "select", 6)) {
            if (has_select) return pq_fail(err, PQ_E_USAGE, "%s: at most one select= per path", c);
            has_select = true;
            if (pq_select_parse(val, true, &v->arena, &v->select, &v->n_select, err) != PQ_OK) {
                pq_error_prefix(err, "%s: ", c);
                return PQ_ERR;
            }
            if (v->n_select == 0) return pq_fail(err, PQ_E_USAGE, "%s: no columns", c);
        } else if (kl == 5 && !strncmp(c, "sized", 5)) {
            if (v->sized >= 0) return pq_fail(err, PQ_E_USAGE, "%s: at most one sized= per path", c);
            if (strcmp(val, "1") && strcmp(val, "0"))
                return pq_fail(err, PQ_E_USAGE, "%s: sized= takes 1 (data.csv's size exact on lookup) or 0", c);
            v->sized = val[0] == '1';
        } else if (kl == 5 && !strncmp(c, "limit", 5)) {
            if (has_limit) return pq_fail(err, PQ_E_USAGE, "%s: at most one limit= per path", c);
            int64_t lim;
            if (pq_parse_row_count(val, strlen(val), &lim) != 0)
                return pq_fail(err, PQ_E_USAGE, "%s: not a row count (0 to %lld)", c, (long long)INT64_MAX);
            v->limit = lim;
            has_limit = true;
        } else {
            PQ_TRY(take_col_value(l, v, c, kl, val, err));
        }
    }
    /* A table without files yet (made by mkdir, or declared) has no schema
     * to check against: its COL=VALUE directories must resolve, so that a
     * first write can go into them. */
    if ((v->n_eq || v->n_wheres || v->n_select) && t->ref_path) {
        /* Validate: unknown columns, bad expressions fail the lookup.  A
         * column the schema file lacks may be a later file's (schema
         * evolution): then the files' union decides. */
        pq_query *q;
        pq_footer_ref *ref;
        if (lake_compile_view(l, v, &q, &ref, err) == PQ_OK) {
            pq_query_free(q);
            pq_footer_ref_put(l->footers, ref);
        } else {
            view_query vq;
            if (!lake_schema_may_evolve(t) || lake_view_files(l, v, &vq, err) != PQ_OK) return PQ_ERR;
            lake_view_query_free(l, &vq);
        }
    }
    return PQ_OK;
}

int lake_schema_file(pq_lake *l, const table_info *t, pq_footer_ref **ref, pq_error *err)
{
    *ref = NULL;
    if (!t->ref_path)
        return pq_fail(err, PQ_E_CORRUPT, "table '%s' has no data files", lake_table_label(t->name));
    if (lake_footer_get(l, t, t->ref_path, &t->ref_id, ref, err) != PQ_OK) {
        /* The schema file unreadable (replaced since the listing, say): the
         * next lookup lists and discovers again rather than fail until the
         * TTL runs out. */
        (void)lake_forget_listed(l, t->root, t->ref_path, err);
        pq_error_prefix(err, "%s: ", t->ref_path);
        return PQ_ERR;
    }
    /* The file read (it is still the one listed), its schema in the
     * table's types. */
    if (t->typed_ref) {
        pq_footer_ref_put(l->footers, *ref);
        *ref = pq_footer_ref_hold(l->footers, t->typed_ref);
    }
    return PQ_OK;
}

int lake_typed_schema(table_info *t, const pq_footer *file_ft, pq_error *err)
{
    pq_footer *typed;
    PQ_TRY(pq_tf_table_schema(t->snap, file_ft, &typed, err));
    if (!typed) return PQ_OK;
    pq_footer_ref *r = pq_footer_ref_own(typed);
    if (!r) {
        pq_footer_free(typed);
        return PQ_NOMEM(err);
    }
    pq_footer_ref_put(NULL, t->typed_ref);
    t->typed_ref = r;
    return PQ_OK;
}

int lake_compile_against(const view *v, const pq_footer *schema_ft, pq_query **q, pq_error *err)
{
    const table_info *t = v->t;
    const pq_schema *schema = &schema_ft->schema;
    *q = NULL;
    pq_query_spec spec = {
        .wheres = v->wheres, .n_wheres = v->n_wheres,
        .eq_cols = v->eq_cols, .eq_vals = v->eq_vals, .n_eq = v->n_eq,
        .select = v->n_select ? v->select : NULL, .n_select = v->n_select,
        .limit = v->limit,
    };
    /* A table format's columns in its schema's order, partition columns
     * where it puts them (Hive's come last). */
    const char **order = NULL;
    int rc = PQ_OK;
    if (t->snap && t->snap->cols && !v->n_select) {
        order = calloc((size_t)t->snap->n_cols + 1, sizeof *order);
        if (!order) rc = PQ_NOMEM(err);
        for (int i = 0; order && i < t->snap->n_cols; i++) order[i] = t->snap->cols[i].name;
        spec.select = order;
        spec.n_select = t->snap->n_cols;
    }
    if (rc == PQ_OK && t->snap) rc = pq_tf_check_file_schema(t->snap, schema, t->ref_path, err);
    if (rc == PQ_OK)
        rc = pq_query_compile(schema, (const char *const *)t->part_names, t->part_types, t->n_parts, &spec, q, err);
    free(order);
    return rc;
}

int lake_compile_view(pq_lake *l, const view *v, pq_query **q, pq_footer_ref **ref, pq_error *err)
{
    *q = NULL;
    PQ_TRY(lake_schema_file(l, v->t, ref, err));
    if (lake_compile_against(v, pq_footer_ref_get(*ref), q, err) != PQ_OK) {
        pq_footer_ref_put(l->footers, *ref);
        *ref = NULL;
        return PQ_ERR;
    }
    return PQ_OK;
}

/* ------------------------------------------------------------------ snapshots */

void lake_snapshot_free(snapshot *s)
{
    if (s->values) {
        for (int i = 0; !s->tf && s->files && i < s->files->n_files; i++) free(s->values[i]);
        free(s->values);
    }
    if (!s->tf) pq_table_free(s->files);
    free(s->key);
    memset(s, 0, sizeof *s);
}

bool lake_prune_dir(void *ctx, int depth, const char *const *names, const char *const *values)
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

int lake_view_key(const view *v, const pq_query *q, pq_buf *k)
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
    /* A table format's version: its schema (names, types) may change with
     * no file added. */
    if (t->snap)
        bad |= pq_buf_printf(k, "%s version %lld schema %llx\n", pq_tf_kind_name(t->snap->kind),
                             (long long)t->snap->version, (unsigned long long)t->snap->schema_tag);
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

/* A table format's snapshot: its files, all of them (the scan prunes by
 * their partition values as it does a Hive table's, and counts them),
 * borrowed from the table's snapshot, which the view holds. */
static int snapshot_of_format(const table_info *t, snapshot *s, pq_error *err)
{
    s->tf = t->snap;
    s->files = t->snap->table;
    s->n_parts = t->n_parts;
    s->values = calloc((size_t)s->files->n_files + 1, sizeof *s->values);
    if (!s->values) return PQ_NOMEM(err);
    for (int f = 0; f < s->files->n_files; f++) s->values[f] = s->files->files[f].values;
    return PQ_OK;
}

/* A Hive table's snapshot: its files under the view's real directory,
 * as listed now (directories the predicate rules out are not listed). */
static int snapshot_of_hive(pq_lake *l, const view *v, const pq_query *q, snapshot *s, pq_error *err)
{
    const table_info *t = v->t;
    int sub = t->n_parts - v->n_real;
    pq_part_decl *decl = calloc((size_t)(t->n_parts + 1), sizeof *decl);
    if (!decl) return PQ_NOMEM(err);
    for (int i = 0; i < sub; i++) decl[i] = (pq_part_decl){t->part_names[v->n_real + i], t->part_types[v->n_real + i]};
    prune_ctx pc = {v, q};
    pq_table_opts o = {
        .declared = decl, .n_declared = sub, .prune = lake_prune_dir, .prune_ctx = &pc,
        .expected_layout = (const char *const *)(t->part_names + v->n_real), .n_expected_layout = sub,
    };
    int rc = pq_table_discover(l->store, v->real_dir, &o, &s->files, err);
    free(decl);
    if (rc != PQ_OK) return PQ_ERR;
    s->n_parts = t->n_parts;
    s->values = calloc((size_t)s->files->n_files + 1, sizeof *s->values);
    if (!s->values) return PQ_NOMEM(err);
    for (int f = 0; f < s->files->n_files; f++) {
        s->values[f] = calloc((size_t)t->n_parts + 1, sizeof **s->values);
        if (!s->values[f]) return PQ_NOMEM(err);
        for (int p = 0; p < t->n_parts; p++)
            s->values[f][p] = p < v->n_real ? v->real_vals[p] : s->files->files[f].values[p - v->n_real];
    }
    return PQ_OK;
}

/* The SHA-256 of every file's identity (path, size, mtime), in hex. */
/* The SHA-256 of the files' identities into s->digest, and their newest
 * time into s->newest_ns (one pass over the files). */
static int files_digest(snapshot *s, char *hex, pq_error *err)
{
    pq_sha256_ctx files_digest;
    PQ_TRY(pq_sha256_init(&files_digest, err));
    char line[64];
    s->newest_ns = 0;
    for (int f = 0; f < s->files->n_files; f++) {
        const pq_table_file *tf = &s->files->files[f];
        int64_t t = lake_time_ns(&tf->st);
        if (t > s->newest_ns) s->newest_ns = t;
        int n = snprintf(line, sizeof line, " %llu %lld\n", (unsigned long long)tf->st.size, (long long)tf->st.mtime_ns);
        pq_sha256_update(&files_digest, tf->path, strlen(tf->path) + 1); /* with its NUL: paths hold no NUL */
        pq_sha256_update(&files_digest, line, (size_t)n);
    }
    uint8_t digest[32];
    PQ_TRY(pq_sha256_final(&files_digest, digest, err));
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return PQ_OK;
}

int lake_snapshot_rekey(const view *v, const pq_query *q, snapshot *s, pq_error *err)
{
    /* The key: the view's normalized components, then the digest of its
     * files.  Kept whole, the file list made each cached result's key as
     * long as the table's listing (0.5 MB at 7,000 files, held by the cache
     * entry and each handle). */
    pq_buf k;
    pq_buf_init(&k);
    if (lake_view_key(v, q, &k) || pq_buf_printf(&k, "files %d %s\n", s->files->n_files, s->digest) ||
        pq_buf_append(&k, "", 1)) {
        pq_buf_free(&k);
        return PQ_NOMEM(err);
    }
    free(s->key);
    s->key = k.data;
    return PQ_OK;
}

int lake_snapshot_take(pq_lake *l, const view *v, const pq_query *q, snapshot *s, pq_error *err)
{
    memset(s, 0, sizeof *s);
    int rc = v->t->snap ? snapshot_of_format(v->t, s, err) : snapshot_of_hive(l, v, q, s, err);
    if (rc == PQ_OK) rc = files_digest(s, s->digest, err);
    if (rc == PQ_OK) rc = lake_snapshot_rekey(v, q, s, err);
    if (rc != PQ_OK) lake_snapshot_free(s);
    return rc;
}
