/* The thread pool (common/threads.c): a job's workers run concurrently
 * (each waits at a barrier for all the others and the caller), nested jobs
 * get threads of their own while every outer worker waits, threads are
 * reused from job to job, parked threads past the cap or idle too long exit,
 * pq_pool_shutdown waits until ended threads are gone, a forked child runs
 * jobs, and pq_parallel_for calls every index once.
 * Every wait is timed: a pool that queued workers behind busy threads, or
 * ran them one after the other, fails here instead of hanging. */
#include "check.h"
#include "threads.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BARRIER_WAIT_MS 5000

/* A barrier whose wait gives up after BARRIER_WAIT_MS (false then). */
typedef struct timed_barrier {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int parties, arrived;
} timed_barrier;

static void barrier_init(timed_barrier *b, int parties)
{
    pthread_mutex_init(&b->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&b->cv, &ca);
    pthread_condattr_destroy(&ca);
    b->parties = parties;
    b->arrived = 0;
}

static void barrier_destroy(timed_barrier *b)
{
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
}

static bool barrier_wait(timed_barrier *b)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += BARRIER_WAIT_MS / 1000;
    pthread_mutex_lock(&b->mu);
    if (++b->arrived == b->parties) pthread_cond_broadcast(&b->cv);
    int rc = 0;
    while (b->arrived < b->parties && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&b->cv, &b->mu, &until);
    bool all = b->arrived >= b->parties;
    pthread_mutex_unlock(&b->mu);
    return all;
}

/* ------------------------------------------------------------------ concurrency */

enum { MAX_WORKERS = 64 };

typedef struct barrier_job {
    timed_barrier b;
    atomic_int met;            /* workers that saw every party arrive */
    atomic_int calls;
    atomic_int seen[MAX_WORKERS]; /* per worker index: calls */
} barrier_job;

static void meet(void *ctx, int worker)
{
    barrier_job *j = ctx;
    atomic_fetch_add(&j->calls, 1);
    if (worker >= 0 && worker < MAX_WORKERS) atomic_fetch_add(&j->seen[worker], 1);
    if (barrier_wait(&j->b)) atomic_fetch_add(&j->met, 1);
}

/* n workers and the caller meet: every worker runs beside all the others
 * and beside the caller (the scan's consumer is the caller). */
static bool run_barrier_job(int n)
{
    barrier_job *j = calloc(1, sizeof *j);
    barrier_init(&j->b, n + 1);
    pq_workers w;
    int started = pq_workers_start(&w, n, meet, j);
    CHECK_EQ_INT(started, n);
    bool caller_met = barrier_wait(&j->b);
    pq_workers_join(&w);
    CHECK(caller_met);
    CHECK_EQ_INT(atomic_load(&j->met), n);
    CHECK_EQ_INT(atomic_load(&j->calls), n);
    bool each_once = true;
    for (int i = 0; i < n; i++) each_once &= atomic_load(&j->seen[i]) == 1;
    CHECK(each_once);
    bool ok = caller_met && atomic_load(&j->met) == n && started == n;
    barrier_destroy(&j->b);
    free(j);
    return ok;
}

static void test_workers_run_concurrently(void)
{
    /* More workers than cores, and more than the parked threads' cap. */
    int n = 4 * pq_default_threads() + 3;
    if (n > MAX_WORKERS) n = MAX_WORKERS;
    CHECK(run_barrier_job(n));
    CHECK(run_barrier_job(1));
    pq_workers w;
    CHECK_EQ_INT(pq_workers_start(&w, 0, meet, NULL), 0);
    pq_workers_join(&w);
}

/* ------------------------------------------------------------------ nesting */

enum { OUTER = 3, INNER = 3 };

typedef struct nested_job {
    timed_barrier all;         /* every outer and inner worker */
    atomic_int met;
    atomic_int inner_started;
    atomic_int items;          /* pq_parallel_for calls inside the workers */
} nested_job;

static void nested_inner(void *ctx, int worker)
{
    (void)worker;
    nested_job *j = ctx;
    if (barrier_wait(&j->all)) atomic_fetch_add(&j->met, 1);
}

