/* pqtool: the pqfs engine without FUSE.
 *
 *   pqtool cat PATH... [--where EXPR] [--select C1,C2] [--limit N] [--threads N] [-o OUT]
 *   pqtool plan PATH... [--where EXPR] [--select C1,C2]
 *   (PATH: Parquet files, or one table or partition directory: local, http(s)://, s3://;
 *    one URL: a directory, or one .parquet object)
 *   pqtool meta FILE
 *
 * Errors are one line on stderr, "pqtool: FILE: what went wrong (where)",
 * and a non-zero exit. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "csvimport.h"
#include "fdcache.h"
#include "filewrite.h"
#include "footer.h"
#include "io.h"
#include "numfmt.h"
#include "remote.h"
#include "render.h"
#include "scan.h"
#include "table.h"
#include "tablefmt.h"

static void print_usage(FILE *to)
{
    fprintf(to,
            "usage: pqtool cat PATH... [--where EXPR] [--select C1,C2] [--limit N] [--threads N] [-o OUT]\n"
            "                  [--format csv|parquet]\n"
            "                  [--version N]\n"
            "       pqtool plan PATH... [--where EXPR] [--select C1,C2] [--version N]\n"
            "       pqtool meta FILE\n"
            "       pqtool rewrite FILE -o OUT [--codec NAME[:LEVEL]] [--page-size BYTES] [--no-dictionary]\n"
            "                                  [--no-statistics] [--batch-rows N] [--threads N] [--copy]\n"
            "                                  [--bloom-filter C1,C2] [--row-group-rows N] [--sort-by C1,C2]\n"
            "       pqtool write IN.csv OUT.parquet [--schema LIKE.parquet] [--row-group-rows N] [--sort-by C1,C2]\n"
            "                                  [--codec NAME[:LEVEL]] [--page-size BYTES] [--no-dictionary]\n"
            "                                  [--no-statistics] [--threads N] [--bloom-filter C1,C2]\n"
            "PATH is a Parquet file or a table directory (Hive partitions); a partition directory\n"
            "(TABLE/dt=X) is the table filtered to its values, partition columns included.  Either\n"
            "may be an http(s):// or s3:// URL (one per command), as may a FILE ending in .parquet.\n"
            "A Delta Lake table (a directory holding _delta_log/) is read from its log: the live files\n"
            "of its latest version, or of version N with --version N; files its log's statistics rule\n"
            "out are never opened (--no-log-stats: no such pruning).\n"
            "pqtool --help: this text; pqtool --version: the version.\n");
}

/* A usage error: the usage on stderr, exit 2. */
static void die_usage(void)
{
    print_usage(stderr);
    exit(2);
}

static bool asks_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help");
}

/* One line, whatever the message holds. */
/* Prints an error on one line, with the credentials of any URL in it
 * (scheme://user:password@host) shown as ***: a message may echo an
 * argument (an http URL given where a local file was expected). */
static int report(const pq_error *err)
{
    char line[sizeof err->msg];
    size_t n = 0;
    for (const char *p = err->msg; *p && n + 1 < sizeof line;) {
        if (p[0] == ':' && p[1] == '/' && p[2] == '/') {
            const char *host = p + 3, *end = host + strcspn(host, "/ ");
            const char *at = NULL;
            for (const char *q = host; q < end; q++)
                if (*q == '@') at = q;
            if (at && n + 7 < sizeof line) {
                memcpy(line + n, "://***", 6);
                n += 6;
                p = at;
                continue;
            }
        }
        line[n++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
        p++;
    }
    line[n] = '\0';
    fprintf(stderr, "pqtool: %s\n", line);
    return 1;
}

typedef struct fd_sink {
    int fd;
    const char *name;
    bool closed;               /* the reader went away (EPIPE) */
} fd_sink;

static int fd_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    fd_sink *s = ctx;
    while (len) {
        ssize_t n = write(s->fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EPIPE) {
                s->closed = true;
                return pq_fail(err, PQ_E_CANCELLED, "output closed");
            }
            return pq_fail(err, PQ_E_IO, "%s: write failed: %s", s->name, strerror(errno));
        }
        data += n;
        len -= (size_t)n;
    }
    return PQ_OK;
}

/* Splits "a,b,c" in place. */
static int split_list(char *s, const char ***out)
{
    int n = 1;
    for (char *p = s; *p; p++) n += *p == ',';
    const char **v = calloc((size_t)n, sizeof *v);
    if (!v) return -1;
    int i = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) v[i++] = tok;
    *out = v;
    return i;
}

/* The inputs of cat/plan: Parquet files, or one table directory. */
typedef struct inputs {
    pq_store *store;           /* table directory */
    pq_table *table;           /* snap's, when there is one */
    /* A table directory opened through its format (Delta: the log's live
     * files; Hive: discovery). */
    pq_tf_snapshot *snap;
    uint64_t **deleted;        /* per file: its deleted rows (snap's deletion vectors), read when opened */
    int ref;                   /* the file whose footer is the query's schema (one file) */
    /* The table's schema over several files (schema evolution): the union
     * by name of every file's (pq_scan_schema_union). */
    pq_footer *schema_ft;
    pq_scan_file *files;
    char **names;              /* a table's files: store root + path, named before opened (or when never) */
    int n_files;
    pq_io_counters counters;   /* plain files */
    _Atomic uint32_t max_meta_len; /* largest footer of the table read so far */
    /* A partition directory given as PATH (TABLE/dt=X/...): the table at
     * TABLE, filtered to those values, so the partition columns are there
     * as in DuckDB's hive_partitioning and the mount's view of it. */
    char *root;
    char **eq_cols, **eq_vals;
    int n_eq;
} inputs;

static void inputs_free(inputs *in)
{
    for (int i = 0; i < in->n_files; i++) {
        if (in->files[i].footer) pq_footer_free((pq_footer *)in->files[i].footer);
        pq_file_close(in->files[i].file);
        if (in->names) free(in->names[i]);
        if (in->deleted) free(in->deleted[i]);
    }
    free(in->deleted);
    pq_footer_free(in->schema_ft);
    free(in->names);
    free(in->files);
    if (in->snap) pq_tf_snapshot_free(in->snap);
    else pq_table_free(in->table);
    pq_store_destroy(in->store);
    free(in->root);
    for (int i = 0; i < in->n_eq; i++) {
        free(in->eq_cols[i]);
        free(in->eq_vals[i]);
    }
    free(in->eq_cols);
    free(in->eq_vals);
    memset(in, 0, sizeof *in);
}

/* Splits a directory path's trailing KEY=VALUE components off (percent-
 * decoded; __HIVE_DEFAULT_PARTITION__ is NULL) into in->eq_*, in->root the
 * rest; nothing when it has none.  Returns -1 out of memory, -2 for a %00. */
