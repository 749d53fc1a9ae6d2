#include "fs.h"
#include "mem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_SIZE (1u << 20)
#define INODE_BUCKETS 4096

/* An inode: a path the kernel holds a reference to.  Numbers are never
 * reused while the kernel holds them (lookup count > 0). */
typedef struct inode {
    struct inode *next_by_path, *next_by_ino;
    fuse_ino_t ino;
    char *path;                  /* relative to the mount root, "" for the root */
    uint64_t nlookup;
    /* A data.parquet: the version of its bytes (pq_lake_attr.version) and
     * their size.  One inode per version, so the page cache of an inode
     * only ever holds one version's bytes: it is opened without direct I/O
     * (mmap, sendfile work) and a new version is a new inode. */
    uint64_t version, size;
    int64_t mtime_ns;            /* that version's time (pq_lake_attr.mtime_ns) */
    /* The owner and mode its last lookup reported (has_owner), for the
     * answers that do not ask the lake again (an open file's size). */
    bool has_owner;
    uint32_t mode, uid, gid;
} inode;

/* A handle the kernel holds: an open file or directory.  At unmount the
 * kernel can tear the connection down without sending RELEASE for the last
 * ones (a lazy unmount while files are open, SIGTERM during reads), so they
 * are kept in a list and pqfs_fs_free releases what is left: no result job
 * may outlive the lake. */
typedef struct open_handle {
    struct open_handle *prev, *next;
    pq_lake_handle *file;        /* a file, or */
    struct dir_listing *dir;     /* a directory listing, or */
    pq_lake_open_upload *upload; /* a file being written (the lake's write lifecycle has it) */
    /* The kernel's reference plus one per READ being answered: a reply
     * points into the file's bytes, and the reader it completes may close
     * the file (RELEASE on another thread) before fuse_reply_buf returns. */
    _Atomic int refs;
} open_handle;

struct pqfs_fs {
    pq_lake *lake;
    pqfs_fs_opts o;
    struct fuse_session *se;
    pthread_mutex_t mu;
    inode *by_path[INODE_BUCKETS];
    inode *by_ino[INODE_BUCKETS];
    time_t mount_time;
    open_handle *open;           /* under mu */
    /* Files being written, parked or just written, by name: the lake's
     * write lifecycle decides what their requests mean.  Its lock comes
     * before mu (it relabels inodes under it: relabel), so nothing calls
     * into it while holding mu. */
    pq_lake_uploads *uploads;
};

int pqfs_errno(const pq_error *err)
{
    switch (err->cls) {
    case PQ_E_NOTFOUND: return ENOENT;
    case PQ_E_USAGE: return EINVAL;
    case PQ_E_NOMEM: return ENOMEM;
    case PQ_E_NOSPACE: return ENOSPC;
    case PQ_E_CANCELLED: return EINTR;
    case PQ_E_READONLY: return EROFS;
    case PQ_E_DENIED: return EPERM;
    case PQ_E_STALE: return ESTALE;
    case PQ_E_ACCESS: return EACCES;
    case PQ_E_EXISTS: return EEXIST;
    case PQ_E_CLOSED: return EBADF;
    case PQ_E_UNSUPPORTED: return EIO;
    case PQ_E_CORRUPT: case PQ_E_IO: default: return EIO;
    }
}

static pqfs_fs *fs_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

static open_handle *track(pqfs_fs *fs, pq_lake_handle *file, struct dir_listing *dir, pq_lake_open_upload *upload)
{
    open_handle *oh = calloc(1, sizeof *oh);
    if (!oh) return NULL;
    oh->file = file;
    oh->dir = dir;
    oh->upload = upload;
    atomic_init(&oh->refs, 1);
    pthread_mutex_lock(&fs->mu);
    oh->next = fs->open;
    if (fs->open) fs->open->prev = oh;
    fs->open = oh;
    pthread_mutex_unlock(&fs->mu);
    return oh;
}

static void untrack(pqfs_fs *fs, open_handle *oh)
{
    pthread_mutex_lock(&fs->mu);
    if (oh->prev) oh->prev->next = oh->next;
    else fs->open = oh->next;
    if (oh->next) oh->next->prev = oh->prev;
    pthread_mutex_unlock(&fs->mu);
    free(oh);
}

/* Drops a reference to an open file; the last one releases it. */
static void file_handle_put(pqfs_fs *fs, open_handle *oh)
{
    if (atomic_fetch_sub(&oh->refs, 1) != 1) return;
    pq_lake_release(oh->file);
    untrack(fs, oh);
}

static open_handle *handle_of(const struct fuse_file_info *fi)
{
    return (open_handle *)(uintptr_t)fi->fh;
}