static void count_item(void *ctx, size_t i)
{
    (void)i;
    nested_job *j = ctx;
    atomic_fetch_add(&j->items, 1);
}

/* Each outer worker starts a job of its own and then waits at the same
 * barrier as its inner workers: while all outer workers wait, the pool must
 * start the inner ones on other threads.  Then each runs a parallel_for,
 * as a scan worker's fetch does. */
static void nested_outer(void *ctx, int worker)
{
    (void)worker;
    nested_job *j = ctx;
    pq_workers w;
    atomic_fetch_add(&j->inner_started, pq_workers_start(&w, INNER, nested_inner, j));
    if (barrier_wait(&j->all)) atomic_fetch_add(&j->met, 1);
    pq_workers_join(&w);
    pq_parallel_for(16, 4, count_item, j);
}

static void test_nested_jobs(void)
{
    nested_job *j = calloc(1, sizeof *j);
    barrier_init(&j->all, OUTER * (INNER + 1));
    pq_workers w;
    CHECK_EQ_INT(pq_workers_start(&w, OUTER, nested_outer, j), OUTER);
    pq_workers_join(&w);
    CHECK_EQ_INT(atomic_load(&j->inner_started), OUTER * INNER);
    CHECK_EQ_INT(atomic_load(&j->met), OUTER * (INNER + 1));
    CHECK_EQ_INT(atomic_load(&j->items), OUTER * 16);
    barrier_destroy(&j->all);
    free(j);
}

/* ------------------------------------------------------------------ reuse and idle threads */

static void nothing(void *ctx, int worker)
{
    (void)ctx;
    (void)worker;
}

/* 100 jobs of 4 workers start at most 4 threads: each job's threads are
 * parked when it is joined, and the next takes them. */
static void test_threads_reused(void)
{
    pq_pool_set_idle_limits(8, 60000);
    pq_pool_stats a, b;
    pq_pool_get_stats(&a);
    for (int k = 0; k < 100; k++) {
        pq_workers w;
        CHECK_EQ_INT(pq_workers_start(&w, 4, nothing, NULL), 4);
        pq_workers_join(&w);
    }
    pq_pool_get_stats(&b);
    if (b.threads_created - a.threads_created > 4)
        fprintf(stderr, "100 jobs of 4 workers created %llu threads\n",
                (unsigned long long)(b.threads_created - a.threads_created));
    CHECK(b.threads_created - a.threads_created <= 4);
    CHECK_EQ_INT(b.jobs - a.jobs, 100);
    CHECK_EQ_INT(b.workers_run - a.workers_run, 400);
    CHECK_EQ_INT(b.busy, 0);
    CHECK(b.idle >= 4);
    /* pq_parallel_for runs on the same parked threads (3 beside the caller). */
    nested_job nj = {0};
    for (int k = 0; k < 50; k++) pq_parallel_for(8, 4, count_item, &nj);
    pq_pool_get_stats(&a);
    CHECK_EQ_INT(atomic_load(&nj.items), 400);
    CHECK_EQ_INT(a.threads_created, b.threads_created);
}

/* Threads parked past the cap exit when their worker returns. */
static void test_idle_cap(void)
{
    pq_pool_set_idle_limits(2, 60000);
    pq_pool_stats a, b;
    pq_pool_get_stats(&a);
    CHECK(a.idle <= 2); /* a lowered cap lets the extra parked threads go */
    CHECK(run_barrier_job(6)); /* six threads at once */
    pq_pool_get_stats(&b);
    CHECK_EQ_INT(b.idle, 2);
    CHECK_EQ_INT(b.busy, 0);
    CHECK(b.threads_exited - a.threads_exited >= 4);
}

