/* The write lifecycle of a mount (lake.h, SPEC section 6): what open,
 * write, close, rename, unlink and stat of files being written mean, by
 * name.  The FUSE adapter decodes requests into these calls; it keeps the
 * inode numbers (a file's file_id here) and replies.  unit.test_uploads
 * drives them without FUSE, with made-up processes (pq_proc_ops).
 *
 * Under one lock: the open files (created, not yet released), the parked
 * ones (closed under a temporary name, waiting for their rename) and the
 * names just written (their rows are in the lake under a part name). */
#include "lake.h"
#include "mem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JUST_WRITTEN_SECONDS 10
#define PARKED_SECONDS 600
#define WRITTEN_BUCKETS_MIN 64

/* A closed file with a temporary name, waiting for its rename. */
typedef struct parked_upload {
    struct parked_upload *next;
    char *path;
    pq_lake_upload *upload;
    time_t until;
} parked_upload;

/* A name just written: it stats as `size` bytes until `until`. */
typedef struct written_name {
    struct written_name *next;
    char *path;
    uint64_t size;
    time_t until;
} written_name;

struct pq_lake_open_upload {
    pq_lake_open_upload *prev, *next; /* in the lifecycle's `open`, under its mu */
    pq_lake_uploads *owner;
    uint64_t file_id;
    int writer;                  /* the process that created it (0: unknown) */
    /* The upload: NULL once its close parked it.  Changed under both
     * write_mu and the lifecycle's mu: a write holds write_mu alone (the
     * staged bytes are written outside the lifecycle's lock), a stat the
     * lifecycle's. */
    pq_lake_upload *upload;
    pthread_mutex_t write_mu;
    /* Under the lifecycle's mu: its mount path (a rename while it is open
     * moves this one; the upload takes it at its close, on the closing
     * thread, so the engine's strings never change under a commit);
     * `finishing` once a close began committing or parking it (no rename
     * moves it then); `writer_killed`: it died of a signal with the file
     * open, nothing is written. */
    char *path;
    bool renamed, finishing, writer_killed;
};

struct pq_lake_uploads {
    pq_lake *lake;
    pq_proc_ops proc;
    int staged_timeout_s;
    void (*moved)(void *ctx, const char *from, const char *to);
    void *moved_ctx;
    pthread_mutex_t mu;
    pq_lake_open_upload *open;
    parked_upload *parked;
    /* The names just written, by path: a hash table that grows, pruned by
     * pq_lake_uploads_expire.  (A ring of 16 once forgot the oldest of
     * more names written within 10 s: a copy of many files then lost the
     * stat of its first ones.) */
    written_name **written;
    size_t n_buckets, n_written;
};

/* A temporary name: its file waits for a rename (parked_upload). */
static bool is_temporary(const char *path)
{
    const char *slash = strrchr(path, '/');
    return (slash ? slash[1] : path[0]) == '.';
}

int pq_lake_uploads_new(pq_lake *l, const pq_lake_uploads_opts *o, pq_lake_uploads **out, pq_error *err)
{
    pq_lake_uploads *u = calloc(1, sizeof *u);
    written_name **buckets = calloc(WRITTEN_BUCKETS_MIN, sizeof *buckets);
    if (!u || !buckets) {
        free(u);
        free(buckets);
        return PQ_NOMEM(err);
    }
    u->lake = l;
    u->proc = o && o->proc ? *o->proc : *pq_proc_system();
    u->staged_timeout_s = o && o->staged_timeout_s > 0 ? o->staged_timeout_s : PARKED_SECONDS;
    u->moved = o ? o->moved : NULL;
    u->moved_ctx = o ? o->moved_ctx : NULL;
    u->written = buckets;
    u->n_buckets = WRITTEN_BUCKETS_MIN;
    pthread_mutex_init(&u->mu, NULL);
    *out = u;
    return PQ_OK;
}

static void open_upload_free(pq_lake_open_upload *f)
{
    pq_lake_upload_free(f->upload);
    pthread_mutex_destroy(&f->write_mu);
    free(f->path);
    free(f);
}

