#include "io.h"

#include "fdcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void pq_io_count_read(pq_io_counters *c, size_t len)
{
    if (!c) return;
    atomic_fetch_add_explicit(&c->read_requests, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->read_bytes, len, memory_order_relaxed);
}

static void kept_lock(pq_file *f)
{
    while (atomic_flag_test_and_set_explicit(&f->kept_lock, memory_order_acquire)) {
    }
}

static void kept_unlock(pq_file *f)
{
    atomic_flag_clear_explicit(&f->kept_lock, memory_order_release);
}

/* Removes and returns a kept range overlapping [off, end), if any. */
static bool take_kept(pq_file *f, uint64_t off, uint64_t end, struct pq_kept_range *out)
{
    bool found = false;
    kept_lock(f);
    for (int i = 0; i < f->kept_cap && !found; i++) {
        struct pq_kept_range *k = &f->kept[i];
        if (k->bytes && off < k->off + k->len && k->off < end) {
            *out = *k;
            k->bytes = NULL;
            f->kept_bytes -= k->len;
            atomic_fetch_sub_explicit(&f->n_kept, 1, memory_order_relaxed);
            found = true;
        }
    }
    kept_unlock(f);
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
    if (len == 0 || off > UINT64_MAX - len) return f->ops->read_at(f, buf, len, off, err);
    uint64_t end = off + len;
    struct pq_kept_range k;
    if (atomic_load_explicit(&f->n_kept, memory_order_relaxed) > 0 && take_kept(f, off, end, &k)) {
        int rc = read_around(f, buf, len, off, k.bytes, k.off, k.len, err);
        free(k.bytes);
        return rc;
    }
    uint64_t t0 = f->kept_tail_off, t1 = t0 + f->kept_tail_len;
    if (f->kept_tail_len && off < t1 && end > t0)
        return read_around(f, buf, len, off, f->kept_tail, t0, f->kept_tail_len, err);
    return f->ops->read_at(f, buf, len, off, err);
}

void pq_file_keep_range(pq_file *f, uint8_t *bytes, uint64_t off, size_t len)
{
    if (!bytes || !len) {
        free(bytes);
        return;
    }
    kept_lock(f);
    if (len <= PQ_FILE_KEPT_BYTES - f->kept_bytes) {
        int slot = -1;
        for (int i = 0; i < f->kept_cap && slot < 0; i++)
            if (!f->kept[i].bytes) slot = i;
        if (slot < 0 && f->kept_cap < PQ_FILE_KEPT_MAX) {
            int cap = f->kept_cap ? f->kept_cap * 2 : 8;
            struct pq_kept_range *grown = realloc(f->kept, sizeof *grown * (size_t)cap);
            if (grown) {
                memset(grown + f->kept_cap, 0, sizeof *grown * (size_t)(cap - f->kept_cap));
                slot = f->kept_cap;
                f->kept = grown;
                f->kept_cap = cap;
            }
        }
        if (slot >= 0) {
            f->kept[slot] = (struct pq_kept_range){bytes, off, len};
            f->kept_bytes += len;
            atomic_fetch_add_explicit(&f->n_kept, 1, memory_order_relaxed);
            bytes = NULL;
        }
    }
    kept_unlock(f);
    free(bytes);
}

void pq_file_keep_tail(pq_file *f, uint8_t *bytes, uint64_t off, size_t len)
{
    free(f->kept_tail);
    f->kept_tail = len ? bytes : NULL;
    f->kept_tail_off = off;
    f->kept_tail_len = len;
    if (!len) free(bytes);
}

int pq_file_check_listed(const pq_file *f, const pq_stat *listed, pq_error *err)
{
    if (!f->has_identity || (f->opened.size == listed->size && f->opened.mtime_ns == listed->mtime_ns)) return PQ_OK;
    return pq_fail(err, PQ_E_STALE, "%s: changed since it was listed (%llu bytes, listed with %llu)", f->name,
                   (unsigned long long)f->opened.size, (unsigned long long)listed->size);
}

void pq_file_close(pq_file *f)
{
    if (!f) return;
    free(f->kept_tail);
    for (int i = 0; i < f->kept_cap; i++) free(f->kept[i].bytes);
    free(f->kept);
    f->ops->close(f);
}

/* ------------------------------------------------------------------ local file */

typedef struct local_store {
    pq_store base;
    char *dir;                   /* absolute root directory */
} local_store;

/* Every open of a lake file for reading: `rel` relative to the store's root. */
static int local_open_path(const local_store *ls, const char *rel, int flags)
{
    char full[PATH_MAX];
    int n = snprintf(full, sizeof full, "%s%s%s", ls->dir, rel[0] ? "/" : "", rel);
    if (n < 0 || (size_t)n >= sizeof full) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(full, flags);
}

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
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
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
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
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
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
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

static int join_path(local_store *ls, const char *rel, char *out, size_t cap, pq_error *err)
{
    int n = snprintf(out, cap, "%s%s%s", ls->dir, rel[0] ? "/" : "", rel);
    if (n < 0 || (size_t)n >= cap)
        return pq_fail(err, PQ_E_USAGE, "%s/%s: path too long", ls->dir, rel);
    return PQ_OK;
}

static int local_store_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    char full[PATH_MAX];
    PQ_TRY(join_path((local_store *)s, path, full, sizeof full, err));
    return local_file_open((local_store *)s, path, strdup(full), &s->counters, out, err);
}


