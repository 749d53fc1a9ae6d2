#include "io.h"

#include "fdcache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mem.h"

void pq_io_count_read(pq_io_counters *c, size_t len)
{
    if (!c) return;
    atomic_fetch_add_explicit(&c->read_requests, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->read_bytes, len, memory_order_relaxed);
}

/* What a file keeps in memory.  The tail is set once, by the footer read,
 * before the file is shared between threads, and read without the lock;
 * the ranges come and go under mu. */
struct pq_file_kept {
    uint8_t *tail;
    uint64_t tail_off;
    size_t tail_len;
    pthread_mutex_t mu;
    _Atomic int n_ranges;
    int cap;
    size_t bytes;
    struct kept_range {
        uint8_t *bytes;
        uint64_t off;
        size_t len;
    } *ranges;
};

/* The file's kept bytes; made on first use when `make` (NULL when out of
 * memory: then nothing is kept and the bytes are read again).  Stores
 * zero their files, so a file starts with none. */
static struct pq_file_kept *kept_of(pq_file *f, bool make)
{
    struct pq_file_kept *k = atomic_load_explicit(&f->kept, memory_order_acquire);
    if (k || !make) return k;
    struct pq_file_kept *fresh = calloc(1, sizeof *fresh);
    if (!fresh) return NULL;
    pthread_mutex_init(&fresh->mu, NULL);
    if (atomic_compare_exchange_strong_explicit(&f->kept, &k, fresh, memory_order_acq_rel, memory_order_acquire))
        return fresh;
    pthread_mutex_destroy(&fresh->mu);
    free(fresh);
    return k; /* another thread made it first */
}

/* Removes and returns a kept range overlapping [off, end), if any. */
static bool take_kept(struct pq_file_kept *kept, uint64_t off, uint64_t end, struct kept_range *out)
{
    bool found = false;
    pthread_mutex_lock(&kept->mu);
    for (int i = 0; i < kept->cap && !found; i++) {
        struct kept_range *k = &kept->ranges[i];
        if (k->bytes && off < k->off + k->len && k->off < end) {
            *out = *k;
            k->bytes = NULL;
            kept->bytes -= k->len;
            atomic_fetch_sub_explicit(&kept->n_ranges, 1, memory_order_relaxed);
            found = true;
        }
    }
    pthread_mutex_unlock(&kept->mu);
    return found;
}

/* Serves [off, off + len) from `bytes` (the file's [t0, t0 + tlen)) where they
 * overlap, the parts before and after through pq_read_at. */
static int read_around(pq_file *f, char *buf, size_t len, uint64_t off, const uint8_t *bytes, uint64_t t0,
                       size_t tlen, pq_error *err)
{
    uint64_t end = off + len, t1 = t0 + tlen;
    uint64_t a = off > t0 ? off : t0, b = end < t1 ? end : t1; /* the overlap */
    memcpy(buf + (a - off), bytes + (a - t0), (size_t)(b - a));
    if (a > off) PQ_TRY(pq_read_at(f, buf, (size_t)(a - off), off, err));
    if (end > b) PQ_TRY(pq_read_at(f, buf + (b - off), (size_t)(end - b), b, err));
    return PQ_OK;
}

int pq_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err)
{
    struct pq_file_kept *kept = kept_of(f, false);
    if (!kept || len == 0 || off > UINT64_MAX - len) return f->ops->read_at(f, buf, len, off, err);
    uint64_t end = off + len;
    struct kept_range k;
    if (atomic_load_explicit(&kept->n_ranges, memory_order_relaxed) > 0 && take_kept(kept, off, end, &k)) {
        int rc = read_around(f, buf, len, off, k.bytes, k.off, k.len, err);
        free(k.bytes);
        return rc;
    }
    uint64_t t0 = kept->tail_off, t1 = t0 + kept->tail_len;
    if (kept->tail_len && off < t1 && end > t0)
        return read_around(f, buf, len, off, kept->tail, t0, kept->tail_len, err);
    return f->ops->read_at(f, buf, len, off, err);
}

/* A free slot for one more range (grown when none is), or -1 when the file
 * keeps PQ_FILE_KEPT_MAX already.  Under kept->mu. */
static int free_slot(struct pq_file_kept *kept)
{
    for (int i = 0; i < kept->cap; i++)
        if (!kept->ranges[i].bytes) return i;
    if (kept->cap >= PQ_FILE_KEPT_MAX) return -1;
    int cap = kept->cap ? kept->cap * 2 : 8;
    struct kept_range *grown = realloc(kept->ranges, sizeof *grown * (size_t)cap);
    if (!grown) return -1;
    memset(grown + kept->cap, 0, sizeof *grown * (size_t)(cap - kept->cap));
    int slot = kept->cap;
    kept->ranges = grown;
    kept->cap = cap;
    return slot;
}

void pq_file_keep_range(pq_file *f, uint8_t *bytes, uint64_t off, size_t len)
{
    struct pq_file_kept *kept = bytes && len ? kept_of(f, true) : NULL;
    if (!kept) {
        free(bytes);
        return;
    }
    pthread_mutex_lock(&kept->mu);
    int slot = len <= PQ_FILE_KEPT_BYTES - kept->bytes ? free_slot(kept) : -1;
    if (slot >= 0) {
        kept->ranges[slot] = (struct kept_range){bytes, off, len};
        kept->bytes += len;
        atomic_fetch_add_explicit(&kept->n_ranges, 1, memory_order_relaxed);
        bytes = NULL;
    }
    pthread_mutex_unlock(&kept->mu);
    free(bytes);
}

void pq_file_keep_tail(pq_file *f, uint8_t *bytes, uint64_t off, size_t len)
{
    struct pq_file_kept *kept = kept_of(f, len > 0);
    if (!kept) {
        free(bytes);
        return;
    }
    free(kept->tail);
    kept->tail = len ? bytes : NULL;
    kept->tail_off = off;
    kept->tail_len = len;
    if (!len) free(bytes);
}

int pq_file_check_listed(const pq_file *f, const pq_stat *listed, pq_error *err)
{
    if (!f->has_identity || (f->opened.size == listed->size && f->opened.mtime_ns == listed->mtime_ns)) return PQ_OK;
    return pq_fail(err, PQ_E_STALE, "%s: changed since it was listed (%llu bytes, listed with %llu)", f->name,
                   (unsigned long long)f->opened.size, (unsigned long long)listed->size);
}