static int split_partition_dirs(const char *path, inputs *in)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    /* A URL's scheme and authority (user:pass=word@host) are no directory. */
    const char *scheme = strstr(path, "://");
    size_t first = scheme ? (size_t)(scheme + 3 - path) + strcspn(scheme + 3, "/") : 0;
    /* Every trailing KEY=VALUE component, however many (a cap would read
     * the rest as the table's path and lose those partition columns). */
    int k = 0;
    size_t end = n;
    for (;;) {
        size_t start = end;
        while (start > 0 && path[start - 1] != '/') start--;
        const char *c = path + start;
        const char *eq = memchr(c, '=', end - start);
        if (start == 0 || start <= first || !eq || eq == c || c[0] == '.' || c[0] == '_') break;
        k++;
        end = start - 1;
    }
    if (k == 0) return 0;
    in->root = strndup(path, end);
    in->eq_cols = calloc((size_t)k, sizeof *in->eq_cols);
    in->eq_vals = calloc((size_t)k, sizeof *in->eq_vals);
    if (!in->root || !in->eq_cols || !in->eq_vals) return -1;
    const char *c = path + end + 1; /* outermost first */
    for (int i = 0; i < k; i++) {
        size_t cl = strcspn(c, "/");
        if (i == k - 1) cl = n - (size_t)(c - path);
        const char *eq = memchr(c, '=', cl);
        size_t kl = (size_t)(eq - c), vl = cl - kl - 1;
        in->eq_cols[i] = malloc(kl + 1);
        in->eq_vals[i] = malloc(vl + 1);
        in->n_eq = i + 1;
        if (!in->eq_cols[i] || !in->eq_vals[i]) return -1;
        /* A path component: never past INT_MAX.  %00 would cut the value. */
        if (pq_percent_decode(c, kl, in->eq_cols[i]) != (int)strlen(in->eq_cols[i]) ||
            pq_percent_decode(eq + 1, vl, in->eq_vals[i]) != (int)strlen(in->eq_vals[i]))
            return -2;
        if (!strcmp(in->eq_vals[i], "__HIVE_DEFAULT_PARTITION__")) {
            free(in->eq_vals[i]);
            in->eq_vals[i] = NULL;
        }
        c += cl + 1;
    }
    return 0;
}

/* pq_scan_opts.open_file for table directories. */
static int open_table_file(void *ctx, int index, pq_scan_file *sf, pq_error *err)
{
    inputs *in = ctx;
    const pq_table_file *tf = &in->table->files[index];
    pq_file *f;
    PQ_TRY(in->store->ops->open(in->store, tf->path, &f, err));
    /* Replaced since the listing: refused, as the mount does (SPEC 8).  A
     * Delta file is the one its add names when it has the add's size (the
     * log's modificationTime is the writer's clock, not the file's mtime). */
    bool delta = in->snap && in->snap->kind == PQ_TF_DELTA;
    if ((delta ? pq_file_check_size(f, tf->st.size, err) : pq_file_check_listed(f, &tf->st, err)) != PQ_OK) {
        pq_file_close(f);
        return PQ_ERR;
    }
    pq_footer *ft;
    /* Sized from the footers read so far: the table's files are alike. */
    uint32_t seen = atomic_load(&in->max_meta_len);
    if (pq_footer_read_guess(f, pq_footer_guess(seen), &ft, err) != PQ_OK) {
        pq_error_prefix(err, "%s: ", f->name);
        pq_file_close(f);
        return PQ_ERR;
    }
    while (ft->meta_len > seen && !atomic_compare_exchange_weak(&in->max_meta_len, &seen, ft->meta_len)) {
    }
    /* The table format's types over the file's (a Delta timestamp is UTC). */
    if (in->snap) pq_tf_apply_types(in->snap, &ft->schema);
    /* Keep them in the inputs too, so that inputs_free closes them. */
    in->files[index].file = sf->file = f;
    in->files[index].footer = sf->footer = ft;
    /* A deletion vector: its rows are never output (the plan selects
     * around them). */
    if (in->deleted && !in->deleted[index]) {
        uint64_t n = 0;
        if (pq_tf_deleted_rows(in->snap, in->store, index, &in->deleted[index], &n, err) != PQ_OK) return PQ_ERR;
        in->files[index].deleted_rows = sf->deleted_rows = in->deleted[index];
        in->files[index].n_deleted = sf->n_deleted = n;
    }
    return PQ_OK;
}

/* The footer whose schema is the table's: the union's, or the one file's. */
static const pq_footer *table_footer(const inputs *in)
{
    return in->schema_ft ? in->schema_ft : in->files[in->ref].footer;
}

static void scan_opts_for(pq_scan_opts *o, inputs *in, bool log_stats);

/* Several files: the table's schema is the union of theirs by name (every
 * footer read, as DuckDB's union_by_name does), kept for the scan while
 * they hold at most 16 MiB. */
#define UNION_KEEP_BYTES ((size_t)16 << 20)

static int compile_query(inputs *in, const char *path, const pq_query_spec *spec, pq_query **q, pq_error *err);

/* The union of the files the query's partition filter lets through: a
 * file it rules out is not read for its schema either (a partition path
 * is the same: its files' union is its schema).  The filter is the query
 * compiled against the first file's schema, the partition columns' types
 * being the table's whatever the files hold; one that does not compile
 * there (a column only later files have) rules nothing out.  A footer the
 * union lets go comes with what its statistics prove for that query
 * (pq_scan_file.stats_out_rgs): kept when the table's schema is the first
 * file's, so the scan's query is the union's; dropped otherwise. */
static int table_union(inputs *in, const pq_query_spec *spec, bool no_stats, pq_error *err)
{
    pq_scan_opts o;
    pq_scan_opts_init(&o);
    scan_opts_for(&o, in, false);
    o.no_stats = no_stats;
    pq_query *q = NULL;
    if (spec && (spec->n_wheres || in->n_eq) && in->table) {
        PQ_TRY(open_table_file(in, 0, &in->files[0], err));
        pq_error ignore;
        if (compile_query(in, "", spec, &q, &ignore) != PQ_OK) q = NULL;
    }
    int rc = pq_scan_schema_union(in->files, in->n_files, q, &o, UNION_KEEP_BYTES, &in->schema_ft, err);
    pq_query_free(q);
    PQ_TRY(rc);
    if (in->snap) pq_tf_apply_types(in->snap, &in->schema_ft->schema);
    if (!in->files[0].footer || !pq_schema_identical(&in->schema_ft->schema, &in->files[0].footer->schema))
        pq_scan_files_forget_verdicts(in->files, in->n_files);
    return PQ_OK;
}

/* A Delta table's schema: the newest file's, when it holds every column of
 * the log's schema (the common case: one footer read, so a file the log's
 * statistics rule out is never opened); else the union of it and older
 * files, newest first, until every column is found.  Files not read here
 * are bound by name as the scan reaches them (a column one lacks is NULL
 * in its rows). */
static int delta_columns_schema(inputs *in, pq_error *err)
{
    PQ_TRY(open_table_file(in, in->ref, &in->files[in->ref], err));
    pq_error why;
    if (pq_tf_check_file_schema(in->snap, &in->files[in->ref].footer->schema, in->names[in->ref], &why) == PQ_OK)
        return PQ_OK;
    pq_schema_union *u;
    PQ_TRY(pq_schema_union_new(false, &u, err));
    int rc = pq_schema_union_add(u, in->files[in->ref].footer, in->names[in->ref], err);
    for (int i = in->ref - 1; rc == PQ_OK && i >= 0 && !in->schema_ft; i--) {
        pq_footer *table = NULL;
        rc = open_table_file(in, i, &in->files[i], err);
        if (rc == PQ_OK) rc = pq_schema_union_add(u, in->files[i].footer, in->names[i], err);
        if (rc == PQ_OK) rc = pq_schema_union_finish(u, &table, err);
        if (rc == PQ_OK) pq_tf_apply_types(in->snap, &table->schema);
        if (rc == PQ_OK && pq_tf_check_file_schema(in->snap, &table->schema, in->names[i], &why) == PQ_OK)
            in->schema_ft = table; /* every column found */
        else
            pq_footer_free(table);
    }
    pq_schema_union_free(u);
    if (rc == PQ_OK && !in->schema_ft) *err = why, rc = PQ_ERR; /* a column no live file holds */
    return rc;
}

