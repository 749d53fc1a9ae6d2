#include "fs.h"
#include "mem.h"

#include <dirent.h>
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
    pq_lake_upload *upload;      /* a file being written into the lake */
    fuse_ino_t upload_ino;
    /* Its mount path, under mu: a rename while it is open moves this one
     * (the upload takes it when it is closed, on the closing thread, so the
     * engine's strings never change under a commit); `finishing` once its
     * close began committing or parking it (no rename moves it then). */
    char *upload_path;
    bool renamed, finishing;
    pid_t writer;                /* the process that created it (0: unknown) */
    bool writer_killed;          /* it died of a signal with the file open: nothing is written */
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
    int n_uploads;               /* handles in `open` with an upload, under mu */
    /* Names just written (the file is in the lake under another name): for
     * a little while they still stat, and take chmod, chown and utimes
     * without effect, as the copy tools send them after close (shutil.copy,
     * install, cp -p).  A ring, under mu. */
    struct just_written {
        char *path;
        uint64_t size;
        time_t until;
    } written[16];
    int n_written;
    /* Closed files with a temporary name (starting with '.', as rsync's
     * .NAME.XXXXXX): not in the lake until renamed to a name without the
     * dot, which commits them; unlinked, or never renamed within
     * o.staged_timeout_s of their close (pqfs_fs_expire), nothing lands.
     * Under mu. */
    struct parked_upload {
        struct parked_upload *next;
        char *path;
        pq_lake_upload *upload;
        time_t until;
    } *parked;
};

#define JUST_WRITTEN_SECONDS 10
#define PARKED_SECONDS 600

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
    case PQ_E_UNSUPPORTED: return EIO;
    case PQ_E_CORRUPT: case PQ_E_IO: default: return EIO;
    }
}

static pqfs_fs *fs_of(fuse_req_t req)
{
    return fuse_req_userdata(req);
}

static open_handle *track(pqfs_fs *fs, pq_lake_handle *file, struct dir_listing *dir, pq_lake_upload *upload,
                          fuse_ino_t upload_ino)
{
    open_handle *oh = calloc(1, sizeof *oh);
    if (!oh) return NULL;
    oh->file = file;
    oh->dir = dir;
    oh->upload = upload;
    oh->upload_ino = upload_ino;
    if (upload && !(oh->upload_path = strdup(pq_lake_upload_path(upload)))) {
        free(oh);
        return NULL;
    }
    atomic_init(&oh->refs, 1);
    pthread_mutex_lock(&fs->mu);
    oh->next = fs->open;
    if (fs->open) fs->open->prev = oh;
    fs->open = oh;
    if (upload) fs->n_uploads++;
    pthread_mutex_unlock(&fs->mu);
    return oh;
}

/* The process (thread group) of the thread a request came from, or 0 when
 * it cannot be told (another PID namespace, no /proc).  FUSE gives the
 * thread's id. */
static pid_t process_of(fuse_req_t req)
{
    pid_t tid = fuse_req_ctx(req)->pid;
    if (tid <= 0) return 0;
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    long tgid = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Tgid: %ld", &tgid) == 1) break;
    fclose(f);
    return tgid > 0 ? (pid_t)tgid : 0;
}

/* Whether the thread a request came from is exiting because a signal
 * killed it (kill -9, SIGTERM, a crash): its files are being closed by the
 * kernel, not by close(), and a half-written file must not go into the
 * lake.  /proc/TID/stat: flags (field 9) has PF_EXITING, and exit_code
 * (field 52, set before the files close) the signal in its low bits.  A
 * normal exit (a command writing to `> FILE` closes at exit too) is 0 there. */
static bool killed_by_signal(fuse_req_t req)
{
    pid_t tid = fuse_req_ctx(req)->pid;
    if (tid <= 0) return false;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
    if (!p) return false;
    unsigned long long field[64];
    int k = 0;
    for (p++; k < 64 && *p;) {
        while (*p == ' ') p++;
        if (!*p || *p == '\n') break;
        char *end;
        field[k++] = strtoull(p, &end, 10); /* the state letter reads as 0 */
        p = end;
        while (*p && *p != ' ') p++;
    }
    const unsigned long long pf_exiting = 0x4;
    /* field[0] is field 3 (state): flags is field 9, exit_code field 52 */
    return k > 49 && (field[6] & pf_exiting) && (field[49] & 0x7f) != 0;
}