int pq_file_check_size(const pq_file *f, uint64_t size, pq_error *err)
{
    if (!f->has_identity || f->opened.size == size) return PQ_OK;
    return pq_fail(err, PQ_E_STALE, "%s: %llu bytes, where the table's log says %llu: not the file it added", f->name,
                   (unsigned long long)f->opened.size, (unsigned long long)size);
}

void pq_file_close(pq_file *f)
{
    if (!f) return;
    struct pq_file_kept *kept = kept_of(f, false);
    if (kept) {
        free(kept->tail);
        for (int i = 0; i < kept->cap; i++) free(kept->ranges[i].bytes);
        free(kept->ranges);
        pthread_mutex_destroy(&kept->mu);
        free(kept);
    }
    f->ops->close(f);
}

/* ------------------------------------------------------------------ local file */

typedef struct local_store local_store;
/* Every open of a lake file for reading: `rel` beneath the store's root
 * (the local store below: symbolic links followed only inside the root). */
static int local_open_path(const local_store *ls, const char *rel, int flags);
/* A failed open of rel, errno e: a link out of the root is not found. */
static int read_fail(local_store *ls, const char *rel, const char *what, int e, pq_error *err);

/* A local file holds a slot of the process's descriptor set (fdcache.h), not
 * a descriptor: it is opened again when a read finds it closed, and must then
 * still be the file first opened. */
typedef struct local_file {
    pq_file base;
    const local_store *store;    /* NULL: a path outside any store */
    /* What to open again: relative to the store's root (the tail of
     * base.name, the joined path), or base.name itself without a store,
     * relative to the working directory, which neither pqfs nor pqtool
     * changes once files are open. */
    const char *path;
    dev_t dev;                   /* with base.opened: the file's identity */
    ino_t ino;
    pq_fd_slot slot;
} local_file;

/* A descriptor for reading `path`; when the process is out of descriptors,
 * after closing the set's unpinned ones, once more.  -1 with errno. */
static int open_for_read(const local_store *ls, const char *path)
{
    for (int attempt = 0;; attempt++) {
        int fd = ls ? local_open_path(ls, path, O_RDONLY | O_CLOEXEC) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0 || (errno != EMFILE && errno != ENFILE) || attempt > 0 || pq_fd_shed() == 0) return fd;
    }
}

static void fill_stat(const struct stat *st, pq_stat *out)
{
    out->is_dir = S_ISDIR(st->st_mode);
    out->size = (uint64_t)st->st_size;
    out->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    out->modified_ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    out->has_owner = true;
    out->mode = (uint32_t)st->st_mode & 07777;
    out->uid = (uint32_t)st->st_uid;
    out->gid = (uint32_t)st->st_gid;
}

/* pq_fd_reopen_fn: the file again, if it is the same one (a file replaced
 * or rewritten since it was first opened is never read as if it were the
 * old one: PQ_E_STALE, as pq_file_check_listed reports it). */
static int local_reopen(void *ctx, pq_error *err)
{
    local_file *lf = ctx;
    const char *name = lf->base.name;
    int fd = open_for_read(lf->store, lf->path);
    if (fd < 0) {
        if (errno == ENOENT)
            return pq_fail(err, PQ_E_STALE, "%s: changed since it was listed (removed while it was read)", name), -1;
        return pq_fail(err, PQ_E_IO, "%s: cannot open again: %s", name, strerror(errno)), -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return pq_fail(err, PQ_E_IO, "%s: stat failed: %s", name, strerror(e)), -1;
    }
    pq_stat now;
    fill_stat(&st, &now);
    if (st.st_dev != lf->dev || st.st_ino != lf->ino || now.size != lf->base.opened.size ||
        now.mtime_ns != lf->base.opened.mtime_ns) {
        close(fd);
        return pq_fail(err, PQ_E_STALE, "%s: changed since it was listed (%llu bytes, %llu when first opened)", name,
                       (unsigned long long)now.size, (unsigned long long)lf->base.opened.size), -1;
    }
    return fd;
}

static int local_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err)
{
    local_file *lf = (local_file *)f;
    size_t done = 0;
    if (off > (uint64_t)INT64_MAX - len)
        return pq_fail(err, PQ_E_CORRUPT, "read of %zu bytes at offset %llu is out of range",
                       len, (unsigned long long)off);
    int fd = pq_fd_slot_pin(&lf->slot, local_reopen, lf, err);
    if (fd < 0) return PQ_ERR;
    int rc = PQ_OK;
    while (done < len && rc == PQ_OK) {
        ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
            rc = pq_fail(err, PQ_E_IO, "read at offset %llu failed: %s", (unsigned long long)(off + done),
                         strerror(errno));
        else if (n == 0)
            rc = pq_fail(err, PQ_E_CORRUPT, "unexpected end of file reading %zu bytes at offset %llu", len,
                         (unsigned long long)off);
        else
            done += (size_t)n;
    }
    pq_fd_slot_unpin(&lf->slot);
    if (rc == PQ_OK) pq_io_count_read(f->counters, len);
    return rc;
}

/* The size it had when opened: every reopen checks it still has it. */
static int local_size(pq_file *f, uint64_t *out, pq_error *err)
{
    (void)err;
    *out = f->opened.size;
    return PQ_OK;
}

static void local_close(pq_file *f)
{
    local_file *lf = (local_file *)f;
    pq_fd_slot_close(&lf->slot);
    free(f->name);
    free(lf);
}

static const pq_file_ops local_file_ops = {local_read_at, local_size, local_close};

/* pq_fd_open_fn of a file's first open: its identity, what it must be when
 * opened again. */
static int local_first_open(void *ctx, pq_error *err)
{
    local_file *lf = ctx;
    const char *name = lf->base.name;
    int fd = open_for_read(lf->store, lf->path);
    if (fd < 0 && lf->store) return read_fail((local_store *)lf->store, lf->path, "cannot open: ", errno, err), -1;
    if (fd < 0) return pq_fail(err, PQ_E_IO, "%s: cannot open: %s", name, strerror(errno)), -1;
    struct stat st;
    int rc = PQ_OK;
    if (fstat(fd, &st) != 0) rc = pq_fail(err, PQ_E_IO, "%s: stat failed: %s", name, strerror(errno));
    else if (S_ISDIR(st.st_mode)) rc = pq_fail(err, PQ_E_USAGE, "%s: is a directory", name);
    if (rc != PQ_OK) {
        close(fd);
        return -1;
    }
    lf->base.has_identity = true;
    fill_stat(&st, &lf->base.opened);
    lf->dev = st.st_dev;
    lf->ino = st.st_ino;
    return fd;
}

