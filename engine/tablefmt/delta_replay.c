/* Delta Lake log replay over a store: list _delta_log/, choose the
 * checkpoint, read it (Parquet through our own reader: the scan renders its
 * add/remove/metaData/protocol structs as JSON text, which is what a JSON
 * commit holds, so both go through one action parser), then the commits
 * after it up to the version asked for. */
#include "delta_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "footer.h"
#include "query.h"
#include "scan.h"

#define DELTA_LOG_DIR "_delta_log"

typedef struct log_listing {
    const char **names;        /* in the replay's arena */
    int n;
    int64_t *commits;          /* sorted versions of N.json */
    int n_commits;
} log_listing;

typedef struct list_ctx {
    pq_delta_log *log;
    log_listing *l;
    int cap_commits;
    bool oom;
} list_ctx;

static int on_log_entry(void *ctx, const pq_dirent *e)
{
    list_ctx *c = ctx;
    if (e->st.is_dir) return 0;
    pq_delta_name d = pq_delta_parse_name(e->name);
    if (d.kind == PQ_DELTA_NAME_OTHER && strcmp(e->name, "_last_checkpoint")) return 0;
    const char *name = pq_arena_strndup(&c->log->arena, e->name, strlen(e->name));
    if (!name || pq_arena_push_str(&c->log->arena, &c->l->names, &c->l->n, name)) {
        c->oom = true;
        return 1;
    }
    if (d.kind == PQ_DELTA_NAME_COMMIT) {
        if (c->l->n_commits == c->cap_commits) {
            int cap = c->cap_commits ? c->cap_commits * 2 : 64;
            int64_t *v = realloc(c->l->commits, sizeof *v * (size_t)cap);
            if (!v) {
                c->oom = true;
                return 1;
            }
            c->l->commits = v;
            c->cap_commits = cap;
        }
        c->l->commits[c->l->n_commits++] = d.version;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool has_commit(const log_listing *l, int64_t v)
{
    return bsearch(&v, l->commits, (size_t)l->n_commits, sizeof v, cmp_i64) != NULL;
}

int pq_delta_open_log_file(pq_store *store, const char *path, pq_file **out, uint64_t *size, pq_error *err)
{
    pq_file *f;
    PQ_TRY(store->ops->open(store, path, &f, err));
    int rc = pq_file_size(f, size, err);
    if (rc == PQ_OK && *size > PQ_DELTA_MAX_JSON_BYTES)
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: %llu bytes (a log file over %llu bytes is not read)", f->name,
                     (unsigned long long)*size, (unsigned long long)PQ_DELTA_MAX_JSON_BYTES);
    if (rc != PQ_OK) {
        pq_file_close(f);
        return PQ_ERR;
    }
    *out = f;
    return PQ_OK;
}

int pq_delta_read_log_file(pq_store *store, const char *path, char **out, size_t *len, pq_error *err)
{
    pq_file *f;
    uint64_t size;
    PQ_TRY(pq_delta_open_log_file(store, path, &f, &size, err));
    int rc = PQ_OK;
    char *buf = NULL;
    if (rc == PQ_OK && !(buf = malloc(size + 1))) rc = PQ_NOMEM(err);
    if (rc == PQ_OK && size && pq_read_at(f, buf, size, 0, err) != PQ_OK) rc = PQ_ERR;
    pq_file_close(f);
    if (rc != PQ_OK) {
        free(buf);
        return PQ_ERR;
    }
    buf[size] = '\0';
    *out = buf;
    *len = size;
    return PQ_OK;
}

/* A commit (or v2 checkpoint JSON) is read and applied JSON_PIECE bytes at a
 * time, whole lines each: a commit of 100,000 adds is 35 MB of JSON, which
 * used to be held whole while its actions were taken from it.  A line longer
 * than a piece grows the buffer to hold it (within PQ_DELTA_MAX_JSON_BYTES). */
#define JSON_PIECE ((size_t)8 << 20)

static int apply_json_pieces(pq_delta_log *log, pq_file *f, uint64_t size, const char *shown, bool checkpoint,
                             pq_error *err)
{
    size_t cap = size < JSON_PIECE ? (size_t)size + 1 : JSON_PIECE;
    char *buf = malloc(cap);
    if (!buf) return PQ_NOMEM(err);
    size_t have = 0;   /* bytes in buf: the start of a line not yet applied */
    uint64_t off = 0;
    int64_t line = 0;
    int rc = PQ_OK;
    while (rc == PQ_OK && (off < size || have)) {
        if (have == cap) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) {
                rc = PQ_NOMEM(err);
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t n = cap - have;
        if (n > size - off) n = (size_t)(size - off);
        if (n && pq_read_at(f, buf + have, n, off, err) != PQ_OK) {
            rc = PQ_ERR;
            break;
        }
        off += n;
        have += n;
        /* Whole lines, or all that is left at the end of the file. */
        size_t whole = have;
        if (off < size) {
            while (whole && buf[whole - 1] != '\n') whole--;
            if (!whole) continue; /* one line longer than the buffer: grow it */
        }
        rc = pq_delta_apply_json_lines(log, buf, whole, shown, checkpoint, &line, err);
        memmove(buf, buf + whole, have - whole);
        have -= whole;
    }
    free(buf);
    return rc;
}

static int apply_json_file(pq_delta_log *log, pq_store *store, const char *path, bool checkpoint, pq_error *err)
{
    pq_file *f;
    uint64_t size;
    PQ_TRY(pq_delta_open_log_file(store, path, &f, &size, err));
    int rc = PQ_OK;
    char *shown = pq_path_join(store->root, path);
    if (rc == PQ_OK && !shown) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) rc = apply_json_pieces(log, f, size, shown, checkpoint, err);
    free(shown);
    pq_file_close(f);
    return rc;
}

