/* pq_fetch_ranges: nearby ranges merged into one read, the merged reads
 * made one after another or several at a time (parallel_reads, as remote
 * files do), the same bytes either way; a failed read fails the fetch with
 * its error and leaves nothing allocated (ASan checks). */
#include "check.h"

#include <stdlib.h>
#include <time.h>

#include "io.h"
#include "rowgroup.h"

#define FILE_SIZE (1u << 20)

static uint8_t byte_at(uint64_t off)
{
    return (uint8_t)(off * 2654435761u >> 13);
}

/* Counts the reads made and checks they never overlap in time more than
 * the file allows: a wrapper around the memory file. */
typedef struct counting_file {
    pq_file base;
    pq_file *inner;
    _Atomic int reads, in_flight, most_in_flight;
} counting_file;

static int counting_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err)
{
    counting_file *cf = (counting_file *)f;
    atomic_fetch_add(&cf->reads, 1);
    int now = atomic_fetch_add(&cf->in_flight, 1) + 1;
    for (int most = atomic_load(&cf->most_in_flight); now > most;)
        if (atomic_compare_exchange_weak(&cf->most_in_flight, &most, now)) break;
    /* Long enough that reads started together overlap. */
    struct timespec ts = {0, 20 * 1000000};
    nanosleep(&ts, NULL);
    int rc = pq_read_at(cf->inner, buf, len, off, err);
    atomic_fetch_sub(&cf->in_flight, 1);
    return rc;
}

static int counting_size(pq_file *f, uint64_t *out, pq_error *err)
{
    return ((counting_file *)f)->inner->ops->size(((counting_file *)f)->inner, out, err);
}

static void counting_close(pq_file *f)
{
    counting_file *cf = (counting_file *)f;
    pq_file_close(cf->inner);
    free(cf);
}

static const pq_file_ops counting_ops = {counting_read_at, counting_size, counting_close};

static counting_file *counting_open(const uint8_t *data, int parallel_reads)
{
    pq_error err;
    counting_file *cf = calloc(1, sizeof *cf);
    if (!cf || pq_file_open_mem("mem", data, FILE_SIZE, &cf->inner, &err) != PQ_OK) {
        free(cf);
        return NULL;
    }
    cf->base.ops = &counting_ops;
    cf->base.name = cf->inner->name;
    cf->base.merge_gap = 4096;
    cf->base.parallel_reads = parallel_reads;
    return cf;
}

/* Ranges out of order, two pairs close enough to merge: 5 reads. */
static const pq_byte_range want[] = {
    {700000, 1000, NULL}, {10, 100, NULL},     {200, 50, NULL},  {300000, 4096, NULL},
    {900000, 77, NULL},   {500000, 1, NULL},   {704000, 10, NULL}, {0, 0, NULL},
};
#define N_WANT ((int32_t)(sizeof want / sizeof want[0]))

static bool covers_with_file_bytes(const pq_byte_range *got, int32_t n)
{
    for (int32_t w = 0; w < N_WANT; w++) {
        if (want[w].len == 0) continue;
        bool found = false;
        for (int32_t i = 0; i < n && !found; i++) {
            if (want[w].off < got[i].off || want[w].off + want[w].len > got[i].off + got[i].len) continue;
            found = true;
            for (uint64_t k = 0; k < want[w].len; k++)
                if (got[i].data[want[w].off - got[i].off + k] != byte_at(want[w].off + k)) return false;
        }
        if (!found) return false;
    }
    return true;
}

static void test_fetch(const uint8_t *data, int parallel_reads)
{
    counting_file *cf = counting_open(data, parallel_reads);
    CHECK(cf != NULL);
    if (!cf) return;
    pq_byte_range *got = NULL;
    int32_t n = 0;
    uint64_t bytes = 0;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_fetch_ranges(&cf->base, want, N_WANT, cf->base.merge_gap, NULL, 0, &got, &n, &bytes, &err), PQ_OK);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(atomic_load(&cf->reads), 5);
    CHECK_EQ_INT(bytes, 240 + 4096 + 1 + 4010 + 77);
    for (int32_t i = 1; i < n; i++) CHECK(got[i - 1].off + got[i - 1].len < got[i].off);
    CHECK(covers_with_file_bytes(got, n));
    if (parallel_reads > 1) CHECK(atomic_load(&cf->most_in_flight) > 1);
    else CHECK_EQ_INT(atomic_load(&cf->most_in_flight), 1);
    pq_free_ranges(got, n);
    pq_file_close(&cf->base);
}

/* The third read fails: the fetch fails with that error, whatever order the
 * reads ran in, and frees what it had. */
static void test_fetch_fails(const uint8_t *data, int parallel_reads)
{
    counting_file *cf = counting_open(data, 0);
    CHECK(cf != NULL);
    if (!cf) return;
    pq_fault_plan plan;
    pq_fault_plan_init(&plan);
    plan.fail_read_after = 2;
    pq_file *faulty;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_file_wrap_faulty(&cf->base, &plan, &faulty, &err), PQ_OK);
    faulty->parallel_reads = parallel_reads;
    pq_byte_range *got = (pq_byte_range *)1;
    int32_t n = -1;
    CHECK_EQ_INT(pq_fetch_ranges(faulty, want, N_WANT, 4096, NULL, 0, &got, &n, NULL, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_IO);
    CHECK(strstr(err.msg, "injected I/O error") != NULL);
    CHECK(got == NULL);
    CHECK_EQ_INT(n, 0);
    pq_file_close(faulty);
}

/* Two ranges close enough to merge, with bytes fetched already between
 * them (the filter column's chunk, when the projection is fetched): two
 * reads, not one that downloads those bytes again; without them, one. */
static void test_fetch_around_fetched(const uint8_t *data)
{
    static const pq_byte_range around[] = {{1000, 100, NULL}, {3000, 100, NULL}};
    static const pq_byte_range fetched[] = {{1500, 1000, NULL}};
    for (int with = 0; with < 2; with++) {
        counting_file *cf = counting_open(data, 0);
        CHECK(cf != NULL);
        if (!cf) return;
        pq_byte_range *got = NULL;
        int32_t n = 0;
        uint64_t bytes = 0;
        pq_error err;
        CHECK_EQ_INT(pq_fetch_ranges(&cf->base, around, 2, 4096, with ? fetched : NULL, with ? 1 : 0, &got, &n, &bytes,
                                     &err),
                     PQ_OK);
        CHECK_EQ_INT(n, with ? 2 : 1);
        CHECK_EQ_INT(bytes, with ? 200 : 2100);
        pq_free_ranges(got, n);
        pq_file_close(&cf->base);
    }
}

int main(void)
{
    uint8_t *data = malloc(FILE_SIZE);
    if (!data) return 1;
    for (uint64_t i = 0; i < FILE_SIZE; i++) data[i] = byte_at(i);
    test_fetch(data, 0);
    test_fetch(data, 4);
    test_fetch_fails(data, 0);
    test_fetch_fails(data, 4);
    test_fetch_around_fetched(data);
    free(data);
    return check_report();
}
