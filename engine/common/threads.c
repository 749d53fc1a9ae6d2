#include "threads.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int pq_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ------------------------------------------------------------------ the pool */

/* One thread of the pool.  Parked, it waits on `wake` for a job; the
 * starter hands it one (job, worker) and takes it off the idle list. */
typedef struct pool_thread {
    struct pool_thread *next;  /* in the idle list, or the ended one */
    pthread_t tid;             /* set by the thread itself as it ends */
    pthread_cond_t wake;
    pq_workers *job;           /* the worker to run next, NULL: none yet */
    int worker;
    bool quit;                 /* set while parked: exit (the cap was lowered) */
} pool_thread;

static struct {
    pthread_mutex_t mu;
    pool_thread *idle;         /* parked threads, the last parked first */
    /* Threads out of their loop, to be joined: a thread that has returned
     * may still be running its thread-local destructors (libcrypto frees its
     * per-thread state there), so only a join says it is gone. */
    pool_thread *ended;
    bool shut;                 /* pq_pool_shutdown is waiting: no thread parks */
    int n_idle, n_busy;
    int max_idle, idle_ms;     /* 0: the defaults */
    int cores;                 /* pq_default_threads(), once (it reads /sys) */
    uint64_t created, exited, jobs, workers_run;
    pthread_cond_t ended_cv;   /* a thread ended (pq_pool_shutdown waits on it) */
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .ended_cv = PTHREAD_COND_INITIALIZER};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* fork: the child has none of the parent's threads, so it starts with no
 * parked one (handing a job to one would wait forever).  The lock is held
 * across the fork so that the list is not half changed in the child. */
static void pool_prepare_fork(void)
{
    pthread_mutex_lock(&pool.mu);
}

static void pool_parent_fork(void)
{
    pthread_mutex_unlock(&pool.mu);
}

static void pool_child_fork(void)
{
    /* Their condition variables and threads belonged to the parent. */
    while (pool.idle) {
        pool_thread *t = pool.idle;
        pool.idle = t->next;
        free(t);
    }
    while (pool.ended) {
        pool_thread *t = pool.ended;
        pool.ended = t->next;
        free(t);
    }
    pool.n_idle = pool.n_busy = 0;
    pthread_mutex_unlock(&pool.mu);
}

static void pool_at_exit(void)
{
    pq_pool_shutdown();
}

static void pool_init(void)
{
    pool.cores = pq_default_threads();
    pthread_atfork(pool_prepare_fork, pool_parent_fork, pool_child_fork);
    /* Registered after the sanitizers' leak check, so it runs before it. */
    atexit(pool_at_exit);
}

/* Joins the threads that have ended; called with the lock held, which it
 * lets go while it joins. */
static void reap_ended_locked(void)
{
    while (pool.ended) {
        pool_thread *list = pool.ended;
        pool.ended = NULL;
        pthread_mutex_unlock(&pool.mu);
        while (list) {
            pool_thread *t = list;
            list = t->next;
            pthread_join(t->tid, NULL);
            pthread_cond_destroy(&t->wake);
            free(t);
        }
        pthread_mutex_lock(&pool.mu);
    }
}

static int max_idle_now(void)
{
    return pool.max_idle > 0 ? pool.max_idle : PQ_POOL_IDLE_PER_CORE * pool.cores;
}

static void add_ms(struct timespec *ts, int ms)
{
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void unlink_idle(pool_thread *t)
{
    for (pool_thread **p = &pool.idle; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            pool.n_idle--;
            return;
        }
}

/* Runs workers until, parked, it gets none for the idle time (or the
 * cap is reached when its worker returns). */
static void *pool_thread_main(void *arg)
{
    pool_thread *t = arg;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        pq_workers *w = t->job;
        int worker = t->worker;
        t->job = NULL;
        pthread_mutex_unlock(&pool.mu);
        w->fn(w->ctx, worker);
        pthread_mutex_lock(&pool.mu);
        pool.n_busy--;
        /* The caller may free w as soon as running reaches 0 and the lock
         * is let go: w is not touched after this. */
        if (--w->running == 0) pthread_cond_broadcast(&w->done);
        if (pool.shut || pool.n_idle >= max_idle_now()) break;
        t->next = pool.idle;
        pool.idle = t;
        pool.n_idle++;
        struct timespec parked;
        clock_gettime(CLOCK_MONOTONIC, &parked);
        while (!t->job && !t->quit) {
            /* From the time it parked, under the idle time set now. */
            struct timespec deadline = parked;
            add_ms(&deadline, pool.idle_ms > 0 ? pool.idle_ms : PQ_POOL_IDLE_MS);
            if (pthread_cond_timedwait(&t->wake, &pool.mu, &deadline) == ETIMEDOUT && !t->job && !t->quit) {
                unlink_idle(t);
                break;
            }
        }
        if (!t->job) break; /* timed out or told to quit: off the list already */
    }
    pool.exited++;
    t->tid = pthread_self();
    t->next = pool.ended;
    pool.ended = t;
    pthread_cond_broadcast(&pool.ended_cv);
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* A new thread for worker `worker` of w; false when none can be made. */
static bool pool_thread_start(pq_workers *w, int worker)
{
    pool_thread *t = calloc(1, sizeof *t);
    if (!t) return false;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&t->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) {
        free(t);
        return false;
    }
    t->job = w;
    t->worker = worker;
    /* Joinable: an ended thread is joined by the next job's start or by
     * pq_pool_shutdown (reap_ended_locked). */
    /* Counted before it runs: it may return and be joined at once. */
    pthread_mutex_lock(&pool.mu);
    w->running++;
    pool.n_busy++;
    pool.created++;
    pool.workers_run++;
    pthread_mutex_unlock(&pool.mu);
    pthread_t tid;
    bool ok = pthread_create(&tid, NULL, pool_thread_main, t) == 0;
    if (!ok) {
        pthread_mutex_lock(&pool.mu);
        w->running--;
        pool.n_busy--;
        pool.created--;
        pool.workers_run--;
        pthread_mutex_unlock(&pool.mu);
        pthread_cond_destroy(&t->wake);
        free(t);
    }
    return ok;
}