/* ------------------------------------------------- Parquet checkpoints */

/* The columns of a checkpoint that hold actions. */
static const char *const cp_columns[] = {"protocol", "metaData", "add", "remove", "sidecar"};
#define N_CP_COLUMNS ((int)(sizeof cp_columns / sizeof *cp_columns))

typedef struct cp_sink {
    pq_delta_log *log;
    const char *cols[N_CP_COLUMNS];
    int n_cols;
    pq_delta_where where;
    pq_buf pending;            /* the rows not yet whole */
    size_t scanned;            /* bytes of pending known to hold no row end */
    bool in_quotes;
    pq_buf cell;
    pq_error err;
    bool failed;
} cp_sink;

/* One rendered row: a cell per selected column, empty for NULL, else the
 * action's struct as JSON text (CSV-quoted when it holds ',' or '"'). */
static int cp_row(cp_sink *s, const char *p, size_t n)
{
    s->where.line++;
    size_t i = 0;
    for (int c = 0; c < s->n_cols; c++) {
        pq_buf_clear(&s->cell);
        if (i < n && p[i] == '"') {
            for (i++;; i++) {
                if (i >= n) return pq_fail(&s->err, PQ_E_CORRUPT, "%s: row %lld: a cell without its closing quote",
                                           s->where.file, (long long)s->where.line);
                if (p[i] == '"' && (i + 1 >= n || p[i + 1] != '"')) {
                    i++;
                    break;
                }
                if (p[i] == '"') i++;
                if (pq_buf_append(&s->cell, p + i, 1)) return PQ_NOMEM(&s->err);
            }
        } else {
            size_t start = i;
            while (i < n && p[i] != ',') i++;
            if (pq_buf_append(&s->cell, p + start, i - start)) return PQ_NOMEM(&s->err);
            if (i == start) {
                i++; /* NULL: no action of this kind in this row */
                continue;
            }
        }
        i++; /* the comma */
        json_error_t jerr;
        json_t *v = json_loadb(s->cell.data, s->cell.len, JSON_DECODE_ANY, &jerr);
        if (!v)
            return pq_fail(&s->err, PQ_E_CORRUPT, "%s: row %lld: column %s as rendered is not JSON: %s",
                           s->where.file, (long long)s->where.line, s->cols[c], jerr.text);
        int rc = json_is_null(v) ? PQ_OK : pq_delta_apply_action(s->log, s->cols[c], v, &s->where, &s->err);
        json_decref(v);
        PQ_TRY(rc);
    }
    return PQ_OK;
}

static int cp_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    cp_sink *s = ctx;
    if (pq_buf_append(&s->pending, data, len)) return PQ_NOMEM(err);
    size_t start = 0;
    for (size_t i = s->scanned; i < s->pending.len; i++) {
        char c = s->pending.data[i];
        if (c == '"') s->in_quotes = !s->in_quotes;
        if (c != '\n' || s->in_quotes) continue;
        size_t end = i;
        if (end > start && s->pending.data[end - 1] == '\r') end--;
        if (cp_row(s, s->pending.data + start, end - start) != PQ_OK) {
            s->failed = true;
            *err = s->err;
            return PQ_ERR;
        }
        start = i + 1;
    }
    memmove(s->pending.data, s->pending.data + start, s->pending.len - start);
    s->pending.len -= start;
    s->scanned = s->pending.len;
    return PQ_OK;
}