/* Opens `path` (relative to ls's root, or outside any store with ls NULL),
 * named `name` (taken: freed on failure) in messages. */
static int local_file_open(const local_store *ls, const char *path, char *name, pq_io_counters *counters,
                           pq_file **out, pq_error *err)
{
    local_file *lf = name ? calloc(1, sizeof *lf) : NULL;
    if (!lf) {
        free(name);
        return PQ_NOMEM(err);
    }
    lf->base.ops = &local_file_ops;
    lf->base.name = name;
    lf->base.counters = counters;
    lf->base.merge_gap = 4096;
    lf->store = ls;
    lf->path = name + strlen(name) - strlen(path); /* the joined path ends in it */
    if (pq_fd_slot_open(&lf->slot, local_first_open, lf, err) != PQ_OK) {
        free(name);
        free(lf);
        return PQ_ERR;
    }
    *out = &lf->base;
    return PQ_OK;
}

int pq_file_open_local(const char *path, pq_io_counters *counters, pq_file **out, pq_error *err)
{
    return local_file_open(NULL, path, strdup(path), counters, out, err);
}

/* ------------------------------------------------------------------ memory file */

typedef struct mem_file {
    pq_file base;
    const uint8_t *data;
    size_t len;
} mem_file;

static int mem_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err)
{
    mem_file *mf = (mem_file *)f;
    if (off > mf->len || len > mf->len - off)
        return pq_fail(err, PQ_E_CORRUPT,
                       "unexpected end of file reading %zu bytes at offset %llu", len,
                       (unsigned long long)off);
    memcpy(buf, mf->data + off, len);
    pq_io_count_read(f->counters, len);
    return PQ_OK;
}

static int mem_size(pq_file *f, uint64_t *out, pq_error *err)
{
    (void)err;
    *out = ((mem_file *)f)->len;
    return PQ_OK;
}

static void mem_close(pq_file *f)
{
    free(f->name);
    free(f);
}

static const pq_file_ops mem_file_ops = {mem_read_at, mem_size, mem_close};

int pq_file_open_mem(const char *name, const void *data, size_t len, pq_file **out, pq_error *err)
{
    mem_file *mf = calloc(1, sizeof *mf);
    char *n = strdup(name ? name : "<memory>");
    if (!mf || !n) {
        free(mf);
        free(n);
        return PQ_NOMEM(err);
    }
    mf->base.ops = &mem_file_ops;
    mf->base.name = n;
    mf->base.merge_gap = 4096;
    mf->data = data;
    mf->len = len;
    *out = &mf->base;
    return PQ_OK;
}

/* ------------------------------------------------------------------ faulty file */

typedef struct faulty_file {
    pq_file base;
    pq_file *inner;
    pq_fault_plan plan;
    _Atomic int64_t reads;       /* a fetch may read ranges on several threads */
} faulty_file;

void pq_fault_plan_init(pq_fault_plan *p)
{
    p->fail_read_after = -1;
    p->truncate_to = -1;
    p->flip_byte_at = -1;
    p->short_reads = false;
}

static int faulty_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err)
{
    faulty_file *ff = (faulty_file *)f;
    int64_t n = atomic_fetch_add(&ff->reads, 1);
    if (ff->plan.fail_read_after >= 0 && n >= ff->plan.fail_read_after)
        return pq_fail(err, PQ_E_IO, "injected I/O error on read %lld", (long long)n);
    if (ff->plan.truncate_to >= 0 &&
        (off > (uint64_t)ff->plan.truncate_to || len > (uint64_t)ff->plan.truncate_to - off))
        return pq_fail(err, PQ_E_CORRUPT,
                       "unexpected end of file reading %zu bytes at offset %llu", len,
                       (unsigned long long)off);
    if (ff->plan.short_reads) {
        for (size_t done = 0; done < len;) {
            size_t piece = len - done < 7 ? len - done : 7;
            PQ_TRY(pq_read_at(ff->inner, (char *)buf + done, piece, off + done, err));
            done += piece;
        }
    } else {
        PQ_TRY(pq_read_at(ff->inner, buf, len, off, err));
    }
    if (ff->plan.flip_byte_at >= 0 && (uint64_t)ff->plan.flip_byte_at >= off &&
        (uint64_t)ff->plan.flip_byte_at < off + len)
        ((uint8_t *)buf)[ff->plan.flip_byte_at - (int64_t)off] ^= 0xFF;
    pq_io_count_read(f->counters, len);
    return PQ_OK;
}

static int faulty_size(pq_file *f, uint64_t *out, pq_error *err)
{
    faulty_file *ff = (faulty_file *)f;
    PQ_TRY(pq_file_size(ff->inner, out, err));
    if (ff->plan.truncate_to >= 0 && *out > (uint64_t)ff->plan.truncate_to)
        *out = (uint64_t)ff->plan.truncate_to;
    return PQ_OK;
}

static void faulty_close(pq_file *f)
{
    faulty_file *ff = (faulty_file *)f;
    pq_file_close(ff->inner);
    free(f->name);
    free(ff);
}

static const pq_file_ops faulty_file_ops = {faulty_read_at, faulty_size, faulty_close};

int pq_file_wrap_faulty(pq_file *inner, const pq_fault_plan *plan, pq_file **out, pq_error *err)
{
    faulty_file *ff = calloc(1, sizeof *ff);
    char *n = strdup(inner->name);
    if (!ff || !n) {
        free(ff);
        free(n);
        pq_file_close(inner);
        return PQ_NOMEM(err);
    }
    ff->base.ops = &faulty_file_ops;
    ff->base.name = n;
    ff->base.counters = inner->counters;
    ff->base.merge_gap = inner->merge_gap;
    ff->base.parallel_reads = inner->parallel_reads;
    ff->inner = inner;
    ff->plan = *plan;
    *out = &ff->base;
    return PQ_OK;
}

int pq_open_anon_file(const char *dir, const char *stem)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    char tmpl[PATH_MAX];
    if (snprintf(tmpl, sizeof tmpl, "%s/%s-XXXXXX", dir, stem) >= (int)sizeof tmpl) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(tmpl, O_CLOEXEC);
    if (fd >= 0) unlink(tmpl);
    return fd;
}

/* ------------------------------------------------------------------ local store */