/* The path of an inode, copied (the inode may be forgotten meanwhile). */
/* Under mu: the live inode numbered ino, or NULL. */
static inode *inode_locked(const pqfs_fs *fs, fuse_ino_t ino)
{
    for (inode *n = fs->by_ino[ino % INODE_BUCKETS]; n; n = n->next_by_ino)
        if (n->ino == ino) return n;
    return NULL;
}

/* Under mu: takes n out of the by-path table (its path is about to change,
 * or it is freed). */
static void unlink_by_path_locked(pqfs_fs *fs, inode *n)
{
    inode **pp = &fs->by_path[pq_hash_str(n->path) % INODE_BUCKETS];
    while (*pp && *pp != n) pp = &(*pp)->next_by_path;
    if (*pp) *pp = n->next_by_path;
}

static char *path_of(pqfs_fs *fs, fuse_ino_t ino)
{
    if (ino == FUSE_ROOT_ID) return strdup("");
    pthread_mutex_lock(&fs->mu);
    const inode *n = inode_locked(fs, ino);
    char *p = n ? strdup(n->path) : NULL;
    pthread_mutex_unlock(&fs->mu);
    return p;
}

/* The number a path's inode gets: a hash of the path, so that readdir's
 * d_ino, stat's st_ino and the next mount agree (find -inum, tar and
 * rsync compare them).  remember() takes the next free number on the rare
 * collision with a live inode. */
static fuse_ino_t ino_of_path(const char *path)
{
    if (!path[0]) return FUSE_ROOT_ID;
    uint64_t h = pq_hash_str(path);
    return h <= FUSE_ROOT_ID ? h + 2 : h;
}

/* The inode of a path (and version), created or referenced (lookup count
 * + 1). */
static fuse_ino_t remember(pqfs_fs *fs, const char *path, const pq_lake_attr *a)
{
    uint64_t version = a ? a->version : 0;
    uint64_t h = pq_hash_str(path) % INODE_BUCKETS;
    pthread_mutex_lock(&fs->mu);
    for (inode *n = fs->by_path[h]; n; n = n->next_by_path)
        if (n->version == version && !strcmp(n->path, path)) {
            n->nlookup++;
            if (a && a->has_owner) {
                n->has_owner = true;
                n->mode = a->mode, n->uid = a->uid, n->gid = a->gid;
            }
            fuse_ino_t ino = n->ino;
            pthread_mutex_unlock(&fs->mu);
            return ino;
        }
    inode *n = calloc(1, sizeof *n);
    char *p = strdup(path);
    if (!n || !p) {
        free(n);
        free(p);
        pthread_mutex_unlock(&fs->mu);
        return 0;
    }
    n->path = p;
    n->version = version;
    n->size = version ? a->size : 0;
    n->mtime_ns = version ? a->mtime_ns : 0;
    if (a && a->has_owner) {
        n->has_owner = true;
        n->mode = a->mode, n->uid = a->uid, n->gid = a->gid;
    }
    fuse_ino_t ino_want = ino_of_path(path);
    while (ino_want <= FUSE_ROOT_ID || inode_locked(fs, ino_want)) ino_want++;
    n->ino = ino_want;
    n->nlookup = 1;
    n->next_by_path = fs->by_path[h];
    fs->by_path[h] = n;
    n->next_by_ino = fs->by_ino[n->ino % INODE_BUCKETS];
    fs->by_ino[n->ino % INODE_BUCKETS] = n;
    fuse_ino_t ino = n->ino;
    pthread_mutex_unlock(&fs->mu);
    return ino;
}

static void forget_one(pqfs_fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
    if (ino == FUSE_ROOT_ID) return;
    pthread_mutex_lock(&fs->mu);
    inode **pi = &fs->by_ino[ino % INODE_BUCKETS];
    while (*pi && (*pi)->ino != ino) pi = &(*pi)->next_by_ino;
    inode *n = *pi;
    if (n) {
        n->nlookup = nlookup >= n->nlookup ? 0 : n->nlookup - nlookup;
        if (n->nlookup == 0) {
            *pi = n->next_by_ino;
            unlink_by_path_locked(fs, n);
            free(n->path);
            free(n);
        }
    }
    pthread_mutex_unlock(&fs->mu);
}

/* The owner and mode to report: the lake's (a, else what the inode's last
 * lookup said) when the mount reports owners; the mounting user's
 * otherwise, and for /.pqfs (errors: the owner's only, on a shared mount). */
