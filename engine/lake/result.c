#include "result.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdcache.h"
#include "io.h"

/* The cache file is mapped read-only in windows of this size, made when a
 * reader first needs one and kept until the result is freed, so pointers
 * into them stay valid while a reader holds a reference. */
#define MAP_WINDOW ((uint64_t)256 << 20)
#define MAP_WINDOWS_MAX 4096

struct pq_result {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* bytes arrived, job ended, reader moved */
    int refs;
    int fd;                      /* the producer's: -1 once done (or memory) */
    int fd_users;                /* readers using fd outside mu */
    char *path;                  /* the cache file (NULL: memory) */
    pq_fd_slot slot;             /* a complete result's descriptor (fdcache.h) */
    pq_buf mem;
    uint64_t size;
    uint64_t read_hwm;           /* furthest byte a reader asked for */
    uint64_t wake_at;            /* a waiting reader needs size >= this */
    uint64_t reserved_end;       /* the file's blocks are allocated up to here */
    bool no_reserve;             /* the file system cannot (fallocate failed) */
    char **windows;              /* MAP_WINDOW mappings of the file, or NULL */
    size_t n_windows;
    uint64_t ahead;
    bool done, failed, cancelled;
    pq_error err;
    pthread_t thread;
    bool thread_started;
    bool reaping;                /* pq_result_reap is joining the thread */
    pq_result_job job;
    void *ctx;
    void (*ctx_free)(void *);
};

/* Allocates the cache file's blocks ahead of the writes, in steps that grow
 * with the result (1 to 64 MiB): buffered writes into allocated blocks skip
 * ext4's per-page delayed-allocation bookkeeping, a quarter of a write's
 * system time.  Blocks left past the end are freed when the job ends. */
static void reserve_blocks(pq_result *r, uint64_t end)
{
    if (r->no_reserve || end <= r->reserved_end) return;
    uint64_t step = r->reserved_end < (1u << 20) ? (1u << 20) : r->reserved_end;
    if (step > (64u << 20)) step = 64u << 20;
    if (end > r->reserved_end + step) step = end - r->reserved_end;
    if (fallocate(r->fd, FALLOC_FL_KEEP_SIZE, (off_t)r->reserved_end, (off_t)step) != 0) {
        r->no_reserve = true; /* not supported, or the disk is full: pwrite says which */
        return;
    }
    r->reserved_end += step;
}

static int result_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    pq_result *r = ctx;
    pthread_mutex_lock(&r->mu);
    /* Stay at most `ahead` bytes in front of the readers. */
    while (!r->cancelled && r->size > r->read_hwm + r->ahead) pthread_cond_wait(&r->cv, &r->mu);
    bool cancelled = r->cancelled;
    uint64_t at = r->size;
    pthread_mutex_unlock(&r->mu);
    if (cancelled) return pq_fail(err, PQ_E_CANCELLED, "result cancelled");
    if (r->fd >= 0) {
        reserve_blocks(r, at + len);
        size_t done = 0;
        while (done < len) {
            ssize_t n = pwrite(r->fd, data + done, len - done, (off_t)(at + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                return pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "cache file write failed: %s",
                               strerror(errno));
            }
            done += (size_t)n;
        }
    } else {
        pthread_mutex_lock(&r->mu);
        int rc = pq_buf_append(&r->mem, data, len);
        pthread_mutex_unlock(&r->mu);
        if (rc) return pq_fail(err, PQ_E_NOMEM, "out of memory for a result");
    }
    pthread_mutex_lock(&r->mu);
    r->size += len;
    /* Waiters re-register their target after each wake-up. */
    if (r->size >= r->wake_at) {
        r->wake_at = UINT64_MAX;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    return PQ_OK;
}

/* Under mu: a complete result gives its producer's descriptor up once no
 * reader uses it; readers then pin a slot of the bounded descriptor set,
 * reopening the file by its path.  A descriptor per cached result was
 * unbounded (thousands of small results, thousands of descriptors). */
static void release_fd_locked(pq_result *r)
{
    if (!r->done || r->fd < 0 || r->fd_users > 0) return;
    close(r->fd);
    r->fd = -1;
}

static int reopen_result(void *ctx, pq_error *err)
{
    const pq_result *r = ctx;
    int fd = open(r->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && pq_fd_shed() > 0) fd = open(r->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) pq_fail(err, PQ_E_IO, "cache file %s: cannot open again: %s", r->path, strerror(errno));
    return fd;
}

/* Under mu: a descriptor of the cache file for one read, and whether it is
 * the slot's (pinned: unpin it with done_fd_locked). -1 with err set. */
static int use_fd_locked(pq_result *r, bool *pinned, pq_error *err)
{
    *pinned = r->fd < 0;
    if (!*pinned) {
        r->fd_users++;
        return r->fd;
    }
    return pq_fd_slot_pin(&r->slot, reopen_result, r, err);
}

