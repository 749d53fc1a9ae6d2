/* The lake: the logic layer of the mount (knows nothing of FUSE).
 *
 * Paths are '/'-separated component lists relative to the mount root:
 *   ""                                  the root: tables (or the one table)
 *   ".pqfs", ".pqfs/stats", ".pqfs/errors"
 *   "events/dt=2024-01-01/where=amount>100/select=id/data.csv"
 * Below a table, components are real partition directories, virtual filters
 * (COL=VALUE, where=, select=, limit=) and, last, one of the view files
 * data.csv, data.parquet, schema.txt, plan.txt (SPEC section 3).  Views are
 * normalized (components in any order give the same key) so equal views
 * share one result. */
#ifndef PQ_LAKE_H
#define PQ_LAKE_H

#include "io.h"
#include "proc.h"
#include "status.h"
#include "colwrite.h"
#include "table.h"

typedef struct pq_lake pq_lake;

typedef struct pq_lake_table_decl {
    const char *name;
    const pq_part_decl *parts;
    int n_parts;
    bool has_write;              /* the ini's writer settings, for data.parquet and writes */
    pq_write_opts write;         /* (bloom_columns copied by the lake) */
    int64_t row_group_rows;      /* writes; 0: 1,048,576 */
    const char *const *sort_by;  /* writes (copied by the lake) */
    int n_sort_by;
} pq_lake_table_decl;

typedef enum pq_log_level { PQ_LOG_ERROR, PQ_LOG_WARN, PQ_LOG_INFO, PQ_LOG_DEBUG } pq_log_level;
typedef void (*pq_log_fn)(void *ctx, pq_log_level level, const char *msg);

/* Who a store without owners (HTTP, S3) says owns its entries: the mount's
 * uid=, gid=, dir_mode=, file_mode= (docs/permissions.md). */
typedef struct pq_lake_owner {
    uint32_t uid, gid;
    uint32_t dir_mode, file_mode;  /* permission bits */
} pq_lake_owner;

typedef struct pq_lake_opts {
    pq_store *store;             /* taken over by the lake */
    uint64_t metadata_ttl_ms;
    /* data.csv materialized on its lookup, as data.parquet is, so that its
     * size is exact before it is read (tools that copy by size); a view's
     * sized=0 or sized=1 says otherwise for it. */
    bool sized_csv;
    int threads;                 /* scan threads per view; 0: cores */
    const char *cache_dir;       /* result files; NULL: memory */
    uint64_t cache_size;         /* bytes of kept results plus staged writes */
    const pq_lake_table_decl *tables;
    int n_tables;
    pq_log_fn log;
    void *log_ctx;
    pq_log_level log_level;      /* the most detailed level log wants (debug lines cost a format each) */
    pq_lake_owner remote_owner;  /* entries of a store that has no owners */
} pq_lake_opts;

int pq_lake_open(const pq_lake_opts *o, pq_lake **out, pq_error *err);
/* Cancels running results and frees; no call may be in flight. */
void pq_lake_close(pq_lake *l);
/* Makes every blocked read return (shutdown). */
void pq_lake_shutdown(pq_lake *l);

typedef struct pq_lake_attr {
    bool is_dir;
    uint64_t size;               /* files: exact when final */
    bool size_final;             /* false: data.csv still unknown (reads 0) */
    int64_t mtime_ns;
    /* data.parquet: which result the size is of (a hash of the result's
     * key, never 0): its bytes never change, so the file system may cache
     * them per version (and map them); 0 for every other entry. */
    uint64_t version;
    /* Who owns it and its permission bits: a real file or directory's own
     * (or opts.remote_owner's, for a store without owners); a view (where=,
     * COL=VALUE filters, ...) those of its nearest real directory, and a
     * view file that directory's without execute bits.  has_owner false:
     * the lake does not say (/.pqfs): the file system decides. */
    bool has_owner;
    uint32_t mode;
    uint32_t uid, gid;
    /* /.pqfs/errors: for the mount's owner only on a shared mount (its
     * messages may name what other users wrote). */
    bool owner_only;
} pq_lake_attr;

/* A caller, as the file system decodes it (the engine knows nothing of
 * FUSE): the user, the group and the supplementary groups. */
typedef struct pq_cred {
    uint32_t uid, gid;
    const uint32_t *groups;
    int n_groups;
} pq_cred;

/* Whether c may have `want` (a mask of 4 read, 2 write, 1 execute) on an
 * entry of mode/uid/gid, by the Unix rules: uid 0 passes, the owner gets
 * the owner bits (only), a member of the group (primary or supplementary)
 * the group bits, anyone else the other bits.  ACLs are not consulted. */