/* The actions of one Parquet checkpoint file (classic, a part, a v2 one or
 * a sidecar), rendered by the scan and parsed as a commit's. */
static int apply_parquet_file(pq_delta_log *log, pq_store *store, const char *path, pq_error *err)
{
    pq_file *f;
    PQ_TRY(store->ops->open(store, path, &f, err));
    pq_footer *ft = NULL;
    if (pq_footer_read(f, &ft, err) != PQ_OK) {
        pq_error_prefix(err, "%s: ", f->name);
        pq_file_close(f);
        return PQ_ERR;
    }
    cp_sink s = {.log = log, .where = {.file = f->name, .unit = "row", .checkpoint = true}};
    for (int i = 0; i < N_CP_COLUMNS; i++)
        if (pq_schema_find(&ft->schema, cp_columns[i])) s.cols[s.n_cols++] = cp_columns[i];
    pq_buf_init(&s.pending);
    pq_buf_init(&s.cell);
    pq_error_clear(&s.err);
    pq_query *q = NULL;
    int rc = PQ_OK;
    if (!s.n_cols) rc = pq_fail(err, PQ_E_CORRUPT, "%s: no add, remove, protocol, metaData or sidecar column: not a "
                                                   "Delta checkpoint", f->name);
    pq_query_spec spec = {.select = s.cols, .n_select = s.n_cols, .limit = -1};
    if (rc == PQ_OK && pq_query_compile(&ft->schema, NULL, NULL, 0, &spec, &q, err) != PQ_OK) {
        pq_error_prefix(err, "%s: ", f->name);
        rc = PQ_ERR;
    }
    if (rc == PQ_OK) {
        pq_scan_opts o;
        pq_scan_opts_init(&o);
        o.header = false;
        pq_scan_file sf = {.name = f->name, .file = f, .footer = ft};
        pq_sink sink = {cp_write, &s};
        pq_scan_stats st;
        rc = pq_scan_csv(q, &sf, 1, &o, &sink, &st, err);
        if (rc != PQ_OK && s.failed) *err = s.err;
        if (rc == PQ_OK && s.pending.len)
            rc = pq_fail(err, PQ_E_CORRUPT, "%s: the rendered rows end inside a row", f->name);
    }
    pq_query_free(q);
    pq_buf_free(&s.pending);
    pq_buf_free(&s.cell);
    pq_footer_free(ft);
    pq_file_close(f);
    return rc;
}

/* ------------------------------------------------------------- _last_checkpoint */

/* The hint's version, -1 when there is none.  A hint that does not parse
 * is only a warning: the listing finds the checkpoints anyway. */
static int64_t read_last_checkpoint(pq_store *store, const char *logdir, pq_error *err)
{
    char *path = pq_path_join(logdir, "_last_checkpoint");
    if (!path) return -2;
    char *text = NULL;
    size_t len = 0;
    pq_error why;
    int64_t v = -1;
    if (pq_delta_read_log_file(store, path, &text, &len, &why) == PQ_OK) {
        json_error_t jerr;
        json_t *o = json_loadb(text, len, 0, &jerr);
        const json_t *jv = json_is_object(o) ? json_object_get(o, "version") : NULL;
        if (json_is_integer(jv) && json_integer_value(jv) >= 0) {
            v = (int64_t)json_integer_value(jv);
        } else if (store->warn) {
            char msg[600];
            snprintf(msg, sizeof msg, "%s: not a checkpoint hint (%s); the checkpoints are found by listing", path,
                     o ? "no version" : jerr.text);
            store->warn(store->warn_ctx, msg);
        }
        json_decref(o);
    }
    (void)err;
    free(text);
    free(path);
    return v;
}

/* ------------------------------------------------------------- replay */