/* Nothing outside the root is read or written (io.h, pq_store_local_new).
 * Paths are resolved relative to a descriptor of the root, opened once:
 * reads by openat2(RESOLVE_BENEATH), or component by component where the
 * kernel has no openat2; writes with RESOLVE_NO_SYMLINKS (or O_NOFOLLOW on
 * every component). */

/* Symbolic links one path may pass through (the kernel's own limit, which
 * openat2 applies): more is ELOOP, as for any open. */
#define LINK_HOPS 40
#define WARNED_BUCKETS 64
/* A part file's temporary: .NAME.tmp-XXXXXX beside NAME. */
#define TMP_TAG ".tmp-"
#define TMP_RANDOM 6

typedef struct warned_link {
    struct warned_link *next;
    char key[];                  /* "/DEV:INO" of the link, or the path */
} warned_link;

struct local_store {
    pq_store base;
    char *dir;                   /* absolute root directory, resolved ("" for "/"); or the one file */
    int root_fd;                 /* O_PATH descriptor of the root directory; -1: the root is one file */
    /* The links out of the root warned about: one warning a link. */
    pthread_mutex_t warned_mu;
    warned_link *warned[WARNED_BUCKETS];
};

/* The test hook, or the kernel (or a seccomp filter) has no openat2. */
static _Atomic bool without_openat2;

void pq_store_local_test_without_openat2(bool on)
{
    atomic_store(&without_openat2, on);
}

/* openat2(2); -1 with ENOSYS where there is none. */
static int openat2_at(int dir_fd, const char *path, int flags, uint64_t resolve)
{
#ifdef SYS_openat2
    if (!atomic_load_explicit(&without_openat2, memory_order_relaxed)) {
        struct open_how how = {.flags = (uint64_t)(unsigned)flags, .resolve = resolve};
        int fd = (int)syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS) return fd;
        atomic_store(&without_openat2, true);
    }
#else
    (void)dir_fd, (void)path, (void)flags, (void)resolve;
#endif
    errno = ENOSYS;
    return -1;
}

/* Whether openat2 failed where resolving by hand may still answer: none
 * (ENOSYS, or EPERM from a seccomp filter that denies it), a rename raced
 * the walk (EAGAIN), or EXDEV (with RESOLVE_BENEATH: a link out of the
 * root, or an absolute one, which may name a place inside). */
static bool try_by_hand(int e, bool exdev_too)
{
    return e == ENOSYS || e == EPERM || e == EAGAIN || (exdev_too && e == EXDEV);
}

static int join_path(local_store *ls, const char *rel, char *out, size_t cap, pq_error *err)
{
    int n = snprintf(out, cap, "%s%s%s", ls->dir, rel[0] ? "/" : "", rel);
    if (n < 0 || (size_t)n >= cap)
        return pq_fail(err, PQ_E_USAGE, "%s/%s: path too long", ls->dir, rel);
    return PQ_OK;
}

/* Whether the absolute path `target` is the root or below it; *rest is
 * then the part below ("" or "/..."). */
static bool under_root(const local_store *ls, const char *target, const char **rest)
{
    size_t n = strlen(ls->dir);
    if (strncmp(target, ls->dir, n) || (target[n] && target[n] != '/')) return false;
    *rest = target + n;
    return true;
}

/* The target of the symbolic link open at fd (O_PATH | O_NOFOLLOW),
 * malloc'd; NULL with errno. */
static char *link_target(int fd, size_t hint)
{
    for (size_t cap = hint + 2 > 64 ? hint + 2 : 64;; cap *= 2) {
        char *buf = malloc(cap);
        if (!buf) {
            errno = ENOMEM;
            return NULL;
        }
        ssize_t n = readlinkat(fd, "", buf, cap);
        if (n >= 0 && (size_t)n < cap) {
            buf[n] = '\0';
            return buf;
        }
        int e = errno;
        free(buf);
        if (n < 0 || cap > SIZE_MAX / 4) {
            errno = n < 0 ? e : ENAMETOOLONG;
            return NULL;
        }
    }
}

/* "a" + "/" + "b", malloc'd (the rest of a path after a link's target). */
static char *join_rest(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *p = malloc(na + nb + 2);
    if (!p) return NULL;
    memcpy(p, a, na);
    p[na] = '/';
    memcpy(p + na + 1, b, nb + 1);
    return p;
}

/* Resolves rel beneath the root one component at a time (openat with
 * O_NOFOLLOW), following each symbolic link by hand: where openat2 is
 * missing, and for what RESOLVE_BENEATH refuses that may still stay inside
 * (an absolute link naming a place under the root).  A step above the root
 * ('..' at the root, in the path or in a link) is EXDEV, as is an absolute
 * link elsewhere: the rule openat2 applies. */
