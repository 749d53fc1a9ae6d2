#include "threads.h"

#include <pthread.h>
#include <unistd.h>

int pq_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

typedef struct parallel_for {
    void (*fn)(void *ctx, size_t i);
    void *ctx;
    size_t n, next;            /* next index to run (under mu) */
    pthread_mutex_t mu;
} parallel_for;

static void *parallel_for_run(void *arg)
{
    parallel_for *pf = arg;
    for (;;) {
        pthread_mutex_lock(&pf->mu);
        size_t i = pf->next < pf->n ? pf->next++ : pf->n;
        pthread_mutex_unlock(&pf->mu);
        if (i == pf->n) return NULL;
        pf->fn(pf->ctx, i);
    }
}

void pq_parallel_for(size_t n, int threads, void (*fn)(void *ctx, size_t i), void *ctx)
{
    parallel_for pf = {.fn = fn, .ctx = ctx, .n = n};
    pthread_mutex_init(&pf.mu, NULL);
    pthread_t tids[64];
    size_t want = threads > 1 ? (size_t)threads : 1;
    if (want > n) want = n;
    if (want > sizeof tids / sizeof *tids + 1) want = sizeof tids / sizeof *tids + 1;
    size_t started = 0;
    while (started + 1 < want && pthread_create(&tids[started], NULL, parallel_for_run, &pf) == 0) started++;
    parallel_for_run(&pf);
    for (size_t i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&pf.mu);
}
