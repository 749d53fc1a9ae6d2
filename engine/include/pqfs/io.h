/* Storage: where the lake's bytes come from and go to.
 *
 * A store is a vtable so that the layers above (footer, pages, scan, lake) never
 * know whether bytes come from a local disk, HTTP or S3.  A store hands out
 * files (read_at, size), lists directories one level at a time, and writes new
 * objects atomically (write, then commit or abort).  Every store counts bytes and
 * requests so that plans and benchmarks can report what was really read. */
#ifndef PQ_IO_H
#define PQ_IO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* Where a producer's bytes go, in order (a scan's CSV, a written file). */
typedef struct pq_sink {
    int (*write)(void *ctx, const char *data, size_t len, pq_error *err);
    void *ctx;
} pq_sink;

typedef struct pq_io_counters {
    _Atomic uint64_t read_requests;
    _Atomic uint64_t read_bytes;
    _Atomic uint64_t list_requests;
    _Atomic uint64_t write_bytes;
} pq_io_counters;

typedef struct pq_file pq_file;
typedef struct pq_store pq_store;
typedef struct pq_upload pq_upload;

typedef struct pq_file_ops {
    /* Reads exactly len bytes at off.  A range past the end is an error
     * (PQ_E_CORRUPT: the file is shorter than its metadata says). */
    int (*read_at)(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err);
    int (*size)(pq_file *f, uint64_t *out, pq_error *err);
    void (*close)(pq_file *f);
} pq_file_ops;

typedef struct pq_stat {
    bool is_dir;
    uint64_t size;
    int64_t mtime_ns;            /* or a hash of the ETag for object stores */
    /* When it was last written, in ms since the epoch, as the store says
     * (an object store's Last-Modified); 0: not known.  A Delta commit's
     * time (as_of=TIMESTAMP). */
    int64_t modified_ms;
    /* Stores that have owners (local): the permission bits (07777), owner
     * and group, for a mount that reports them (allow_other,
     * docs/permissions.md).  has_owner false: the store has none (remote). */
    bool has_owner;
    uint32_t mode;
    uint32_t uid, gid;
} pq_stat;

struct pq_file {
    const pq_file_ops *ops;
    char *name;                  /* for messages: the path as the user knows it */
    pq_io_counters *counters;    /* the store's counters (may be NULL) */
    /* Byte ranges closer than this are fetched in one read: small for a local
     * disk (reading a gap costs as much as seeking over it), large for object
     * stores that charge per request. */
    uint64_t merge_gap;
    /* The ranges of one fetch read this many at a time (<= 1: one after
     * another): more for stores whose round trips, not bytes, cost. */
    int parallel_reads;
    /* What the file was when opened (a local file: its fstat, as its
     * listing states it), to check against the listing a scan works from.
     * has_identity false: the store checks by itself (remote reads carry
     * If-Match on the listed ETag). */
    bool has_identity;
    pq_stat opened;
    /* Bytes the file keeps in memory so they are not read twice: the tail
     * its footer read brought in, ranges a pruning step read (io.c's own,
     * made on first use; pq_file_keep_tail, pq_file_keep_range). */
    struct pq_file_kept *_Atomic kept;
};

typedef struct pq_dirent {
    const char *name;            /* one path component */
    pq_stat st;
} pq_dirent;

/* Return non-zero to stop the listing early. */
typedef int (*pq_list_cb)(void *ctx, const pq_dirent *e);

typedef struct pq_upload_ops {
    int (*write)(pq_upload *u, const void *buf, size_t len, pq_error *err);
    /* Makes the object visible under its final name, atomically. */
    int (*commit)(pq_upload *u, pq_error *err);
    /* Discards everything written; always frees the upload. */
    void (*abort)(pq_upload *u);
    /* The owner the object gets when committed (a root daemon writing for
     * another user); NULL: the store has no owners. */
    void (*set_owner)(pq_upload *u, uint32_t uid, uint32_t gid);
    /* commit, but only while no object has the final name (put-if-absent:
     * a table format's log commit): PQ_E_EXISTS when one has, and nothing
     * is written; always frees the upload.  NULL: the store cannot. */
    int (*commit_new)(pq_upload *u, pq_error *err);
} pq_upload_ops;