static void fill_owner(pqfs_fs *fs, fuse_ino_t ino, const pq_lake_attr *a, struct stat *st)
{
    st->st_mode = a->is_dir ? (S_IFDIR | (fs->o.read_only ? 0555 : 0755)) : (S_IFREG | 0444);
    if (a->owner_only && fs->o.multi_user) st->st_mode = S_IFREG | 0600;
    st->st_uid = getuid();
    st->st_gid = getgid();
    if (!fs->o.report_owners) return;
    bool has = a->has_owner;
    uint32_t mode = a->mode, uid = a->uid, gid = a->gid;
    if (!has) {
        pthread_mutex_lock(&fs->mu);
        const inode *n = inode_locked(fs, ino);
        if (n && n->has_owner) {
            has = true;
            mode = n->mode, uid = n->uid, gid = n->gid;
        }
        pthread_mutex_unlock(&fs->mu);
    }
    if (!has) return;
    st->st_mode = (a->is_dir ? S_IFDIR : S_IFREG) | (mode & 07777);
    st->st_uid = (uid_t)uid;
    st->st_gid = (gid_t)gid;
}

static void fill_stat(pqfs_fs *fs, fuse_ino_t ino, const pq_lake_attr *a, struct stat *st)
{
    memset(st, 0, sizeof *st);
    st->st_ino = ino;
    fill_owner(fs, ino, a, st);
    st->st_nlink = a->is_dir ? 2 : 1;
    st->st_size = (off_t)a->size;
    st->st_blksize = BLOCK_SIZE;
    st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
    time_t t = a->mtime_ns ? (time_t)(a->mtime_ns / 1000000000) : fs->mount_time;
    st->st_mtim.tv_sec = st->st_ctim.tv_sec = st->st_atim.tv_sec = t;
}

/* Entries of files whose size can change are never cached by the kernel. */
static double attr_timeout(const pqfs_fs *fs, const pq_lake_attr *a)
{
    return a->is_dir ? fs->o.entry_timeout : 0.0;
}

/* A name being written, or just written: a regular file the writer may
 * chmod (0644), of the bytes written so far, whose entry and attributes
 * the kernel must not cache (the name is not in the lake, or not for long). */
/* On a shared mount it is the caller's: the name is no file of the lake,
 * and whoever may write into its directory may write it again (a new
 * file, as a create makes). */
static void fill_written_stat(fuse_req_t req, pqfs_fs *fs, fuse_ino_t ino, uint64_t size, struct stat *st)
{
    pq_lake_attr a = {.size = size, .size_final = true};
    fill_stat(fs, ino, &a, st);
    st->st_mode = S_IFREG | 0644;
    if (fs->o.multi_user) {
        st->st_uid = fuse_req_ctx(req)->uid;
        st->st_gid = fuse_req_ctx(req)->gid;
    }
    /* Not the mount's time: a copy tool's quick check (size and time, as
     * rsync's) must not take a file being written, or just written, for
     * one it has. */
    clock_gettime(CLOCK_REALTIME, &st->st_mtim);
    st->st_ctim = st->st_atim = st->st_mtim;
}

/* The caller of a write on a multi-user mount, as the engine checks it:
 * uid and gid from the request, the supplementary groups from
 * /proc/PID/task/PID/status (pq_proc_groups; none when it cannot be
 * read: another PID namespace, which can only refuse more, never grant). */
typedef struct caller {
    pq_cred cred;
    uint32_t *groups;
} caller;

static const pq_cred *caller_of(fuse_req_t req, const pqfs_fs *fs, caller *c)
{
    c->groups = NULL;
    if (!fs->o.multi_user) return NULL;
    const struct fuse_ctx *ctx = fuse_req_ctx(req);
    c->cred = (pq_cred){.uid = ctx->uid, .gid = ctx->gid};
    int n = pq_proc_groups(ctx->pid, &c->groups);
    c->cred.groups = c->groups;
    c->cred.n_groups = n > 0 && c->groups ? n : 0;
    return &c->cred;
}

static void caller_free(caller *c)
{
    free(c->groups);
}

static void reply_error(fuse_req_t req, const pq_error *err)
{
    /* Stopped because the mount is going away, not because the caller was
     * interrupted: the connection's errno, as the kernel gives after. */
    const pqfs_fs *fs = fuse_req_userdata(req);
    if (err->cls == PQ_E_CANCELLED && fs && fs->se && fuse_session_exited(fs->se)) {
        fuse_reply_err(req, ENOTCONN);
        return;
    }
    fuse_reply_err(req, pqfs_errno(err));
}

/* A failure only the adapter sees (a forgotten inode, no memory for a
 * reply, a read-only mount), by its class: the errno still comes from
 * pqfs_errno. */
static void reply_class(fuse_req_t req, pq_errclass cls)
{
    pq_error e = {.cls = cls};
    reply_error(req, &e);
}

/* Writes (SPEC section 6): only new files in table and partition
 * directories, and mkdir of tables and partitions. */
static bool refuse_if_read_only(fuse_req_t req, const pqfs_fs *fs)
{
    if (!fs->o.read_only) return false;
    reply_class(req, PQ_E_READONLY);
    return true;
}

/* ------------------------------------------------------------------ operations */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
    (void)userdata;
    /* 1 MiB requests: libfuse derives the kernel's max_pages from max_write. */
    conn->max_write = BLOCK_SIZE;
    conn->max_read = BLOCK_SIZE; /* must equal the max_read mount option */
    conn->max_readahead = BLOCK_SIZE;
    conn->want &= ~FUSE_CAP_ASYNC_READ;
}