static int open_by_hand(const local_store *ls, const char *rel, int flags)
{
    int *dirs = NULL;            /* the directories walked below the root, innermost last */
    size_t n_dirs = 0, cap_dirs = 0, pos = 0;
    char *todo = strdup(rel);    /* the path still to walk, from pos */
    int hops = 0, fd = -1, e = todo ? 0 : ENOMEM;
    while (todo) {
        pos += strspn(todo + pos, "/");
        int at = n_dirs ? dirs[n_dirs - 1] : ls->root_fd;
        size_t len = strcspn(todo + pos, "/");
        if (!len) { /* the path ends at a directory (the root for "") */
            if ((fd = openat(at, ".", flags | O_CLOEXEC)) < 0) e = errno;
            break;
        }
        char comp[NAME_MAX + 1];
        if (len > NAME_MAX) {
            e = ENAMETOOLONG;
            break;
        }
        memcpy(comp, todo + pos, len);
        comp[len] = '\0';
        pos += len;
        bool last = todo[pos + strspn(todo + pos, "/")] == '\0';
        if (!strcmp(comp, ".")) continue;
        if (!strcmp(comp, "..")) {
            if (!n_dirs) {
                e = EXDEV;
                break;
            }
            close(dirs[--n_dirs]);
            continue;
        }
        int cfd = openat(at, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (cfd < 0 || fstat(cfd, &st) != 0) {
            e = errno;
            if (cfd >= 0) close(cfd);
            break;
        }
        if (S_ISLNK(st.st_mode)) { /* the walk goes on at its target, then the rest */
            char *target = NULL;
            if (++hops > LINK_HOPS) e = ELOOP;
            else if (!(target = link_target(cfd, (size_t)st.st_size))) e = errno;
            close(cfd);
            const char *from = target;
            if (target && target[0] == '/') {
                if (!under_root(ls, target, &from)) e = EXDEV;
                while (!e && n_dirs) close(dirs[--n_dirs]); /* from the root again */
            }
            char *next = target && !e ? join_rest(from, todo + pos) : NULL;
            if (target && !e && !next) e = ENOMEM;
            free(target);
            free(todo);
            todo = next;
            pos = 0;
            continue;
        }
        if (last) {
            if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) {
                e = ENOTDIR;
            } else if (flags & O_PATH) {
                fd = cfd;
                cfd = -1;
            } else if ((fd = openat(at, comp, flags | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                e = errno;
            }
            if (cfd >= 0) close(cfd);
            break;
        }
        int *grown = n_dirs < cap_dirs ? dirs : realloc(dirs, sizeof *dirs * (cap_dirs = cap_dirs * 2 + 8));
        if (!S_ISDIR(st.st_mode) || !grown) {
            e = grown ? ENOTDIR : ENOMEM;
            close(cfd);
            break;
        }
        dirs = grown;
        dirs[n_dirs++] = cfd;
    }
    while (n_dirs) close(dirs[--n_dirs]);
    free(dirs);
    free(todo);
    if (fd < 0) errno = e;
    return fd;
}

/* Opens rel (relative to the root, "" the root itself) for reading, by the
 * lake's rule: symbolic links are followed while they resolve beneath the
 * root; a path that leads out is EXDEV.  Every read of a lake path opens
 * it here.  -1 with errno on failure. */
static int local_open_path(const local_store *ls, const char *rel, int flags)
{
    if (ls->root_fd < 0) { /* the root is one file, its only path */
        if (rel[0]) {
            errno = ENOTDIR;
            return -1;
        }
        return open(ls->dir, flags | O_CLOEXEC);
    }
    int fd = openat2_at(ls->root_fd, rel[0] ? rel : ".", flags | O_CLOEXEC, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0 || !try_by_hand(errno, true)) return fd;
    return open_by_hand(ls, rel, flags);
}

/* Opens the directory rel beneath the root for a write: no symbolic link
 * is followed anywhere on the path (ELOOP when there is one, or ENOTDIR
 * for one swapped in meanwhile).  flags: O_PATH or O_RDONLY. */
static int local_open_dir_nofollow(const local_store *ls, const char *rel, int flags)
{
    if (ls->root_fd < 0) {
        errno = ENOTDIR;
        return -1;
    }
    flags |= O_DIRECTORY | O_CLOEXEC;
    int fd = openat2_at(ls->root_fd, rel[0] ? rel : ".", flags,
                        RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
    if (fd >= 0 || !try_by_hand(errno, false)) return fd;
    int at = ls->root_fd, e = 0;
    for (const char *p = rel; !e;) {
        p += strspn(p, "/");
        size_t len = strcspn(p, "/");
        if (!len) break;
        char comp[NAME_MAX + 1];
        if (len > NAME_MAX) {
            e = ENAMETOOLONG;
            break;
        }
        memcpy(comp, p, len);
        comp[len] = '\0';
        p += len;
        if (!strcmp(comp, ".")) continue;
        struct stat st;
        if (!strcmp(comp, "..")) e = EXDEV; /* writes name no '..' */
        else if (fstatat(at, comp, &st, AT_SYMLINK_NOFOLLOW) != 0) e = errno;
        else if (S_ISLNK(st.st_mode)) e = ELOOP;
        int next = e ? -1 : openat(at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (!e && next < 0) e = errno;
        if (at != ls->root_fd) close(at);
        at = next < 0 ? ls->root_fd : next;
    }
    fd = e ? -1 : openat(at, ".", flags);
    if (!e && fd < 0) e = errno;
    if (at != ls->root_fd) close(at);
    if (fd < 0) errno = e;
    return fd;
}

/* The directory of rel, opened for a write (local_open_dir_nofollow), and
 * rel's last component in *name. */
static int open_parent(const local_store *ls, const char *rel, const char **name)
{
    const char *slash = strrchr(rel, '/');
    *name = slash ? slash + 1 : rel;
    if (!**name || !strcmp(*name, ".") || !strcmp(*name, "..")) {
        errno = EINVAL;
        return -1;
    }
    char *dir = strndup(rel, slash ? (size_t)(slash - rel) : 0);
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    int fd = local_open_dir_nofollow(ls, dir, O_PATH);
    int e = errno;
    free(dir);
    errno = e;
    return fd;
}

/* A link out of the root, left out: one warning per link (`link`, its
 * lstat, when it is known: a link met through several paths, say through a
 * linked partition, is one), else per path. */
static void warn_escape(local_store *ls, const char *rel, const struct stat *link)
{
    if (!ls->base.warn) return;
    char id[64];
    if (link) snprintf(id, sizeof id, "/%llx:%llx", (unsigned long long)link->st_dev, (unsigned long long)link->st_ino);
    const char *key = link ? id : rel; /* a path never starts with '/' */
    uint64_t b = pq_hash_str(key) % WARNED_BUCKETS;
    bool seen = false;
    pthread_mutex_lock(&ls->warned_mu);
    for (const warned_link *w = ls->warned[b]; w && !seen; w = w->next) seen = !strcmp(w->key, key);
    size_t n = strlen(key);
    warned_link *w = seen ? NULL : malloc(sizeof *w + n + 1);
    if (w) {
        memcpy(w->key, key, n + 1);
        w->next = ls->warned[b];
        ls->warned[b] = w;
    }
    pthread_mutex_unlock(&ls->warned_mu);
    if (seen) return;
    char msg[PATH_MAX + 128];
    snprintf(msg, sizeof msg, "%s%s%s: a symbolic link out of the lake: left out (links are followed only inside it)",
             ls->dir, rel[0] ? "/" : "", rel);
    ls->base.warn(ls->base.warn_ctx, msg);
}

/* A read of rel that failed with errno e: a path out of the root is not
 * there (PQ_E_NOTFOUND, warned about once); anything else PQ_E_IO. */
static int read_fail(local_store *ls, const char *rel, const char *what, int e, pq_error *err)
{
    if (e == EXDEV) {
        warn_escape(ls, rel, NULL);
        return pq_fail(err, PQ_E_NOTFOUND, "%s%s%s: a symbolic link out of the lake (not followed)", ls->dir,
                       rel[0] ? "/" : "", rel);
    }
    return pq_fail(err, PQ_E_IO, "%s%s%s: %s%s", ls->dir, rel[0] ? "/" : "", rel, what, strerror(e));
}

/* A write of rel that failed with errno e: a symbolic link on the path is a
 * refusal (PQ_E_DENIED: writes follow none). */
static int write_fail(const local_store *ls, const char *rel, const char *what, int e, pq_error *err)
{
    if (e == ELOOP)
        return pq_fail(err, PQ_E_DENIED, "%s%s%s: %s: a symbolic link is on the path (writes follow none)", ls->dir,
                       rel[0] ? "/" : "", rel, what);
    return pq_fail(err, e == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s%s%s: %s: %s", ls->dir, rel[0] ? "/" : "", rel, what,
                   strerror(e));
}

static int local_store_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    local_store *ls = (local_store *)s;
    char full[PATH_MAX];
    PQ_TRY(join_path(ls, path, full, sizeof full, err));
    return local_file_open(ls, path, strdup(full), &s->counters, out, err);
}


static int local_store_stat(pq_store *s, const char *path, pq_stat *out, pq_error *err)
{
    local_store *ls = (local_store *)s;
    int fd = local_open_path(ls, path, O_PATH);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return read_fail(ls, path, "", e, err);
    }
    close(fd);
    fill_stat(&st, out);
    return PQ_OK;
}

/* A listed symbolic link dir/name (*st its lstat): its target's stat when
 * it resolves beneath the root.  One out of it is warned about (once) and,
 * like a dangling one, left out. */
static bool follow_listed_link(local_store *ls, const char *dir, const char *name, struct stat *st)
{
    char *rel = dir[0] ? join_rest(dir, name) : strdup(name);
    int fd = rel ? local_open_path(ls, rel, O_PATH) : -1;
    if (fd < 0 && rel && errno == EXDEV) warn_escape(ls, rel, st);
    bool ok = fd >= 0 && fstat(fd, st) == 0;
    if (fd >= 0) close(fd);
    free(rel);
    return ok;
}

static int local_store_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    local_store *ls = (local_store *)s;
    int fd = local_open_path(ls, dir, O_RDONLY | O_DIRECTORY);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0) close(fd);
        return read_fail(ls, dir, "cannot list: ", e, err);
    }
    atomic_fetch_add_explicit(&s->counters.list_requests, 1, memory_order_relaxed);
    struct dirent *de;
    int rc = PQ_OK;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        struct stat st;
        if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* vanished */
        if (S_ISLNK(st.st_mode) && !follow_listed_link(ls, dir, de->d_name, &st)) continue;
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) continue;
        pq_dirent e = {.name = de->d_name};
        fill_stat(&st, &e.st);
        if (cb(ctx, &e)) break;
    }
    closedir(d);
    return rc;
}

