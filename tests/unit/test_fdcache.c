/* The descriptor set of lake files (engine/io/fdcache.c) and the local files on
 * it (engine/io/io.c): more files open than the budget hold no more descriptors
 * than the budget, and read right after their descriptors were closed; a
 * file replaced, rewritten or removed after its descriptor was closed is
 * never read as the old one (PQ_E_STALE); a pinned descriptor survives any
 * eviction; concurrent readers of more files than the budget read right
 * bytes; an open that finds the process out of descriptors closes the set's
 * and succeeds.  (tests/mount/fds.sh scans tables of 25,000 files.) */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fdcache.h"
#include "io.h"

static char dir[] = "/tmp/pq_fdcache_XXXXXX";

/* The content of file i: its number repeated, `len` bytes. */
static void content_of(int i, char *buf, size_t len)
{
    for (size_t k = 0; k < len; k++) buf[k] = (char)('a' + (i * 7 + (int)k) % 26);
}

#define FILE_LEN 4096

static void write_file(const char *name, int i, size_t len)
{
    char path[512], buf[FILE_LEN];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    content_of(i, buf, len);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(fwrite(buf, 1, len, f), len);
    fclose(f);
}

/* Descriptors of this process open on files under dir. */
static int fds_in_dir(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    char link[600], target[600];
    while ((e = readdir(d)) != NULL) {
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0) continue;
        target[k] = '\0';
        n += strncmp(target, dir, strlen(dir)) == 0 && target[strlen(dir)] == '/';
    }
    closedir(d);
    return n;
}

static bool reads_as(pq_file *f, int i, size_t len)
{
    char want[FILE_LEN], got[FILE_LEN];
    pq_error err;
    pq_error_clear(&err);
    content_of(i, want, len);
    if (pq_read_at(f, got, len, 0, &err) != PQ_OK) {
        fprintf(stderr, "read %s: %s\n", f->name, err.msg);
        return false;
    }
    return memcmp(got, want, len) == 0;
}

#define N_FILES 40

static void open_all(pq_store *st, pq_file **files, int n)
{
    pq_error err;
    pq_error_clear(&err);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%02d", i);
        files[i] = NULL;
        CHECK_EQ_INT(st->ops->open(st, name, &files[i], &err), PQ_OK);
    }
}

static void close_all(pq_file **files, int n)
{
    for (int i = 0; i < n; i++) pq_file_close(files[i]);
}

/* 40 files open, budget 4: 4 descriptors, every file reads right, reopened. */
static void test_eviction_and_reopen(pq_store *st)
{
    pq_fd_set_budget(4);
    pq_file *files[N_FILES];
    open_all(st, files, N_FILES);
    pq_fd_stats s0;
    pq_fd_stats_get(&s0);
    CHECK_EQ_INT(s0.open, 4);
    CHECK_EQ_INT(fds_in_dir(), 4);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N_FILES; i++) {
            CHECK(files[i] && reads_as(files[i], i, FILE_LEN));
            CHECK(fds_in_dir() <= 4);
        }
    pq_fd_stats s1;
    pq_fd_stats_get(&s1);
    CHECK(s1.reopens - s0.reopens >= 2 * N_FILES - 4);
    uint64_t size = 0;
    pq_error err;
    CHECK_EQ_INT(pq_file_size(files[7], &size, &err), PQ_OK);
    CHECK_EQ_INT(size, FILE_LEN);
    /* The most recently used stay open: the same file read again is not
     * reopened. */
    CHECK(reads_as(files[3], 3, 16));
    pq_fd_stats_get(&s0);
    for (int k = 0; k < 10; k++) CHECK(reads_as(files[3], 3, 16));
    pq_fd_stats_get(&s1);
    CHECK_EQ_INT(s1.reopens, s0.reopens);
    close_all(files, N_FILES);
    pq_fd_stats_get(&s1);
    CHECK_EQ_INT(s1.open, 0);
    CHECK_EQ_INT(fds_in_dir(), 0);
    pq_fd_set_budget(0);
}