typedef struct stop_ctx {
    fuse_req_t req;
    pqfs_fs *fs;
} stop_ctx;

/* A read, or a lookup that materializes data.parquet, gives up when the
 * request was interrupted or the mount is going. */
static bool read_should_stop(void *p)
{
    stop_ctx *s = p;
    return fuse_req_interrupted(s->req) || (s->fs->se && fuse_session_exited(s->fs->se));
}

/* A data.parquet inode's version and size; false for other inodes. */
static bool version_of(pqfs_fs *fs, fuse_ino_t ino, uint64_t *version, uint64_t *size, int64_t *mtime_ns)
{
    pthread_mutex_lock(&fs->mu);
    const inode *n = inode_locked(fs, ino);
    bool found = n && n->version != 0;
    if (found) {
        *version = n->version;
        *size = n->size;
        if (mtime_ns) *mtime_ns = n->mtime_ns;
    }
    pthread_mutex_unlock(&fs->mu);
    return found;
}

/* The path of `name` in directory `parent`, or NULL with the error replied. */
static char *path_in(fuse_req_t req, pqfs_fs *fs, fuse_ino_t parent, const char *name)
{
    char *pp = path_of(fs, parent);
    char *path = pp ? pq_path_join(pp, name) : NULL;
    free(pp);
    if (!path) reply_class(req, pp ? PQ_E_NOMEM : PQ_E_STALE);
    return path;
}

/* Replies an entry for `path` (freed) with attributes `a`; `written`: a
 * name just written (fill_written_stat, not cached). */