typedef struct local_upload {
    pq_upload base;
    int fd;                      /* the temporary, flocked until it is renamed or removed */
    int dir_fd;                  /* its directory, opened following no link */
    char *tmp_name;              /* .NAME.tmp-XXXXXX in dir_fd */
    char *final_name;
    char *final_path;            /* for messages */
    bool chown_to;               /* set_owner: given to uid/gid before the rename */
    uid_t uid;
    gid_t gid;
} local_upload;

static int local_upload_write(pq_upload *u, const void *buf, size_t len, pq_error *err)
{
    local_upload *lu = (local_upload *)u;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(lu->fd, (const char *)buf + done, len - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: write failed: %s",
                           lu->final_path, strerror(errno));
        }
        done += (size_t)n;
    }
    if (u->counters)
        atomic_fetch_add_explicit(&u->counters->write_bytes, len, memory_order_relaxed);
    return PQ_OK;
}

static void local_upload_free(local_upload *lu)
{
    if (lu->fd >= 0) close(lu->fd);
    if (lu->dir_fd >= 0) close(lu->dir_fd);
    free(lu->tmp_name);
    free(lu->final_name);
    free(lu->final_path);
    free(lu);
}

/* The group a new entry of the directory dir_fd gets: gid, or the
 * directory's where it is set-group-ID (as the kernel does for a mkdir or
 * open of the writer's own). */
static gid_t group_in(int dir_fd, gid_t gid)
{
    struct stat st;
    if (fstat(dir_fd, &st) == 0 && (st.st_mode & S_ISGID)) return st.st_gid;
    return gid;
}

static void local_upload_set_owner(pq_upload *u, uint32_t uid, uint32_t gid)
{
    local_upload *lu = (local_upload *)u;
    lu->chown_to = true;
    lu->uid = (uid_t)uid;
    lu->gid = (gid_t)gid;
}

static int local_upload_commit(pq_upload *u, pq_error *err)
{
    local_upload *lu = (local_upload *)u;
    int rc = PQ_OK;
    /* Given to its writer while still a temporary (a sweep then leaves it
     * alone: it is not the daemon's), never a file already in the lake. */
    if (lu->chown_to && fchown(lu->fd, lu->uid, group_in(lu->dir_fd, lu->gid)) != 0) {
        rc = pq_fail(err, PQ_E_IO, "%s: cannot give the file to uid %u: %s", lu->final_path, (unsigned)lu->uid,
                     strerror(errno));
        unlinkat(lu->dir_fd, lu->tmp_name, 0);
        local_upload_free(lu);
        return rc;
    }
    /* Made 0600; a lake file is for every reader of the lake.  Renamed
     * before it is closed: its lock tells a sweep it is live until then. */
    if (fchmod(lu->fd, 0644) != 0 || fsync(lu->fd) != 0) {
        rc = pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: cannot flush: %s",
                     lu->final_path, strerror(errno));
        unlinkat(lu->dir_fd, lu->tmp_name, 0);
    } else if (renameat(lu->dir_fd, lu->tmp_name, lu->dir_fd, lu->final_name) != 0) {
        rc = pq_fail(err, PQ_E_IO, "%s: cannot rename into place: %s", lu->final_path,
                     strerror(errno));
        unlinkat(lu->dir_fd, lu->tmp_name, 0);
    }
    local_upload_free(lu);
    return rc;
}

/* As local_upload_commit, the final name taken with a hard link, which
 * fails on a name that exists (put-if-absent), then the temporary gone. */
