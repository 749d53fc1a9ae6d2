/* Descriptors of lake files and complete cached results: a bounded set, shared by the whole process.
 *
 * A table may have more files than a process may hold descriptors
 * (RLIMIT_NOFILE), and a mount runs many scans at once.  So a local file
 * (io.c) holds a slot, not a descriptor: a read pins the slot's descriptor,
 * which the file reopens when it was closed (checking that it is still the
 * file it opened first), and the least recently used unpinned descriptor is
 * closed to make room.  The set never holds more than its budget: when
 * every descriptor in it is pinned, an open waits for a read to end.  A
 * pinned descriptor is never closed, so a read on one thread is never cut
 * off by another's open; reads pin one slot at a time and never wait while
 * they hold a pin, so no wait lasts longer than a read. */
#ifndef PQ_FDCACHE_H
#define PQ_FDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct pq_fd_slot {
    int fd;                          /* -1: closed (evicted) */
    int pins;                        /* reads using fd now */
    struct pq_fd_slot *prev, *next;  /* in the LRU list while open and unpinned */
} pq_fd_slot;

/* Opens the slot's file: a descriptor, or -1 with err set. */
typedef int (*pq_fd_open_fn)(void *ctx, pq_error *err);

/* Fills a new slot with the descriptor open_fn returns, unpinned, once the
 * set has room for it.  PQ_ERR when open_fn fails (the slot is then
 * closed: fd -1). */
int pq_fd_slot_open(pq_fd_slot *s, pq_fd_open_fn open_fn, void *ctx, pq_error *err);
/* The slot's descriptor, pinned until pq_fd_slot_unpin: reopened through
 * `reopen` when it was closed.  -1 when the reopen fails (err set). */
int pq_fd_slot_pin(pq_fd_slot *s, pq_fd_open_fn reopen, void *ctx, pq_error *err);
void pq_fd_slot_unpin(pq_fd_slot *s);
/* Closes the slot's descriptor for good (the file is closed; no pins). */
void pq_fd_slot_close(pq_fd_slot *s);

/* Closes every unpinned descriptor of the set, for an open that failed with
 * EMFILE or ENFILE (other parts of the process hold the rest): how many. */
size_t pq_fd_shed(void);

/* The budget when none is set: a quarter of RLIMIT_NOFILE's soft limit (the
 * rest is for FUSE, sockets, results being produced), at least PQ_FD_BUDGET_MIN
 * and at most PQ_FD_BUDGET_MAX: reopening costs an open and an fstat, and
 * the kernel's memory for a descriptor is the process's memory too. */
#define PQ_FD_BUDGET_MIN 4
#define PQ_FD_BUDGET_MAX 512
size_t pq_fd_budget(void);
/* Sets the budget (closing unpinned descriptors over it); 0: the default. */
void pq_fd_set_budget(size_t n);

typedef struct pq_fd_stats {
    uint64_t open;                   /* descriptors held now */
    uint64_t budget;
    uint64_t reopens;                /* files opened again after eviction */
    uint64_t evictions;
} pq_fd_stats;
void pq_fd_stats_get(pq_fd_stats *out);

/* Raises RLIMIT_NOFILE's soft limit to its hard limit (at program start,
 * before the budget is derived from it).  Returns the soft limit now. */
uint64_t pq_fd_raise_limit(void);

#endif
