/* The lake's internals, shared by its files: lake.c (the lake, its tables
 * and its public reads), lake_view.c (paths into views, snapshots),
 * lake_results.c (the result cache and its jobs), lake_write.c (writes). */
#ifndef PQ_LAKE_INTERNAL_H
#define PQ_LAKE_INTERNAL_H

#include <pthread.h>

#include "cache.h"
#include "lake.h"
#include "plan.h"
#include "query.h"
#include "result.h"
#include "scan.h"
#include "tablefmt.h"

#define MAX_COMPONENTS 128
#define ERROR_RING 128


typedef struct table_info {
    struct table_info *next;
    char *name;                  /* "" for a single-table mount */
    char *root;                  /* store path */
    uint64_t fetched_ms;
    int refs;
    int n_parts;
    char **part_names;
    pq_part_type *part_types;
    char *ref_path;              /* first file in table order: the schema */
    pq_stat ref_id;
    /* A table format's schema where its types are not its schema file's
     * (pq_tf_table_schema: a Delta INT96 timestamp), made from that file's
     * once; NULL: the file's. */
    pq_footer_ref *typed_ref;
    int n_files;
    char *left_out;              /* the report of paths left out (NULL: none) */
    /* A table format's table (Delta): its snapshot, whose files are the
     * table's (never its directories'); NULL for Hive. */
    pq_tf_snapshot *snap;
    int64_t version;             /* the version asked for (as_of=N); -1: the latest */
} table_info;

typedef struct result_entry {
    struct result_entry *next;
    char *key;
    pq_result *res;
    int readers;
    uint64_t last_used_ms;
    uint64_t size;               /* once complete */
} result_entry;

typedef struct lake_union lake_union;

typedef struct lake_counters {
    _Atomic uint64_t views_opened, results_reused, results_started, results_cancelled;
    _Atomic uint64_t files_total, files_pruned, files_pruned_log, dirs_pruned, row_groups_total, row_groups_pruned[PQ_RUNG_COUNT];
    _Atomic uint64_t row_groups_fully_matched, pages_total, pages_pruned, rows_decoded, rows_out, errors;
    /* Temporary files never renamed, dropped (pq_lake_upload_expire); what
     * crashed writes left, removed (pq_lake_sweep_leftovers). */
    _Atomic uint64_t staged_expired, leftover_temporaries, leftover_dirs;
} lake_counters;

struct pq_lake {
    pq_store *store;             /* the caching wrapper */
    pq_io_counters *io;          /* the real store's counters */
    pq_cache_counters cc;
    pq_footer_cache *footers;
    uint64_t ttl_ms;
    bool sized_csv;               /* pq_lake_opts.sized_csv */
    int threads;
    char *cache_dir;
    uint64_t cache_size;
    pq_lake_table_decl *decls;
    int n_decls;
    pq_log_fn log;
    void *log_ctx;
    pq_log_level log_level;
    pq_lake_owner remote_owner;
    bool single_table;

    pthread_mutex_t mu;
    table_info *tables;
    result_entry *results;
    uint64_t cached_bytes;
    uint64_t staged_bytes;       /* bytes of writes being staged: they share cache_size */
    char *errors[ERROR_RING];
    int n_errors, err_head;
    bool shutting_down;
    char **made_tables;          /* tables made by mkdir in this mount (no files yet) */
    int n_made;
    lake_counters c;
    lake_union *unions;          /* Hive views' schemas (lake_schema.c), under mu */
    struct lake_plan *plans;     /* plan.txt texts by result key (lake_results.c), under mu */
    /* Held while a write makes partition directories and starts its part
     * file in them, and while a failed write removes the directories it
     * made: a directory another write has just found is never removed
     * before that write's file is in it. */
    pthread_mutex_t dirs_mu;
    /* Commits into a table without files, one at a time: the first defines
     * the table's schema and layout, which the next must then meet. */
    pthread_mutex_t first_write_mu;
};

typedef enum { K_ROOT, K_META_DIR, K_META_STATS, K_META_ERRORS, K_VIEW_DIR, K_VIEW_FILE } res_kind;
typedef enum { F_DATA_CSV, F_DATA_PARQUET, F_SCHEMA, F_PLAN } view_file;