struct pq_upload {
    const pq_upload_ops *ops;
    pq_io_counters *counters;
};

typedef struct pq_store_ops {
    /* path is relative to the store root ("" is the root), '/'-separated. */
    int (*open)(pq_store *s, const char *path, pq_file **out, pq_error *err);
    int (*stat)(pq_store *s, const char *path, pq_stat *out, pq_error *err);
    int (*list)(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err);
    int (*create)(pq_store *s, const char *path, pq_upload **out, pq_error *err);
    int (*mkdir)(pq_store *s, const char *path, pq_error *err);
    void (*destroy)(pq_store *s);
    /* Removes an empty directory (a failed write's); NULL: the store has no
     * directories. */
    int (*rmdir)(pq_store *s, const char *path, pq_error *err);
    /* Gives the directory path (one mkdir just made) to uid and gid (gid
     * kept where the parent is set-group-ID); NULL: the store has no
     * owners. */
    int (*chown_dir)(pq_store *s, const char *path, uint32_t uid, uint32_t gid, pq_error *err);
    /* Removes a file this process wrote whose commit into a table format's
     * log then failed (never one of the lake's own); NULL: cannot. */
    int (*remove)(pq_store *s, const char *path, pq_error *err);
} pq_store_ops;

struct pq_store {
    const pq_store_ops *ops;
    char *root;                  /* as given by the user, for messages */
    pq_io_counters counters;
    /* Where the store's warnings go (a symbolic link out of the lake, left
     * out): set by its owner (the lake's log, pqtool's stderr); NULL drops
     * them. */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
    /* Requests worth having in flight at once when their answers are all
     * needed (footers of a table's files): 0 for local disks, where the
     * scan's threads suffice; remote stores wait on round trips, not on
     * the CPU, so they set more. */
    int parallel_requests;
    /* How finely the store times files (pq_stat.modified_ms), in ms: 1 for
     * a local disk, 1000 for object stores and HTTP servers (their
     * Last-Modified is in whole seconds). */
    int modified_granularity_ms;
    /* The directory a local store's messages name its paths under (its
     * resolved root), NULL for others: the lake takes it out of what it
     * shows users (/.pqfs/errors), which name paths relative to the lake. */
    const char *local_dir;
};

/* Counts one read request of len bytes (c may be NULL): what every store
 * reports in plans and /.pqfs/stats. */
void pq_io_count_read(pq_io_counters *c, size_t len);

/* Reads exactly len bytes at off: the part inside the kept tail from memory,
 * the rest from storage (counted there). */
int pq_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err);
/* Hands `bytes` (malloc'd, the file's bytes [off, off + len)) to the file,
 * which frees them on close; replaces any tail kept before. */
void pq_file_keep_tail(pq_file *f, uint8_t *bytes, uint64_t off, size_t len);
/* Hands `bytes` (malloc'd, the file's bytes [off, off + len)) to the file for
 * the next read that overlaps them, which uses and frees them.  When the file
 * already keeps PQ_FILE_KEPT_MAX ranges or PQ_FILE_KEPT_BYTES bytes, the
 * bytes are freed (they will be read again). */
#define PQ_FILE_KEPT_MAX 1024
#define PQ_FILE_KEPT_BYTES (64u << 20)
void pq_file_keep_range(pq_file *f, uint8_t *bytes, uint64_t off, size_t len);
static inline int pq_file_size(pq_file *f, uint64_t *out, pq_error *err)
{
    return f->ops->size(f, out, err);
}
/* Closes the file and frees the bytes it keeps. */
void pq_file_close(pq_file *f);
/* PQ_E_STALE "changed since it was listed" when the opened file is not the
 * one `listed` describes (replaced between the listing and the open): a view
 * then fails instead of mixing versions of the lake (the lake drops that
 * listing and reports the failure as PQ_E_IO). */