/* The schema the table's files found, in the log's types where they are
 * not the files' (pq_tf_table_schema: an INT96 `timestamp` is INT64
 * TIMESTAMP(MICROS, UTC), which the scan widens every file's to). */
static int delta_table_schema(inputs *in, pq_error *err)
{
    PQ_TRY(delta_columns_schema(in, err));
    pq_footer *typed;
    PQ_TRY(pq_tf_table_schema(in->snap, table_footer(in), &typed, err));
    if (typed) {
        pq_footer_free(in->schema_ft);
        in->schema_ft = typed;
    }
    return PQ_OK;
}

/* pq_scan_opts.release_file: the scan is done with the file. */
static void release_table_file(void *ctx, int index)
{
    inputs *in = ctx;
    if (in->files[index].footer) pq_footer_free((pq_footer *)in->files[index].footer);
    pq_file_close(in->files[index].file);
    in->files[index].footer = NULL;
    in->files[index].file = NULL;
    if (in->deleted) {
        free(in->deleted[index]);
        in->deleted[index] = NULL;
        in->files[index].deleted_rows = NULL;
        in->files[index].n_deleted = 0;
    }
}

static const char *env_or(const char *a, const char *b)
{
    const char *v = getenv(a);
    if ((!v || !*v) && b) v = getenv(b);
    return v && *v ? v : NULL;
}

static bool is_url(const char *p)
{
    return !strncmp(p, "http://", 7) || !strncmp(p, "https://", 8) || !strncmp(p, "s3://", 5);
}

/* A remote table directory (http(s)://, s3://): the store, with S3 settings
 * from the environment as pqfs takes them (AWS_*), and path-style URLs when
 * an endpoint is given (PQFS_S3_PATH_STYLE=false for virtual hosts).
 * http_no_probe: an http(s) store used only to open one named object (its
 * prefix is never listed, so not probed either). */
static int open_remote_store(const char *url, bool http_no_probe, pq_store **out, pq_error *err)
{
    pq_http_opts ho;
    pq_http_opts_init(&ho);
    ho.no_probe = http_no_probe;
    if (strncmp(url, "s3://", 5)) return pq_store_http_new(url, &ho, out, err);
    const char *endpoint = env_or("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
    const char *ps = getenv("PQFS_S3_PATH_STYLE");
    pq_s3_opts so = {
        .endpoint = endpoint,
        .region = env_or("AWS_REGION", "AWS_DEFAULT_REGION"),
        .path_style = ps && *ps ? strcmp(ps, "false") && strcmp(ps, "0") : endpoint != NULL,
        .access_key_id = env_or("AWS_ACCESS_KEY_ID", NULL),
        .secret_access_key = env_or("AWS_SECRET_ACCESS_KEY", NULL),
        .session_token = env_or("AWS_SESSION_TOKEN", NULL),
        .no_probe = true, /* the table is listed next: one round trip fewer */
    };
    return pq_store_s3_new(url, &so, &ho, out, err);
}

/* A store's warning (a symbolic link out of the table, left out): one line
 * on stderr; the command goes on. */
static void warn_line(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "pqtool: warning: %s\n", msg);
}

static int open_store(const char *root, pq_store **out, pq_error *err)
{
    if (is_url(root)) return open_remote_store(root, false, out, err);
    PQ_TRY(pq_store_local_new(root, out, err));
    (*out)->warn = warn_line;
    return PQ_OK;
}

/* Query strings and fragments: not part of an http(s) object's name here
 * (an S3 key may hold '?' and '#'). */
static int check_url(const char *url, pq_error *err)
{
    if (strncmp(url, "s3://", 5) && strpbrk(url, "?#"))
        return pq_fail(err, PQ_E_USAGE, "%s: a query string or fragment ('?', '#') is not supported", url);
    return PQ_OK;
}

/* A URL naming one object: no trailing '/', and a last component ending in
 * .parquet that is not a directory (Spark's out.parquet/ is one).  Then
 * *store is its parent's (no listing asked of it) and *f the file; 0 when
 * the URL is a directory, with nothing opened; -1 on error (an object that
 * is neither: PQ_E_NOTFOUND naming it). */
static int open_remote_file(const char *url, pq_store **store, pq_file **f, pq_error *err)
{
    *store = NULL;
    *f = NULL;
    size_t n = strlen(url);
    const char *slash = strrchr(url, '/');
    if (!n || url[n - 1] == '/' || n < 8 || strcasecmp(url + n - 8, ".parquet") || !slash ||
        slash < strstr(url, "://") + 3)
        return 0;
    char *parent = strndup(url, (size_t)(slash - url));
    /* An http(s) URL is percent-encoded; the store encodes names itself.
     * An S3 URL names the key as it is (as the AWS CLI takes it). */
    char *name = strdup(slash + 1);
    if (!parent || !name) {
        free(parent);
        free(name);
        return PQ_NOMEM(err), -1;
    }
    bool http = strncmp(url, "s3://", 5) != 0;
    if (http) name[pq_percent_decode(slash + 1, strlen(slash + 1), name)] = '\0';
    int rc = open_remote_store(parent, true, store, err);
    free(parent);
    pq_stat st = {0};
    if (rc == PQ_OK) rc = (*store)->ops->stat(*store, name, &st, err);
    if (rc == PQ_OK && !st.is_dir) rc = (*store)->ops->open(*store, name, f, err);
    free(name);
    if (rc == PQ_OK && !st.is_dir) return 1;
    if (*store) pq_store_destroy(*store);
    *store = NULL;
    if (rc == PQ_OK) return 0; /* a directory */
    if (err->cls == PQ_E_NOTFOUND) pq_fail(err, PQ_E_NOTFOUND, "%s: not found (no such object or directory)", url);
    return -1;
}

/* TABLE/dt=X/region=Y (split_partition_dirs): the table at in->root, its
 * store and discovery (done once) in `in`, when its partition columns begin
 * with those keys; otherwise the split is undone and PATH is read as a
 * table of its own. */
/* Discovery below TABLE/dt=X/...: only the directories on that path are
 * listed (one partition of a remote table costs its own listings, not the
 * whole table's); values compare as decoded text. */
static bool on_partition_path(void *ctx, int depth, const char *const *names, const char *const *values)
{
    const inputs *in = ctx;
    for (int i = 0; i < depth && i < in->n_eq; i++) {
        if (strcmp(names[i], in->eq_cols[i])) return false;
        const char *a = values[i], *b = in->eq_vals[i];
        if (!a || !b ? a != b : strcmp(a, b) != 0) return false;
    }
    return true;
}

/* TABLE/x=A/... of a table format's table: the table filtered to those
 * values (of its partition columns, as its log gives them: the path is a
 * filter, whatever directories the files sit in).  *is_format false: the
 * table at in->root is a Hive table (or none). */
static int open_format_partition(inputs *in, int64_t version, bool *is_format, pq_error *err)
{
    *is_format = false;
    pq_store *st = NULL;
    pq_tf_kind kind = PQ_TF_HIVE;
    pq_error why;
    if (open_store(in->root, &st, &why) != PQ_OK || pq_tf_detect(st, "", &kind, &why) != PQ_OK ||
        kind == PQ_TF_HIVE) {
        pq_store_destroy(st);
        return PQ_OK;
    }
    *is_format = true;
    in->store = st;
    pq_tf_opts fopts = {.version = version, .apply_deletes = true};
    PQ_TRY(pq_tf_open(st, "", &fopts, &in->snap, err));
    in->table = in->snap->table;
    for (int i = 0; i < in->n_eq; i++) {
        bool found = false;
        for (int p = 0; p < in->table->n_parts && !found; p++) found = !strcmp(in->table->part_names[p], in->eq_cols[i]);
        if (!found)
            return pq_fail(err, PQ_E_USAGE, "%s: '%s' is not a partition column of the %s table", in->root,
                           in->eq_cols[i], pq_tf_kind_name(kind));
    }
    return PQ_OK;
}

