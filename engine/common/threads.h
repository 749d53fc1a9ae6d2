/* Threads of the engine: how many a job runs on by default, and the one
 * way short parallel jobs run (pq_parallel_for).  The long-lived threads
 * that are not jobs of this kind say why where they start: a result's
 * producer (result.c: it outlives the request that started it and streams
 * to its readers), the scan's and the writer's workers (scan.c, filewrite.c,
 * rowsort.c, csvimport.c: they run per call and join before it returns),
 * and the S3 part sender (store_s3.c: it overlaps an upload with the
 * writer). */
#ifndef PQ_THREADS_H
#define PQ_THREADS_H

#include <stddef.h>

/* The machine's online cores (at least 1): the default worker count. */
int pq_default_threads(void);

/* Calls fn(ctx, i) for every i in [0, n), on up to `threads` threads (this
 * one included; fewer when threads cannot be started), and returns when all
 * calls have.  For independent jobs that wait on storage: footers, listings.
 * fn must be safe to run concurrently for distinct i. */
void pq_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx);

#endif