static int read_checkpoint(pq_delta_log *log, pq_store *store, const char *logdir, const log_listing *l,
                           const int *files, int n_files, pq_error *err)
{
    for (int i = 0; i < n_files; i++) {
        const char *name = l->names[files[i]];
        char *path = pq_path_join(logdir, name);
        if (!path) return PQ_NOMEM(err);
        pq_delta_name d = pq_delta_parse_name(name);
        int rc = d.json ? apply_json_file(log, store, path, true, err) : apply_parquet_file(log, store, path, err);
        free(path);
        PQ_TRY(rc);
    }
    /* v2: the file actions live in the sidecars the checkpoint names. */
    for (int i = 0; i < log->n_sidecars; i++) {
        char *dir = pq_path_join(logdir, "_sidecars");
        char *path = dir ? pq_path_join(dir, log->sidecars[i]) : NULL;
        free(dir);
        if (!path) return PQ_NOMEM(err);
        int rc = apply_parquet_file(log, store, path, err);
        free(path);
        PQ_TRY(rc);
    }
    return PQ_OK;
}

static int replay_listed(pq_delta_log *log, pq_store *store, const char *root, const char *logdir,
                         const char *shown_log, log_listing *l, int64_t version, pq_error *err)
{
    qsort(l->commits, (size_t)l->n_commits, sizeof *l->commits, cmp_i64);
    int *files = malloc(sizeof *files * (size_t)(l->n + 1));
    if (!files) return PQ_NOMEM(err);
    int n_files;
    int64_t latest = l->n_commits ? l->commits[l->n_commits - 1] : -1;
    int64_t newest_cp = pq_delta_choose_checkpoint(l->names, l->n, INT64_MAX, files, &n_files);
    if (newest_cp > latest) latest = newest_cp;
    int rc = PQ_OK;
    if (latest < 0) {
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: no commit (NNNNNNNNNNNNNNNNNNNN.json) and no checkpoint", shown_log);
    } else if (version > latest) {
        rc = pq_fail(err, PQ_E_NOTFOUND, "%s: version %lld is not in the log (the latest is %lld)", root,
                     (long long)version, (long long)latest);
    }
    int64_t target = version >= 0 ? version : latest;
    int64_t cp = rc == PQ_OK ? pq_delta_choose_checkpoint(l->names, l->n, target, files, &n_files) : -1;
    if (rc == PQ_OK && cp < 0 && !has_commit(l, 0))
        rc = pq_fail(err, PQ_E_NOTFOUND,
                     "%s: version %lld cannot be replayed: the log has no checkpoint at or before it and no commit 0 "
                     "(the oldest is %lld)",
                     shown_log, (long long)target, (long long)(l->n_commits ? l->commits[0] : -1));
    if (rc == PQ_OK && cp >= 0) {
        rc = read_checkpoint(log, store, logdir, l, files, n_files, err);
        log->checkpoint_version = log->version = cp;
    }
    free(files);
    for (int64_t v = cp + 1; rc == PQ_OK && v <= target; v++) {
        char name[PQ_DELTA_VERSION_DIGITS + 8];
        snprintf(name, sizeof name, "%020lld.json", (long long)v);
        char *path = pq_path_join(logdir, name);
        if (!path) return PQ_NOMEM(err);
        if (!has_commit(l, v))
            rc = pq_fail(err, PQ_E_CORRUPT, "%s: commit %lld is missing (%s), so version %lld cannot be replayed",
                         shown_log, (long long)v, name, (long long)target);
        else
            rc = apply_json_file(log, store, path, false, err);
        free(path);
        log->version = v;
    }
    return rc;
}

int pq_delta_replay(pq_store *store, const char *root, int64_t version, pq_delta_log *log, pq_error *err)
{
    return pq_delta_replay_keeping(store, root, version, NULL, NULL, log, err);
}

int pq_delta_replay_keeping(pq_store *store, const char *root, int64_t version, pq_delta_keep_fn keep, void *ctx,
                            pq_delta_log *log, pq_error *err)
{
    pq_delta_log_init(log);
    log->keep = keep;
    log->keep_ctx = ctx;
    char *logdir = pq_path_join(root, DELTA_LOG_DIR);
    char *shown_root = pq_path_join(store->root, root);
    /* "TABLE", not "TABLE/", in messages. */
    for (size_t n = shown_root ? strlen(shown_root) : 0; n > 1 && shown_root[n - 1] == '/'; n--) shown_root[n - 1] = '\0';
    char *shown_log = shown_root ? pq_path_join(shown_root, DELTA_LOG_DIR) : NULL;
    if (!logdir || !shown_log) {
        free(logdir);
        free(shown_root);
        return PQ_NOMEM(err);
    }
    log_listing l = {0};
    list_ctx lc = {.log = log, .l = &l};
    int rc = store->ops->list(store, logdir, on_log_entry, &lc, err);
    if (rc == PQ_OK && lc.oom) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) {
        int64_t hint = read_last_checkpoint(store, logdir, err);
        if (hint == -2) rc = PQ_NOMEM(err);
        (void)hint; /* the listing's newest complete checkpoint is never older than the hint */
    }
    if (rc == PQ_OK) rc = replay_listed(log, store, shown_root, logdir, shown_log, &l, version, err);
    if (rc == PQ_OK) rc = pq_delta_finish(log, shown_root, err);
    free(l.commits);
    free(logdir);
    free(shown_root);
    free(shown_log);
    return rc;
}

