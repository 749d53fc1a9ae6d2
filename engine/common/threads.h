/* Threads of the engine: one process-wide pool of reusable worker threads,
 * the jobs that run on it, and how many workers a job runs by default.
 *
 * Two kinds of job:
 *   - pq_workers_start / pq_workers_join: n workers that run at the same
 *     time, each on a thread of its own.  The scan's workers (scan.c), the
 *     rewrite's (filewrite.c) and the CSV import's column workers
 *     (csvimport.c) are of this kind: they wait on a consumer that is the
 *     calling thread (a window of units or row groups) and on one another
 *     (a scan's shared column reads).
 *   - pq_parallel_for: independent calls that may run in any order and on
 *     any number of threads, down to the caller alone (footers, listings,
 *     a fetch's reads, rowsort's leaves).
 *
 * Why a job never waits for a busy pool: jobs nest (a scan worker's fetch
 * runs pq_parallel_for; a result's producer runs a scan) and workers wait on
 * each other and on their caller, so a job queued behind busy threads could
 * wait on itself.  pq_workers_start therefore takes parked threads and
 * starts new ones for the rest: every worker it reports started is running
 * beside the others.  It reports fewer only when a thread cannot be created;
 * the caller then fails ("cannot start scan threads") or goes on with fewer,
 * as it can.  pq_parallel_for needs no such guarantee: its calls must never
 * wait on one another (the caller runs them too, and alone if no thread
 * starts).
 *
 * A thread whose worker returns is parked for the next job, at most
 * PQ_POOL_IDLE_PER_CORE x the cores of them (more exit at once: a burst of
 * 32 remote reads leaves no 32 stacks behind), and a parked thread exits
 * after PQ_POOL_IDLE_MS without a job, so an idle daemon holds few stacks.
 * Reuse spares a thread start per worker per call and keeps each worker's
 * per-thread state warm (the codec contexts in codec.c, malloc's arena).
 *
 * Not on the pool, each saying why where it starts: a result's producer
 * (result.c: it lives as long as its result streams, not for a call) and
 * the S3 part sender (store_s3.c: one per part in flight, sending for
 * seconds beside the writer). */
#ifndef PQ_THREADS_H
#define PQ_THREADS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Parked threads the pool keeps per core, and how long one waits for a job
 * before it exits. */
#define PQ_POOL_IDLE_PER_CORE 2
#define PQ_POOL_IDLE_MS 10000

/* The machine's online cores (at least 1): the default worker count. */
int pq_default_threads(void);

/* A job of workers running together.  The caller owns it (on its stack);
 * its fields are the pool's. */
typedef struct pq_workers {
    void (*fn)(void *ctx, int worker);
    void *ctx;
    int started;               /* workers running fn, numbered [0, started) */
    int running;               /* workers not yet returned (under the pool's lock) */
    pthread_cond_t done;       /* running reached 0 */
} pq_workers;

/* Starts fn(ctx, worker) for worker 0 .. n-1, each on its own pool thread,
 * all running concurrently with each other and with the caller.  Returns
 * how many started: n, or fewer (possibly 0) when a thread could not be
 * created.  pq_workers_join must follow, whatever the count. */
int pq_workers_start(pq_workers *w, int n, void (*fn)(void *ctx, int worker), void *ctx);

/* Waits until every started worker has returned; their threads go back to
 * the pool. */
void pq_workers_join(pq_workers *w);

/* Calls fn(ctx, i) for every i in [0, n), on up to `threads` threads (this
 * one included; fewer when threads cannot be started, at most 65), and
 * returns when all calls have.  For independent jobs that wait on storage:
 * footers, listings.  fn must be safe to run concurrently for distinct i,
 * and must not wait on another index's call: they may all run on the
 * caller, one after the other. */
void pq_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx);

/* The pool's counters since the process started. */
typedef struct pq_pool_stats {
    uint64_t threads_created;
    uint64_t threads_exited;   /* parked past the cap, or idle too long */
    uint64_t jobs;             /* pq_workers_start calls (pq_parallel_for's too) */
    uint64_t workers_run;      /* workers handed to a thread */
    int idle;                  /* parked now */
    int busy;                  /* running a worker now */
} pq_pool_stats;

void pq_pool_get_stats(pq_pool_stats *out);

/* Ends every parked thread and waits until each thread that has left the
 * pool is gone (joined: its thread-local destructors have run), leaving
 * threads that are running a worker alone.  Runs at exit (atexit, from the
 * pool's first use), so that what thread-local state a worker picked up
 * (libcrypto's per-thread error queue) is freed before the process ends:
 * a leak checker would otherwise see it from a thread halfway out.  Jobs
 * may run after it; they park again. */
void pq_pool_shutdown(void);

/* For tests: the parked threads' cap and idle time (0: the defaults above). */
void pq_pool_set_idle_limits(int max_idle, int idle_ms);

#endif