int pq_file_check_listed(const pq_file *f, const pq_stat *listed, pq_error *err);
/* The same for a table format's file, whose identity is its size (its log
 * names it and its size; such a file is never rewritten in place). */
int pq_file_check_size(const pq_file *f, uint64_t size, pq_error *err);
static inline void pq_store_destroy(pq_store *s)
{
    if (s) s->ops->destroy(s);
}

/* An unnamed file in `dir` (O_TMPFILE, else a unique name unlinked at
 * once): gone with its last descriptor.  -1 with errno on failure. */
int pq_open_anon_file(const char *dir, const char *stem);

/* Local directory (or a single file when root names one), opened once.
 * Nothing outside it is served or written (docs/architecture.md, "Nothing
 * outside the lake"): reads follow a symbolic link only while it resolves
 * beneath the root (a relative link that stays inside, or an absolute one
 * naming a place under the root's resolved path); a link that leads out is
 * left out of listings and is PQ_E_NOTFOUND to open or stat, with one
 * warning per link (through store->warn).  Writes (create, mkdir, rmdir) follow no link at all:
 * a symbolic link on the path is PQ_E_DENIED.  A part file is written as
 * .NAME.tmp-XXXXXX in its directory, flocked while it is written, and
 * renamed to NAME by the commit. */
int pq_store_local_new(const char *root, pq_store **out, pq_error *err);

/* What a crashed writer left in a local lake, removed by
 * pq_store_local_sweep. */
typedef struct pq_sweep_counts {
    uint64_t temporaries;        /* .NAME.parquet.tmp-XXXXXX files */
    uint64_t dirs;               /* COL=VALUE directories they left empty */
    bool walked;                 /* false: the store has no directory to sweep */
} pq_sweep_counts;

/* Removes the part-file temporaries no live writer holds: regular files
 * named .NAME.parquet.tmp-XXXXXX, the caller's (euid), unlocked (a writer
 * holds an flock on its temporary until it is renamed or removed) and not
 * modified for more than min_age_s seconds; then each COL=VALUE directory
 * (and COL=VALUE parent) such a removal left empty.  Walks the real
 * directories beneath the root (no symbolic link, none named '.' or '_'),
 * until *stop.  Adds to *out; other stores (remote, a single file) have
 * nothing to sweep. */
int pq_store_local_sweep(pq_store *s, int64_t min_age_s, const _Atomic bool *stop, pq_sweep_counts *out,
                         pq_error *err);

/* Whether the file or directory open at fd is a dead writer's: the
 * caller's (euid), not modified for more than min_age_s seconds (0: any
 * age), and locked (flock) by no one.  When true, the caller holds the
 * lock until it closes fd. */
bool pq_fd_abandoned(int fd, int64_t min_age_s);

/* Test hook: true makes the local store resolve paths component by
 * component (the fallback for kernels without openat2) instead of
 * openat2(RESOLVE_BENEATH). */
void pq_store_local_test_without_openat2(bool on);

/* Opens one local file outside any store (pqtool on a plain path). */
int pq_file_open_local(const char *path, pq_io_counters *counters, pq_file **out,
                       pq_error *err);

/* A file over a memory buffer (tests, fuzzers).  The buffer is not copied. */
int pq_file_open_mem(const char *name, const void *data, size_t len, pq_file **out,
                     pq_error *err);

/* Fault injection for tests: wraps a file and misbehaves on schedule. */
typedef struct pq_fault_plan {
    int64_t fail_read_after;     /* the Nth read_at (0-based) fails with PQ_E_IO; -1 never */
    int64_t truncate_to;         /* pretend the file is this long; -1 off */
    int64_t flip_byte_at;        /* XOR 0xFF into this file offset on every read; -1 off */
    bool short_reads;            /* serve reads in pieces of at most 7 bytes internally */
} pq_fault_plan;

void pq_fault_plan_init(pq_fault_plan *p);
/* Takes ownership of `inner`. */
int pq_file_wrap_faulty(pq_file *inner, const pq_fault_plan *plan, pq_file **out,
                        pq_error *err);

#endif