static void done_fd_locked(pq_result *r, bool pinned)
{
    if (pinned) {
        pq_fd_slot_unpin(&r->slot);
    } else {
        r->fd_users--;
        release_fd_locked(r);
    }
}

static void *result_main(void *arg)
{
    pq_result *r = arg;
    pq_sink sink = {result_write, r};
    pq_error err;
    pq_error_clear(&err);
    int rc = r->job(r->ctx, &sink, &err);
    if (r->ctx_free) r->ctx_free(r->ctx);
    r->ctx = NULL;
    /* Frees the blocks reserved past the end (ext4 truncates them even at
     * the same size); only the producer changes the file. */
    if (r->fd >= 0 && r->reserved_end > r->size) (void)ftruncate(r->fd, (off_t)r->size);
    pthread_mutex_lock(&r->mu);
    r->done = true;
    if (rc != PQ_OK) {
        r->failed = true;
        r->err = err;
    }
    release_fd_locked(r);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int pq_result_start(const char *dir, uint64_t ahead_window, pq_result_job job, void *ctx, void (*ctx_free)(void *),
                    pq_result **out, pq_error *err)
{
    pq_result *r = calloc(1, sizeof *r);
    if (!r) {
        if (ctx_free) ctx_free(ctx);
        return PQ_NOMEM(err);
    }
    r->fd = -1;
    r->slot.fd = -1;
    if (dir) {
        /* Named (not O_TMPFILE): a complete result is reopened by its path.
         * The per-mount directory is emptied when a dead mount's is found. */
        size_t n = strlen(dir) + sizeof "/result-XXXXXX";
        if ((r->path = malloc(n))) {
            snprintf(r->path, n, "%s/result-XXXXXX", dir);
            r->fd = mkostemp(r->path, O_CLOEXEC);
        } else {
            errno = ENOMEM;
        }
        if (r->fd < 0) {
            int e = errno;
            free(r->path);
            free(r);
            if (ctx_free) ctx_free(ctx);
            return pq_fail(err, e == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: cannot create a cache file: %s", dir,
                           strerror(e));
        }
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->refs = 1;
    r->wake_at = UINT64_MAX;
    r->ahead = ahead_window ? ahead_window : (64u << 20);
    r->job = job;
    r->ctx = ctx;
    r->ctx_free = ctx_free;
    /* A thread of its own, not a pool job (threads.h): it lives as long as
     * the result streams, across many requests, paused while its readers
     * lag by the ahead window, and is joined by whoever lets the result go
     * last (pq_result_reap).  A thread start is nothing next to a query,
     * and its stack goes back at the reap. */
    if (pthread_create(&r->thread, NULL, result_main, r) != 0) {
        if (ctx_free) ctx_free(ctx);
        r->ctx = NULL;
        r->done = r->failed = true;
        pq_fail(&r->err, PQ_E_NOMEM, "cannot start a result thread");
    } else {
        r->thread_started = true;
    }
    *out = r;
    return PQ_OK;
}

void pq_result_ref(pq_result *r)
{
    pthread_mutex_lock(&r->mu);
    r->refs++;
    pthread_mutex_unlock(&r->mu);
}

void pq_result_cancel(pq_result *r)
{
    pthread_mutex_lock(&r->mu);
    r->cancelled = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void pq_result_unref(pq_result *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    bool last = --r->refs == 0;
    if (last) r->cancelled = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    if (!last) return;
    if (r->thread_started) pthread_join(r->thread, NULL);
    for (size_t i = 0; i < r->n_windows; i++)
        if (r->windows[i]) munmap(r->windows[i], MAP_WINDOW);
    free(r->windows);
    if (r->fd >= 0) close(r->fd);
    pq_fd_slot_close(&r->slot);
    if (r->path) unlink(r->path);
    free(r->path);
    pq_buf_free(&r->mem);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

void pq_result_reap(pq_result *r)
{
    pthread_mutex_lock(&r->mu);
    bool join = r->done && r->thread_started && !r->reaping;
    if (join) r->reaping = true;
    pthread_mutex_unlock(&r->mu);
    if (!join) return;
    pthread_join(r->thread, NULL); /* it has ended, or is returning */
    pthread_mutex_lock(&r->mu);
    r->thread_started = false;
    r->reaping = false;
    pthread_mutex_unlock(&r->mu);
}

void pq_result_unmap(pq_result *r)
{
    pthread_mutex_lock(&r->mu);
    for (size_t i = 0; i < r->n_windows; i++)
        if (r->windows[i]) {
            munmap(r->windows[i], MAP_WINDOW);
            r->windows[i] = NULL;
        }
    pthread_mutex_unlock(&r->mu);
}

/* Under mu: announces that a reader reaches `reach` (the producer may run
 * ahead of it), then waits until size >= need (or the job ends).  Returns
 * PQ_ERR when stop() says the caller gave up, or when nothing is left at off
 * because the job failed. */
static int wait_for_bytes(pq_result *r, uint64_t off, uint64_t need, uint64_t reach, bool (*stop)(void *),
                          void *stop_ctx, pq_error *err)
{
    if (reach > r->read_hwm) {
        r->read_hwm = reach;
        pthread_cond_broadcast(&r->cv);
    }
    while (r->size < need && !r->done) {
        if (stop && stop(stop_ctx)) return pq_fail(err, PQ_E_CANCELLED, "read interrupted");
        if (need < r->wake_at) r->wake_at = need;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    }
    if (r->size <= off && r->failed) {
        *err = r->err;
        return PQ_ERR;
    }
    return PQ_OK;
}

/* Under mu: the mapped address of [off, off + len), or NULL when the bytes
 * are not in one window or cannot be mapped. */
static const char *mapped_locked(pq_result *r, uint64_t off, size_t len)
{
    if (!r->path || len == 0) return NULL;
    uint64_t w = off / MAP_WINDOW;
    if ((off + len - 1) / MAP_WINDOW != w || w >= MAP_WINDOWS_MAX) return NULL;
    if (w >= r->n_windows) {
        size_t n = (size_t)w + 1;
        char **grown = realloc(r->windows, n * sizeof *grown);
        if (!grown) return NULL;
        for (size_t i = r->n_windows; i < n; i++) grown[i] = NULL;
        r->windows = grown;
        r->n_windows = n;
    }
    if (!r->windows[w]) {
        /* The window may reach past the end of the file: only bytes below
         * size, which are written, are ever touched. */
        pq_error ignored;
        bool pinned;
        int fd = use_fd_locked(r, &pinned, &ignored);
        if (fd < 0) return NULL; /* the caller reads instead */
        void *m = mmap(NULL, MAP_WINDOW, PROT_READ, MAP_SHARED, fd, (off_t)(w * MAP_WINDOW));
        done_fd_locked(r, pinned); /* a mapping outlives its descriptor */
        if (m == MAP_FAILED) return NULL;
        r->windows[w] = m;
    }
    return r->windows[w] + (off - w * MAP_WINDOW);
}

int pq_result_peek(pq_result *r, uint64_t off, size_t len, const char **data, size_t *n, bool (*stop)(void *),
                   void *stop_ctx, pq_error *err)
{
    *data = NULL;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    int rc = wait_for_bytes(r, off, off + len, off + len, stop, stop_ctx, err);
    if (rc == PQ_OK && off < r->size) {
        *n = r->size - off < len ? (size_t)(r->size - off) : len;
        *data = mapped_locked(r, off, *n);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int pq_result_wait(pq_result *r, bool (*stop)(void *), void *stop_ctx, pq_error *err)
{
    pthread_mutex_lock(&r->mu);
    /* Bytes that never come: the wait ends with the job, and a failed job
     * has nothing at that offset, so its error is returned. */
    int rc = wait_for_bytes(r, UINT64_MAX - 1, UINT64_MAX, 0, stop, stop_ctx, err);
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int pq_result_read(pq_result *r, void *buf, size_t len, uint64_t off, size_t *n, bool (*stop)(void *),
                   void *stop_ctx, pq_error *err)
{
    *n = 0;
    pthread_mutex_lock(&r->mu);
    if (wait_for_bytes(r, off, off + 1, off + len, stop, stop_ctx, err) != PQ_OK) {
        pthread_mutex_unlock(&r->mu);
        return PQ_ERR;
    }
    if (off >= r->size) {
        pthread_mutex_unlock(&r->mu);
        return PQ_OK; /* end of file */
    }
    size_t take = r->size - off < len ? (size_t)(r->size - off) : len;
    if (!r->path) {
        memcpy(buf, r->mem.data + off, take);
        pthread_mutex_unlock(&r->mu);
        *n = take;
        return PQ_OK;
    }
    bool pinned;
    int fd = use_fd_locked(r, &pinned, err);
    pthread_mutex_unlock(&r->mu);
    if (fd < 0) return PQ_ERR;
    size_t done = 0;
    int rc = PQ_OK;
    while (done < take) {
        ssize_t got = pread(fd, (char *)buf + done, take - done, (off_t)(off + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = pq_fail(err, PQ_E_IO, "cache file read failed: %s", strerror(errno));
            break;
        }
        if (got == 0) break;
        done += (size_t)got;
    }
    if (pinned) {
        pq_fd_slot_unpin(&r->slot); /* the set's own lock: no wait under mu */
    } else {
        pthread_mutex_lock(&r->mu);
        done_fd_locked(r, false);
        pthread_mutex_unlock(&r->mu);
    }
    *n = done;
    return rc;
}

void pq_result_state_of(pq_result *r, pq_result_state *out)
{
    pthread_mutex_lock(&r->mu);
    out->done = r->done;
    out->failed = r->failed;
    out->size = r->size;
    pthread_mutex_unlock(&r->mu);
}