/* A parked thread exits after the idle time. */
static void test_idle_timeout(void)
{
    pq_pool_set_idle_limits(8, 100);
    CHECK(run_barrier_job(3));
    pq_pool_stats s;
    pq_pool_get_stats(&s);
    CHECK(s.idle >= 3);
    for (int k = 0; k < 100 && s.idle > 0; k++) {
        usleep(20000);
        pq_pool_get_stats(&s);
    }
    CHECK_EQ_INT(s.idle, 0);
    /* and the pool starts threads again after */
    CHECK(run_barrier_job(3));
    pq_pool_set_idle_limits(0, 0);
}

/* A worker's thread-local state is freed by its destructor when the thread
 * ends; pq_pool_shutdown (what runs at exit) returns only once that has
 * happened for every thread that was not busy.  The destructor here is slow
 * on purpose: a pool whose threads were detached, or whose shutdown waited
 * only for them to leave their loop, returns while it still runs (as a
 * process exiting then left libcrypto's per-thread error queue half freed,
 * which LeakSanitizer reported). */
static pthread_key_t slow_key;
static atomic_int slow_destructors_done;

static void slow_destructor(void *p)
{
    usleep(200000);
    free(p);
    atomic_fetch_add(&slow_destructors_done, 1);
}

static void set_thread_local(void *ctx, int worker)
{
    (void)ctx;
    (void)worker;
    pthread_setspecific(slow_key, malloc(16));
}

static void test_shutdown_waits_for_thread_ends(void)
{
    CHECK_EQ_INT(pthread_key_create(&slow_key, slow_destructor), 0);
    pq_pool_set_idle_limits(8, 60000);
    pq_workers w;
    CHECK_EQ_INT(pq_workers_start(&w, 3, set_thread_local, NULL), 3);
    pq_workers_join(&w);
    pq_pool_stats s;
    pq_pool_get_stats(&s);
    CHECK(s.idle >= 3);
    pq_pool_shutdown();
    CHECK_EQ_INT(atomic_load(&slow_destructors_done), 3);
    pq_pool_get_stats(&s);
    CHECK_EQ_INT(s.idle, 0);
    CHECK_EQ_INT(s.busy, 0);
    CHECK_EQ_INT(s.threads_created, s.threads_exited);
    /* and jobs run (and park) after it */
    CHECK(run_barrier_job(2));
    pq_pool_get_stats(&s);
    CHECK(s.idle >= 2);
    pq_pool_set_idle_limits(0, 0);
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/* A forked child has none of the parked threads: its jobs still run.  (Not
 * under ThreadSanitizer, which ends a multi-threaded process's child when
 * it starts a thread.) */
static void test_fork(void)
{
#ifdef UNDER_TSAN
    return;
#endif
    pq_pool_set_idle_limits(8, 60000);
    CHECK(run_barrier_job(3));
    pq_pool_stats s;
    pq_pool_get_stats(&s);
    CHECK(s.idle >= 3);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(20);
        int before = check_failures;
        bool ok = run_barrier_job(3);
        _exit(ok && check_failures == before ? 0 : 1);
    }
    int status = 0;
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pq_pool_set_idle_limits(0, 0);
}

/* ------------------------------------------------------------------ parallel_for */

typedef struct count_job {
    atomic_int hits[200];
} count_job;

static void hit(void *ctx, size_t i)
{
    count_job *j = ctx;
    atomic_fetch_add(&j->hits[i], 1);
}

static void test_parallel_for(void)
{
    size_t ns[] = {0, 1, 7, 200};
    int threads[] = {0, 1, 3, 100};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof threads / sizeof *threads; b++) {
            count_job *j = calloc(1, sizeof *j);
            pq_parallel_for(ns[a], threads[b], hit, j);
            bool once = true;
            for (size_t i = 0; i < 200; i++) once &= atomic_load(&j->hits[i]) == (i < ns[a] ? 1 : 0);
            CHECK(once);
            free(j);
        }
}

int main(void)
{
    alarm(240); /* a hang is a failure, before ctest's timeout */
    test_workers_run_concurrently();
    test_nested_jobs();
    test_threads_reused();
    test_idle_cap();
    test_idle_timeout();
    test_shutdown_waits_for_thread_ends();
    test_fork();
    test_parallel_for();
    return check_report();
}