/* Sets the mtime of `name` to what `like` had (a struct stat of it). */
static void set_mtime(const char *path, const struct stat *like)
{
    struct timespec ts[2] = {like->st_atim, like->st_mtim};
    CHECK_EQ_INT(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Renames a new file of content i over `name`; with same_mtime, given the
 * replaced file's mtime (only its inode tells them apart). */
static void replace_with(const char *name, int i, size_t len, bool same_mtime)
{
    char tmp[512], path[512];
    write_file("replacement.tmp", i, len);
    snprintf(tmp, sizeof tmp, "%s/replacement.tmp", dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat old;
    CHECK_EQ_INT(stat(path, &old), 0);
    if (same_mtime) set_mtime(tmp, &old);
    CHECK_EQ_INT(rename(tmp, path), 0);
}

static void expect_stale(pq_file *f)
{
    char buf[FILE_LEN];
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_read_at(f, buf, 16, 0, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_STALE);
    CHECK(strstr(err.msg, "changed since it was listed") != NULL);
    CHECK(strstr(err.msg, f->name) != NULL);
}

/* A file whose descriptor was closed and that is no longer the file first
 * opened fails its reads: replaced by a rename (even with the same bytes),
 * rewritten in place to another size, touched to another mtime, removed.
 * One whose descriptor is still open reads as it was. */
static void test_replaced_on_reopen(pq_store *st)
{
    pq_file *files[6];
    open_all(st, files, 6);
    for (int i = 0; i < 6; i++) CHECK(files[i] && reads_as(files[i], i, FILE_LEN));
    CHECK(pq_fd_shed() >= 5);
    replace_with("f00", 0, FILE_LEN, true); /* same bytes and mtime, another inode */
    char path[512];
    struct stat old;
    snprintf(path, sizeof path, "%s/f01", dir);
    CHECK_EQ_INT(stat(path, &old), 0);
    write_file("f01", 1, FILE_LEN / 2); /* same inode and mtime, another size */
    set_mtime(path, &old);
    snprintf(path, sizeof path, "%s/f02", dir);
    struct timespec ts[2] = {{1000000000, 5}, {1000000000, 5}};
    CHECK_EQ_INT(utimensat(AT_FDCWD, path, ts, 0), 0); /* same bytes, another mtime */
    snprintf(path, sizeof path, "%s/f03", dir);
    CHECK_EQ_INT(unlink(path), 0);
    for (int i = 0; i < 4; i++) CHECK(files[i] != NULL);
    for (int i = 0; i < 4; i++) if (files[i]) expect_stale(files[i]);
    /* f04 untouched: reopens and reads. */
    CHECK(reads_as(files[4], 4, FILE_LEN));
    /* f05 replaced while its descriptor is open: the old file, consistently. */
    CHECK(reads_as(files[5], 5, FILE_LEN));
    replace_with("f05", 30, FILE_LEN, false);
    CHECK(reads_as(files[5], 5, FILE_LEN));
    close_all(files, 6);
    /* The lake as it is now opens anew. */
    write_file("f01", 1, FILE_LEN);
    write_file("f03", 3, FILE_LEN);
    write_file("f02", 2, FILE_LEN);
    write_file("f05", 5, FILE_LEN);
}

static char f10_path[512];

static int open_f10(void *ctx, pq_error *err)
{
    int *calls = ctx;
    if (calls) (*calls)++;
    int fd = open(f10_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) pq_fail(err, PQ_E_IO, "%s: cannot open", f10_path);
    return fd;
}

typedef struct opener {
    pq_fd_slot slot;
    _Atomic int done;
} opener;

static void *open_in_thread(void *arg)
{
    opener *o = arg;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_fd_slot_open(&o->slot, open_f10, NULL, &err), PQ_OK);
    atomic_store(&o->done, 1);
    return NULL;
}

/* A pinned descriptor outlives sheds and budget cuts; an open that finds
 * every descriptor of the set pinned waits for an unpin, then closes the
 * unpinned one; the closed one is reopened by its next pin. */
static void test_pinned_never_closed(void)
{
    snprintf(f10_path, sizeof f10_path, "%s/f10", dir);
    pq_error err;
    pq_error_clear(&err);
    pq_fd_set_budget(2);
    pq_fd_slot a, b;
    CHECK_EQ_INT(pq_fd_slot_open(&a, open_f10, NULL, &err), PQ_OK);
    int fd = pq_fd_slot_pin(&a, open_f10, NULL, &err);
    CHECK(fd >= 0);
    CHECK_EQ_INT(pq_fd_slot_open(&b, open_f10, NULL, &err), PQ_OK);
    CHECK_EQ_INT(pq_fd_shed(), 1); /* b, not the pinned a */
    CHECK_EQ_INT(b.fd, -1);
    pq_fd_set_budget(1);
    opener c = {.done = 0};
    pthread_t t;
    CHECK_EQ_INT(pthread_create(&t, NULL, open_in_thread, &c), 0);
    usleep(100 * 1000);
    CHECK_EQ_INT(atomic_load(&c.done), 0); /* waits: the one descriptor is pinned */
    CHECK_EQ_INT(a.fd, fd);
    CHECK(fcntl(fd, F_GETFD) >= 0);
    char ch;
    CHECK_EQ_INT(pread(fd, &ch, 1, 0), 1);
    /* Pinned twice (two readers), unpinned once: still pinned. */
    CHECK_EQ_INT(pq_fd_slot_pin(&a, open_f10, NULL, &err), fd);
    pq_fd_slot_unpin(&a);
    usleep(20 * 1000);
    CHECK_EQ_INT(atomic_load(&c.done), 0);
    pq_fd_slot_unpin(&a);
    pthread_join(t, NULL);
    CHECK_EQ_INT(atomic_load(&c.done), 1);
    CHECK_EQ_INT(a.fd, -1); /* closed to make room for c */
    CHECK(c.slot.fd >= 0);
    pq_fd_stats s;
    pq_fd_stats_get(&s);
    CHECK_EQ_INT(s.open, 1);
    int calls = 0;
    fd = pq_fd_slot_pin(&a, open_f10, &calls, &err);
    CHECK(fd >= 0);
    CHECK_EQ_INT(calls, 1);
    CHECK_EQ_INT(c.slot.fd, -1);
    CHECK_EQ_INT(pread(fd, &ch, 1, 0), 1);
    pq_fd_slot_unpin(&a);
    pq_fd_set_budget(0);
    pq_fd_slot_close(&a);
    pq_fd_slot_close(&b);
    pq_fd_slot_close(&c.slot);
    pq_fd_stats_get(&s);
    CHECK_EQ_INT(s.open, 0);
}

/* An open_fn that waits for a gate: two opens in progress fill a budget
 * of 2 with descriptors that are not yet on the list. */
static _Atomic int gate_open;

static int open_f10_gated(void *ctx, pq_error *err)
{
    while (!atomic_load(&gate_open)) usleep(1000);
    return open_f10(ctx, err);
}

typedef struct gated_opener {
    pq_fd_slot slot;
    pq_fd_open_fn fn;
    _Atomic int done;
} gated_opener;

static void *gated_open_in_thread(void *arg)
{
    gated_opener *o = arg;
    pq_error err;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_fd_slot_open(&o->slot, o->fn, NULL, &err), PQ_OK);
    atomic_store(&o->done, 1);
    return NULL;
}

/* An open waiting for room wakes when another open's new descriptor lands
 * unpinned on the list (it may close it): before, it slept until some
 * later unpin, and a scan whose other files were never read hung. */
static void test_open_wakes_waiter(void)
{
    snprintf(f10_path, sizeof f10_path, "%s/f10", dir);
    pq_fd_set_budget(2);
    atomic_store(&gate_open, 0);
    gated_opener a = {.fn = open_f10_gated}, b = {.fn = open_f10_gated}, c = {.fn = open_f10};
    pthread_t ta, tb, tc;
    CHECK_EQ_INT(pthread_create(&ta, NULL, gated_open_in_thread, &a), 0);
    CHECK_EQ_INT(pthread_create(&tb, NULL, gated_open_in_thread, &b), 0);
    usleep(50 * 1000);
    CHECK_EQ_INT(pthread_create(&tc, NULL, gated_open_in_thread, &c), 0);
    usleep(50 * 1000);
    CHECK_EQ_INT(atomic_load(&c.done), 0); /* both descriptors are being opened */
    atomic_store(&gate_open, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    for (int i = 0; i < 2000 && !atomic_load(&c.done); i++) usleep(1000);
    int woke = atomic_load(&c.done);
    CHECK_EQ_INT(woke, 1);
    if (!woke) pq_fd_shed(); /* let the thread end */
    pthread_join(tc, NULL);
    pq_fd_stats s;
    pq_fd_stats_get(&s);
    CHECK(s.open <= 2);
    pq_fd_slot_close(&a.slot);
    pq_fd_slot_close(&b.slot);
    pq_fd_slot_close(&c.slot);
    pq_fd_set_budget(0);
    pq_fd_stats_get(&s);
    CHECK_EQ_INT(s.open, 0);
}

typedef struct reader_ctx {
    pq_file **files;
    unsigned seed;
    int bad;
    int over;                /* samples of more descriptors than the budget */
} reader_ctx;

#define N_READERS 8
#define BUDGET 3

static void *reader_main(void *arg)
{
    reader_ctx *r = arg;
    char want[FILE_LEN], got[FILE_LEN];
    for (int k = 0; k < 3000; k++) {
        int i = (int)(rand_r(&r->seed) % N_FILES);
        size_t off = rand_r(&r->seed) % (FILE_LEN - 1), len = 1 + rand_r(&r->seed) % (FILE_LEN - off);
        pq_error err;
        pq_error_clear(&err);
        content_of(i, want, FILE_LEN);
        if (pq_read_at(r->files[i], got, len, off, &err) != PQ_OK || memcmp(got, want + off, len) != 0) r->bad++;
        pq_fd_stats s;
        pq_fd_stats_get(&s);
        r->over += s.open > BUDGET;
    }
    return NULL;
}

/* 8 threads reading 40 files at random, budget 3: every read right, never
 * more descriptors than the budget (readers wait for one). */
static void test_concurrent_readers(pq_store *st)
{
    pq_fd_set_budget(BUDGET);
    pq_file *files[N_FILES];
    open_all(st, files, N_FILES);
    pthread_t t[N_READERS];
    reader_ctx r[N_READERS];
    for (int i = 0; i < N_READERS; i++) {
        r[i] = (reader_ctx){.files = files, .seed = (unsigned)i + 1};
        CHECK_EQ_INT(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
    }
    for (int i = 0; i < N_READERS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ_INT(r[i].bad, 0);
        CHECK_EQ_INT(r[i].over, 0);
    }
    pq_fd_stats s;
    pq_fd_stats_get(&s);
    CHECK(s.open <= BUDGET);
    CHECK(fds_in_dir() <= BUDGET);
    close_all(files, N_FILES);
    pq_fd_set_budget(0);
}

/* With the process out of descriptors (its soft limit just above what it
 * holds) and a budget above that, opens close the set's own and succeed. */
static void test_out_of_descriptors(pq_store *st)
{
    struct rlimit saved, low;
    CHECK_EQ_INT(getrlimit(RLIMIT_NOFILE, &saved), 0);
    int highest = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK(highest >= 0);
    close(highest);
    pq_fd_set_budget(1000);
    low = saved;
    low.rlim_cur = (rlim_t)highest + 6;
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    pq_file *files[N_FILES];
    open_all(st, files, N_FILES);
    for (int i = 0; i < N_FILES; i++) CHECK(files[i] && reads_as(files[i], i, FILE_LEN));
    close_all(files, N_FILES);
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &saved), 0);
    pq_fd_set_budget(0);
}

/* The default budget: a quarter of the soft limit, within its bounds. */
static void test_default_budget(void)
{
    struct rlimit saved, rl;
    CHECK_EQ_INT(getrlimit(RLIMIT_NOFILE, &saved), 0);
    rl = saved;
    rl.rlim_cur = 1024;
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
    pq_fd_set_budget(0);
    CHECK_EQ_INT(pq_fd_budget(), 256);
    rl.rlim_cur = 8;
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &rl), 0);
    pq_fd_set_budget(0);
    CHECK_EQ_INT(pq_fd_budget(), PQ_FD_BUDGET_MIN);
    /* Raised to the hard limit: derived again from it. */
    CHECK_EQ_INT(pq_fd_raise_limit(), saved.rlim_max);
    CHECK_EQ_INT(pq_fd_budget(), saved.rlim_max / 4 > PQ_FD_BUDGET_MAX ? PQ_FD_BUDGET_MAX : saved.rlim_max / 4);
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &saved), 0);
    pq_fd_set_budget(0);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    for (int i = 0; i < N_FILES; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%02d", i);
        write_file(name, i, FILE_LEN);
    }
    pq_error err;
    pq_error_clear(&err);
    pq_store *st = NULL;
    CHECK_EQ_INT(pq_store_local_new(dir, &st, &err), PQ_OK);
    if (st) {
        test_eviction_and_reopen(st);
        test_replaced_on_reopen(st);
        test_pinned_never_closed();
        test_open_wakes_waiter();
        test_concurrent_readers(st);
        test_out_of_descriptors(st);
        pq_store_destroy(st);
    }
    test_default_budget();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
    return check_report();
}