static int local_store_stat(pq_store *s, const char *path, pq_stat *out, pq_error *err)
{
    char full[PATH_MAX];
    PQ_TRY(join_path((local_store *)s, path, full, sizeof full, err));
    struct stat st;
    if (stat(full, &st) != 0)
        return pq_fail(err, PQ_E_IO, "%s: %s", full, strerror(errno));
    fill_stat(&st, out);
    return PQ_OK;
}

static int local_store_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    char full[PATH_MAX];
    PQ_TRY(join_path((local_store *)s, dir, full, sizeof full, err));
    DIR *d = opendir(full);
    if (!d) return pq_fail(err, PQ_E_IO, "%s: cannot list: %s", full, strerror(errno));
    atomic_fetch_add_explicit(&s->counters.list_requests, 1, memory_order_relaxed);
    int fd = dirfd(d);
    struct dirent *de;
    int rc = PQ_OK;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        struct stat st;
        if (fstatat(fd, de->d_name, &st, 0) != 0) continue; /* vanished or dangling */
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
    int fd;
    char *tmp_path;
    char *final_path;
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
    free(lu->tmp_path);
    free(lu->final_path);
    free(lu);
}

static int local_upload_commit(pq_upload *u, pq_error *err)
{
    local_upload *lu = (local_upload *)u;
    int rc = PQ_OK;
    /* mkostemp made it 0600; a lake file is for every reader of the lake. */
    if (fchmod(lu->fd, 0644) != 0 || fsync(lu->fd) != 0 || close(lu->fd) != 0) {
        rc = pq_fail(err, errno == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: cannot flush: %s",
                     lu->final_path, strerror(errno));
        unlink(lu->tmp_path);
    } else if (rename(lu->tmp_path, lu->final_path) != 0) {
        rc = pq_fail(err, PQ_E_IO, "%s: cannot rename into place: %s", lu->final_path,
                     strerror(errno));
        unlink(lu->tmp_path);
    }
    local_upload_free(lu);
    return rc;
}

static void local_upload_abort(pq_upload *u)
{
    local_upload *lu = (local_upload *)u;
    close(lu->fd);
    unlink(lu->tmp_path);
    local_upload_free(lu);
}

static const pq_upload_ops local_upload_ops = {local_upload_write, local_upload_commit,
                                               local_upload_abort};

static int local_store_create(pq_store *s, const char *path, pq_upload **out, pq_error *err)
{
    char full[PATH_MAX];
    PQ_TRY(join_path((local_store *)s, path, full, sizeof full, err));
    local_upload *lu = calloc(1, sizeof *lu);
    if (!lu) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    lu->final_path = strdup(full);
    size_t tlen = strlen(full) + 32;
    lu->tmp_path = malloc(tlen);
    if (!lu->final_path || !lu->tmp_path) {
        local_upload_free(lu);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    /* A dot-prefixed temp name in the same directory: ignored by listings,
     * and rename() within one directory is atomic. */
    char *slash = strrchr(full, '/');
    size_t dirlen = slash ? (size_t)(slash - full) + 1 : 0;
    snprintf(lu->tmp_path, tlen, "%.*s.%s.tmp-XXXXXX", (int)dirlen, full, full + dirlen);
    lu->fd = mkostemp(lu->tmp_path, O_CLOEXEC);
    if (lu->fd < 0) {
        int e = errno;
        local_upload_free(lu);
        return pq_fail(err, e == ENOSPC ? PQ_E_NOSPACE : PQ_E_IO, "%s: cannot create: %s", full,
                       strerror(e));
    }
    lu->base.ops = &local_upload_ops;
    lu->base.counters = &s->counters;
    *out = &lu->base;
    return PQ_OK;
}

static int local_store_mkdir(pq_store *s, const char *path, pq_error *err)
{
    char full[PATH_MAX];
    PQ_TRY(join_path((local_store *)s, path, full, sizeof full, err));
    if (mkdir(full, 0755) != 0 && errno != EEXIST)
        return pq_fail(err, PQ_E_IO, "%s: cannot create directory: %s", full, strerror(errno));
    return PQ_OK;
}

static int local_store_rmdir(pq_store *s, const char *path, pq_error *err)
{
    char full[PATH_MAX];
    PQ_TRY(join_path((local_store *)s, path, full, sizeof full, err));
    if (rmdir(full) != 0) return pq_fail(err, PQ_E_IO, "%s: cannot remove directory: %s", full, strerror(errno));
    return PQ_OK;
}

static void local_store_destroy(pq_store *s)
{
    local_store *ls = (local_store *)s;
    free(ls->dir);
    free(s->root);
    free(ls);
}

static const pq_store_ops local_store_ops = {
    local_store_open,   local_store_stat,  local_store_list,   local_store_create,
    local_store_mkdir,  local_store_destroy, local_store_rmdir,
};

int pq_store_local_new(const char *root, pq_store **out, pq_error *err)
{
    char *abs = realpath(root, NULL);
    if (!abs) return pq_fail(err, PQ_E_IO, "%s: %s", root, strerror(errno));
    local_store *ls = calloc(1, sizeof *ls);
    char *r = strdup(root);
    if (!ls || !r) {
        free(abs);
        free(ls);
        free(r);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    /* "/" as root joins as "//x": harmless, but keep it tidy. */
    if (!strcmp(abs, "/")) abs[0] = '\0';
    ls->base.ops = &local_store_ops;
    ls->base.root = r;
    ls->dir = abs;
    *out = &ls->base;
    return PQ_OK;
}
