/* A result: the bytes of one view file (data.csv) produced by a background
 * job and read at offsets by any number of readers while it grows.
 *
 * The bytes go to an unlinked file in the cache directory (or memory without
 * one), so results larger than memory stream fine.  Readers wait for bytes
 * that are not there yet; the producer runs ahead of the furthest reader by
 * at most a window (prefetch without filling the disk for a slow reader).
 * Cancelling (the last reader went away early) makes the job's next sink
 * write fail, which stops the scan. */
#ifndef PQ_RESULT_H
#define PQ_RESULT_H

#include "scan.h"

typedef struct pq_result pq_result;

/* Runs on the result's own thread; writes through `sink`. */
typedef int (*pq_result_job)(void *ctx, const pq_sink *sink, pq_error *err);

/* Starts the job.  ctx_free (may be NULL) releases ctx after the job ends.
 * dir: where to keep the bytes (NULL: memory). */
int pq_result_start(const char *dir, uint64_t ahead_window, pq_result_job job, void *ctx,
                    void (*ctx_free)(void *), pq_result **out, pq_error *err);

void pq_result_ref(pq_result *r);
/* Dropping the last reference cancels a running job, waits for it and frees. */
void pq_result_unref(pq_result *r);

/* Joins the producer's thread once the job has ended (no-op before, and
 * after the first call).  An ended thread not joined keeps its stack mapped
 * (8 MiB of address space, its touched pages resident): kept results must
 * not hold theirs until evicted.  The caller holds a reference. */
void pq_result_reap(pq_result *r);

/* Unmaps the result's cache file while nobody reads it: a kept result's
 * mapped pages would otherwise count in the daemon's RSS until evicted.  The
 * caller guarantees that no pointer from pq_result_peek is in use (no reader
 * holds one); a later peek maps the file again. */
void pq_result_unmap(pq_result *r);

/* Reads up to len bytes at off, waiting until they exist, the result ends,
 * it fails (its error), or stop(stop_ctx) returns true (PQ_E_CANCELLED).
 * *n = 0 means end of file. */
int pq_result_read(pq_result *r, void *buf, size_t len, uint64_t off, size_t *n,
                   bool (*stop)(void *), void *stop_ctx, pq_error *err);

/* Waits like pq_result_read, but for the whole range [off, off + len) or
 * the end of the result, then says how many bytes are there (*n; 0: end of
 * file).  When they can be addressed in place (the cache file is mapped),
 * *data points at them and stays valid while the caller holds its reference:
 * a reader replies from the page cache without copying.  Otherwise *data is
 * NULL and pq_result_read returns the *n bytes without waiting. */
int pq_result_peek(pq_result *r, uint64_t off, size_t len, const char **data, size_t *n, bool (*stop)(void *),
                   void *stop_ctx, pq_error *err);

/* Stops the job (its sink fails from now on); readers see an error. */
void pq_result_cancel(pq_result *r);
/* Waits until the job has ended: PQ_OK when it succeeded, else its error
 * (PQ_E_CANCELLED when stop(stop_ctx) says the caller gave up; stop may be
 * NULL).  For results read only once complete (data.parquet): start those
 * with an ahead_window that does not hold the producer back. */
int pq_result_wait(pq_result *r, bool (*stop)(void *), void *stop_ctx, pq_error *err);

typedef struct pq_result_state {
    bool done;                   /* the job ended */
    bool failed;                 /* ...with an error */
    uint64_t size;               /* bytes so far (the exact size once done) */
} pq_result_state;

void pq_result_state_of(pq_result *r, pq_result_state *out);

#endif