static int open_partition_root(inputs *in, pq_error *err)
{
    pq_store *st_root = NULL;
    pq_table *t_root = NULL;
    pq_table_opts ropts;
    memset(&ropts, 0, sizeof ropts);
    ropts.prune = on_partition_path;
    ropts.prune_ctx = in;
    pq_error why;
    pq_error_clear(&why);
    bool fits = open_store(in->root, &st_root, &why) == PQ_OK &&
                pq_table_discover(st_root, "", &ropts, &t_root, &why) == PQ_OK && t_root->n_parts >= in->n_eq;
    for (int i = 0; fits && i < in->n_eq; i++) fits = !strcmp(t_root->part_names[i], in->eq_cols[i]);
    if (fits) {
        in->store = st_root;
        in->table = t_root;
        return PQ_OK;
    }
    pq_table_free(t_root);
    if (st_root) pq_store_destroy(st_root);
    /* A partition of a table format's table (Delta) is not a table of its
     * own: its files are not its rows either. */
    if (why.cls == PQ_E_UNSUPPORTED) {
        *err = why;
        return PQ_ERR;
    }
    for (int i = 0; i < in->n_eq; i++) {
        free(in->eq_cols[i]);
        free(in->eq_vals[i]);
    }
    in->n_eq = 0;
    free(in->root);
    in->root = NULL;
    return PQ_OK;
}

static int open_inputs(const char **paths, int n_paths, int64_t version, const pq_query_spec *spec, bool no_stats,
                       inputs *in, pq_error *err)
{
    memset(in, 0, sizeof *in);
    struct stat st;
    bool remote = n_paths == 1 && is_url(paths[0]);
    pq_file *remote_file = NULL;
    if (remote) PQ_TRY(check_url(paths[0], err));
    if (remote) {
        int is_file = open_remote_file(paths[0], &in->store, &remote_file, err);
        if (is_file < 0) return PQ_ERR;
        remote = !is_file;
    }
    for (int i = 0; !remote && !remote_file && i < n_paths; i++)
        if (is_url(paths[i]))
            return pq_fail(err, PQ_E_USAGE, "%s: URLs are read one at a time (one file or one table directory)",
                           paths[i]);
    if (remote || (n_paths == 1 && stat(paths[0], &st) == 0 && S_ISDIR(st.st_mode))) {
        int split = split_partition_dirs(paths[0], in);
        if (split == -2) return pq_fail(err, PQ_E_USAGE, "%s: a partition value holds %%00 (a NUL byte)", paths[0]);
        if (split != 0) return PQ_NOMEM(err);
        bool is_format = false;
        if (in->root) PQ_TRY(open_format_partition(in, version, &is_format, err));
        if (in->root && !is_format) PQ_TRY(open_partition_root(in, err));
        if (in->table && !in->snap && version >= 0)
            return pq_fail(err, PQ_E_USAGE, "%s: --version is for a table format's table, not a partition directory",
                           paths[0]);
        if (!in->store) PQ_TRY(open_store(paths[0], &in->store, err));
        pq_table_opts topts;
        memset(&topts, 0, sizeof topts);
        pq_tf_opts fopts = {.version = version, .hive = &topts, .apply_deletes = true};
        if (!in->table) {
            PQ_TRY(pq_tf_open(in->store, "", &fopts, &in->snap, err));
            in->table = in->snap->table;
        }
        bool delta = in->snap && in->snap->kind == PQ_TF_DELTA;
        /* A Delta table without files is a table all the same: its header. */
        if (in->table->n_files == 0 && delta) return PQ_OK;
        if (in->table->n_files == 0)
            return pq_fail(err, PQ_E_USAGE, in->n_eq ? "%s: no Parquet files (no such partition directory?)"
                                                     : "%s: no Parquet files", paths[0]);
        in->files = calloc((size_t)in->table->n_files, sizeof *in->files);
        if (!in->files) return PQ_NOMEM(err);
        /* The first file now (its schema is the table's); the others when
         * the scan reaches them (open_table_file). */
        in->n_files = in->table->n_files;
        in->names = calloc((size_t)in->n_files, sizeof *in->names);
        if (!in->names) return PQ_NOMEM(err);
        if (delta && !(in->deleted = calloc((size_t)in->n_files, sizeof *in->deleted))) return PQ_NOMEM(err);
        for (int i = 0; i < in->n_files; i++) {
            in->files[i].part_values = (const char *const *)in->table->files[i].values;
            /* Named before it is opened, or when its partition values rule
             * it out and it never is. */
            in->names[i] = pq_path_join(in->store->root, in->table->files[i].path);
            if (!in->names[i]) return PQ_NOMEM(err);
            in->files[i].name = in->names[i];
        }
        /* Delta: the newest file first, the likeliest to have every column
         * of the table's schema (a column added later is not in older
         * files), which it must. */
        in->ref = delta ? in->n_files - 1 : 0;
        if (delta) return delta_table_schema(in, err);
        if (in->n_files > 1) PQ_TRY(table_union(in, spec, no_stats, err));
        else PQ_TRY(open_table_file(in, in->ref, &in->files[in->ref], err));
        return PQ_OK;
    }
    if (version >= 0) return pq_fail(err, PQ_E_USAGE, "%s: --version is for a table format's table directory", paths[0]);
    in->files = calloc(n_paths > 0 ? (size_t)n_paths : 1, sizeof *in->files);
    if (!in->files) {
        if (remote_file) pq_file_close(remote_file);
        return PQ_NOMEM(err);
    }
    for (int i = 0; i < n_paths; i++) {
        pq_file *f = remote_file;
        if (!f) PQ_TRY(pq_file_open_local(paths[i], &in->counters, &f, err));
        pq_footer *ft;
        if (pq_footer_read(f, &ft, err) != PQ_OK) {
            pq_error_prefix(err, "%s: ", paths[i]);
            pq_file_close(f);
            return PQ_ERR;
        }
        in->files[in->n_files++] = (pq_scan_file){.file = f, .footer = ft};
    }
    if (in->n_files > 1) PQ_TRY(table_union(in, spec, no_stats, err));
    if (remote_file) {
        /* Named as given (an S3 object's file is named by its endpoint's
         * URL), without credentials. */
        char *userpwd = NULL;
        in->names = calloc(1, sizeof *in->names);
        if (!in->names || pq_url_split_credentials(paths[0], &in->names[0], &userpwd, err) != PQ_OK)
            return in->names ? PQ_ERR : PQ_NOMEM(err);
        free(userpwd);
        in->files[0].name = in->names[0];
    }
    return PQ_OK;
}

static pq_io_counters *inputs_counters(inputs *in)
{
    return in->store ? &in->store->counters : &in->counters;
}

/* A bad --where or --select is the query's error on PATH (SPEC: pqtool:
 * FILE: what went wrong): the first path names it. */