static void reply_entry_of(fuse_req_t req, pqfs_fs *fs, char *path, const pq_lake_attr *a, bool written)
{
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.ino = remember(fs, path, written ? NULL : a);
    free(path);
    if (!e.ino) {
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    if (written) {
        fill_written_stat(req, fs, e.ino, a->size, &e.attr);
    } else {
        fill_stat(fs, e.ino, a, &e.attr);
        e.attr_timeout = attr_timeout(fs, a);
        /* A data.parquet name is looked up again at every open: its inode
         * is one version of the view, and a write may have made a newer
         * one (after close() every view has the rows, SPEC 6).  The open
         * then takes the version that lookup made, however the lake moved
         * on in between (pq_lake_open_file). */
        e.entry_timeout = a->version ? 0.0 : fs->o.entry_timeout;
    }
    if (fuse_reply_entry(req, &e) != 0) forget_one(fs, e.ino, 1);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    pqfs_fs *fs = fs_of(req);
    char *path = path_in(req, fs, parent, name);
    if (!path) return;
    pq_error err;
    pq_error_clear(&err);
    pq_lake_attr a;
    stop_ctx sc = {req, fs};
    if (pq_lake_stat(fs->lake, path, &a, read_should_stop, &sc, &err) != PQ_OK) {
        /* Not in the lake: a name being written, parked or just written? */
        pq_lake_attr wa = {.size_final = true};
        if (err.cls == PQ_E_NOTFOUND && pq_lake_uploads_stat(fs->uploads, path, 0, &wa.size)) {
            reply_entry_of(req, fs, path, &wa, true);
            return;
        }
        free(path);
        reply_error(req, &err);
        return;
    }
    reply_entry_of(req, fs, path, &a, false);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
    forget_one(fs_of(req), ino, nlookup);
    fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
    for (size_t i = 0; i < count; i++) forget_one(fs_of(req), forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
}

/* The attributes of a file being written. */
static void reply_upload_attr(fuse_req_t req, pqfs_fs *fs, fuse_ino_t ino, uint64_t size)
{
    struct stat st;
    fill_written_stat(req, fs, ino, size, &st);
    fuse_reply_attr(req, &st, 0);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    pqfs_fs *fs = fs_of(req);
    pq_lake_attr a;
    pq_error err;
    pq_error_clear(&err);
    if (fi && fi->fh && handle_of(fi)->file) {
        /* An open file: its own snapshot's size once it is final. */
        uint64_t size;
        if (pq_lake_handle_size(handle_of(fi)->file, &size)) {
            struct stat st;
            pq_lake_attr fa = {.size = size, .size_final = true};
            fill_stat(fs, ino, &fa, &st);
            fuse_reply_attr(req, &st, 0);
            return;
        }
    }
    /* A file being written is not in the lake yet (its staged size), nor
     * one parked or just written (under another name there). */
    char *path = path_of(fs, ino);
    uint64_t staged = 0;
    if (pq_lake_uploads_stat(fs->uploads, path, ino, &staged)) {
        free(path);
        reply_upload_attr(req, fs, ino, staged);
        return;
    }
    uint64_t version, vsize;
    int64_t vtime;
    if (version_of(fs, ino, &version, &vsize, &vtime)) {
        /* Its version's size and time, for good: a newer version of the
         * path is another inode, which the next lookup of the name finds. */
        struct stat st;
        pq_lake_attr va = {.size = vsize, .size_final = true, .version = version, .mtime_ns = vtime};
        fill_stat(fs, ino, &va, &st);
        fuse_reply_attr(req, &st, attr_timeout(fs, &va));
        free(path);
        return;
    }
    if (!path) {
        reply_class(req, PQ_E_STALE);
        return;
    }
    stop_ctx sc = {req, fs};
    int rc = pq_lake_stat(fs->lake, path, &a, read_should_stop, &sc, &err);
    free(path);
    if (rc != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    struct stat st;
    fill_stat(fs, ino, &a, &st);
    fuse_reply_attr(req, &st, attr_timeout(fs, &a));
}

/* A directory listing taken at opendir, served by offset. */
typedef struct dir_listing {
    char *path;                  /* the directory's */
    char **names;
    bool *is_dir;
    size_t n, cap;
} dir_listing;

static int collect_entry(void *ctx, const char *name, const pq_lake_attr *a)
{
    dir_listing *d = ctx;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        char **names = realloc(d->names, cap * sizeof *names);
        if (names) d->names = names;
        bool *dirs = realloc(d->is_dir, cap * sizeof *dirs);
        if (dirs) d->is_dir = dirs;
        if (!names || !dirs) return 1;
        d->cap = cap;
    }
    d->names[d->n] = strdup(name);
    if (!d->names[d->n]) return 1;
    d->is_dir[d->n++] = a->is_dir;
    return 0;
}

static void listing_free(dir_listing *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n; i++) free(d->names[i]);
    free(d->path);
    free(d->names);
    free(d->is_dir);
    free(d);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    pqfs_fs *fs = fs_of(req);
    char *path = path_of(fs, ino);
    dir_listing *d = calloc(1, sizeof *d);
    if (!path || !d) {
        free(path);
        free(d);
        reply_class(req, path ? PQ_E_NOMEM : PQ_E_STALE);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    int rc = pq_lake_readdir(fs->lake, path, collect_entry, d, &err);
    d->path = path;
    if (rc != PQ_OK) {
        listing_free(d);
        reply_error(req, &err);
        return;
    }
    open_handle *oh = track(fs, NULL, d, NULL);
    if (!oh) {
        listing_free(d);
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)oh;
    fi->cache_readdir = 0;
    if (fuse_reply_open(req, fi) != 0) {
        untrack(fs, oh);
        listing_free(d);
    }
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)ino;
    dir_listing *d = handle_of(fi)->dir;
    char *buf = malloc(size);
    if (!buf) {
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    size_t used = 0;
    /* Offsets: 1 = ".", 2 = "..", 2 + i + 1 = entry i. */
    for (off_t i = off; (size_t)i < d->n + 2; i++) {
        struct stat st;
        memset(&st, 0, sizeof st);
        const char *name;
        char *of = NULL; /* the path whose inode number d_ino is */
        if (i == 0) {
            name = ".";
            st.st_mode = S_IFDIR;
            of = strdup(d->path);
        } else if (i == 1) {
            name = "..";
            st.st_mode = S_IFDIR;
            const char *slash = strrchr(d->path, '/');
            of = strndup(d->path, slash ? (size_t)(slash - d->path) : 0);
        } else {
            name = d->names[i - 2];
            st.st_mode = d->is_dir[i - 2] ? S_IFDIR : S_IFREG;
            of = pq_path_join(d->path, name);
        }
        /* As lookup will number it (but for a collision); never 0, which
         * readdir(3) skips. */
        st.st_ino = of ? (ino_t)ino_of_path(of) : (ino_t)(i + 1);
        free(of);
        size_t need = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
        if (need > size - used) break;
        used += need;
    }
    fuse_reply_buf(req, buf, used);
    free(buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    open_handle *oh = handle_of(fi);
    listing_free(oh->dir);
    untrack(fs_of(req), oh);
    fuse_reply_err(req, 0);
}

/* An open for writing: of a name being written, parked or just written
 * (it still stats for a while, so the kernel opens it instead of creating
 * it), a new file, as a create would make (cp to the same name twice, a
 * loop reusing a name); of anything else, EPERM (pq_lake_uploads_reopen). */
static void open_for_write(fuse_req_t req, pqfs_fs *fs, fuse_ino_t ino, struct fuse_file_info *fi)
{
    if (refuse_if_read_only(req, fs)) return;
    char *path = path_of(fs, ino);
    if (!path) {
        reply_class(req, PQ_E_DENIED);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    pq_lake_open_upload *u;
    caller who;
    int rc = pq_lake_uploads_reopen(fs->uploads, path, caller_of(req, fs, &who), fuse_req_ctx(req)->pid, ino, &u,
                                    &err);
    caller_free(&who);
    free(path);
    if (rc != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    open_handle *oh = track(fs, NULL, NULL, u);
    if (!oh) {
        pq_lake_uploads_discard(u);
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)oh;
    fi->direct_io = 1;
    if (fuse_reply_open(req, fi) != 0) {
        pq_lake_uploads_discard(u);
        untrack(fs, oh);
    }
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    pqfs_fs *fs = fs_of(req);
    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
        open_for_write(req, fs, ino, fi);
        return;
    }
    char *path = path_of(fs, ino);
    if (!path) {
        reply_class(req, PQ_E_STALE);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    pq_lake_handle *h;
    stop_ctx sc = {req, fs};
    uint64_t version = 0, vsize;
    bool versioned = version_of(fs, ino, &version, &vsize, NULL);
    /* That version's result while the lake holds it, whatever was written
     * since the lookup; ESTALE only when it was evicted and the view has
     * changed: the kernel then looks the name up again. */
    int rc = pq_lake_open_file(fs->lake, path, version, &h, read_should_stop, &sc, &err);
    /* A name written (or being written) stats, but is not readable. */
    if (rc != PQ_OK && err.cls == PQ_E_NOTFOUND) (void)pq_lake_uploads_refuse_read(fs->uploads, path, &err);
    free(path);
    if (rc != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    open_handle *oh = track(fs, h, NULL, NULL);
    if (!oh) {
        pq_lake_release(h);
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    fi->fh = (uint64_t)(uintptr_t)oh;
    /* data.csv's size is unknown until its result is complete: every read
     * must come to us.  A data.parquet inode holds one version's bytes: the
     * page cache may keep them (mmap, sendfile), dropped at each open all
     * the same, since an evicted result is materialized again. */
    fi->direct_io = !versioned;
    fi->keep_cache = 0;
    fi->nonseekable = 0;
    if (fuse_reply_open(req, fi) != 0) {
        untrack(fs, oh);
        pq_lake_release(h);
    }
}

/* Answers a READ once: in place when the bytes can be addressed, else copied. */
static void read_reply(fuse_req_t req, pqfs_fs *fs, pq_lake_handle *h, size_t size, off_t off)
{
    pq_error err;
    pq_error_clear(&err);
    stop_ctx sc = {req, fs};
    /* The whole request is answered once its bytes exist: short reads only
     * at the end (a reader may take a short read for the end of file). */
    const char *data;
    size_t avail;
    if (pq_lake_peek(h, (uint64_t)off, size, &data, &avail, read_should_stop, &sc, &err) != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    if (data || avail == 0) {
        /* In place: the kernel copies straight from the result's pages. */
        fuse_reply_buf(req, data, avail);
        return;
    }
    /* Not addressable (the cache file could not be mapped): copy the bytes
     * peek found, which are there, so this read does not wait. */
    char *buf = malloc(avail);
    if (!buf) {
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    size_t got;
    if (pq_lake_read(h, buf, avail, (uint64_t)off, &got, read_should_stop, &sc, &err) != PQ_OK) reply_error(req, &err);
    else fuse_reply_buf(req, buf, got);
    free(buf);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)ino;
    pqfs_fs *fs = fs_of(req);
    open_handle *oh = handle_of(fi);
    if (!oh->file) {
        /* A file being written (opened read-write): its bytes are parsed
         * at close, not readable before. */
        reply_class(req, PQ_E_USAGE);
        return;
    }
    atomic_fetch_add(&oh->refs, 1);
    read_reply(req, fs, oh->file, size, off);
    file_handle_put(fs, oh);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    pqfs_fs *fs = fs_of(req);
    open_handle *oh = handle_of(fi);
    if (oh->upload) {
        /* The last close of a file written: what its flushes left to do
         * (its outcome only logged: close() returned already). */
        pq_lake_uploads_release(oh->upload);
        untrack(fs, oh);
        fuse_reply_err(req, 0);
        return;
    }
    file_handle_put(fs, oh);
    fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
    (void)ino;
    struct statvfs st;
    memset(&st, 0, sizeof st);
    st.f_bsize = BLOCK_SIZE;
    st.f_frsize = BLOCK_SIZE;
    st.f_namemax = 4096;
    fuse_reply_statfs(req, &st);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
    (void)mode;
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    char *path = path_in(req, fs, parent, name);
    if (!path) return;
    pq_error err;
    pq_error_clear(&err);
    pq_lake_attr a;
    caller who;
    int rc = pq_lake_mkdir_as(fs->lake, path, caller_of(req, fs, &who), &err);
    caller_free(&who);
    if (rc != PQ_OK || pq_lake_stat(fs->lake, path, &a, NULL, NULL, &err) != PQ_OK) {
        free(path);
        reply_error(req, &err);
        return;
    }
    reply_entry_of(req, fs, path, &a, false);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
    (void)mode;
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    char *path = path_in(req, fs, parent, name);
    if (!path) return;
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.ino = remember(fs, path, NULL);
    if (!e.ino) {
        free(path);
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    pq_lake_open_upload *u;
    caller who;
    int rc = pq_lake_uploads_create(fs->uploads, path, caller_of(req, fs, &who), fuse_req_ctx(req)->pid, e.ino, &u,
                                    &err);
    caller_free(&who);
    free(path);
    if (rc != PQ_OK) {
        forget_one(fs, e.ino, 1);
        reply_error(req, &err);
        return;
    }
    open_handle *oh = track(fs, NULL, NULL, u);
    if (!oh) {
        forget_one(fs, e.ino, 1);
        pq_lake_uploads_discard(u);
        reply_class(req, PQ_E_NOMEM);
        return;
    }
    fill_written_stat(req, fs, e.ino, 0, &e.attr); /* timeouts 0: not in the lake until closed */
    fi->fh = (uint64_t)(uintptr_t)oh;
    fi->direct_io = 1;
    if (fuse_reply_create(req, &e, fi) != 0) {
        forget_one(fs, e.ino, 1);
        pq_lake_uploads_discard(u);
        untrack(fs, oh);
    }
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)ino;
    open_handle *oh = handle_of(fi);
    if (!oh->upload) {
        reply_class(req, PQ_E_CLOSED);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    if (pq_lake_uploads_write(oh->upload, buf, size, (uint64_t)off, &err) != PQ_OK) reply_error(req, &err);
    else fuse_reply_write(req, size);
}

/* close(): a file being written goes into the lake now, and close() gets
 * the outcome, when this is its writer's close (pq_lake_uploads_flush
 * says which closes are not). */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    open_handle *oh = handle_of(fi);
    pq_error err;
    pq_error_clear(&err);
    if (oh->upload && pq_lake_uploads_flush(oh->upload, fuse_req_ctx(req)->pid, &err) != PQ_OK) reply_error(req, &err);
    else fuse_reply_err(req, 0);
}

/* Data is never deleted through the mount; a parked temporary file (never
 * in the lake) is discarded. */
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    char *path = path_in(req, fs, parent, name);
    if (!path) return;
    pq_error err;
    pq_error_clear(&err);
    int rc = pq_lake_uploads_unlink(fs->uploads, path, &err);
    free(path);
    if (rc != PQ_OK) reply_error(req, &err);
    else fuse_reply_err(req, 0);
}

/* Only an empty table (made by mkdir) goes: pq_lake_rmdir. */
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    char *path = path_in(req, fs, parent, name);
    if (!path) return;
    pq_error err;
    pq_error_clear(&err);
    int rc = pq_lake_rmdir(fs->lake, path, &err);
    free(path);
    if (rc != PQ_OK) reply_error(req, &err);
    else fuse_reply_err(req, 0);
}

/* The inode the kernel holds under `from` is now `to`. */
static void relabel_locked(pqfs_fs *fs, const char *from, const char *to)
{
    for (inode *n = fs->by_path[pq_hash_str(from) % INODE_BUCKETS]; n; n = n->next_by_path) {
        if (n->version || strcmp(n->path, from)) continue;
        char *p = strdup(to);
        if (!p) break;
        unlink_by_path_locked(fs, n);
        free(n->path);
        n->path = p;
        n->next_by_path = fs->by_path[pq_hash_str(to) % INODE_BUCKETS];
        fs->by_path[pq_hash_str(to) % INODE_BUCKETS] = n;
        break;
    }
}

/* pq_lake_uploads_opts.moved: a rename moved a name (under the write
 * lifecycle's lock, which comes before mu). */
static void relabel(void *ctx, const char *from, const char *to)
{
    pqfs_fs *fs = ctx;
    pthread_mutex_lock(&fs->mu);
    relabel_locked(fs, from, to);
    pthread_mutex_unlock(&fs->mu);
}

/* Data is never renamed through the mount: only a file being written, a
 * parked one (which its rename commits) or a name just written, within its
 * directory (pq_lake_uploads_rename); the inode follows (relabel). */
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
                      unsigned int flags)
{
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    char *from = path_in(req, fs, parent, name);
    if (!from) return;
    char *to = path_in(req, fs, newparent, newname);
    if (!to) {
        free(from);
        return;
    }
    unsigned how = ((flags & RENAME_NOREPLACE) ? PQ_RENAME_NOREPLACE : 0) |
                   ((flags & RENAME_EXCHANGE) ? PQ_RENAME_EXCHANGE : 0);
    pq_error err;
    pq_error_clear(&err);
    caller who;
    int rc = pq_lake_uploads_rename(fs->uploads, from, to, how, caller_of(req, fs, &who), fuse_req_ctx(req)->pid, &err);
    caller_free(&who);
    free(from);
    free(to);
    if (rc != PQ_OK) reply_error(req, &err);
    else fuse_reply_err(req, 0);
}

/* No links and no special files in the lake (they were ENOSYS). */
static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)parent, (void)name;
    reply_class(req, fs_of(req)->o.read_only ? PQ_E_READONLY : PQ_E_DENIED);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newparent, (void)newname;
    reply_class(req, fs_of(req)->o.read_only ? PQ_E_READONLY : PQ_E_DENIED);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)parent, (void)name, (void)mode, (void)rdev;
    reply_class(req, fs_of(req)->o.read_only ? PQ_E_READONLY : PQ_E_DENIED);
}

/* Times or mode set on a directory (cp -a, rsync -a, tar x after they
 * copy files in): taken without effect, as a directory's attributes are the
 * lake's.  False when ino is not a directory (nothing replied). */
static bool reply_dir_attr(fuse_req_t req, pqfs_fs *fs, fuse_ino_t ino)
{
    char *path = path_of(fs, ino);
    if (!path) return false;
    pq_error err;
    pq_error_clear(&err);
    pq_lake_attr a;
    bool is_dir = pq_lake_stat(fs->lake, path, &a, NULL, NULL, &err) == PQ_OK && a.is_dir;
    free(path);
    if (!is_dir) return false;
    struct stat st;
    fill_stat(fs, ino, &a, &st);
    fuse_reply_attr(req, &st, attr_timeout(fs, &a));
    return true;
}

/* Only a file being written can change: its size (O_TRUNC, ftruncate);
 * its mode and times are taken as given (cp -p) and not kept, as are a
 * just-written name's and a directory's. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
    (void)fi;
    pqfs_fs *fs = fs_of(req);
    pq_error err;
    pq_error_clear(&err);
    uint64_t size = 0;
    int64_t to = (to_set & FUSE_SET_ATTR_SIZE) ? (int64_t)attr->st_size : -1;
    char *path = path_of(fs, ino);
    int rc = pq_lake_uploads_setattr(fs->uploads, path, ino, to, &size, &err);
    free(path);
    if (rc == PQ_OK) reply_upload_attr(req, fs, ino, size);
    else if (err.cls == PQ_E_NOTFOUND && to < 0 && !fs->o.read_only && reply_dir_attr(req, fs, ino)) return;
    else if (err.cls == PQ_E_NOTFOUND) reply_class(req, fs->o.read_only ? PQ_E_READONLY : PQ_E_DENIED);
    else reply_error(req, &err);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .forget = op_forget,
    .forget_multi = op_forget_multi,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .mkdir = op_mkdir,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .rename = op_rename,
    .symlink = op_symlink,
    .link = op_link,
    .mknod = op_mknod,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .release = op_release,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .statfs = op_statfs,
    .create = op_create,
};

const struct fuse_lowlevel_ops *pqfs_fs_ops(void)
{
    return &ops;
}

pqfs_fs *pqfs_fs_new(pq_lake *lake, const pqfs_fs_opts *o)
{
    pqfs_fs *fs = calloc(1, sizeof *fs);
    if (!fs) return NULL;
    fs->lake = lake;
    fs->o = *o;
    fs->mount_time = time(NULL);
    pq_lake_uploads_opts uo = {.staged_timeout_s = o->staged_timeout_s, .moved = relabel, .moved_ctx = fs};
    pq_error err;
    if (pq_lake_uploads_new(lake, &uo, &fs->uploads, &err) != PQ_OK) {
        free(fs);
        return NULL;
    }
    pthread_mutex_init(&fs->mu, NULL);
    return fs;
}

void pqfs_fs_expire(pqfs_fs *fs)
{
    pq_lake_uploads_expire(fs->uploads); /* never waits */
}

void pqfs_fs_set_session(pqfs_fs *fs, struct fuse_session *se)
{
    fs->se = se;
}

void pqfs_fs_free(pqfs_fs *fs)
{
    if (!fs) return;
    /* Handles whose RELEASE never came (the session ended first). */
    while (fs->open) {
        open_handle *oh = fs->open;
        fs->open = oh->next;
        if (oh->file) pq_lake_release(oh->file);
        if (oh->dir) listing_free(oh->dir);
        free(oh); /* an upload's: pq_lake_uploads_free discards it (never closed: nothing is written) */
    }
    for (int b = 0; b < INODE_BUCKETS; b++) {
        inode *n = fs->by_ino[b];
        while (n) {
            inode *next = n->next_by_ino;
            free(n->path);
            free(n);
            n = next;
        }
    }
    pq_lake_uploads_free(fs->uploads); /* what is open or parked: nothing lands */
    pthread_mutex_destroy(&fs->mu);
    free(fs);
}