int pq_workers_start(pq_workers *w, int n, void (*fn)(void *ctx, int worker), void *ctx)
{
    pthread_once(&pool_once, pool_init);
    w->fn = fn;
    w->ctx = ctx;
    w->started = 0;
    w->running = 0;
    pthread_cond_init(&w->done, NULL);
    pthread_mutex_lock(&pool.mu);
    reap_ended_locked();
    pool.jobs++;
    /* Parked threads first; never a busy one (threads.h). */
    while (w->started < n && pool.idle) {
        pool_thread *t = pool.idle;
        pool.idle = t->next;
        pool.n_idle--;
        t->job = w;
        t->worker = w->started++;
        w->running++;
        pool.n_busy++;
        pool.workers_run++;
        pthread_cond_signal(&t->wake);
    }
    pthread_mutex_unlock(&pool.mu);
    /* New threads for the rest, made outside the lock. */
    while (w->started < n && pool_thread_start(w, w->started)) w->started++;
    return w->started;
}

void pq_workers_join(pq_workers *w)
{
    pthread_mutex_lock(&pool.mu);
    while (w->running > 0) pthread_cond_wait(&w->done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_cond_destroy(&w->done);
}

void pq_pool_get_stats(pq_pool_stats *out)
{
    pthread_mutex_lock(&pool.mu);
    *out = (pq_pool_stats){
        .threads_created = pool.created,
        .threads_exited = pool.exited,
        .jobs = pool.jobs,
        .workers_run = pool.workers_run,
        .idle = pool.n_idle,
        .busy = pool.n_busy,
    };
    pthread_mutex_unlock(&pool.mu);
}

void pq_pool_set_idle_limits(int max_idle, int idle_ms)
{
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.mu);
    pool.max_idle = max_idle > 0 ? max_idle : 0;
    pool.idle_ms = idle_ms > 0 ? idle_ms : 0;
    /* Parked threads past a lowered cap exit now, and the others wait
     * again under the new idle time. */
    int keep = max_idle_now();
    for (pool_thread *t = pool.idle; t; t = t->next) pthread_cond_signal(&t->wake);
    while (pool.n_idle > keep) {
        pool_thread *t = pool.idle;
        pool.idle = t->next;
        pool.n_idle--;
        t->quit = true;
    }
    pthread_mutex_unlock(&pool.mu);
}

void pq_pool_shutdown(void)
{
    pthread_mutex_lock(&pool.mu);
    pool.shut = true;
    while (pool.idle) {
        pool_thread *t = pool.idle;
        pool.idle = t->next;
        pool.n_idle--;
        t->quit = true;
        pthread_cond_signal(&t->wake);
    }
    /* Every thread told to quit has ended once created - exited counts
     * only the busy ones (left alone: a job still running at exit). */
    while (pool.created - pool.exited > (uint64_t)pool.n_busy) pthread_cond_wait(&pool.ended_cv, &pool.mu);
    reap_ended_locked();
    pool.shut = false; /* later jobs park again (the tests go on) */
    pthread_mutex_unlock(&pool.mu);
}

/* ------------------------------------------------------------------ parallel for */

typedef struct parallel_for {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n, next;            /* next index to run (under mu) */
    pthread_mutex_t mu;
} parallel_for;

static void parallel_for_run(parallel_for *pf)
{
    for (;;) {
        pthread_mutex_lock(&pf->mu);
        size_t i = pf->next < pf->n ? pf->next++ : pf->n;
        pthread_mutex_unlock(&pf->mu);
        if (i == pf->n) return;
        pf->fn(pf->ctx, i);
    }
}

static void parallel_for_worker(void *ctx, int worker)
{
    (void)worker;
    parallel_for_run(ctx);
}

void pq_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
    parallel_for pf = {.fn = fn, .ctx = ctx, .n = n};
    pthread_mutex_init(&pf.mu, NULL);
    size_t want = threads > 1 ? (size_t)threads : 1;
    if (want > n) want = n;
    if (want > 65) want = 65;
    pq_workers w;
    pq_workers_start(&w, want > 1 ? (int)want - 1 : 0, parallel_for_worker, &pf);
    parallel_for_run(&pf);
    pq_workers_join(&w);
    pthread_mutex_destroy(&pf.mu);
}