static int local_upload_commit_new(pq_upload *u, pq_error *err)
{
    local_upload *lu = (local_upload *)u;
    int rc = PQ_OK;
    if (lu->chown_to && fchown(lu->fd, lu->uid, group_in(lu->dir_fd, lu->gid)) != 0)
        rc = pq_fail(err, PQ_E_IO, "%s: cannot give the file to uid %u: %s", lu->final_path, (unsigned)lu->uid,
                     strerror(errno));
    else if (fchmod(lu->fd, 0644) != 0 || fsync(lu->fd) != 0)
        rc = pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: cannot flush: %s", lu->final_path,
                     strerror(errno));
    else if (linkat(lu->dir_fd, lu->tmp_name, lu->dir_fd, lu->final_name, 0) != 0)
        rc = pq_fail(err, errno == EEXIST ? PQ_E_EXISTS : PQ_E_IO, "%s: %s", lu->final_path,
                     errno == EEXIST ? "exists (another writer took the name)" : strerror(errno));
    unlinkat(lu->dir_fd, lu->tmp_name, 0);
    local_upload_free(lu);
    return rc;
}

static void local_upload_abort(pq_upload *u)
{
    local_upload *lu = (local_upload *)u;
    unlinkat(lu->dir_fd, lu->tmp_name, 0);
    local_upload_free(lu);
}

static const pq_upload_ops local_upload_ops = {local_upload_write, local_upload_commit, local_upload_abort,
                                               local_upload_set_owner, local_upload_commit_new};

/* Creates .NAME.tmp-XXXXXX in dir_fd (a new name: O_EXCL, never through a
 * link), its name in tmp, and locks it for the time of the write.  A
 * dot-prefixed name in the same directory: ignored by listings, and a
 * rename within one directory is atomic.  -1 with errno. */
