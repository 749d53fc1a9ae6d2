#include "fdcache.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <unistd.h>

/* One set per process, as RLIMIT_NOFILE is.  Every field under mu. */
static struct {
    pthread_mutex_t mu;
    pq_fd_slot lru;                  /* sentinel: lru.next most recently used */
    size_t n_open;                   /* pinned or not, and being opened */
    pthread_cond_t room;             /* signalled when a descriptor may be closed or is */
    int waiting;                     /* threads waiting on room */
    size_t budget;                   /* 0: not derived yet */
    bool budget_set;                 /* by pq_fd_set_budget, not derived */
    uint64_t reopens, evictions;
} fdc = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .room = PTHREAD_COND_INITIALIZER,
    .lru = {.fd = -1, .prev = &fdc.lru, .next = &fdc.lru},
};

static size_t default_budget(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return PQ_FD_BUDGET_MAX;
    rlim_t quarter = rl.rlim_cur / 4;
    if (quarter < PQ_FD_BUDGET_MIN) return PQ_FD_BUDGET_MIN;
    return quarter > PQ_FD_BUDGET_MAX ? PQ_FD_BUDGET_MAX : (size_t)quarter;
}

static size_t budget_locked(void)
{
    if (!fdc.budget) fdc.budget = default_budget();
    return fdc.budget;
}

static void lru_unlink(pq_fd_slot *s)
{
    s->prev->next = s->next;
    s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

static void lru_push_front(pq_fd_slot *s)
{
    s->next = fdc.lru.next;
    s->prev = &fdc.lru;
    fdc.lru.next->prev = s;
    fdc.lru.next = s;
}

static void evict_locked(pq_fd_slot *s)
{
    lru_unlink(s);
    close(s->fd);
    s->fd = -1;
    fdc.n_open--;
    fdc.evictions++;
}

/* Closes least recently used unpinned descriptors while over `keep`.  A
 * close of a file opened read-only flushes nothing: cheap under the lock. */
static size_t evict_over_locked(size_t keep)
{
    size_t n = 0;
    while (fdc.n_open > keep && fdc.lru.prev != &fdc.lru) {
        evict_locked(fdc.lru.prev);
        n++;
    }
    return n;
}

/* Counts one more descriptor, once the set may hold it: when it is at its
 * budget, the least recently used unpinned descriptor is closed, and when
 * every one is pinned (reads in progress, each soon done), it waits for an
 * unpin.  A thread never waits while it holds a pin (a read pins one slot
 * at a time), so the wait ends. */
static void reserve_locked(void)
{
    while (fdc.n_open >= budget_locked()) {
        if (fdc.lru.prev != &fdc.lru) {
            evict_locked(fdc.lru.prev);
            continue;
        }
        fdc.waiting++;
        pthread_cond_wait(&fdc.room, &fdc.mu);
        fdc.waiting--;
    }
    fdc.n_open++;
}

static void unreserve_locked(void)
{
    fdc.n_open--;
    if (fdc.waiting) pthread_cond_signal(&fdc.room);
}

int pq_fd_slot_open(pq_fd_slot *s, pq_fd_open_fn open_fn, void *ctx, pq_error *err)
{
    pthread_mutex_lock(&fdc.mu);
    reserve_locked();
    pthread_mutex_unlock(&fdc.mu);
    /* Opened outside the lock: other files' reads go on meanwhile. */
    int fd = open_fn(ctx, err);
    pthread_mutex_lock(&fdc.mu);
    s->fd = fd;
    s->pins = 0;
    if (fd < 0) {
        unreserve_locked();
    } else {
        lru_push_front(s);
        if (fdc.waiting) pthread_cond_signal(&fdc.room); /* a waiter may close this one */
    }
    pthread_mutex_unlock(&fdc.mu);
    return fd < 0 ? PQ_ERR : PQ_OK;
}

static int pin_open_locked(pq_fd_slot *s)
{
    if (s->pins++ == 0) lru_unlink(s);
    return s->fd;
}

int pq_fd_slot_pin(pq_fd_slot *s, pq_fd_open_fn reopen, void *ctx, pq_error *err)
{
    pthread_mutex_lock(&fdc.mu);
    if (s->fd >= 0) {
        int fd = pin_open_locked(s);
        pthread_mutex_unlock(&fdc.mu);
        return fd;
    }
    reserve_locked();
    pthread_mutex_unlock(&fdc.mu);
    int fd = reopen(ctx, err);
    pthread_mutex_lock(&fdc.mu);
    int spare = -1;
    if (fd < 0) {
        unreserve_locked();
    } else if (s->fd >= 0) { /* another thread reopened it meanwhile: use theirs */
        unreserve_locked();
        spare = fd;
        fd = pin_open_locked(s);
    } else {
        s->fd = fd;
        s->pins = 1;
        fdc.reopens++;
    }
    pthread_mutex_unlock(&fdc.mu);
    if (spare >= 0) close(spare);
    return fd;
}

void pq_fd_slot_unpin(pq_fd_slot *s)
{
    pthread_mutex_lock(&fdc.mu);
    if (--s->pins == 0) {
        lru_push_front(s);
        evict_over_locked(budget_locked()); /* over it only after the budget was cut */
        if (fdc.waiting) pthread_cond_signal(&fdc.room); /* it may close this one */
    }
    pthread_mutex_unlock(&fdc.mu);
}

void pq_fd_slot_close(pq_fd_slot *s)
{
    pthread_mutex_lock(&fdc.mu);
    if (s->fd >= 0) {
        if (s->pins == 0) lru_unlink(s);
        close(s->fd);
        s->fd = -1;
        unreserve_locked();
    }
    pthread_mutex_unlock(&fdc.mu);
}

size_t pq_fd_shed(void)
{
    pthread_mutex_lock(&fdc.mu);
    size_t n = evict_over_locked(0);
    if (n && fdc.waiting) pthread_cond_broadcast(&fdc.room);
    pthread_mutex_unlock(&fdc.mu);
    return n;
}

size_t pq_fd_budget(void)
{
    pthread_mutex_lock(&fdc.mu);
    size_t b = budget_locked();
    pthread_mutex_unlock(&fdc.mu);
    return b;
}

void pq_fd_set_budget(size_t n)
{
    pthread_mutex_lock(&fdc.mu);
    fdc.budget = n;
    fdc.budget_set = n != 0;
    evict_over_locked(budget_locked());
    if (fdc.waiting) pthread_cond_broadcast(&fdc.room); /* the budget may have grown */
    pthread_mutex_unlock(&fdc.mu);
}

void pq_fd_stats_get(pq_fd_stats *out)
{
    pthread_mutex_lock(&fdc.mu);
    out->open = fdc.n_open;
    out->budget = budget_locked();
    out->reopens = fdc.reopens;
    out->evictions = fdc.evictions;
    pthread_mutex_unlock(&fdc.mu);
}

uint64_t pq_fd_raise_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t cur = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) rl.rlim_cur = cur;
    }
    pthread_mutex_lock(&fdc.mu);
    if (!fdc.budget_set) fdc.budget = 0; /* derived again, from the new limit */
    pthread_mutex_unlock(&fdc.mu);
    return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
}
