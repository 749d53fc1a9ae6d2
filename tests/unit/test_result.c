/* Results: bytes produced by a job and read while they grow.  Checks that
 * pq_result_peek waits for a whole range and points at the bytes in place
 * (file mode) or asks for a copy (memory mode), that a failed job's bytes
 * are served up to the failure, and that blocks reserved ahead of the
 * writes are given back when the job ends. */
#include "check.h"
#include "fdcache.h"
#include "result.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct paced_job {
    size_t piece, pieces;        /* writes `pieces` pieces of `piece` bytes */
    unsigned pause_us;           /* before each piece */
    bool fail_at_end;
} paced_job;

static char pattern_at(uint64_t i)
{
    return (char)('a' + (i * 7 + i / 251) % 26);
}

static int paced_run(void *ctx, const pq_sink *sink, pq_error *err)
{
    paced_job *j = ctx;
    char *buf = malloc(j->piece);
    if (!buf) return PQ_NOMEM(err);
    uint64_t at = 0;
    for (size_t p = 0; p < j->pieces; p++) {
        usleep(j->pause_us);
        for (size_t i = 0; i < j->piece; i++) buf[i] = pattern_at(at + i);
        if (sink->write(sink->ctx, buf, j->piece, err) != PQ_OK) {
            free(buf);
            return PQ_ERR;
        }
        at += j->piece;
    }
    free(buf);
    return j->fail_at_end ? pq_fail(err, PQ_E_CORRUPT, "test.parquet: a broken page") : PQ_OK;
}

static bool matches(const char *data, uint64_t off, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (data[i] != pattern_at(off + i)) return false;
    return true;
}

/* A descriptor of this process open on a file in dir, or -1. */
static int find_cache_fd(const char *dir)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int found = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = 0;
        if (strncmp(target, dir, strlen(dir)) == 0 && target[strlen(dir)] == '/') found = atoi(e->d_name);
    }
    closedir(d);
    return found;
}

/* The one result-* file in dir, opened read-only (-1: none, or several). */
static int open_cache_file(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    *count = 0;
    if (!d) return -1;
    int fd = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "result-", 7) != 0) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (fd >= 0) close(fd);
        fd = open(path, O_RDONLY);
        (*count)++;
    }
    closedir(d);
    return *count == 1 ? fd : -1;
}

static pq_result *start_paced(const char *dir, paced_job *j)
{
    pq_result *r = NULL;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_result_start(dir, 0, paced_run, j, NULL, &r, &err), PQ_OK);
    return r;
}

/* pq_result_peek, which must succeed; returns *n. */
static size_t peek_ok(pq_result *r, uint64_t off, size_t len, const char **data)
{
    size_t n = 0;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_result_peek(r, off, len, data, &n, NULL, NULL, &err), PQ_OK);
    return n;
}

/* pq_result_read of len bytes at off must succeed and copy exactly the
 * pattern's bytes there. */
static void check_read(pq_result *r, uint64_t off, size_t len)
{
    char *buf = malloc(len);
    size_t n = 0;
    pq_error err;
    pq_error_clear(&err);
    CHECK(buf != NULL);
    if (!buf) return;
    CHECK_EQ_INT(pq_result_read(r, buf, len, off, &n, NULL, NULL, &err), PQ_OK);
    CHECK_EQ_INT(n, len);
    CHECK(matches(buf, off, n));
    free(buf);
}

static void test_peek_file(const char *dir)
{
    paced_job j = {.piece = 1000, .pieces = 3, .pause_us = 20000};
    pq_result *r = start_paced(dir, &j);
    if (!r) return;
    const char *data;
    /* The whole range, though the first piece alone arrives 20 ms earlier. */
    size_t n = peek_ok(r, 0, 2500, &data);
    CHECK_EQ_INT(n, 2500);
    CHECK(data != NULL);
    CHECK(data && matches(data, 0, n));
    /* A range past the end: what is there, then the end of file. */
    n = peek_ok(r, 2500, 1000, &data);
    CHECK_EQ_INT(n, 500);
    CHECK(data && matches(data, 2500, n));
    CHECK_EQ_INT(peek_ok(r, 3000, 10, &data), 0);
    /* pq_result_read copies the same bytes. */
    check_read(r, 1200, 700);
    pq_result_unref(r);
}

static void test_peek_memory(void)
{
    paced_job j = {.piece = 4096, .pieces = 4, .pause_us = 1000};
    pq_result *r = start_paced(NULL, &j);
    if (!r) return;
    const char *data;
    /* A growing buffer moves: no pointer, but the bytes are there to copy. */
    size_t n = peek_ok(r, 100, 10000, &data);
    CHECK_EQ_INT(n, 10000);
    CHECK(data == NULL);
    check_read(r, 100, n);
    pq_result_unref(r);
}