static int compile_query(inputs *in, const char *path, const pq_query_spec *spec, pq_query **q, pq_error *err)
{
    const pq_table *t = in->table;
    pq_query_spec with_dirs = *spec;
    /* A table format's columns come in its schema's order, partition
     * columns where it puts them. */
    const char **order = NULL;
    if (!spec->select && in->snap && in->snap->cols) {
        order = calloc((size_t)in->snap->n_cols + 1, sizeof *order);
        if (!order) return PQ_NOMEM(err);
        for (int i = 0; i < in->snap->n_cols; i++) order[i] = in->snap->cols[i].name;
        with_dirs.select = order;
        with_dirs.n_select = in->snap->n_cols;
    }
    if (in->n_eq) {
        with_dirs.eq_cols = (const char *const *)in->eq_cols;
        with_dirs.eq_vals = (const char *const *)in->eq_vals;
        with_dirs.n_eq = in->n_eq;
    }
    int rc = pq_query_compile(&table_footer(in)->schema, t ? (const char *const *)t->part_names : NULL,
                              t ? t->part_types : NULL, t ? t->n_parts : 0, &with_dirs, q, err);
    free(order);
    if (rc == PQ_OK) return PQ_OK;
    pq_error_prefix(err, "%s: ", path);
    return PQ_ERR;
}

typedef struct cat_args {
    const char **paths;
    int n_paths;
    pq_query_spec spec;
    pq_scan_opts opts;
    const char *out_path;
    const char **select;       /* in select_arena */
    pq_arena select_arena;
    const char **wheres;
    int64_t version;           /* --version N; -1: the latest */
    bool stats;
    bool parquet;              /* --format parquet */
    bool no_log_stats;         /* --no-log-stats: no pruning by a table format's per-file statistics */
} cat_args;

static void parse_cat_args(int argc, char **argv, cat_args *a)
{
    memset(a, 0, sizeof *a);
    a->paths = calloc((size_t)argc + 1, sizeof *a->paths);
    a->wheres = calloc((size_t)argc + 1, sizeof *a->wheres);
    pq_scan_opts_init(&a->opts);
    pq_arena_init(&a->select_arena, 1024);
    a->spec.limit = -1;
    a->version = -1;
    char *select_arg = NULL;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        bool more = i + 1 < argc;
        if ((!strcmp(s, "--select") || !strcmp(s, "-s")) && more) {
            if (select_arg) die_usage(); /* at most one, as select= in a path */
            select_arg = argv[++i];
        }
        else if ((!strcmp(s, "--where") || !strcmp(s, "-w")) && more) a->wheres[a->spec.n_wheres++] = argv[++i];
        else if (!strcmp(s, "--limit") && more) {
            if (a->spec.limit >= 0) die_usage(); /* at most one, as limit= in a path */
            const char *v = argv[++i];
            if (pq_parse_row_count(v, strlen(v), &a->spec.limit) != 0) { /* as limit= */
                fprintf(stderr, "pqtool: --limit: '%s' is not a row count (0 to %lld)\n", v, (long long)INT64_MAX);
                exit(2);
            }
        } else if (!strcmp(s, "--version") && more) {
            if (a->version >= 0) die_usage();
            const char *v = argv[++i];
            if (pq_parse_row_count(v, strlen(v), &a->version) != 0) {
                fprintf(stderr, "pqtool: --version: '%s' is not a version (0 to %lld)\n", v, (long long)INT64_MAX);
                exit(2);
            }
        } else if (!strcmp(s, "--threads") && more) a->opts.threads = atoi(argv[++i]);
        else if (!strcmp(s, "--batch-rows") && more) a->opts.batch_rows = atoi(argv[++i]);
        else if (!strcmp(s, "--no-stats")) a->opts.no_stats = true;
        else if (!strcmp(s, "--no-dictionary")) a->opts.no_dictionary = true;
        else if (!strcmp(s, "--no-page-index")) a->opts.no_page_index = true;
        else if (!strcmp(s, "--no-bloom")) a->opts.no_bloom = true;
        else if (!strcmp(s, "--no-log-stats")) a->no_log_stats = true;
        else if (!strcmp(s, "--stats")) a->stats = true;
        else if (!strcmp(s, "-o") && more) a->out_path = argv[++i];
        else if (!strcmp(s, "--format") && more) {
            const char *f = argv[++i];
            if (!strcmp(f, "parquet")) a->parquet = true;
            else if (strcmp(f, "csv")) die_usage();
        } else if (s[0] == '-' && s[1]) die_usage();
        else a->paths[a->n_paths++] = s;
    }
    if (a->n_paths == 0) die_usage();
    a->spec.wheres = a->wheres;
    if (select_arg) {
        /* As select= in a path (quoted names), without percent-decoding. */
        int n = 0;
        pq_error err;
        if (pq_select_parse(select_arg, false, &a->select_arena, &a->select, &n, &err) != PQ_OK) {
            fprintf(stderr, "pqtool: --select: %s\n", err.msg);
            exit(2);
        }
        if (n <= 0) die_usage();
        a->spec.select = a->select;
        a->spec.n_select = n;
    }
}

static void print_scan_stats(const pq_scan_stats *st, const pq_io_counters *io)
{
    pq_buf b;
    pq_buf_init(&b);
    pq_plan_totals_text(&st->plan, &b);
    pq_buf_printf(&b, "scan: %llu row groups read, %llu rows filtered, %llu rows out, %llu pages read, %llu pages "
                      "skipped, %llu values decoded\n",
                  (unsigned long long)st->row_groups_read, (unsigned long long)st->rows_filtered,
                  (unsigned long long)st->rows_out, (unsigned long long)st->pages_read,
                  (unsigned long long)st->pages_skipped, (unsigned long long)st->values_decoded);
    pq_buf_printf(&b, "workers: %llu column reads shared\n", (unsigned long long)st->reads_shared);
    if (st->row_groups_copied)
        pq_buf_printf(&b, "parquet: %llu row groups copied byte for byte\n", (unsigned long long)st->row_groups_copied);
    pq_buf_printf(&b, "storage: %llu bytes in %llu reads\n",
                  (unsigned long long)atomic_load(&io->read_bytes), (unsigned long long)atomic_load(&io->read_requests));
    fwrite(b.data, 1, b.len, stderr);
    pq_buf_free(&b);
}

/* pq_scan_opts.file_ranges: what the table format's log says of a file's
 * columns (Delta add.stats), before its footer is read.  The inputs' files
 * are the snapshot's, in its order. */
static int table_file_ranges(void *ctx, int index, const pq_expr_column *cols, int n_cols, pq_arena *arena,
                             pq_col_range *ranges)
{
    const inputs *in = ctx;
    return pq_tf_file_ranges(in->snap, index, cols, n_cols, arena, ranges);
}

/* The scan opens the inputs' files as it reaches them, and keeps as many
 * requests going as their store is worth (remote stores: more than the
 * threads).  A table format's table prunes files by its log's statistics
 * too (unless --no-log-stats). */
static void scan_opts_for(pq_scan_opts *o, inputs *in, bool log_stats)
{
    o->open_file = open_table_file;
    o->release_file = release_table_file;
    o->open_ctx = in;
    o->open_parallel = in->store ? in->store->parallel_requests : 0;
    if (in->snap && in->snap->kind != PQ_TF_HIVE && log_stats) {
        o->file_ranges = table_file_ranges;
        o->ranges_ctx = in;
    }
}

/* A table format's table without live files (every file removed, or none
 * added yet): its header alone, the columns as selected (each one checked),
 * no row.  Parquet output needs a file's schema, which it has not. */