bool pq_cred_allows(const pq_cred *c, uint32_t mode, uint32_t uid, uint32_t gid, int want);

/* PQ_E_NOTFOUND: no such entry; PQ_E_USAGE: an invalid component (bad
 * expression, unknown column) — logged and appended to .pqfs/errors. */
/* stop (may be NULL) lets a lookup that materializes data.parquet give up
 * (an interrupted request, the mount going): PQ_E_CANCELLED. */
int pq_lake_stat(pq_lake *l, const char *path, pq_lake_attr *out, bool (*stop)(void *), void *stop_ctx,
                 pq_error *err);

typedef int (*pq_lake_dir_cb)(void *ctx, const char *name, const pq_lake_attr *a);
int pq_lake_readdir(pq_lake *l, const char *path, pq_lake_dir_cb cb, void *ctx, pq_error *err);

typedef struct pq_lake_handle pq_lake_handle;
/* version: a data.parquet's pq_lake_attr.version from its lookup, or 0 for
 * whatever the path is now.  That version's result while the lake holds
 * it (a write since the lookup does not matter: the open is concurrent
 * with it); PQ_E_STALE only when it is gone and the view now has other
 * bytes. */
int pq_lake_open_file(pq_lake *l, const char *path, uint64_t version, pq_lake_handle **out, bool (*stop)(void *),
                      void *stop_ctx, pq_error *err);
/* Blocks until bytes at off exist, the file ends (*n = 0), it fails, or
 * stop(stop_ctx) says the caller gave up. */
int pq_lake_read(pq_lake_handle *h, void *buf, size_t len, uint64_t off, size_t *n, bool (*stop)(void *),
                 void *stop_ctx, pq_error *err);
/* Waits for the whole range [off, off + len) or the end of the file; *n
 * bytes are there (0: end of file).  *data points at them when they can be
 * used in place (valid until the handle is released); NULL: copy them with
 * pq_lake_read, which then does not wait. */
int pq_lake_peek(pq_lake_handle *h, uint64_t off, size_t len, const char **data, size_t *n, bool (*stop)(void *),
                 void *stop_ctx, pq_error *err);
/* Whether the handle's size is now exact (data.csv complete). */
bool pq_lake_handle_size(pq_lake_handle *h, uint64_t *size);
void pq_lake_release(pq_lake_handle *h);

/* Whether a file name takes data (is written into the lake when created,
 * or renamed to): not schema.txt or plan.txt, not one starting with '_'
 * (data.csv and data.parquet do: they land as data-<unique>.parquet).
 * PQ_E_DENIED naming the rule otherwise. */
int pq_lake_check_data_name(const char *name, pq_error *err);

/* ------------------------------------------------------------------ writes (SPEC section 6)
 * A file created in a table or partition directory is staged in cache_dir;
 * commit parses it (CSV with a header, or Parquet), checks it against the
 * table's schema, fills the partition columns from the path and writes one
 * new part file <stem>-<unique>.parquet into that directory (made when it is
 * missing), atomically.
 * Bad input is PQ_E_USAGE (logged, and in .pqfs/errors); a path that takes no
 * writes (a view, the root, a view file's name) is PQ_E_DENIED. */
typedef struct pq_lake_upload pq_lake_upload;
/* Whether c may write into the directory dir (a mount path: a table,
 * partition or COL=VALUE directory to be made): write and execute
 * permission on its nearest real directory, the one a new file or
 * directory goes in (PQ_E_ACCESS otherwise, naming it).  Checked by
 * pq_lake_create_as and pq_lake_mkdir_as before anything is staged. */
int pq_lake_check_write(pq_lake *l, const char *dir, const pq_cred *c, pq_error *err);
int pq_lake_create(pq_lake *l, const char *path, pq_lake_upload **out, pq_error *err);
/* pq_lake_create for the caller c (NULL: unchecked, as pq_lake_create):
 * pq_lake_check_write first; when the daemon runs as root, the part file
 * and the directories the write makes are given to c. */
int pq_lake_create_as(pq_lake *l, const char *path, const pq_cred *c, pq_lake_upload **out, pq_error *err);
int pq_lake_upload_write(pq_lake_upload *u, const void *buf, size_t len, uint64_t off, pq_error *err);
int pq_lake_upload_truncate(pq_lake_upload *u, uint64_t size, pq_error *err);
uint64_t pq_lake_upload_size(pq_lake_upload *u);
/* The mount path it was created (or renamed) under. */
const char *pq_lake_upload_path(const pq_lake_upload *u);
/* A file not yet committed renamed within its directory: it will be
 * committed under `path` (named after it, and a .parquet by it).  A view
 * file's name or one starting with '_' is PQ_E_DENIED. */