/* ------------------------------------------------------ time travel */

typedef struct timed_commit {
    int64_t version, ms;
} timed_commit;

typedef struct timed_ctx {
    timed_commit *c;
    int n, cap;
    bool oom, untimed;
} timed_ctx;

static int on_timed_entry(void *ctx, const pq_dirent *e)
{
    timed_ctx *t = ctx;
    if (e->st.is_dir) return 0;
    pq_delta_name d = pq_delta_parse_name(e->name);
    if (d.kind != PQ_DELTA_NAME_COMMIT) return 0;
    if (e->st.modified_ms <= 0) t->untimed = true;
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        timed_commit *c = cap > t->cap ? realloc(t->c, sizeof *c * (size_t)cap) : NULL;
        if (!c) {
            t->oom = true;
            return 1;
        }
        t->c = c;
        t->cap = cap;
    }
    t->c[t->n++] = (timed_commit){d.version, e->st.modified_ms};
    return 0;
}

static int cmp_timed(const void *a, const void *b)
{
    return cmp_i64(&((const timed_commit *)a)->version, &((const timed_commit *)b)->version);
}

int pq_delta_version_at(pq_store *store, const char *root, int64_t ms, int64_t *version, pq_error *err)
{
    char *logdir = pq_path_join(root, DELTA_LOG_DIR);
    char *shown = pq_path_join(store->root, root);
    timed_ctx t = {0};
    int rc = logdir && shown ? store->ops->list(store, logdir, on_timed_entry, &t, err) : PQ_NOMEM(err);
    if (rc == PQ_OK && t.oom) rc = PQ_NOMEM(err);
    if (rc == PQ_OK && t.n == 0)
        rc = pq_fail(err, PQ_E_NOTFOUND, "%s: the Delta log has no commit to time", shown);
    if (rc == PQ_OK && t.untimed)
        rc = pq_fail(err, PQ_E_UNSUPPORTED,
                     "%s: the store gives no modification time of the Delta commits, so a version cannot be found "
                     "by time (as_of=N names one)",
                     shown);
    if (rc == PQ_OK) {
        qsort(t.c, (size_t)t.n, sizeof *t.c, cmp_timed);
        /* Increasing, as Delta's readers make commit times: a clock that
         * went back does not make an older version look newer.  A store
         * that times files to the second (g = 1000) says only that a
         * commit was made within [t, t + g): commits of one second share
         * it, and a time inside a commit's second is refused rather than
         * guessed at. */
        int64_t g = store->modified_granularity_ms > 1 ? store->modified_granularity_ms : 1;
        for (int i = 1; i < t.n; i++)
            if (t.c[i].ms < t.c[i - 1].ms + (g == 1)) t.c[i].ms = t.c[i - 1].ms + (g == 1);
        int found = -1;
        for (int i = 0; i < t.n && t.c[i].ms <= ms; i++) found = i;
        for (int i = 0; g > 1 && i < t.n && rc == PQ_OK; i++)
            if (t.c[i].ms <= ms && ms < t.c[i].ms + g)
                rc = pq_fail(err, PQ_E_USAGE,
                             "%s: the time falls within the second of version %lld's commit, and this store times "
                             "its files to the second: whether that version is at or before it is not known (as_of=N "
                             "names a version)",
                             shown, (long long)t.c[i].version);
        if (rc != PQ_OK) {
            /* said above */
        } else if (found < 0)
            rc = pq_fail(err, PQ_E_NOTFOUND, "%s: no commit at or before that time (the oldest, version %lld, is "
                                             "%lld ms after it)",
                         shown, (long long)t.c[0].version, (long long)(t.c[0].ms - ms));
        else
            *version = t.c[found].version;
    }
    free(t.c);
    free(logdir);
    free(shown);
    return rc;
}