static int cat_no_files(inputs *in, const cat_args *a, pq_error *err)
{
    if (a->parquet) {
        pq_fail(err, PQ_E_UNSUPPORTED, "%s: --format parquet of a table without files (no schema to write)",
                a->paths[0]);
        return report(err);
    }
    int n = a->spec.select ? a->spec.n_select : in->snap->n_cols;
    const char **names = calloc((size_t)n + 1, sizeof *names);
    if (!names) return PQ_NOMEM(err), report(err);
    for (int j = 0; j < n; j++) {
        names[j] = a->spec.select ? a->spec.select[j] : in->snap->cols[j].name;
        bool known = false;
        for (int i = 0; i < in->snap->n_cols && !known; i++) known = !strcmp(in->snap->cols[i].name, names[j]);
        if (!known) {
            pq_fail(err, PQ_E_USAGE, "%s: select: unknown column '%s'", a->paths[0], names[j]);
            free(names);
            return report(err);
        }
    }
    pq_buf b;
    pq_buf_init(&b);
    int rc = a->opts.header && pq_csv_header(names, n, &b) ? -1 : 0;
    free(names);
    int fd = STDOUT_FILENO;
    if (!rc && a->out_path) fd = open(a->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (!rc && fd >= 0) {
        pq_error werr;
        fd_sink sk = {.fd = fd, .name = a->out_path ? a->out_path : "stdout"};
        rc = fd_write(&sk, b.data ? b.data : "", b.len, &werr) == PQ_OK ? 0 : (report(&werr), 1);
        if (a->out_path && close(fd) != 0) rc = 1;
    } else if (!rc) {
        fprintf(stderr, "pqtool: %s: %s\n", a->out_path, strerror(errno));
        rc = 1;
    }
    pq_buf_free(&b);
    return rc;
}

static int cmd_cat(int argc, char **argv)
{
    cat_args a;
    parse_cat_args(argc, argv, &a);
    pq_error err;
    pq_error_clear(&err);
    int rc = 0;
    inputs in;
    pq_query *q = NULL;
    if (open_inputs(a.paths, a.n_paths, a.version, &a.spec, a.opts.no_stats, &in, &err) != PQ_OK) {
        rc = report(&err);
        goto out;
    }
    if (in.snap && in.n_files == 0) {
        rc = cat_no_files(&in, &a, &err);
        goto out;
    }
    if (compile_query(&in, a.paths[0], &a.spec, &q, &err) != PQ_OK) {
        rc = report(&err);
        goto out;
    }
    fd_sink sink_ctx = {.fd = STDOUT_FILENO, .name = "stdout"};
    if (a.out_path) {
        sink_ctx.fd = open(a.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        sink_ctx.name = a.out_path;
        if (sink_ctx.fd < 0) {
            fprintf(stderr, "pqtool: %s: %s\n", a.out_path, strerror(errno));
            rc = 1;
            goto out;
        }
    }
    pq_sink sink = {fd_write, &sink_ctx};
    scan_opts_for(&a.opts, &in, !a.no_log_stats);
    pq_scan_stats st;
    int scan_rc;
    if (a.parquet) {
        pq_write_opts wo;
        pq_write_opts_init(&wo);
        scan_rc = pq_scan_parquet(q, table_footer(&in), in.files, in.n_files, &a.opts, &wo, &sink, &st, &err);
    } else {
        scan_rc = pq_scan_csv(q, in.files, in.n_files, &a.opts, &sink, &st, &err);
    }
    if (scan_rc != PQ_OK && !sink_ctx.closed)
        rc = report(&err);
    else if (a.stats)
        print_scan_stats(&st, inputs_counters(&in));
    if (a.out_path && close(sink_ctx.fd) != 0 && rc == 0) {
        fprintf(stderr, "pqtool: %s: %s\n", a.out_path, strerror(errno));
        rc = 1;
    }
out:
    pq_query_free(q);
    inputs_free(&in);
    free(a.paths);
    free(a.wheres);
    pq_arena_free(&a.select_arena);
    return rc;
}

static int cmd_plan(int argc, char **argv)
{
    cat_args a;
    parse_cat_args(argc, argv, &a);
    /* What only a scan has: a plan reads no rows (its totals are printed). */
    if (a.spec.limit >= 0 || a.stats || a.out_path || a.parquet) {
        fprintf(stderr, "pqtool: plan takes --where, --select and the pruning switches; --limit, --stats, -o and "
                        "--format are for cat\n");
        exit(2);
    }
    pq_error err;
    pq_error_clear(&err);
    int rc = 0;
    inputs in;
    pq_query *q = NULL;
    pq_buf out;
    pq_buf_init(&out);
    int ok = open_inputs(a.paths, a.n_paths, a.version, &a.spec, a.opts.no_stats, &in, &err) == PQ_OK;
    /* Which snapshot of a table format the plan is of. */
    if (ok && in.snap) (void)pq_tf_describe(in.snap, &out);
    bool no_files = ok && in.snap && in.n_files == 0;
    if (no_files) pq_buf_printf(&out, "%s: no live files (a table without rows)\n", a.paths[0]);
    ok = ok && (no_files || compile_query(&in, a.paths[0], &a.spec, &q, &err) == PQ_OK);
    if (ok && !no_files) {
        scan_opts_for(&a.opts, &in, !a.no_log_stats);
        ok = pq_scan_plan(q, in.files, in.n_files, &a.opts, &out, NULL, &err) == PQ_OK;
    }
    if (!ok) {
        rc = report(&err);
    } else {
        fwrite(out.data, 1, out.len, stdout);
    }
    pq_buf_free(&out);
    pq_query_free(q);
    inputs_free(&in);
    free(a.paths);
    free(a.wheres);
    pq_arena_free(&a.select_arena);
    return rc;
}

/* ------------------------------------------------------------------ meta */

/* A statistics value as text, decoded by the column's type. */
static void stat_text(const pq_node *nd, pq_bytes v, pq_buf *out)
{
    pq_cell_format f = pq_cell_format_of(nd);
    union {
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
        uint8_t b;
        pq_int96 i96;
        pq_bytes bytes;
    } u;
    size_t need = pq_phys_width(nd->phys, nd->type_length);
    switch (nd->phys) {
    case PQ_BOOLEAN:
        if (v.len < 1) goto raw;
        u.b = v.ptr[0] != 0;
        break;
    case PQ_BYTE_ARRAY:
        u.bytes = v;
        break;
    case PQ_FIXED_LEN_BYTE_ARRAY:
        if (v.len != need) goto raw;
        u.bytes = v;
        break;
    default:
        if (v.len != need) goto raw;
        memcpy(&u, v.ptr, need);
        break;
    }
    pq_csv_cell(&f, &u, 0, out);
    return;
raw:
    pq_buf_printf(out, "<%u bytes>", v.len);
}

static void print_stats(const pq_node *nd, const pq_stats *st, pq_buf *out)
{
    if (st->has_min_value || st->has_max_value) {
        pq_buf_puts(out, " min=");
        if (st->has_min_value) stat_text(nd, st->min_value, out);
        pq_buf_puts(out, " max=");
        if (st->has_max_value) stat_text(nd, st->max_value, out);
        if (st->has_min_exact && !st->min_exact) pq_buf_puts(out, " (min inexact)");
        if (st->has_max_exact && !st->max_exact) pq_buf_puts(out, " (max inexact)");
    } else if (st->has_min || st->has_max) {
        pq_buf_puts(out, " legacy_min=");
        if (st->has_min) stat_text(nd, st->min, out);
        pq_buf_puts(out, " legacy_max=");
        if (st->has_max) stat_text(nd, st->max, out);
    }
    if (st->has_null_count) pq_buf_printf(out, " nulls=%lld", (long long)st->null_count);
    if (st->has_distinct_count) pq_buf_printf(out, " distinct=%lld", (long long)st->distinct_count);
}

static int cmd_meta(int argc, char **argv)
{
    if (argc != 1) die_usage();
    pq_error err;
    pq_error_clear(&err);
    pq_file *f = NULL;
    pq_store *store = NULL;
    int is_remote = is_url(argv[0]) ? check_url(argv[0], &err) == PQ_OK ? open_remote_file(argv[0], &store, &f, &err) : -1 : 0;
    if (is_remote == 0 && is_url(argv[0]))
        (void)pq_fail(&err, PQ_E_USAGE, "%s: not a .parquet object (meta reads one file)", argv[0]);
    char *shown = NULL, *userpwd = NULL; /* the URL without its credentials */
    if (is_remote > 0 && pq_url_split_credentials(argv[0], &shown, &userpwd, &err) != PQ_OK) is_remote = -1;
    free(userpwd);
    if (is_remote <= 0 && (is_url(argv[0]) || pq_file_open_local(argv[0], NULL, &f, &err) != PQ_OK)) {
        if (f) pq_file_close(f);
        if (store) pq_store_destroy(store);
        return report(&err);
    }
    pq_footer *ft;
    if (pq_footer_read(f, &ft, &err) != PQ_OK) {
        pq_error_prefix(&err, "%s: ", argv[0]);
        pq_file_close(f);
        if (store) pq_store_destroy(store);
        free(shown);
        return report(&err);
    }
    const pq_file_meta *m = &ft->meta;
    pq_buf out;
    pq_buf_init(&out);
    pq_buf_printf(&out, "file: %s\nsize: %llu bytes (footer %u bytes)\nversion: %d\ncreated_by: %s\n",
                  shown ? shown : argv[0], (unsigned long long)ft->file_size, ft->meta_len, m->version,
                  m->created_by ? m->created_by : "");
    pq_buf_printf(&out, "rows: %lld\nrow_groups: %d\n", (long long)m->num_rows, m->n_row_groups);
    pq_buf_puts(&out, "schema:\n");
    for (int32_t i = 0; i < ft->schema.root->n_children; i++) {
        const pq_node *nd = ft->schema.root->children[i];
        pq_buf_printf(&out, "  %s: ", nd->name);
        pq_node_type_text(nd, &out);
        pq_buf_puts(&out, nd->nullable ? "\n" : " NOT NULL\n");
    }
    pq_buf_puts(&out, "columns:\n");
    for (int32_t i = 0; i < ft->schema.n_leaves; i++) {
        const pq_leaf *lf = &ft->schema.leaves[i];
        pq_buf_printf(&out, "  %d %s: %s max_def=%d max_rep=%d%s\n", i, lf->path, pq_phys_name(lf->node->phys),
                      lf->max_def, lf->max_rep,
                      lf->column_order == PQ_ORDER_TYPE_DEFINED ? "" : lf->column_order == PQ_ORDER_UNKNOWN
                          ? " order=unknown" : " order=undefined");
    }
    for (int32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        pq_buf_printf(&out, "row group %d: rows=%lld bytes=%lld", g, (long long)rg->num_rows,
                      (long long)rg->total_byte_size);
        if (rg->n_sorting > 0) {
            pq_buf_puts(&out, " sorted_by=");
            for (int32_t k = 0; k < rg->n_sorting; k++)
                pq_buf_printf(&out, "%s%d%s", k ? "," : "", rg->sorting[k].column_idx,
                              rg->sorting[k].descending ? " desc" : "");
        }
        pq_buf_puts(&out, "\n");
        for (int32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            const pq_leaf *lf = &ft->schema.leaves[c];
            if (!cc->has_meta) {
                pq_buf_printf(&out, "  %s: %s\n", lf->path, cc->encrypted ? "encrypted" : "no metadata");
                continue;
            }
            const pq_column_meta *cm = &cc->meta;
            pq_buf_printf(&out, "  %s: %s values=%lld compressed=%lld uncompressed=%lld encodings=", lf->path,
                          pq_codec_name((pq_codec)cm->codec), (long long)cm->num_values,
                          (long long)cm->total_compressed_size, (long long)cm->total_uncompressed_size);
            for (int32_t e = 0; e < cm->n_encodings; e++)
                pq_buf_printf(&out, "%s%s", e ? "," : "", pq_encoding_name((pq_encoding)cm->encodings[e]));
            if (cm->has_stats) print_stats(lf->node, &cm->stats, &out);
            if (cc->has_column_index) pq_buf_printf(&out, " column_index=%d@%lld", cc->column_index_length,
                                                    (long long)cc->column_index_offset);
            if (cc->has_offset_index) pq_buf_printf(&out, " offset_index=%d@%lld", cc->offset_index_length,
                                                    (long long)cc->offset_index_offset);
            if (cm->has_bloom_filter_offset)
                pq_buf_printf(&out, " bloom_filter=%d@%lld", cm->has_bloom_filter_length ? cm->bloom_filter_length : -1,
                              (long long)cm->bloom_filter_offset);
            pq_buf_puts(&out, "\n");
        }
    }
    fwrite(out.data, 1, out.len, stdout);
    pq_buf_free(&out);
    pq_footer_free(ft);
    pq_file_close(f);
    if (store) pq_store_destroy(store);
    free(shown);
    return 0;
}

/* --codec: the ini's spelling and levels (pq_codec_parse). */
static void parse_codec(const char *s, pq_write_opts *o)
{
    pq_error err;
    pq_error_clear(&err);
    if (pq_codec_parse(s, &o->codec, &o->level, &err) != PQ_OK) {
        fprintf(stderr, "pqtool: --codec: %s\n", err.msg);
        exit(2);
    }
}

/* The writer options rewrite and write share; returns whether argv[*i] was
 * one (and steps over its value). */
/* The row groups and order of a written file (write and rewrite). */
typedef struct shape_opts {
    int64_t row_group_rows;
    const char **sort_by;
    int n_sort_by;
} shape_opts;

static bool parse_shape_opt(int argc, char **argv, int *i, shape_opts *s)
{
    const char *a = argv[*i];
    bool has_val = *i + 1 < argc;
    if (!strcmp(a, "--row-group-rows") && has_val) {
        char *end;
        long long v = strtoll(argv[++*i], &end, 10);
        if (*end || v <= 0) die_usage();
        s->row_group_rows = v;
    } else if (!strcmp(a, "--sort-by") && has_val) {
        free(s->sort_by);
        s->n_sort_by = split_list(argv[++*i], &s->sort_by);
        if (s->n_sort_by <= 0) die_usage();
    } else return false;
    return true;
}

static bool parse_write_opt(int argc, char **argv, int *i, pq_write_opts *o, int *threads)
{
    const char *a = argv[*i];
    bool has_val = *i + 1 < argc;
    if (!strcmp(a, "--codec") && has_val) {
        parse_codec(argv[++*i], o);
    } else if (!strcmp(a, "--page-size") && has_val) {
        char *end;
        long v = strtol(argv[++*i], &end, 10);
        if (*end || v <= 0) die_usage();
        o->page_size = (size_t)v;
    } else if (!strcmp(a, "--threads") && has_val) {
        char *end;
        long v = strtol(argv[++*i], &end, 10);
        if (*end || v < 1 || v > 256) die_usage();
        *threads = (int)v;
    } else if (!strcmp(a, "--bloom-filter") && has_val) {
        int n = split_list(argv[++*i], (const char ***)&o->bloom_columns);
        if (n <= 0) die_usage();
        o->n_bloom_columns = n;
    } else if (!strcmp(a, "--no-dictionary")) o->no_dictionary = true;
    else if (!strcmp(a, "--no-statistics")) o->no_statistics = true;
    else return false;
    return true;
}

/* Re-encodes a file with pqfs's writer (the same rows, schema and row
 * groups): a check of the writer against other readers. */
static int cmd_rewrite(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    pq_rewrite_opts ro;
    pq_rewrite_opts_init(&ro);
    pq_write_opts o = ro.write;
    long batch_rows = 0;
    int threads = 0;
    shape_opts shape = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (parse_write_opt(argc, argv, &i, &o, &threads) || parse_shape_opt(argc, argv, &i, &shape)) continue;
        if (!strcmp(a, "-o") && has_val) out = argv[++i];
        else if (!strcmp(a, "--batch-rows") && has_val) {
            char *end;
            batch_rows = strtol(argv[++i], &end, 10);
            if (*end || batch_rows <= 0 || batch_rows > 1 << 20) die_usage();
        } else if (!strcmp(a, "--copy")) ro.copy_chunks = true;
        else if (a[0] == '-' || in) die_usage();
        else in = a;
    }
    if (!in || !out) die_usage();
    pq_error err;
    pq_error_clear(&err);
    pq_file *f;
    if (pq_file_open_local(in, NULL, &f, &err) != PQ_OK) return report(&err);
    pq_footer *ft;
    if (pq_footer_read(f, &ft, &err) != PQ_OK) {
        pq_error_prefix(&err, "%s: ", in);
        pq_file_close(f);
        return report(&err);
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc;
    if (fd < 0) {
        rc = pq_fail(&err, PQ_E_IO, "%s: %s", out, strerror(errno));
    } else {
        fd_sink fs = {fd, out, false};
        pq_sink sink = {fd_write, &fs};
        ro.write = o;
        ro.batch_rows = (int32_t)batch_rows;
        ro.threads = threads;
        ro.row_group_rows = shape.row_group_rows;
        ro.sort_by = shape.sort_by;
        ro.n_sort_by = shape.n_sort_by;
        rc = pq_file_rewrite(f, ft, in, &ro, &sink, &err);
        if (close(fd) != 0 && rc == PQ_OK) rc = pq_fail(&err, PQ_E_IO, "%s: %s", out, strerror(errno));
        if (rc != PQ_OK) unlink(out);
    }
    pq_footer_free(ft);
    pq_file_close(f);
    free((void *)o.bloom_columns);
    free(shape.sort_by);
    return rc == PQ_OK ? 0 : report(&err);
}

/* Empties the output file for a second pass (pq_csv_import_inferred). */
static int restart_fd(void *ctx, pq_error *err)
{
    int fd = *(int *)ctx;
    if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) return pq_fail(err, PQ_E_IO, "%s", strerror(errno));
    return PQ_OK;
}

/* CSV to Parquet through the parallel writer.  The output appears whole or
 * not at all: it is written next to OUT under a temporary name and renamed
 * on success. */
static int cmd_write(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *like = NULL;
    pq_import_opts io;
    pq_import_opts_init(&io);
    pq_write_opts o = io.write;
    int threads = 0;
    shape_opts shape = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (parse_write_opt(argc, argv, &i, &o, &threads) || parse_shape_opt(argc, argv, &i, &shape)) continue;
        if (!strcmp(a, "--schema") && has_val) like = argv[++i];
        else if (a[0] == '-' && a[1]) die_usage();
        else if (!in) in = a;
        else if (!out) out = a;
        else die_usage();
    }
    if (!in || !out) die_usage();
    pq_error err;
    pq_error_clear(&err);
    pq_file *f;
    if (pq_file_open_local(in, NULL, &f, &err) != PQ_OK) return report(&err);
    pq_csv_schema inferred = {0};
    pq_file *lf = NULL;
    pq_footer *ft = NULL;
    const pq_schema_element *elements = NULL;
    int32_t n_elements = 0;
    int rc = PQ_OK;
    if (like) {
        rc = pq_file_open_local(like, NULL, &lf, &err);
        if (rc == PQ_OK && (rc = pq_footer_read(lf, &ft, &err)) != PQ_OK) pq_error_prefix(&err, "%s: ", like);
        if (rc == PQ_OK) {
            elements = ft->meta.schema;
            n_elements = ft->meta.n_schema;
        }
    }
    char tmp[4096];
    int fd = -1;
    if (rc == PQ_OK) {
        if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", out) >= (int)sizeof tmp)
            rc = pq_fail(&err, PQ_E_USAGE, "%s: name too long", out);
        else if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0)
            rc = pq_fail(&err, PQ_E_IO, "%s: %s", out, strerror(errno));
    }
    if (rc == PQ_OK) {
        fd_sink fs = {fd, out, false};
        pq_sink sink = {fd_write, &fs};
        io.write = o;
        io.threads = threads;
        io.row_group_rows = shape.row_group_rows;
        io.sort_by = shape.sort_by;
        io.n_sort_by = shape.n_sort_by;
        int64_t rows;
        if (like) rc = pq_csv_import(f, in, elements, n_elements, &io, &sink, &rows, &err);
        else rc = pq_csv_import_inferred(f, in, &io, &sink, restart_fd, &fd, &inferred, &rows, &err);
        if (rc == PQ_OK && fchmod(fd, 0644) != 0) rc = pq_fail(&err, PQ_E_IO, "%s: %s", out, strerror(errno));
        if (close(fd) != 0 && rc == PQ_OK) rc = pq_fail(&err, PQ_E_IO, "%s: %s", out, strerror(errno));
        if (rc == PQ_OK && rename(tmp, out) != 0) rc = pq_fail(&err, PQ_E_IO, "%s: %s", out, strerror(errno));
        if (rc != PQ_OK) unlink(tmp);
    }
    pq_csv_schema_free(&inferred);
    pq_footer_free(ft);
    if (lf) pq_file_close(lf);
    pq_file_close(f);
    free((void *)o.bloom_columns);
    free(shape.sort_by);
    return rc == PQ_OK ? 0 : report(&err);
}

int main(int argc, char **argv)
{
    /* Page and output buffers are megabytes, freed and taken again for every
     * row group: keep them in the heap instead of mapping and faulting them in
     * each time. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    signal(SIGPIPE, SIG_IGN);
    /* A table's files hold descriptors from a bounded set sized from it. */
    pq_fd_raise_limit();
    if (argc < 2) die_usage();
    /* Asked for: on stdout, exit 0 (a pager, `| head`, --help in scripts). */
    if (asks_help(argv[1]) || (argc == 3 && asks_help(argv[2]))) {
        print_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("pqtool (%s)\n", PQ_CREATED_BY);
        return 0;
    }
    if (!strcmp(argv[1], "cat")) return cmd_cat(argc - 2, argv + 2);
    if (!strcmp(argv[1], "meta")) return cmd_meta(argc - 2, argv + 2);
    if (!strcmp(argv[1], "plan")) return cmd_plan(argc - 2, argv + 2);
    if (!strcmp(argv[1], "rewrite")) return cmd_rewrite(argc - 2, argv + 2);
    if (!strcmp(argv[1], "write")) return cmd_write(argc - 2, argv + 2);
    die_usage();
    return 2;
}