int pq_lake_upload_rename(pq_lake_upload *u, const char *path, pq_error *err);
/* Whether pq_lake_upload_commit was called (whatever its outcome). */
bool pq_lake_upload_committed(pq_lake_upload *u);
/* Writes the part file.  Once only: later calls return the first outcome.
 * abandon (may be NULL) is asked as the file is written and just before it
 * goes into the lake: true (the writer was killed meanwhile) writes nothing,
 * PQ_E_CANCELLED. */
int pq_lake_upload_commit(pq_lake_upload *u, bool (*abandon)(void *), void *abandon_ctx, pq_error *err);
/* Frees the upload, discarding what was staged. */
void pq_lake_upload_free(pq_lake_upload *u);
/* pq_lake_upload_free of a file whose time to be renamed ran out (a
 * temporary name never renamed to one that takes data): logged, and counted
 * in .pqfs/stats as staged_files_expired. */
void pq_lake_upload_expire(pq_lake_upload *u);
/* Removes what crashed writes left in a local lake (pq_store_local_sweep:
 * part-file temporaries no live writer holds, not modified for more than
 * min_age_s seconds, and the COL=VALUE directories they leave empty), until
 * *stop; logged, and counted in .pqfs/stats.  A mount that takes writes
 * calls it once at start (pqtool never does). */
int pq_lake_sweep_leftovers(pq_lake *l, int64_t min_age_s, const _Atomic bool *stop, pq_error *err);
/* mkdir: at the root a new table (its schema from the first file written).
 * Partition directories need none: a write into COL=VALUE/ (a path that
 * resolves as a filter until the directory exists) makes them. */
int pq_lake_mkdir(pq_lake *l, const char *path, pq_error *err);
/* pq_lake_mkdir for the caller c (NULL: unchecked), as pq_lake_create_as. */
int pq_lake_mkdir_as(pq_lake *l, const char *path, const pq_cred *c, pq_error *err);
/* rmdir: only a table without files (one mkdir made, say by mistake), whose
 * directory is empty; anything else is PQ_E_DENIED (data is not deleted
 * through the mount). */
int pq_lake_rmdir(pq_lake *l, const char *path, pq_error *err);

/* ------------------------------------------------------------------ the write lifecycle (lake_uploads.c)
 * What open, write, close, rename, unlink and stat of files being written
 * mean for a mount, by name, without FUSE: the file system decodes a
 * request into one of these calls and replies with its outcome (the errno
 * from the pq_error's class).  Three sets of names:
 *   - open: files created and not yet released (pq_lake_open_upload), each
 *     with the caller's number for the file (file_id: the inode number
 *     processes see, which /proc/PID/fdinfo shows);
 *   - parked: closed files with a temporary name (starting with '.', as
 *     rsync's .NAME.XXXXXX), not in the lake until renamed to a name
 *     without the dot, which commits them; unlinked, or not renamed within
 *     staged_timeout_s of their close, nothing lands;
 *   - just written: for 10 s after its commit a name still stats (as the
 *     bytes written) and can be renamed within its directory, though its
 *     rows are in the lake under a part name: copy tools set mode and times
 *     by name after close, and DuckDB's COPY or tempfile + os.replace
 *     rename what they wrote.  Every name written in those 10 s answers,
 *     however many there are.
 * Who closes a file decides what the close means (a child closing its
 * inherited copy, a dup'd descriptor, a writer killed by a signal): those
 * facts come from opts.proc, /proc's answers (pq_proc_system) unless a test
 * gives its own.  `tid` is the thread a request came from (FUSE's pid). */
typedef struct pq_lake_uploads pq_lake_uploads;
typedef struct pq_lake_open_upload pq_lake_open_upload;

typedef struct pq_lake_uploads_opts {
    int staged_timeout_s;        /* how long a parked file waits for its rename; 0: 600 */
    const pq_proc_ops *proc;     /* NULL: pq_proc_system() */
    /* Called when a rename moves a name (from's file is to's now), with
     * the lifecycle's lock held, so that no stat of either name comes in
     * between: the file system's inode for `from` follows.  It must not
     * call into the lifecycle.  May be NULL. */
    void (*moved)(void *ctx, const char *from, const char *to);
    void *moved_ctx;
} pq_lake_uploads_opts;

int pq_lake_uploads_new(pq_lake *l, const pq_lake_uploads_opts *o, pq_lake_uploads **out, pq_error *err);
/* Frees everything: files still open (never released) and parked ones are
 * discarded, nothing is written.  No call may be in flight. */