void pq_lake_uploads_free(pq_lake_uploads *u)
{
    if (!u) return;
    while (u->open) { /* never released: nothing is written */
        pq_lake_open_upload *f = u->open;
        u->open = f->next;
        open_upload_free(f);
    }
    while (u->parked) { /* never renamed: nothing lands */
        parked_upload *p = u->parked;
        u->parked = p->next;
        pq_lake_upload_free(p->upload);
        free(p->path);
        free(p);
    }
    for (size_t b = 0; b < u->n_buckets; b++)
        for (written_name *w = u->written[b], *next; w; w = next) {
            next = w->next;
            free(w->path);
            free(w);
        }
    free(u->written);
    pthread_mutex_destroy(&u->mu);
    free(u);
}

/* ------------------------------------------------------------------ names just written */

/* Under mu: the entry of path (expired or not), or NULL. */
static written_name *written_find_locked(const pq_lake_uploads *u, const char *path)
{
    for (written_name *w = u->written[pq_hash_str(path) % u->n_buckets]; w; w = w->next)
        if (!strcmp(w->path, path)) return w;
    return NULL;
}

/* Under mu: unlinks and returns the entry of path, or NULL. */
static written_name *written_take_locked(pq_lake_uploads *u, const char *path)
{
    for (written_name **pw = &u->written[pq_hash_str(path) % u->n_buckets]; *pw; pw = &(*pw)->next) {
        written_name *w = *pw;
        if (strcmp(w->path, path)) continue;
        *pw = w->next;
        u->n_written--;
        return w;
    }
    return NULL;
}

/* Under mu: doubles the table when its chains grow long (out of memory:
 * they stay longer, the answers the same). */
static void written_grow_locked(pq_lake_uploads *u)
{
    if (u->n_written <= 2 * u->n_buckets) return;
    size_t n = u->n_buckets * 2;
    written_name **buckets = calloc(n, sizeof *buckets);
    if (!buckets) return;
    for (size_t b = 0; b < u->n_buckets; b++)
        for (written_name *w = u->written[b], *next; w; w = next) {
            next = w->next;
            w->next = buckets[pq_hash_str(w->path) % n];
            buckets[pq_hash_str(w->path) % n] = w;
        }
    free(u->written);
    u->written = buckets;
    u->n_buckets = n;
}

/* Under mu: w (unlinked) into the table. */
static void written_put_locked(pq_lake_uploads *u, written_name *w)
{
    written_grow_locked(u);
    size_t b = pq_hash_str(w->path) % u->n_buckets;
    w->next = u->written[b];
    u->written[b] = w;
    u->n_written++;
}

/* Under mu: notes that path was written into the lake with `size` bytes.
 * One entry per name (a flush and the release both see the commit). */
static void note_written_locked(pq_lake_uploads *u, const char *path, uint64_t size)
{
    written_name *w = written_find_locked(u, path);
    if (!w) {
        w = calloc(1, sizeof *w);
        char *p = strdup(path);
        if (!w || !p) { /* out of memory: the name does not stat after its close */
            free(w);
            free(p);
            return;
        }
        w->path = p;
        written_put_locked(u, w);
    }
    w->size = size;
    w->until = time(NULL) + JUST_WRITTEN_SECONDS;
}

static void note_written(pq_lake_uploads *u, const char *path, uint64_t size)
{
    pthread_mutex_lock(&u->mu);
    note_written_locked(u, path, size);
    pthread_mutex_unlock(&u->mu);
}

/* Under mu: the live entry of path, or NULL. */
static const written_name *written_live_locked(const pq_lake_uploads *u, const char *path)
{
    const written_name *w = written_find_locked(u, path);
    return w && time(NULL) <= w->until ? w : NULL;
}

/* Under mu: forgets the names past their time. */
static void written_prune_locked(pq_lake_uploads *u)
{
    time_t now = time(NULL);
    for (size_t b = 0; b < u->n_buckets; b++)
        for (written_name **pw = &u->written[b]; *pw;) {
            written_name *w = *pw;
            if (now <= w->until) {
                pw = &w->next;
                continue;
            }
            *pw = w->next;
            u->n_written--;
            free(w->path);
            free(w);
        }
}