static int make_temporary(int dir_fd, const char *name, char *tmp, size_t cap)
{
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static _Atomic uint64_t counter;
    int n = snprintf(tmp, cap, ".%s" TMP_TAG, name);
    if (n < 0 || (size_t)n + TMP_RANDOM >= cap) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[TMP_RANDOM];
        if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^
                         (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
            memcpy(r, &x, sizeof r);
        }
        for (int i = 0; i < TMP_RANDOM; i++) tmp[n + i] = alnum[r[i] % (sizeof alnum - 1)];
        tmp[n + TMP_RANDOM] = '\0';
        int fd = openat(dir_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            /* Where flock is not supported, no sweep can lock it either:
             * nothing is swept there. */
            (void)flock(fd, LOCK_EX);
            return fd;
        }
        if (errno != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

static int local_store_create(pq_store *s, const char *path, pq_upload **out, pq_error *err)
{
    local_store *ls = (local_store *)s;
    char full[PATH_MAX];
    PQ_TRY(join_path(ls, path, full, sizeof full, err));
    local_upload *lu = calloc(1, sizeof *lu);
    if (!lu) return PQ_NOMEM(err);
    lu->fd = lu->dir_fd = -1;
    const char *name;
    lu->dir_fd = open_parent(ls, path, &name);
    int e = errno;
    lu->final_path = strdup(full);
    lu->final_name = strdup(name);
    size_t tlen = strlen(name) + sizeof "." TMP_TAG + TMP_RANDOM;
    lu->tmp_name = malloc(tlen);
    if (!lu->final_path || !lu->final_name || !lu->tmp_name) {
        local_upload_free(lu);
        return PQ_NOMEM(err);
    }
    if (lu->dir_fd >= 0 && (lu->fd = make_temporary(lu->dir_fd, name, lu->tmp_name, tlen)) < 0) e = errno;
    if (lu->fd < 0) {
        local_upload_free(lu);
        return write_fail(ls, path, "cannot create", e, err);
    }
    lu->base.ops = &local_upload_ops;
    lu->base.counters = &s->counters;
    *out = &lu->base;
    return PQ_OK;
}

static int local_store_mkdir(pq_store *s, const char *path, pq_error *err)
{
    local_store *ls = (local_store *)s;
    const char *name;
    int pfd = open_parent(ls, path, &name);
    int e = errno;
    struct stat st;
    if (pfd >= 0 && mkdirat(pfd, name, 0755) == 0) e = 0;
    else if (pfd >= 0 && (e = errno) == EEXIST && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        e = S_ISDIR(st.st_mode) ? 0 : S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR; /* a link there is not followed */
    if (pfd >= 0) close(pfd);
    return e ? write_fail(ls, path, "cannot create directory", e, err) : PQ_OK;
}

static int local_store_rmdir(pq_store *s, const char *path, pq_error *err)
{
    local_store *ls = (local_store *)s;
    const char *name;
    int pfd = open_parent(ls, path, &name);
    int e = errno;
    if (pfd >= 0) e = unlinkat(pfd, name, AT_REMOVEDIR) == 0 ? 0 : errno; /* a link: ENOTDIR, not followed */
    if (pfd >= 0) close(pfd);
    return e ? write_fail(ls, path, "cannot remove directory", e, err) : PQ_OK;
}

static int local_store_remove(pq_store *s, const char *path, pq_error *err)
{
    local_store *ls = (local_store *)s;
    const char *name;
    int pfd = open_parent(ls, path, &name);
    int e = errno;
    if (pfd >= 0) e = unlinkat(pfd, name, 0) == 0 ? 0 : errno; /* a link itself, never its target */
    if (pfd >= 0) close(pfd);
    return e ? write_fail(ls, path, "cannot remove", e, err) : PQ_OK;
}

/* Relative to the parent's descriptor, following no link: a directory
 * swapped for a link meanwhile is not followed out of the lake. */
static int local_store_chown_dir(pq_store *s, const char *path, uint32_t uid, uint32_t gid, pq_error *err)
{
    local_store *ls = (local_store *)s;
    const char *name;
    int pfd = open_parent(ls, path, &name);
    int e = errno;
    if (pfd >= 0)
        e = fchownat(pfd, name, (uid_t)uid, group_in(pfd, (gid_t)gid), AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
    if (pfd >= 0) close(pfd);
    return e ? write_fail(ls, path, "cannot give the directory to its writer", e, err) : PQ_OK;
}

static void local_store_destroy(pq_store *s)
{
    local_store *ls = (local_store *)s;
    for (int b = 0; b < WARNED_BUCKETS; b++)
        while (ls->warned[b]) {
            warned_link *w = ls->warned[b];
            ls->warned[b] = w->next;
            free(w);
        }
    pthread_mutex_destroy(&ls->warned_mu);
    if (ls->root_fd >= 0) close(ls->root_fd);
    free(ls->dir);
    free(s->root);
    free(ls);
}

static const pq_store_ops local_store_ops = {
    local_store_open,   local_store_stat,  local_store_list,   local_store_create,
    local_store_mkdir,  local_store_destroy, local_store_rmdir, local_store_chown_dir,
    local_store_remove,
};

int pq_store_local_new(const char *root, pq_store **out, pq_error *err)
{
    char *abs = realpath(root, NULL);
    if (!abs) return pq_fail(err, PQ_E_IO, "%s: %s", root, strerror(errno));
    /* The root, once: every path is resolved beneath this descriptor. */
    int root_fd = open(abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0 && errno != ENOTDIR) {
        int e = errno;
        free(abs);
        return pq_fail(err, PQ_E_IO, "%s: %s", root, strerror(e));
    }
    local_store *ls = calloc(1, sizeof *ls);
    char *r = strdup(root);
    if (!ls || !r) {
        free(abs);
        free(ls);
        free(r);
        if (root_fd >= 0) close(root_fd);
        return PQ_NOMEM(err);
    }
    /* "/" as root joins as "//x": harmless, but keep it tidy. */
    if (!strcmp(abs, "/")) abs[0] = '\0';
    ls->base.ops = &local_store_ops;
    ls->base.root = r;
    ls->dir = abs;
    ls->base.local_dir = abs;
    ls->base.modified_granularity_ms = 1;
    ls->root_fd = root_fd;
    pthread_mutex_init(&ls->warned_mu, NULL);
    *out = &ls->base;
    return PQ_OK;
}

/* ------------------------------------------------------------------ leftovers */

bool pq_fd_abandoned(int fd, int64_t min_age_s)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) return false;
    if (min_age_s > 0 && (int64_t)time(NULL) - (int64_t)st.st_mtime <= min_age_s) return false;
    return flock(fd, LOCK_EX | LOCK_NB) == 0;
}

/* Whether name is a part file's temporary: .NAME.parquet.tmp-XXXXXX
 * (local_store_create of a part file, lake_write.c's <stem>-<hex>.parquet). */
static bool is_part_temporary(const char *name)
{
    static const char tag[] = ".parquet" TMP_TAG;
    size_t n = strlen(name), k = sizeof tag - 1;
    if (name[0] != '.' || n < 2 + k + TMP_RANDOM) return false;
    for (size_t i = n - TMP_RANDOM; i < n; i++)
        if (!isalnum((unsigned char)name[i])) return false;
    return !memcmp(name + n - TMP_RANDOM - k, tag, k);
}

/* Removes name from dir_fd when it is a dead writer's temporary. */
static bool sweep_temporary(int dir_fd, const char *name, int64_t min_age_s)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    /* Locked by us now: a writer that holds it is alive (and its name is
     * unique, so no other file takes it meanwhile). */
    bool removed = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pq_fd_abandoned(fd, min_age_s) &&
                   unlinkat(dir_fd, name, 0) == 0;
    close(fd);
    return removed;
}

/* After a temporary's removal from rel: rel, then each parent, while it is
 * a COL=VALUE directory now empty (rmdir refuses one that is not).  Table
 * directories and the root stay. */
static void remove_emptied(const local_store *ls, char *rel, pq_sweep_counts *out)
{
    for (;;) {
        char *slash = strrchr(rel, '/');
        const char *name = slash ? slash + 1 : rel;
        if (!strchr(name, '=') || name[0] == '=') return;
        int pfd = open_parent(ls, rel, &name);
        bool gone = pfd >= 0 && unlinkat(pfd, name, AT_REMOVEDIR) == 0;
        if (pfd >= 0) close(pfd);
        if (!gone) return;
        out->dirs++;
        if (!slash) return;
        *slash = '\0';
    }
}

/* Sweeps the directory rel; its subdirectories (real ones, not '.' or '_'
 * names) are pushed on *todo. */
static int sweep_dir(const local_store *ls, char *rel, int64_t min_age_s, char ***todo, size_t *n, size_t *cap,
                     pq_sweep_counts *out, pq_error *err)
{
    int fd = local_open_dir_nofollow(ls, rel, O_RDONLY);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) { /* gone, or a link swapped in: nothing of ours */
        if (fd >= 0) close(fd);
        return PQ_OK;
    }
    bool swept = false;
    int rc = PQ_OK;
    struct dirent *de;
    while (rc == PQ_OK && (de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        struct stat st;
        if (is_part_temporary(name)) {
            /* Nothing but a regular file is opened (not a device or FIFO so named). */
            bool regular = de->d_type != DT_UNKNOWN
                               ? de->d_type == DT_REG
                               : fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
            if (regular && sweep_temporary(fd, name, min_age_s)) {
                out->temporaries++;
                swept = true;
            }
            continue;
        }
        if (name[0] == '.' || name[0] == '_') continue;
        bool is_dir = de->d_type != DT_UNKNOWN ? de->d_type == DT_DIR
                                               : fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        if (!is_dir) continue;
        char **grown = *n < *cap ? *todo : realloc(*todo, sizeof **todo * (*cap = *cap * 2 + 16));
        char *sub = grown ? (rel[0] ? join_rest(rel, name) : strdup(name)) : NULL;
        if (grown) *todo = grown;
        if (!sub) rc = PQ_NOMEM(err);
        else (*todo)[(*n)++] = sub;
    }
    closedir(d);
    if (swept && rel[0]) remove_emptied(ls, rel, out);
    return rc;
}

int pq_store_local_sweep(pq_store *s, int64_t min_age_s, const _Atomic bool *stop, pq_sweep_counts *out,
                         pq_error *err)
{
    if (s->ops != &local_store_ops || ((local_store *)s)->root_fd < 0) return PQ_OK;
    const local_store *ls = (const local_store *)s;
    out->walked = true;
    char **todo = malloc(sizeof *todo * 16);
    size_t n = 0, cap = 16;
    if (!todo || !(todo[n++] = strdup(""))) {
        free(todo);
        return PQ_NOMEM(err);
    }
    int rc = PQ_OK;
    while (n && rc == PQ_OK && !(stop && atomic_load(stop))) {
        char *rel = todo[--n];
        rc = sweep_dir(ls, rel, min_age_s, &todo, &n, &cap, out, err);
        free(rel);
    }
    while (n) free(todo[--n]);
    free(todo);
    return rc;
}