typedef struct view {
    res_kind kind;
    view_file file;
    table_info *t;
    pq_arena arena;
    char *real_dir;              /* deepest real partition directory (store path) */
    pq_stat real_st;             /* its stat (has_owner false: not known, or the store has no owners) */
    int n_real;
    char **real_vals;            /* values of the first n_real partition columns */
    const char **eq_cols, **eq_vals;
    int n_eq;
    const char **wheres;
    int n_wheres;
    const char **select;
    int n_select;
    int64_t limit;
    int sized;                   /* sized=1 or sized=0 (-1: the mount's sized_csv) */
    const char *as_of;           /* the as_of= component's value (NULL: none) */
} view;


void lake_logf(pq_lake *l, pq_log_level lv, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const pq_lake_table_decl *lake_decl_of(const pq_lake *l, const char *name);
/* The table's layout, types and schema file, from a (cached) discovery;
 * of a Delta table, from its log at `version` (-1: the latest; an older
 * version is kept while views use it and a few more besides). */
int lake_table_get(pq_lake *l, const char *name, const char *root, int64_t version, table_info **out, pq_error *err);
void lake_table_info_put(pq_lake *l, table_info *t);
/* Drops the cached discovery of the table at `root` (after a write). */
void lake_table_forget(pq_lake *l, const char *root);
/* After a failure: when it is a local file found changed since it was
 * listed (PQ_E_STALE), drops the listing of path's directory (every
 * listing with path NULL: a file the message names) and the table's
 * discovery, so the next lookup sees the lake anew, and makes the
 * failure PQ_E_IO.  Returns PQ_ERR. */
int lake_forget_listed(pq_lake *l, const char *table_root, const char *path, pq_error *err);
/* Whether `name` is a table without files: declared in the ini or made by mkdir. */
bool lake_table_known(pq_lake *l, const char *name);
int lake_table_made(pq_lake *l, const char *name, pq_error *err);
/* Undoes lake_table_made (rmdir of the table). */
void lake_table_unmade(pq_lake *l, const char *name);
/* Resolves a path (SPEC section 3) into *v; lake_view_free after. */
int lake_resolve(pq_lake *l, const char *path, view *v, pq_error *err);
void lake_view_free(pq_lake *l, view *v);
int lake_dir_has(pq_lake *l, const char *dir, const char *name, bool *is_dir, pq_error *err);
/* lake_dir_has, with the entry's stat in *st when it is there. */
int lake_dir_find(pq_lake *l, const char *dir, const char *name, pq_stat *st, pq_error *err);
/* Fills a's owner, group and mode: st's (may be NULL), else the remote
 * owner's; a file a view generates (generated) gets its directory's mode
 * without execute bits. */
void lake_attr_owner(const pq_lake *l, const pq_stat *st, bool is_dir, bool generated, pq_lake_attr *a);
/* The stat of the store's root (has_owner false for a store without owners). */
void lake_root_stat(pq_lake *l, pq_stat *st);
char *lake_join(pq_arena *a, const char *dir, const char *name);
bool lake_is_hidden(const char *name);
int lake_view_file_of(const char *name, view_file *f);
/* A table's name in messages: a single-table mount's is empty. */
const char *lake_table_label(const char *name);
/* Made by mkdir in this mount: on a store without directories (S3) such
 * a table is in no listing until its first file lands. */
bool lake_table_was_made(pq_lake *l, const char *name);

/* ------------------------------------------------------------------ views (lake_view.c) */

/* How t's files' footers are seen: a table format's names and types
 * (pq_tf_apply_types), its files identified by size; Hive: as read. */
void lake_footer_view(const table_info *t, pq_footer_view *as);
/* The footer of t's file path (identity id) as t sees it. */
int lake_footer_get(pq_lake *l, const table_info *t, const char *path, const pq_stat *id, pq_footer_ref **out,
                    pq_error *err);

/* The footer of t's schema file (its first file; a table format's: the
 * newest that holds every column, in the format's types: t->typed_ref
 * when it has one), held until pq_footer_ref_put. */
int lake_schema_file(pq_lake *l, const table_info *t, pq_footer_ref **ref, pq_error *err);
/* t->typed_ref from its schema file's footer (pq_tf_table_schema). */
int lake_typed_schema(table_info *t, const pq_footer *file_ft, pq_error *err);
/* The view's query, compiled against the schema of schema_ft. */
int lake_compile_against(const view *v, const pq_footer *schema_ft, pq_query **q, pq_error *err);
/* The view's query, compiled against its table's schema file (whose
 * footer *ref holds until pq_footer_ref_put). */
int lake_compile_view(pq_lake *l, const view *v, pq_query **q, pq_footer_ref **ref, pq_error *err);

/* The files a view reads as the lake is now, and its result's key. */
typedef struct snapshot {
    pq_table *files;             /* discovered under real_dir; a table format's: its table's, borrowed */
    const pq_tf_snapshot *tf;    /* the table format's snapshot (NULL: Hive) */
    int n_parts;
    char ***values;              /* full partition values per file */
    char *key;                   /* normalized view + file identities */
    char digest[65];             /* of the files' identities (path, size, mtime), hex */
    int64_t newest_ns;           /* the files' newest time (lake_time_ns; 0: none known) */
} snapshot;

int lake_snapshot_take(pq_lake *l, const view *v, const pq_query *q, snapshot *s, pq_error *err);
/* s's key anew, for the view's query q (s's files as they were listed). */
int lake_snapshot_rekey(const view *v, const pq_query *q, snapshot *s, pq_error *err);
void lake_snapshot_free(snapshot *s);
/* The first part of a result's key: the table's layout and schema file,
 * the view's normalized components and its format (the files' identities
 * follow).  Nonzero when out of memory. */
int lake_view_key(const view *v, const pq_query *q, pq_buf *k);

typedef struct prune_ctx {
    const view *v;
    const pq_query *q;
} prune_ctx;

/* Listing-time pruning (a pq_table_opts.prune, ctx a prune_ctx): a
 * partition directory whose values make the predicate FALSE is never
 * listed. */
bool lake_prune_dir(void *ctx, int depth, const char *const *names, const char *const *values);

/* ------------------------------------------------------------------ view schemas (lake_schema.c) */

/* A view's query, the schema it is compiled against and its files. */
typedef struct view_query {
    pq_query *q;
    pq_footer_ref *ref;          /* the table's schema file's footer */
    lake_union *u;               /* the union of the files' schemas (NULL: not known yet) */
    snapshot s;                  /* the files, and the view's result key (s.key) */
} view_query;

/* Whether a view of t may have a schema other than its schema file's: a
 * Hive table of more than one file (one file is its own union). */
bool lake_schema_may_evolve(const table_info *t);
/* The view's files and result key, its query compiled against the schema
 * file; or, when the query names a column the schema file lacks, against
 * the union of the files' schemas (and the key by that query). */
int lake_view_files(pq_lake *l, const view *v, view_query *vq, pq_error *err);
/* A scan's files (parallel to its snapshot's) and the options that open
 * them. */
typedef struct lake_scan_files {
    pq_scan_file *files;
    const pq_scan_opts *opts;
} lake_scan_files;
/* After lake_view_files: the query against the union of the files'
 * schemas (reads the footers the memo does not know yet: through `scan`
 * when given, keeping them for it, else on their own). */
int lake_view_query_complete(pq_lake *l, const view *v, view_query *vq, const lake_scan_files *scan, pq_error *err);
/* Both. */
int lake_view_query(pq_lake *l, const view *v, view_query *vq, pq_error *err);
/* The footer whose schema vq->q is compiled against (pq_scan_parquet's ref). */
const pq_footer *lake_view_schema(const view_query *vq);
void lake_view_query_free(pq_lake *l, view_query *vq);
void lake_unions_free(pq_lake *l);

/* ------------------------------------------------------------------ results (lake_results.c) */

/* The union by name of seed's schema and those of the snapshot's files
 * (with q, may be NULL: the files its partition filter rules out are not
 * read). */
int lake_files_union(pq_lake *l, const view *v, const snapshot *s, const pq_query *q, const pq_footer *seed,
                     pq_footer **out, pq_error *err);

/* Finds or starts the result of a data.csv or data.parquet view (one
 * reader more): *key_out its key (malloc'd).  Takes over the view when it
 * starts a job (the job owns it). */
int lake_get_result(pq_lake *l, view *v, pq_result **out, char **key_out, pq_error *err);
/* data.parquet: its result, complete (SPEC: materialized on first lookup
 * or open, with an exact size).  A failed result is not kept; *job_ran
 * says whether its job ran (and reported its failure). */
int lake_materialize(pq_lake *l, view *v, pq_result **out, char **key_out, bool (*stop)(void *), void *stop_ctx,
                     bool *job_ran, pq_error *err);
/* One reader less; the last one of an incomplete result cancels it. */
void lake_release_result(pq_lake *l, pq_result *res, const char *key);
/* Takes (one reader more) the complete result whose version the file
 * system's data.parquet inode names, while the lake still holds it: what
 * the lookup that made the inode saw, though a write may have landed
 * since (the kernel looks data.parquet up at every open, so an open after
 * a write's close() gets the newer version).  The view part of the key
 * must match too, so a hash collision cannot hand out another view. */
bool lake_take_held_version(pq_lake *l, const view *v, uint64_t version, pq_result **out, char **key_out);
/* A result's version for the file system (pq_lake_attr.version). */
uint64_t lake_version_of_key(const char *key);
/* The size of the complete result of key (a view's snapshot's: the view
 * as the lake is now), when the cache holds one (data.csv's size is 0
 * before). */
bool lake_result_size(pq_lake *l, const char *key, uint64_t *size);
/* A store entry's time in ns since the epoch (modified_ms: an object
 * store's mtime_ns is a hash of its ETag), 0 when the store does not say. */
static inline int64_t lake_time_ns(const pq_stat *st)
{
    return st->modified_ms > 0 && st->modified_ms < INT64_MAX / 1000000 ? st->modified_ms * 1000000 : 0;
}
/* The values of partition level `level` (the table's column index) that
 * the view's files which may hold matching rows have (pq_scan_files_may_match:
 * partition values, log statistics, row groups' min/max): readdir below a
 * filter lists only those.  known false: nothing is known, list all. */
typedef struct lake_values {
    bool known;
    char **vals;                 /* sorted, with repeats */
    int n;
    bool has_null;
} lake_values;
int lake_view_match_values(pq_lake *l, const view *v, int level, lake_values *out, pq_error *err);
bool lake_values_has(const lake_values *vs, const char *val);
void lake_values_free(lake_values *vs);

/* plan.txt's exact size once a plan of key (a view's snapshot's) was made
 * (kept in a memo of PLAN_MEMO_BYTES; false before, or when too big to
 * keep). */
bool lake_plan_size(pq_lake *l, const char *key, uint64_t *size);
void lake_plans_free(pq_lake *l);
/* schema.txt and plan.txt of a view. */
int lake_schema_text(pq_lake *l, view *v, pq_buf *out, pq_error *err);
int lake_plan_text(pq_lake *l, view *v, pq_buf *out, pq_error *err);
/* data.csv (its header), schema.txt (the format's types) and plan.txt of
 * a table format's table without live files, which has columns but no
 * file to read them from. */
int lake_format_no_files_text(const view *v, pq_buf *out, pq_error *err);
/* Staging shares cache_size with the kept results: grows *reserved (an
 * upload's share) to `end` bytes, evicting unread results to make room;
 * PQ_E_NOSPACE when staging alone would pass cache_size. */
int lake_stage_reserve(pq_lake *l, uint64_t *reserved, uint64_t end, pq_error *err);
/* Shrinks *reserved to `end` bytes (0: the upload is gone). */
void lake_stage_release(pq_lake *l, uint64_t *reserved, uint64_t end);
/* Logs err (with path) and records it for .pqfs/errors; returns PQ_ERR. */
int lake_fail_logged(pq_lake *l, pq_error *err, const char *path);

#endif