/* Under mu: the file's name moved, for the adapter's inode. */
static void moved_locked(const pq_lake_uploads *u, const char *from, const char *to)
{
    if (u->moved) u->moved(u->moved_ctx, from, to);
}

/* A name just written renamed to another in the same directory (a tool
 * that writes a temporary name and renames it when done: DuckDB's COPY over
 * a name that exists, Python's tempfile + os.replace).  The rows are in
 * the lake already, under their part name: only the name moves, replacing
 * a name just written there.  False when `from` was not just written. */
static bool rename_written(pq_lake_uploads *u, const char *from, const char *to)
{
    pthread_mutex_lock(&u->mu);
    bool moved = written_live_locked(u, from) != NULL;
    char *p = moved ? strdup(to) : NULL;
    if (p) {
        written_name *replaced = written_take_locked(u, to);
        if (replaced) {
            free(replaced->path);
            free(replaced);
        }
        written_name *w = written_take_locked(u, from);
        free(w->path);
        w->path = p;
        w->until = time(NULL) + JUST_WRITTEN_SECONDS;
        written_put_locked(u, w);
        moved_locked(u, from, to);
    }
    pthread_mutex_unlock(&u->mu);
    return p != NULL;
}

/* ------------------------------------------------------------------ parked files */

/* Under mu: the parked upload at path (those past their time are dropped
 * first); with take, it is taken out of the list. */