/* Whether the thread a request came from has a signal pending that will
 * kill it (SIGKILL, or one it neither catches nor ignores whose default
 * ends the process): the kill of a writer waiting in close() while its
 * file is written (kill -9, SIGTERM of cp).  /proc/TID/status masks. */
static bool fatal_signal_pending(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) return false;
    unsigned long long pending = 0, ignored = 0, caught = 0, mask;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "SigPnd: %llx", &mask) == 1 || sscanf(line, "ShdPnd: %llx", &mask) == 1) pending |= mask;
        else if (sscanf(line, "SigIgn: %llx", &mask) == 1) ignored = mask;
        else if (sscanf(line, "SigCgt: %llx", &mask) == 1) caught = mask;
    }
    fclose(f);
#define SIGBIT(n) (1ull << ((n) - 1))
    /* Signals whose default is not to end the process. */
    const unsigned long long harmless = SIGBIT(17) | SIGBIT(18) | SIGBIT(19) | SIGBIT(20) | SIGBIT(21) |
                                        SIGBIT(22) | SIGBIT(23) | SIGBIT(28);
    bool killed = (pending & SIGBIT(9)) || (pending & ~ignored & ~caught & ~harmless & 0xffffffffull);
#undef SIGBIT
    return killed;
}

/* pq_lake_upload_commit's abandon check for a FLUSH: the writer is dying,
 * or gone (a killed thread does not wait for close() to finish: once it is
 * reaped, /proc has no entry for it, and only a kill ends a thread inside
 * close()). */
static bool writer_dying(void *ctx)
{
    fuse_req_t req = ctx;
    pid_t tid = fuse_req_ctx(req)->pid;
    if (tid <= 0) return false;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)tid);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) return true;
    return fatal_signal_pending(tid) || killed_by_signal(req);
}