static void test_failed_job(const char *dir)
{
    paced_job j = {.piece = 100, .pieces = 1, .fail_at_end = true};
    pq_result *r = start_paced(dir, &j);
    if (!r) return;
    const char *data;
    size_t n = peek_ok(r, 0, 1000, &data);
    CHECK_EQ_INT(n, 100);
    CHECK(data && matches(data, 0, n));
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_result_peek(r, 100, 1000, &data, &n, NULL, NULL, &err), PQ_ERR);
    CHECK(strstr(err.msg, "test.parquet: a broken page") != NULL);
    pq_result_unref(r);
}

/* 2.5 MiB written in 0.5 MiB pieces reserves 1 + 1 + 2 MiB ahead; the
 * unused 1.5 MiB past the end must be freed once the job is done. */
static void test_reserved_blocks_freed(const char *dir)
{
    paced_job j = {.piece = 512 << 10, .pieces = 5};
    pq_result *r = start_paced(dir, &j);
    if (!r) return;
    pq_result_state st;
    do {
        usleep(1000);
        pq_result_state_of(r, &st);
    } while (!st.done);
    CHECK(!st.failed);
    CHECK_EQ_INT(st.size, 5 * (512 << 10));
    int count;
    int fd = open_cache_file(dir, &count);
    CHECK(fd >= 0);
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0) {
        CHECK_EQ_INT(sb.st_size, (long long)st.size);
        /* Allocated (or delayed-allocated) bytes: the data, not 4 MiB. */
        CHECK((uint64_t)sb.st_blocks * 512 <= st.size + (64 << 10));
    }
    if (fd >= 0) close(fd);
    pq_result_unref(r);
}

/* A complete result holds no descriptor (before, each cached result kept
 * its cache file open, and thousands of small results held thousands):
 * reads and peeks of many complete results take descriptors from the
 * bounded set and reopen the file by its path, and the file goes with the
 * result. */
static void test_complete_results_hold_no_descriptor(const char *dir)
{
    enum { N = 40 };
    paced_job j = {.piece = 4096, .pieces = 3};
    pq_result *rs[N] = {0};
    pq_fd_set_budget(4);
    for (int i = 0; i < N; i++) {
        rs[i] = start_paced(dir, &j);
        if (!rs[i]) return;
        pq_error err;
        pq_error_clear(&err);
        CHECK_EQ_INT(pq_result_wait(rs[i], NULL, NULL, &err), PQ_OK);
    }
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            check_read(rs[i], 1000, 9000);
            const char *data = NULL;
            size_t n = peek_ok(rs[i], 5000, 3000, &data);
            CHECK_EQ_INT(n, 3000);
            CHECK(data && matches(data, 5000, n));
        }
    CHECK_EQ_INT(find_cache_fd(dir) >= 0 ? 1 : 0, 1); /* the set keeps a few */
    pq_fd_stats fs;
    pq_fd_stats_get(&fs);
    CHECK(fs.open <= 4);
    pq_fd_shed();
    CHECK_EQ_INT(find_cache_fd(dir), -1);
    int count;
    int fd = open_cache_file(dir, &count);
    if (fd >= 0) close(fd);
    CHECK_EQ_INT(count, N);
    for (int i = 0; i < N; i++) pq_result_unref(rs[i]);
    fd = open_cache_file(dir, &count);
    CHECK_EQ_INT(count, 0); /* each result's file went with it */
    pq_fd_set_budget(0);
}

/* A result's producer is joined once its job ended (pq_result_reap): an
 * ended thread left unjoined keeps its stack mapped for as long as the
 * result is kept (the soak's daemon held 5,394 of them after 200 s). */
static void test_reaped_results_hold_no_stack(const char *dir)
{
    enum { N = 40 };
    paced_job j = {.piece = 100, .pieces = 2};
    pq_result *rs[N] = {0};
    int before = check_stack_mappings();
    CHECK(before >= 0);
    for (int i = 0; i < N; i++) {
        rs[i] = start_paced(dir, &j);
        if (!rs[i]) return;
        pq_error err;
        pq_error_clear(&err);
        CHECK_EQ_INT(pq_result_wait(rs[i], NULL, NULL, &err), PQ_OK);
        pq_result_reap(rs[i]);
        pq_result_reap(rs[i]); /* once is enough; again is nothing */
        check_read(rs[i], 0, 200);
    }
    int after = check_stack_mappings();
    /* glibc keeps up to 40 MiB of ended threads' stacks for reuse */
    if (after - before > 6) fprintf(stderr, "%d results held %d thread stacks\n", N, after - before);
    CHECK(after - before <= 6);
    for (int i = 0; i < N; i++) pq_result_unref(rs[i]);
}

int main(void)
{
    char dir[] = "/tmp/pq-test-result-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_peek_file(dir);
    test_peek_memory();
    test_failed_job(dir);
    test_reserved_blocks_freed(dir);
    test_complete_results_hold_no_descriptor(dir);
    test_reaped_results_hold_no_stack(dir);
    rmdir(dir);
    return check_report();
}