static pq_lake_upload *parked_locked(pq_lake_uploads *u, const char *path, bool take)
{
    time_t now = time(NULL);
    pq_lake_upload *found = NULL;
    for (parked_upload **pp = &u->parked; *pp;) {
        parked_upload *p = *pp;
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

static pq_lake_upload *parked_take(pq_lake_uploads *u, const char *path)
{
    pthread_mutex_lock(&u->mu);
    pq_lake_upload *up = parked_locked(u, path, true);
    pthread_mutex_unlock(&u->mu);
    return up;
}

/* Keeps a closed temporary file for its rename: up under `as` (NULL: its
 * own name), or the upload of f (taken from it in the same critical
 * section, so that no other thread finds it in both places).  False when
 * it cannot (nothing changed). */
static bool park(pq_lake_uploads *u, pq_lake_upload *up, pq_lake_open_upload *f, const char *as)
{
    if (f) {
        pthread_mutex_lock(&f->write_mu); /* no write is in flight on it once parked */
        up = f->upload;
    }
    parked_upload *p = up ? calloc(1, sizeof *p) : NULL;
    char *path = up ? strdup(as ? as : pq_lake_upload_path(up)) : NULL;
    if (!p || !path) {
        if (f) pthread_mutex_unlock(&f->write_mu);
        free(p);
        free(path);
        return !up;
    }
    *p = (parked_upload){.path = path, .upload = up, .until = time(NULL) + u->staged_timeout_s};
    pthread_mutex_lock(&u->mu);
    /* The same name written again replaces the file parked under it. */
    pq_lake_upload *old = parked_locked(u, path, true);
    p->next = u->parked;
    u->parked = p;
    if (f) f->upload = NULL;
    pthread_mutex_unlock(&u->mu);
    if (f) pthread_mutex_unlock(&f->write_mu);
    pq_lake_upload_free(old);
    return true;
}

void pq_lake_uploads_expire(pq_lake_uploads *u)
{
    /* The exit watch calls this: it never waits (busy: the next second). */
    if (pthread_mutex_trylock(&u->mu) != 0) return;
    if (u->parked) (void)parked_locked(u, NULL, false);
    written_prune_locked(u);
    pthread_mutex_unlock(&u->mu);
}

/* ------------------------------------------------------------------ open files */

/* Under mu: the open file numbered file_id (newest first), skipping those
 * whose close began when `not_finishing`; or NULL. */
static pq_lake_open_upload *open_by_id_locked(const pq_lake_uploads *u, uint64_t file_id, bool not_finishing)
{
    for (pq_lake_open_upload *f = file_id ? u->open : NULL; f; f = f->next)
        if (f->upload && f->file_id == file_id && !(not_finishing && f->finishing)) return f;
    return NULL;
}

/* Under mu: the open file being written under path, or NULL. */
static pq_lake_open_upload *open_by_path_locked(const pq_lake_uploads *u, const char *path)
{
    for (pq_lake_open_upload *f = u->open; f; f = f->next)
        if (f->upload && !strcmp(f->path, path)) return f;
    return NULL;
}

/* Under mu: what pq_lake_uploads_stat answers. */
static bool stat_locked(pq_lake_uploads *u, const char *path, uint64_t file_id, uint64_t *size)
{
    const pq_lake_open_upload *f = open_by_id_locked(u, file_id, false);
    if (f) {
        *size = pq_lake_upload_size(f->upload);
        return true;
    }
    const written_name *w = path ? written_live_locked(u, path) : NULL;
    if (w) {
        *size = w->size;
        return true;
    }
    pq_lake_upload *up = path ? parked_locked(u, path, false) : NULL;
    /* A file being written is there too (a tool may look it up, or rename
     * it, before it closes it); one committing too. */
    if (!up && path && (f = open_by_path_locked(u, path))) up = f->upload;
    if (!up) return false;
    *size = pq_lake_upload_size(up);
    return true;
}

bool pq_lake_uploads_stat(pq_lake_uploads *u, const char *path, uint64_t file_id, uint64_t *size)
{
    pthread_mutex_lock(&u->mu);
    bool found = stat_locked(u, path, file_id, size);
    pthread_mutex_unlock(&u->mu);
    return found;
}

int pq_lake_uploads_setattr(pq_lake_uploads *u, const char *path, uint64_t file_id, int64_t truncate_to,
                            uint64_t *size, pq_error *err)
{
    int rc = pq_fail(err, PQ_E_NOTFOUND, "%s: not a file being written", path ? path : "(a file)");
    /* Under mu, so that its release cannot free it meanwhile. */
    pthread_mutex_lock(&u->mu);
    pq_lake_open_upload *f = truncate_to >= 0 ? open_by_id_locked(u, file_id, true) : NULL;
    if (f) {
        pq_error_clear(err);
        rc = pq_lake_upload_truncate(f->upload, (uint64_t)truncate_to, err);
        *size = pq_lake_upload_size(f->upload);
    } else if (truncate_to < 0 && stat_locked(u, path, file_id, size)) {
        pq_error_clear(err);
        rc = PQ_OK;
    }
    pthread_mutex_unlock(&u->mu);
    return rc;
}

int pq_lake_uploads_refuse_read(pq_lake_uploads *u, const char *path, pq_error *err)
{
    uint64_t size;
    if (pq_lake_uploads_stat(u, path, 0, &size))
        pq_fail(err, PQ_E_ACCESS, "%s: written into the lake (or being written): not readable under this name", path);
    return PQ_ERR;
}

int pq_lake_uploads_create(pq_lake_uploads *u, const char *path, const pq_cred *c, int tid, uint64_t file_id,
                           pq_lake_open_upload **out, pq_error *err)
{
    *out = NULL;
    pq_lake_open_upload *f = calloc(1, sizeof *f);
    char *p = strdup(path);
    if (!f || !p) {
        free(f);
        free(p);
        return PQ_NOMEM(err);
    }
    if (pq_lake_create_as(u->lake, path, c, &f->upload, err) != PQ_OK) {
        free(f);
        free(p);
        return PQ_ERR;
    }
    f->owner = u;
    f->file_id = file_id;
    f->path = p;
    f->writer = u->proc.process_of(u->proc.ctx, tid);
    pthread_mutex_init(&f->write_mu, NULL);
    pthread_mutex_lock(&u->mu);
    f->next = u->open;
    if (u->open) u->open->prev = f;
    u->open = f;
    pthread_mutex_unlock(&u->mu);
    *out = f;
    return PQ_OK;
}

int pq_lake_uploads_reopen(pq_lake_uploads *u, const char *path, const pq_cred *c, int tid, uint64_t file_id,
                           pq_lake_open_upload **out, pq_error *err)
{
    uint64_t size;
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    /* A view's data.csv or data.parquet opened for writing (cp onto it: the
     * name exists): a new file, as a create would make. */
    bool view_data = !strcmp(name, "data.csv") || !strcmp(name, "data.parquet");
    if (!view_data && !pq_lake_uploads_stat(u, path, 0, &size)) {
        *out = NULL;
        pq_fail(err, PQ_E_DENIED, "%s: the lake's files are not written in place", path);
        pq_lake_report(u->lake, err); /* an EPERM users asked the reason of */
        return PQ_ERR;
    }
    return pq_lake_uploads_create(u, path, c, tid, file_id, out, err);
}

int pq_lake_uploads_write(pq_lake_open_upload *f, const void *buf, size_t len, uint64_t off, pq_error *err)
{
    pthread_mutex_lock(&f->write_mu);
    int rc = f->upload ? pq_lake_upload_write(f->upload, buf, len, off, err)
                       : pq_fail(err, PQ_E_CLOSED, "the file was closed: it waits for its rename");
    pthread_mutex_unlock(&f->write_mu);
    return rc;
}

/* Takes f out of the open files and frees it (its upload, if any, goes:
 * what was staged and not committed is discarded). */
static void open_upload_drop(pq_lake_open_upload *f)
{
    pq_lake_uploads *u = f->owner;
    /* Out of the list under the lock, then freed: a stat of the name may
     * be looking at it. */
    pthread_mutex_lock(&f->write_mu);
    pthread_mutex_lock(&u->mu);
    if (f->prev) f->prev->next = f->next;
    else u->open = f->next;
    if (f->next) f->next->prev = f->prev;
    pthread_mutex_unlock(&u->mu);
    pthread_mutex_unlock(&f->write_mu);
    open_upload_free(f);
}

void pq_lake_uploads_discard(pq_lake_open_upload *f)
{
    if (f) open_upload_drop(f);
}

/* ------------------------------------------------------------------ close */

/* At its close, the file's upload takes the name it was renamed to while
 * open, and the file is marked as finishing; *claimed for the one close
 * that does this (and parks a temporary file), *temporary whether it is
 * one. */
static int finish_upload(pq_lake_open_upload *f, bool *temporary, bool *claimed, pq_error *err)
{
    pq_lake_uploads *u = f->owner;
    pthread_mutex_lock(&u->mu);
    /* Two closes at once (dup'd descriptors): one finishes the file. */
    *claimed = f->upload && !f->finishing;
    f->finishing = true;
    pq_lake_upload *up = f->upload;
    bool renamed = *claimed && f->renamed;
    char *path = renamed ? strdup(f->path) : NULL;
    if (*claimed) f->renamed = false;
    *temporary = is_temporary(f->path);
    pthread_mutex_unlock(&u->mu);
    if (!renamed) return PQ_OK;
    /* Serialized with a commit by the upload's own lock. */
    int rc = path ? pq_lake_upload_rename(up, path, err) : PQ_NOMEM(err);
    free(path);
    return rc;
}

/* pq_lake_upload_commit's abandon check: the thread whose close (or
 * rename) commits is dying or gone. */
typedef struct closing_thread {
    const pq_lake_uploads *u;
    int tid;
} closing_thread;

static bool closer_dying(void *ctx)
{
    const closing_thread *c = ctx;
    return c->u->proc.dying(c->u->proc.ctx, c->tid);
}

/* Whether the flush of f by thread tid is its writer's close of a file
 * with bytes: not a close with nothing written (a shell's `> FILE` closes
 * its first descriptor, dup2, before the command writes a byte), not
 * another process closing its copy (a child started while the file is
 * open closes it at exec or exit, and the writer goes on writing), not a
 * close while the closer still has another descriptor on the file (a
 * dup'd one closed: a shell's `echo >&3`), and not the close of a writer
 * killed by a signal (its files are closed by the kernel, not by close():
 * what arrived is not the file, and nothing is written, ever). */
static bool writers_close(pq_lake_open_upload *f, int tid)
{
    pq_lake_uploads *u = f->owner;
    pthread_mutex_lock(&u->mu);
    bool commit = f->upload && !f->writer_killed && pq_lake_upload_size(f->upload) > 0;
    pthread_mutex_unlock(&u->mu);
    int closer = commit ? u->proc.process_of(u->proc.ctx, tid) : 0;
    if (commit && f->writer && closer && closer != f->writer) commit = false;
    if (commit && closer && u->proc.holds_inode(u->proc.ctx, closer, f->file_id)) commit = false;
    if (commit && u->proc.killed_by_signal(u->proc.ctx, tid)) {
        pthread_mutex_lock(&u->mu);
        f->writer_killed = true;
        pthread_mutex_unlock(&u->mu);
        commit = false;
    }
    return commit;
}

int pq_lake_uploads_flush(pq_lake_open_upload *f, int tid, pq_error *err)
{
    pq_lake_uploads *u = f->owner;
    if (!writers_close(f, tid)) return PQ_OK;
    bool temporary = false, claimed = false;
    PQ_TRY(finish_upload(f, &temporary, &claimed, err));
    if (temporary) {
        /* Closed, and parked now (not at the release, which comes after
         * close() returns): its rename, which may follow at once, commits it. */
        return !claimed || park(u, NULL, f, NULL) ? PQ_OK : PQ_NOMEM(err);
    }
    if (!claimed) {
        /* Another close parked it, or is committing it (the upload's lock
         * makes this commit wait for that one's outcome). */
        pthread_mutex_lock(&u->mu);
        bool commit = f->upload != NULL && !is_temporary(f->path);
        pthread_mutex_unlock(&u->mu);
        if (!commit) return PQ_OK;
    }
    /* Finishing and not temporary: nothing parks it or renames it now, and
     * its release comes after this close returns. */
    uint64_t size = pq_lake_upload_size(f->upload);
    closing_thread c = {u, tid};
    PQ_TRY(pq_lake_upload_commit(f->upload, closer_dying, &c, err));
    note_written(u, pq_lake_upload_path(f->upload), size);
    return PQ_OK;
}

void pq_lake_uploads_release(pq_lake_open_upload *f)
{
    pq_lake_uploads *u = f->owner;
    pq_error err;
    pq_error_clear(&err);
    bool temporary = false, claimed = false;
    pthread_mutex_lock(&u->mu);
    pq_lake_upload *up = f->upload;
    bool killed = f->writer_killed;
    pthread_mutex_unlock(&u->mu);
    if (up && finish_upload(f, &temporary, &claimed, &err) == PQ_OK && !killed) {
        uint64_t size = pq_lake_upload_size(up);
        /* Committed by a flush already: it noted the name (which a rename
         * since may have moved). */
        bool was_committed = pq_lake_upload_committed(up);
        if (temporary && claimed) (void)park(u, NULL, f, NULL);
        else if (!temporary && size > 0 && pq_lake_upload_commit(up, NULL, NULL, &err) == PQ_OK && !was_committed)
            note_written(u, pq_lake_upload_path(up), size);
    }
    open_upload_drop(f);
}

/* ------------------------------------------------------------------ rename, unlink */

/* A file still being written renamed (write, rename, then close: a tool
 * that renames its temporary file before closing it): it is committed (or
 * parked) under the new name when it is closed.  1 done, 0 when `from` is
 * no file being written (or one whose close began), -1 out of memory. */
static int rename_open(pq_lake_uploads *u, const char *from, const char *to)
{
    int done = 0;
    pthread_mutex_lock(&u->mu);
    for (pq_lake_open_upload *f = u->open; f && !done; f = f->next) {
        if (!f->upload || f->finishing || strcmp(f->path, from)) continue;
        char *p = strdup(to);
        if (!p) {
            done = -1;
            break;
        }
        free(f->path);
        f->path = p;
        f->renamed = true;
        done = 1;
    }
    if (done > 0) moved_locked(u, from, to);
    pthread_mutex_unlock(&u->mu);
    return done;
}

/* A parked temporary file renamed: to another temporary name it stays
 * parked; to a name that takes data it is committed under that name, and
 * rename() gets the outcome (a failed one leaves it parked, as a failed
 * close discards nothing else).  *found false when `from` is not parked. */
static int commit_parked(pq_lake_uploads *u, const char *from, const char *to, int tid, bool *found, pq_error *err)
{
    pq_lake_upload *up = parked_take(u, from);
    *found = up != NULL;
    if (!up) return PQ_OK;
    uint64_t size = pq_lake_upload_size(up);
    closing_thread c = {u, tid};
    int rc;
    if (pq_lake_upload_committed(up)) {
        /* Its commit failed before and it stayed: the same outcome again
         * (mv retries a rename that RENAME_NOREPLACE made EINVAL). */
        rc = pq_lake_upload_commit(up, closer_dying, &c, err);
    } else {
        rc = pq_lake_upload_rename(up, to, err);
        if (rc == PQ_OK && is_temporary(to)) {
            pthread_mutex_lock(&u->mu);
            moved_locked(u, from, to);
            pthread_mutex_unlock(&u->mu);
            if (!park(u, up, NULL, NULL)) pq_lake_upload_free(up);
            return PQ_OK;
        }
        /* An empty file adds nothing (as a touch does); its name is noted. */
        if (rc == PQ_OK && size > 0) rc = pq_lake_upload_commit(up, closer_dying, &c, err);
    }
    if (rc != PQ_OK) {
        /* A failed rename leaves its source: the file stays parked under
         * its name (unlink discards it), and a retry gets the same error. */
        if (err->cls == PQ_E_CANCELLED || !park(u, up, NULL, from)) pq_lake_upload_free(up);
        return PQ_ERR;
    }
    pq_lake_upload_free(up);
    pthread_mutex_lock(&u->mu);
    moved_locked(u, from, to);
    note_written_locked(u, to, size);
    pthread_mutex_unlock(&u->mu);
    return PQ_OK;
}

/* The directory part of a path ("" at the root), as a length. */
static size_t dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

/* Whether c may land a file in to's directory: a rename that lands a file
 * is a write into it, checked as a create is. */
static int check_rename_access(pq_lake_uploads *u, const char *to, const pq_cred *c, pq_error *err)
{
    if (!c) return PQ_OK;
    char *dir = strndup(to, dir_len(to));
    if (!dir) return PQ_NOMEM(err);
    int rc = pq_lake_check_write(u->lake, dir, c, err);
    free(dir);
    return rc;
}

int pq_lake_uploads_rename(pq_lake_uploads *u, const char *from, const char *to, unsigned flags, const pq_cred *c,
                           int tid, pq_error *err)
{
    size_t dl = dir_len(from);
    if ((flags & PQ_RENAME_EXCHANGE) || dl != dir_len(to) || strncmp(from, to, dl))
        return pq_fail(err, PQ_E_DENIED, "%s: a file is renamed within its directory only", from);
    const char *to_name = to + dl + (to[dl] == '/' ? 1 : 0);
    pq_error name_err;
    pq_error_clear(&name_err);
    bool to_takes_data = pq_lake_check_data_name(to_name, &name_err) == PQ_OK;
    PQ_TRY(check_rename_access(u, to, c, err));
    uint64_t size;
    if ((flags & PQ_RENAME_NOREPLACE) && pq_lake_uploads_stat(u, to, 0, &size))
        return pq_fail(err, PQ_E_EXISTS, "%s exists", to);
    if (!to_takes_data) {
        *err = name_err;
        return PQ_ERR;
    }
    int open_rc = rename_open(u, from, to);
    if (open_rc != 0) return open_rc > 0 ? PQ_OK : PQ_NOMEM(err);
    if (is_temporary(from)) {
        bool parked;
        int rc = commit_parked(u, from, to, tid, &parked, err);
        if (parked) return rc;
    }
    if (rename_written(u, from, to)) return PQ_OK;
    return pq_fail(err, PQ_E_DENIED, "%s: only a file being written, or just written, is renamed (data is not "
                   "renamed through the mount)", from);
}

int pq_lake_uploads_unlink(pq_lake_uploads *u, const char *path, pq_error *err)
{
    pq_lake_upload *up = is_temporary(path) ? parked_take(u, path) : NULL;
    if (!up) return pq_fail(err, PQ_E_DENIED, "%s: data is not deleted through the mount", path);
    pq_lake_upload_free(up);
    return PQ_OK;
}