void pq_lake_uploads_free(pq_lake_uploads *u);
/* Discards the parked files whose time ran out and forgets the written
 * names past their 10 s.  Never waits: when the lifecycle is busy it does
 * nothing (call it again, once a second). */
void pq_lake_uploads_expire(pq_lake_uploads *u);

/* create(2) of path by thread tid for caller c (NULL: unchecked;
 * pq_lake_create_as): an open file being written. */
int pq_lake_uploads_create(pq_lake_uploads *u, const char *path, const pq_cred *c, int tid, uint64_t file_id,
                           pq_lake_open_upload **out, pq_error *err);
/* An open for writing of an existing name: a name being written, parked
 * or just written (it still stats, so the kernel opens it rather than
 * creating it) is a new file, as a create would make (cp to the same name
 * twice); any other is PQ_E_DENIED (the lake's files are not written in
 * place). */
int pq_lake_uploads_reopen(pq_lake_uploads *u, const char *path, const pq_cred *c, int tid, uint64_t file_id,
                           pq_lake_open_upload **out, pq_error *err);
/* write(2): PQ_E_CLOSED once the file's close parked it. */
int pq_lake_uploads_write(pq_lake_open_upload *f, const void *buf, size_t len, uint64_t off, pq_error *err);
/* close(2) of one of its descriptors (FUSE's FLUSH) by thread tid; the
 * outcome is close()'s.  The file goes into the lake when its creator
 * closes it with bytes written (not a child closing an inherited copy, nor
 * a close while the closer holds another descriptor on the file), unless
 * the closer is exiting killed by a signal (then nothing is ever written)
 * or dies while the commit runs (PQ_E_CANCELLED).  A temporary name is
 * parked instead, for its rename. */
int pq_lake_uploads_flush(pq_lake_open_upload *f, int tid, pq_error *err);
/* The last close (FUSE's RELEASE): a file its creator never closed itself,
 * or that got bytes after its last flush, is written now (its outcome only
 * logged); an empty one writes nothing, an empty temporary one is parked.
 * Frees f. */
void pq_lake_uploads_release(pq_lake_open_upload *f);
/* Frees f without its close (the create's reply failed): nothing is written. */
void pq_lake_uploads_discard(pq_lake_open_upload *f);

#define PQ_RENAME_NOREPLACE 1u
#define PQ_RENAME_EXCHANGE 2u
/* rename(2) by thread tid for caller c (NULL: unchecked).  Within a
 * directory only, to a name that takes data (pq_lake_check_data_name), and
 * into a directory c may write (PQ_E_ACCESS): a file being written takes
 * the name at its close; a parked file renamed to a name without the dot
 * is committed under it, and the rename gets the outcome (a failed one
 * leaves it parked, and a retry gets the same outcome: GNU mv retries a
 * rename that RENAME_NOREPLACE made EINVAL); a name just written moves (its
 * rows stay where they are).  PQ_E_EXISTS for RENAME_NOREPLACE onto a name
 * being or just written; anything else is PQ_E_DENIED (data is not renamed
 * through the mount). */
int pq_lake_uploads_rename(pq_lake_uploads *u, const char *from, const char *to, unsigned flags, const pq_cred *c,
                           int tid, pq_error *err);
/* unlink(2): a parked file is discarded; anything else is PQ_E_DENIED
 * (data is not deleted through the mount). */
int pq_lake_uploads_unlink(pq_lake_uploads *u, const char *path, pq_error *err);
/* Whether the file whose number is file_id (0: none) is open for writing,
 * or path (may be NULL) names a file being written, parked or just
 * written: *size is its bytes then (staged, or written).  Such a name is
 * not in the lake's listings (or not yet). */
bool pq_lake_uploads_stat(pq_lake_uploads *u, const char *path, uint64_t file_id, uint64_t *size);
/* setattr(2) of a file being written, parked or just written: its size
 * after, truncated first when truncate_to >= 0 (only an open file not yet
 * closing, by file_id).  PQ_E_NOTFOUND when it is none of these. */
int pq_lake_uploads_setattr(pq_lake_uploads *u, const char *path, uint64_t file_id, int64_t truncate_to,
                            uint64_t *size, pq_error *err);
/* A read-only open of path that the lake did not find (err: its
 * PQ_E_NOTFOUND): a name written, being written or parked stats but is not
 * readable under that name (its bytes are in the lake as Parquet, or
 * staged): err becomes PQ_E_ACCESS.  Returns PQ_ERR. */
int pq_lake_uploads_refuse_read(pq_lake_uploads *u, const char *path, pq_error *err);

/* Records an error for .pqfs/errors and the log. */
void pq_lake_report(pq_lake *l, const pq_error *err);

#endif