static void untrack(pqfs_fs *fs, open_handle *oh)
{
    pthread_mutex_lock(&fs->mu);
    if (oh->prev) oh->prev->next = oh->next;
    else fs->open = oh->next;
    if (oh->next) oh->next->prev = oh->prev;
    if (oh->upload) fs->n_uploads--;
    pthread_mutex_unlock(&fs->mu);
    free(oh->upload_path);
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
 * /proc/PID/task/PID/status (read_groups; none when it cannot be
 * read: another PID namespace, which can only refuse more, never grant). */
typedef struct caller {
    pq_cred cred;
    uint32_t *groups;
} caller;

/* The supplementary groups on the "Groups:" line of /proc/PID/task/PID/status
 * (libfuse's fuse_req_getgroups reads past its buffer when the file is 4 KiB
 * or more: ASan caught it). -1 when it cannot be read. */
static int read_groups(pid_t pid, uint32_t **out)
{
    *out = NULL;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            char *grown = cap < (1u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!grown) break;
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (!buf) return -1;
    buf[len] = '\0';
    const char *line = strstr(buf, "\nGroups:");
    int count = 0;
    if (line) {
        line += 8;
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        uint32_t *groups = malloc(sizeof *groups * (size_t)((end - line) / 2 + 1));
        for (const char *q = line; groups && q < end;) {
            char *stop;
            unsigned long g = strtoul(q, &stop, 10);
            if (stop == q) {
                q++;
                continue;
            }
            if (stop > end) break;
            if (g <= UINT32_MAX) groups[count++] = (uint32_t)g;
            q = stop;
        }
        *out = groups;
        if (!groups) count = -1;
    }
    free(buf);
    return count;
}

static const pq_cred *caller_of(fuse_req_t req, const pqfs_fs *fs, caller *c)
{
    c->groups = NULL;
    if (!fs->o.multi_user) return NULL;
    const struct fuse_ctx *ctx = fuse_req_ctx(req);
    c->cred = (pq_cred){.uid = ctx->uid, .gid = ctx->gid};
    int n = read_groups(ctx->pid, &c->groups);
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

/* Notes that the file at path (taken) was written into the lake. */
static void note_written_path(pqfs_fs *fs, char *path, uint64_t size)
{
    if (!path) return;
    pthread_mutex_lock(&fs->mu);
    /* One entry per name (FLUSH and RELEASE both note a commit). */
    struct just_written *w = NULL;
    for (size_t i = 0; !w && i < sizeof fs->written / sizeof fs->written[0]; i++)
        if (fs->written[i].path && !strcmp(fs->written[i].path, path)) w = &fs->written[i];
    if (!w) w = &fs->written[fs->n_written++ % (int)(sizeof fs->written / sizeof fs->written[0])];
    free(w->path);
    *w = (struct just_written){path, size, time(NULL) + JUST_WRITTEN_SECONDS};
    pthread_mutex_unlock(&fs->mu);
}

/* Notes that the upload at ino was written into the lake. */
static void note_written(pqfs_fs *fs, fuse_ino_t ino, uint64_t size)
{
    note_written_path(fs, path_of(fs, ino), size);
}

/* A temporary name: its file waits for a rename (struct parked_upload). */
static bool is_temporary(const char *path)
{
    const char *slash = strrchr(path, '/');
    return (slash ? slash[1] : path[0]) == '.';
}

/* The parked upload at path (those past their time are dropped first);
 * with take, it is taken out of the list. */
static pq_lake_upload *parked_locked(pqfs_fs *fs, const char *path, bool take)
{
    time_t now = time(NULL);
    pq_lake_upload *found = NULL;
    for (struct parked_upload **pp = &fs->parked; *pp;) {
        struct parked_upload *p = *pp;
        if (now > p->until || (path && take && !found && !strcmp(p->path, path))) {
            *pp = p->next;
            if (now > p->until) pq_lake_upload_expire(p->upload); /* never renamed: nothing lands */
            else found = p->upload;
            free(p->path);
            free(p);
            continue;
        }
        if (path && !found && !strcmp(p->path, path)) found = p->upload;
        pp = &p->next;
    }
    return found;
}

static void relabel_locked(pqfs_fs *fs, const char *from, const char *to);

/* Keeps a closed temporary file for its rename: u, or the upload of `oh`
 * (taken from it in the same critical section, so that no other thread
 * finds it in both places).  False when it cannot (nothing changed). */
static bool park(pqfs_fs *fs, pq_lake_upload *u, open_handle *oh, const char *as)
{
    if (oh) u = oh->upload;
    struct parked_upload *p = calloc(1, sizeof *p);
    char *path = strdup(as ? as : pq_lake_upload_path(u));
    if (!p || !path) {
        free(p);
        free(path);
        return false;
    }
    int timeout = fs->o.staged_timeout_s > 0 ? fs->o.staged_timeout_s : PARKED_SECONDS;
    *p = (struct parked_upload){.path = path, .upload = u, .until = time(NULL) + timeout};
    pthread_mutex_lock(&fs->mu);
    /* The same name written again replaces the file parked under it. */
    pq_lake_upload *old = parked_locked(fs, path, true);
    p->next = fs->parked;
    fs->parked = p;
    if (oh) {
        oh->upload = NULL;
        fs->n_uploads--;
    }
    pthread_mutex_unlock(&fs->mu);
    pq_lake_upload_free(old);
    return true;
}

/* At its close, the handle's upload takes the name it was renamed to while
 * open, and is marked as finishing; *claimed for the one close that does
 * this (and parks a temporary file), *temporary whether it is one. */
static int finish_upload(pqfs_fs *fs, open_handle *oh, bool *temporary, bool *claimed, pq_error *err)
{
    pthread_mutex_lock(&fs->mu);
    /* Two closes at once (dup'd descriptors): one finishes the file. */
    *claimed = oh->upload && !oh->finishing;
    oh->finishing = true;
    pq_lake_upload *u = oh->upload;
    char *path = *claimed && oh->renamed ? strdup(oh->upload_path) : NULL;
    bool renamed = *claimed && oh->renamed;
    if (*claimed) oh->renamed = false;
    *temporary = is_temporary(oh->upload_path);
    pthread_mutex_unlock(&fs->mu);
    if (!renamed) return PQ_OK;
    /* Serialized with a commit by the upload's own lock. */
    int rc = path ? pq_lake_upload_rename(u, path, err) : PQ_NOMEM(err);
    free(path);
    return rc;
}

/* A file still being written renamed (write, rename, then close: a tool
 * that renames its temporary file before closing it): it will be committed
 * (or parked) under the new name when it is closed.  1 done, 0 when `from`
 * is no file being written (or one whose close began), -1 out of memory.
 * The caller has checked that `to` takes data. */
static int rename_open_upload(pqfs_fs *fs, const char *from, const char *to)
{
    int done = 0;
    pthread_mutex_lock(&fs->mu);
    for (open_handle *oh = fs->n_uploads ? fs->open : NULL; oh && !done; oh = oh->next) {
        if (!oh->upload || oh->finishing || strcmp(oh->upload_path, from)) continue;
        char *p = strdup(to);
        if (!p) {
            done = -1;
            break;
        }
        free(oh->upload_path);
        oh->upload_path = p;
        oh->renamed = true;
        done = 1;
    }
    if (done > 0) relabel_locked(fs, from, to);
    pthread_mutex_unlock(&fs->mu);
    return done;
}

/* Whether path names a file just written, a parked one or one being
 * written; its size then. */
static bool just_written(pqfs_fs *fs, const char *path, uint64_t *size)
{
    bool found = false;
    time_t now = time(NULL);
    pthread_mutex_lock(&fs->mu);
    for (size_t i = 0; path && i < sizeof fs->written / sizeof fs->written[0]; i++) {
        const struct just_written *w = &fs->written[i];
        if (w->path && now <= w->until && !strcmp(w->path, path)) {
            *size = w->size;
            found = true;
        }
    }
    pq_lake_upload *u = path && !found ? parked_locked(fs, path, false) : NULL;
    /* A file being written is there too (a tool may look it up, or rename
     * it, before it closes it). */
    for (open_handle *oh = path && !found && !u && fs->n_uploads ? fs->open : NULL; oh && !u; oh = oh->next)
        if (oh->upload && !strcmp(oh->upload_path, path)) u = oh->upload; /* committing too */
    if (u) {
        *size = pq_lake_upload_size(u);
        found = true;
    }
    pthread_mutex_unlock(&fs->mu);
    return found;
}

static bool ino_just_written(pqfs_fs *fs, fuse_ino_t ino, uint64_t *size)
{
    char *path = path_of(fs, ino);
    bool found = just_written(fs, path, size);
    free(path);
    return found;
}

/* A data.parquet inode's version and size; false for other inodes. */
static bool version_of(pqfs_fs *fs, fuse_ino_t ino, uint64_t *version, uint64_t *size)
{
    pthread_mutex_lock(&fs->mu);
    const inode *n = inode_locked(fs, ino);
    bool found = n && n->version != 0;
    if (found) {
        *version = n->version;
        *size = n->size;
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
    if (!path) fuse_reply_err(req, pp ? ENOMEM : ESTALE);
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
        fuse_reply_err(req, ENOMEM);
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
        pq_lake_attr wa = {.size_final = true};
        if (err.cls == PQ_E_NOTFOUND && just_written(fs, path, &wa.size)) {
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

/* For a file being written (created and not yet released): truncates it
 * when truncate_to >= 0, and gives its staged size.  Under mu, so that its
 * RELEASE cannot free it meanwhile.  PQ_E_NOTFOUND: ino is no such file. */
static int upload_attr(pqfs_fs *fs, fuse_ino_t ino, int64_t truncate_to, uint64_t *size, pq_error *err)
{
    int rc = pq_fail(err, PQ_E_NOTFOUND, "not a file being written");
    pthread_mutex_lock(&fs->mu);
    for (open_handle *oh = fs->n_uploads ? fs->open : NULL; oh; oh = oh->next) {
        if (!oh->upload || oh->upload_ino != ino || (truncate_to >= 0 && oh->finishing)) continue;
        pq_error_clear(err);
        rc = truncate_to >= 0 ? pq_lake_upload_truncate(oh->upload, (uint64_t)truncate_to, err) : PQ_OK;
        *size = pq_lake_upload_size(oh->upload);
        break;
    }
    pthread_mutex_unlock(&fs->mu);
    return rc;
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
    /* A file being written is not in the lake yet: its staged size. */
    uint64_t staged = 0;
    if (upload_attr(fs, ino, -1, &staged, &err) == PQ_OK || ino_just_written(fs, ino, &staged)) {
        reply_upload_attr(req, fs, ino, staged);
        return;
    }
    pq_error_clear(&err);
    uint64_t version, vsize;
    if (version_of(fs, ino, &version, &vsize)) {
        /* Its version's size, for good: a newer version of the path is
         * another inode, which the next lookup of the name finds. */
        struct stat st;
        pq_lake_attr va = {.size = vsize, .size_final = true, .version = version};
        fill_stat(fs, ino, &va, &st);
        fuse_reply_attr(req, &st, attr_timeout(fs, &va));
        return;
    }
    char *path = path_of(fs, ino);
    if (!path) {
        fuse_reply_err(req, ESTALE);
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
        fuse_reply_err(req, path ? ENOMEM : ESTALE);
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
    open_handle *oh = track(fs, NULL, d, NULL, 0);
    if (!oh) {
        listing_free(d);
        fuse_reply_err(req, ENOMEM);
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
        fuse_reply_err(req, ENOMEM);
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

/* An open for writing of a name just written (it still stats for a while,
 * so the kernel opens it instead of creating it): a new file, as a create
 * would make (cp to the same name twice, a loop reusing a name). */
static bool open_new_write(fuse_req_t req, pqfs_fs *fs, fuse_ino_t ino, struct fuse_file_info *fi)
{
    uint64_t size;
    char *path = fs->o.read_only ? NULL : path_of(fs, ino);
    if (!path || !just_written(fs, path, &size)) {
        free(path);
        return false;
    }
    pq_error err;
    pq_error_clear(&err);
    pq_lake_upload *u;
    caller who;
    int rc = pq_lake_create_as(fs->lake, path, caller_of(req, fs, &who), &u, &err);
    caller_free(&who);
    free(path);
    if (rc != PQ_OK) {
        reply_error(req, &err);
        return true;
    }
    open_handle *oh = track(fs, NULL, NULL, u, ino);
    if (!oh) {
        pq_lake_upload_free(u);
        fuse_reply_err(req, ENOMEM);
        return true;
    }
    oh->writer = process_of(req);
    fi->fh = (uint64_t)(uintptr_t)oh;
    fi->direct_io = 1;
    if (fuse_reply_open(req, fi) != 0) {
        pq_lake_upload_free(u);
        untrack(fs, oh);
    }
    return true;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    pqfs_fs *fs = fs_of(req);
    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
        if (!open_new_write(req, fs, ino, fi)) fuse_reply_err(req, fs->o.read_only ? EROFS : EPERM);
        return;
    }
    char *path = path_of(fs, ino);
    if (!path) {
        fuse_reply_err(req, ESTALE);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    pq_lake_handle *h;
    stop_ctx sc = {req, fs};
    uint64_t version = 0, vsize;
    bool versioned = version_of(fs, ino, &version, &vsize);
    /* That version's result while the lake holds it, whatever was written
     * since the lookup; ESTALE only when it was evicted and the view has
     * changed: the kernel then looks the name up again. */
    int rc = pq_lake_open_file(fs->lake, path, version, &h, read_should_stop, &sc, &err);
    uint64_t written;
    if (rc != PQ_OK && err.cls == PQ_E_NOTFOUND && just_written(fs, path, &written)) {
        /* A name written (or being written) stats, but its bytes are in the
         * lake as Parquet (or staged): not readable by that name. */
        free(path);
        fuse_reply_err(req, EACCES);
        return;
    }
    free(path);
    if (rc != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    open_handle *oh = track(fs, h, NULL, NULL, 0);
    if (!oh) {
        pq_lake_release(h);
        fuse_reply_err(req, ENOMEM);
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
        fuse_reply_err(req, ENOMEM);
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
        fuse_reply_err(req, EINVAL);
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
    if (oh->upload_path) {
        /* A file written: close() got the outcome from FLUSH (or its FLUSH
         * parked it: nothing is left here).  A file whose writer never
         * closed it itself (it passed the descriptor on) or that got bytes
         * after its last flush is written now, its outcome only logged; an
         * empty one (touch) writes nothing, but an empty temporary file is
         * parked (rsync renames it too). */
        pq_error err;
        pq_error_clear(&err);
        bool temporary = false, claimed = false;
        if (oh->upload && finish_upload(fs, oh, &temporary, &claimed, &err) == PQ_OK && !oh->writer_killed) {
            uint64_t size = pq_lake_upload_size(oh->upload);
            if (temporary && claimed) (void)park(fs, NULL, oh, NULL);
            else if (!temporary && size > 0 && pq_lake_upload_commit(oh->upload, NULL, NULL, &err) == PQ_OK)
                note_written(fs, oh->upload_ino, size);
        }
        /* Out of the handle under the lock, then freed: a stat of the name
         * (upload_attr, just_written) may be looking at it. */
        pthread_mutex_lock(&fs->mu);
        pq_lake_upload *u = oh->upload;
        if (u) {
            oh->upload = NULL;
            fs->n_uploads--;
        }
        pthread_mutex_unlock(&fs->mu);
        pq_lake_upload_free(u);
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

/* Writes (SPEC section 6): only new files in table and partition
 * directories, and mkdir of tables and partitions. */
static bool refuse_if_read_only(fuse_req_t req, const pqfs_fs *fs)
{
    if (!fs->o.read_only) return false;
    fuse_reply_err(req, EROFS);
    return true;
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
    pq_error err;
    pq_error_clear(&err);
    pq_lake_upload *u;
    caller who;
    int rc = pq_lake_create_as(fs->lake, path, caller_of(req, fs, &who), &u, &err);
    caller_free(&who);
    if (rc != PQ_OK) {
        free(path);
        reply_error(req, &err);
        return;
    }
    struct fuse_entry_param e;
    memset(&e, 0, sizeof e);
    e.ino = remember(fs, path, NULL);
    free(path);
    open_handle *oh = e.ino ? track(fs, NULL, NULL, u, e.ino) : NULL;
    if (!oh) {
        if (e.ino) forget_one(fs, e.ino, 1);
        pq_lake_upload_free(u);
        fuse_reply_err(req, ENOMEM);
        return;
    }
    oh->writer = process_of(req);
    fill_written_stat(req, fs, e.ino, 0, &e.attr); /* timeouts 0: not in the lake until closed */
    fi->fh = (uint64_t)(uintptr_t)oh;
    fi->direct_io = 1;
    if (fuse_reply_create(req, &e, fi) != 0) {
        forget_one(fs, e.ino, 1);
        pq_lake_upload_free(u);
        untrack(fs, oh);
    }
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
    (void)ino;
    open_handle *oh = handle_of(fi);
    if (!oh->upload) {
        fuse_reply_err(req, EBADF);
        return;
    }
    pq_error err;
    pq_error_clear(&err);
    if (pq_lake_upload_write(oh->upload, buf, size, (uint64_t)off, &err) != PQ_OK) reply_error(req, &err);
    else fuse_reply_write(req, size);
}

/* Whether process `pid` still has a descriptor on inode `ino` open.  A
 * FLUSH comes at every close() of a descriptor, dup'd ones too (a shell's
 * `echo >&3` dups 3 onto 1 and back, closing the copy); the file is
 * written at the close of the last one.  The closing descriptor has left
 * the table by then; /proc/PID/fdinfo gives each other one's inode. */
static bool holds_another_descriptor(pid_t pid, fuse_ino_t ino)
{
    char dir_path[64];
    snprintf(dir_path, sizeof dir_path, "/proc/%d/fdinfo", (int)pid);
    DIR *d = opendir(dir_path);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64 + sizeof e->d_name], line[128];
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        FILE *f = fopen(path, "re");
        if (!f) continue;
        unsigned long long file_ino;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "ino: %llu", &file_ino) == 1) {
                found = file_ino == (unsigned long long)ino;
                break;
            }
        fclose(f);
    }
    closedir(d);
    return found;
}

/* close(): a file being written goes into the lake now, and close() gets
 * the outcome.  Not while nothing is written: a shell's `> FILE` closes its
 * first descriptor (dup2) before the command writes a byte.  Not when
 * another process closes its copy of the descriptor: a child started while
 * the file is open (subprocess, system(), a shell's command) closes it at
 * exec or exit, and the writer goes on writing; the writer's own close, or
 * the last one (RELEASE), writes the file.  Nor when the closer still has
 * another descriptor on the file (a dup'd one closed). */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
    (void)ino;
    open_handle *oh = handle_of(fi);
    pq_error err;
    pq_error_clear(&err);
    bool commit = oh->upload && !oh->writer_killed && pq_lake_upload_size(oh->upload) > 0;
    pid_t closer = commit ? process_of(req) : 0;
    if (commit && oh->writer && closer && closer != oh->writer) commit = false;
    if (commit && closer && holds_another_descriptor(closer, oh->upload_ino)) commit = false;
    if (commit && killed_by_signal(req)) {
        /* The writer was killed mid-file: what arrived is not the file. */
        oh->writer_killed = true;
        commit = false;
    }
    bool temporary = false, claimed = false;
    if (commit && finish_upload(fs_of(req), oh, &temporary, &claimed, &err) != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    if (commit && temporary) {
        /* Closed, and parked now (not at RELEASE, which comes after close()
         * returns): its rename, which may follow at once, commits it. */
        fuse_reply_err(req, !claimed || park(fs_of(req), NULL, oh, NULL) ? 0 : ENOMEM);
        return;
    }
    if (commit && !claimed) {
        /* Another close parked it, or is committing it (the upload's lock
         * makes this commit wait for that one's outcome). */
        pthread_mutex_lock(&fs_of(req)->mu);
        commit = oh->upload != NULL && !is_temporary(oh->upload_path);
        pthread_mutex_unlock(&fs_of(req)->mu);
        if (!commit) {
            fuse_reply_err(req, 0);
            return;
        }
    }
    uint64_t size = commit ? pq_lake_upload_size(oh->upload) : 0;
    if (commit && pq_lake_upload_commit(oh->upload, writer_dying, req, &err) != PQ_OK) {
        reply_error(req, &err);
        return;
    }
    if (commit) note_written(fs_of(req), oh->upload_ino, size);
    fuse_reply_err(req, 0);
}

/* Data is never deleted through the mount; a parked temporary file (never
 * in the lake) is discarded. */
static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    char *path = is_temporary(name) ? path_in(req, fs, parent, name) : NULL;
    if (is_temporary(name) && !path) return; /* replied */
    pthread_mutex_lock(&fs->mu);
    pq_lake_upload *u = path ? parked_locked(fs, path, true) : NULL;
    pthread_mutex_unlock(&fs->mu);
    free(path);
    pq_lake_upload_free(u);
    fuse_reply_err(req, u ? 0 : EPERM);
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

/* Renames a name just written to another in the same directory (a tool
 * that writes a temporary name and renames it when done: DuckDB's COPY over
 * a name that exists, Python's tempfile + os.replace).  The rows are in the
 * lake already, under their part name: only the mount's name moves (the
 * just-written entry, and the inode's path).  False when `from` was not
 * just written. */
static bool rename_written(pqfs_fs *fs, const char *from, const char *to)
{
    bool moved = false;
    time_t now = time(NULL);
    pthread_mutex_lock(&fs->mu);
    for (size_t i = 0; i < sizeof fs->written / sizeof fs->written[0]; i++) {
        struct just_written *w = &fs->written[i];
        if (w->path && now <= w->until && !strcmp(w->path, to)) w->until = 0; /* replaced */
    }
    for (size_t i = 0; !moved && i < sizeof fs->written / sizeof fs->written[0]; i++) {
        struct just_written *w = &fs->written[i];
        if (!w->path || now > w->until || strcmp(w->path, from)) continue;
        char *p = strdup(to);
        if (!p) break;
        free(w->path);
        w->path = p;
        w->until = now + JUST_WRITTEN_SECONDS;
        moved = true;
    }
    if (moved) relabel_locked(fs, from, to);
    pthread_mutex_unlock(&fs->mu);
    return moved;
}

/* A parked temporary file renamed: to another temporary name it stays
 * parked; to a name that takes data it is committed under that name, and
 * rename() gets the outcome (a failed one discards it, as a failed close
 * would).  Returns the errno to reply, or -1 when replied. */
static int commit_parked(fuse_req_t req, pqfs_fs *fs, const char *from, const char *to)
{
    pthread_mutex_lock(&fs->mu);
    pq_lake_upload *u = parked_locked(fs, from, true);
    pthread_mutex_unlock(&fs->mu);
    if (!u) return ENOENT; /* not parked: maybe just written (rename_written) */
    pq_error err;
    pq_error_clear(&err);
    uint64_t size = pq_lake_upload_size(u);
    int rc;
    if (pq_lake_upload_committed(u)) {
        /* Its commit failed before and it stayed: the same outcome again
         * (mv retries a rename that RENAME_NOREPLACE made EINVAL). */
        rc = pq_lake_upload_commit(u, writer_dying, req, &err);
    } else {
        rc = pq_lake_upload_rename(u, to, &err);
        if (rc == PQ_OK && is_temporary(to)) {
            pthread_mutex_lock(&fs->mu);
            relabel_locked(fs, from, to);
            pthread_mutex_unlock(&fs->mu);
            if (!park(fs, u, NULL, NULL)) pq_lake_upload_free(u);
            return 0;
        }
        /* An empty file adds nothing (as a touch does); its name is noted. */
        if (rc == PQ_OK && size > 0) rc = pq_lake_upload_commit(u, writer_dying, req, &err);
    }
    if (rc != PQ_OK) {
        /* A failed rename leaves its source: the file stays parked under
         * its name (unlink discards it), and a retry gets the same error. */
        if (err.cls == PQ_E_CANCELLED || !park(fs, u, NULL, from)) pq_lake_upload_free(u);
        reply_error(req, &err);
        return -1;
    }
    pq_lake_upload_free(u);
    pthread_mutex_lock(&fs->mu);
    relabel_locked(fs, from, to);
    pthread_mutex_unlock(&fs->mu);
    char *p = strdup(to);
    note_written_path(fs, p, size);
    return 0;
}

/* Data is never renamed through the mount; a name just written may be
 * (rename_written), within its directory, and a parked temporary file is
 * committed by its rename (commit_parked). */
static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent, const char *newname,
                      unsigned int flags)
{
    pqfs_fs *fs = fs_of(req);
    if (refuse_if_read_only(req, fs)) return;
    if (parent != newparent || (flags & RENAME_EXCHANGE)) {
        fuse_reply_err(req, EPERM);
        return;
    }
    char *from = path_in(req, fs, parent, name);
    if (!from) return;
    char *to = path_in(req, fs, newparent, newname);
    if (!to) {
        free(from);
        return;
    }
    uint64_t size;
    int rc = EPERM;
    const char *to_name = strrchr(to, '/') ? strrchr(to, '/') + 1 : to;
    pq_error name_err;
    bool to_takes_data = pq_lake_check_data_name(to_name, &name_err) == PQ_OK;
    int open_rc = 0;
    /* A rename that lands a file is a write into its directory: the
     * caller's, checked as a create is. */
    caller who;
    const pq_cred *cred = caller_of(req, fs, &who);
    char *to_dir = cred ? strndup(to, (size_t)(to_name - to - (to_name > to ? 1 : 0))) : NULL;
    pq_error access_err;
    pq_error_clear(&access_err);
    bool refused = cred && (!to_dir || pq_lake_check_write(fs->lake, to_dir, cred, &access_err) != PQ_OK);
    free(to_dir);
    caller_free(&who);
    if (refused) rc = access_err.cls == PQ_E_ACCESS ? EACCES : ENOMEM;
    else if ((flags & RENAME_NOREPLACE) && just_written(fs, to, &size)) rc = EEXIST;
    else if (to_takes_data && (open_rc = rename_open_upload(fs, from, to)) != 0) rc = open_rc > 0 ? 0 : ENOMEM;
    else if (is_temporary(from) && to_takes_data && (rc = commit_parked(req, fs, from, to)) != ENOENT) {
        /* committed, refused or replied */
    } else if (to_takes_data && rename_written(fs, from, to)) rc = 0;
    else rc = EPERM;
    free(from);
    free(to);
    if (rc >= 0) fuse_reply_err(req, rc);
}

/* No links and no special files in the lake (they were ENOSYS). */
static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
    (void)link, (void)parent, (void)name;
    fuse_reply_err(req, fs_of(req)->o.read_only ? EROFS : EPERM);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
    (void)ino, (void)newparent, (void)newname;
    fuse_reply_err(req, fs_of(req)->o.read_only ? EROFS : EPERM);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
    (void)parent, (void)name, (void)mode, (void)rdev;
    fuse_reply_err(req, fs_of(req)->o.read_only ? EROFS : EPERM);
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
    uint64_t size = 0;
    int64_t to = (to_set & FUSE_SET_ATTR_SIZE) ? (int64_t)attr->st_size : -1;
    if (to < 0 && ino_just_written(fs, ino, &size)) reply_upload_attr(req, fs, ino, size);
    else if (upload_attr(fs, ino, to, &size, &err) == PQ_OK) reply_upload_attr(req, fs, ino, size);
    else if (err.cls == PQ_E_NOTFOUND && to < 0 && !fs->o.read_only && reply_dir_attr(req, fs, ino)) return;
    else if (err.cls == PQ_E_NOTFOUND) fuse_reply_err(req, fs->o.read_only ? EROFS : EPERM);
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
    pthread_mutex_init(&fs->mu, NULL);
    return fs;
}

void pqfs_fs_expire(pqfs_fs *fs)
{
    /* The exit watch calls this: it never waits (busy: the next second). */
    if (pthread_mutex_trylock(&fs->mu) != 0) return;
    if (fs->parked) (void)parked_locked(fs, NULL, false);
    pthread_mutex_unlock(&fs->mu);
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
        if (oh->upload) pq_lake_upload_free(oh->upload); /* never closed: nothing is written */
        free(oh);
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
    for (size_t i = 0; i < sizeof fs->written / sizeof fs->written[0]; i++) free(fs->written[i].path);
    while (fs->parked) { /* never renamed: nothing lands */
        struct parked_upload *p = fs->parked;
        fs->parked = p->next;
        pq_lake_upload_free(p->upload);
        free(p->path);
        free(p);
    }
    pthread_mutex_destroy(&fs->mu);
    free(fs);
}
