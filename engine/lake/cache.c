#include "cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t pq_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ listing cache */

#define LIST_BUCKETS 1024
#define LIST_MAX_DIRS 16384
/* What the kept listings may hold (names, entries, the bookkeeping): past it
 * they are dropped and listed again when asked (a cache, never an answer). */
#define LIST_MAX_BYTES (64u << 20)

typedef struct list_entry {
    struct list_entry *next;   /* bucket chain */
    char *dir;
    uint64_t fetched_ms;
    pq_dirent *ents;
    char **names;
    int32_t n;
    size_t bytes;              /* what it holds, for LIST_MAX_BYTES */
} list_entry;

/* A listing in progress: lookups of the same directory that miss meanwhile
 * wait for it instead of listing again (after a TTL expires, every reader of
 * a remote lake would otherwise list every directory at once). */
typedef struct list_flight {
    struct list_flight *next;
    char *dir;
    bool done;
    int rc;
    pq_error err;              /* rc != PQ_OK: handed to every waiter */
    int waiters;
} list_flight;

typedef struct cached_store {
    pq_store base;
    pq_store *inner;
    uint64_t ttl_ms;
    pq_cache_counters *counters;
    pthread_mutex_t mu;
    pthread_cond_t flight_done;
    list_entry *buckets[LIST_BUCKETS];
    int32_t n_dirs;
    _Atomic size_t bytes;      /* of the kept entries */
    size_t max_bytes;          /* LIST_MAX_BYTES unless a test sets it */
    list_flight *flights;
    /* Bumped by every invalidation: a listing that began before one is
     * handed to its caller but not kept (it may miss what was written). */
    uint64_t generation;
} cached_store;

static void free_list_entry(list_entry *e)
{
    if (!e) return;
    for (int32_t i = 0; i < e->n; i++) free(e->names[i]);
    free(e->names);
    free(e->ents);
    free(e->dir);
    free(e);
}

static int cs_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    return cs->inner->ops->open(cs->inner, path, out, err);
}

static int cs_stat(pq_store *s, const char *path, pq_stat *out, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    return cs->inner->ops->stat(cs->inner, path, out, err);
}

typedef struct collect_ctx {
    list_entry *e;
    int32_t cap;
    bool oom;
} collect_ctx;

static int collect(void *ctx, const pq_dirent *d)
{
    collect_ctx *c = ctx;
    list_entry *e = c->e;
    if (e->n == c->cap) {
        int32_t cap = c->cap ? c->cap * 2 : 32;
        pq_dirent *ents = realloc(e->ents, sizeof *ents * (size_t)cap);
        if (ents) e->ents = ents;
        char **names = realloc(e->names, sizeof *names * (size_t)cap);
        if (names) e->names = names;
        if (!ents || !names) {
            c->oom = true;
            return 1;
        }
        c->cap = cap;
    }
    e->names[e->n] = strdup(d->name);
    if (!e->names[e->n]) {
        c->oom = true;
        return 1;
    }
    e->ents[e->n] = *d;
    e->n++;
    return 0;
}

static void drop_dir_locked(cached_store *cs, const char *dir)
{
    list_entry **pp = &cs->buckets[pq_hash_str(dir) % LIST_BUCKETS];
    while (*pp) {
        if (!strcmp((*pp)->dir, dir)) {
            list_entry *e = *pp;
            *pp = e->next;
            cs->bytes -= e->bytes;
            free_list_entry(e);
            cs->n_dirs--;
            return;
        }
        pp = &(*pp)->next;
    }
}

static void drop_all_locked(cached_store *cs)
{
    for (int b = 0; b < LIST_BUCKETS; b++) {
        list_entry *e = cs->buckets[b];
        while (e) {
            list_entry *next = e->next;
            free_list_entry(e);
            e = next;
        }
        cs->buckets[b] = NULL;
    }
    cs->n_dirs = 0;
    cs->bytes = 0;
}

/* Each allocation counted with malloc's per-chunk word and its rounding. */
static size_t alloc_bytes(size_t n)
{
    return (n + sizeof(size_t) + 15) & ~(size_t)15;
}

static size_t list_entry_bytes(const list_entry *e)
{
    size_t b = alloc_bytes(sizeof *e) + alloc_bytes(strlen(e->dir) + 1);
    size_t cap = 32;
    while (cap < (size_t)e->n) cap *= 2; /* as collect grows the arrays */
    b += alloc_bytes(cap * sizeof *e->ents) + alloc_bytes(cap * sizeof *e->names);
    for (int32_t i = 0; i < e->n; i++) b += alloc_bytes(strlen(e->names[i]) + 1);
    return b;
}

size_t pq_store_cached_bytes(pq_store *s)
{
    return atomic_load(&((cached_store *)s)->bytes);
}

void pq_store_cached_set_max_bytes(pq_store *s, size_t max_bytes)
{
    cached_store *cs = (cached_store *)s;
    pthread_mutex_lock(&cs->mu);
    cs->max_bytes = max_bytes;
    drop_all_locked(cs);
    pthread_mutex_unlock(&cs->mu);
}

static int replay(const list_entry *e, pq_list_cb cb, void *ctx)
{
    for (int32_t i = 0; i < e->n; i++) {
        pq_dirent d = e->ents[i];
        d.name = e->names[i];
        if (cb(ctx, &d)) break;
    }
    return PQ_OK;
}

/* The fresh listing of dir copied out (the callback may list again, so it
 * is replayed after the lock is let go); 1 when there is one, 0 when not. */
static int fresh_copy_locked(cached_store *cs, const char *dir, uint64_t now, list_entry *copy, bool *oom)
{
    for (list_entry *e = cs->buckets[pq_hash_str(dir) % LIST_BUCKETS]; e; e = e->next) {
        if (strcmp(e->dir, dir)) continue;
        if (e->fetched_ms < now && now - e->fetched_ms > cs->ttl_ms) return 0;
        collect_ctx cc = {.e = copy};
        for (int32_t i = 0; i < e->n && !cc.oom; i++) {
            pq_dirent d = e->ents[i];
            d.name = e->names[i];
            collect(&cc, &d);
        }
        *oom = cc.oom;
        return 1;
    }
    return 0;
}

static list_flight *flight_of_locked(cached_store *cs, const char *dir)
{
    for (list_flight *f = cs->flights; f; f = f->next)
        if (!strcmp(f->dir, dir)) return f;
    return NULL;
}

static int cs_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    uint64_t now = pq_now_ms();
    pthread_mutex_lock(&cs->mu);
    for (;;) {
        list_entry copy = {0};
        bool oom = false;
        if (fresh_copy_locked(cs, dir, now, &copy, &oom)) {
            pthread_mutex_unlock(&cs->mu);
            if (cs->counters) atomic_fetch_add(&cs->counters->list_hits, 1);
            if (!oom) replay(&copy, cb, ctx);
            for (int32_t i = 0; i < copy.n; i++) free(copy.names[i]);
            free(copy.names);
            free(copy.ents);
            return oom ? PQ_NOMEM(err) : PQ_OK;
        }
        list_flight *f = flight_of_locked(cs, dir);
        if (!f) break;
        /* Listed by another thread right now: its answer, or its error. */
        f->waiters++;
        while (!f->done) pthread_cond_wait(&cs->flight_done, &cs->mu);
        int rc = f->rc;
        if (rc != PQ_OK) *err = f->err;
        if (--f->waiters == 0) {
            free(f->dir);
            free(f);
        }
        if (rc != PQ_OK) {
            pthread_mutex_unlock(&cs->mu);
            return PQ_ERR;
        }
        /* Kept (or dropped by an invalidation: then listed anew). */
    }
    list_flight *f = calloc(1, sizeof *f);
    char *fdir = strdup(dir);
    if (!f || !fdir) {
        pthread_mutex_unlock(&cs->mu);
        free(f);
        free(fdir);
        return PQ_NOMEM(err);
    }
    f->dir = fdir;
    f->next = cs->flights;
    cs->flights = f;
    uint64_t generation = cs->generation;
    pthread_mutex_unlock(&cs->mu);

    if (cs->counters) atomic_fetch_add(&cs->counters->list_misses, 1);
    list_entry *e = calloc(1, sizeof *e);
    int rc = e ? PQ_OK : PQ_NOMEM(err);
    if (e) e->dir = strdup(dir);
    collect_ctx cc = {.e = e};
    if (rc == PQ_OK && (!e->dir || cs->inner->ops->list(cs->inner, dir, collect, &cc, err) != PQ_OK || cc.oom)) {
        if (cc.oom || !e->dir) PQ_NOMEM(err);
        rc = PQ_ERR;
    }
    if (rc == PQ_OK) e->fetched_ms = pq_now_ms(); /* from the answer: a listing slower than the TTL is still used */
    /* The answer is kept and the waiters woken before the caller's callback
     * runs (on a copy: the kept entry may be dropped meanwhile), so the
     * callback neither holds them up nor finds no flight and no entry. */
    list_entry copy = {0};
    bool oom = false;
    pthread_mutex_lock(&cs->mu);
    for (list_flight **pp = &cs->flights; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    f->done = true;
    f->rc = rc;
    if (rc != PQ_OK) f->err = *err;
    if (rc == PQ_OK) e->bytes = list_entry_bytes(e);
    if (rc == PQ_OK && generation == cs->generation) drop_dir_locked(cs, dir); /* this answer replaces it, kept or not */
    if (rc == PQ_OK && generation == cs->generation && e->bytes <= cs->max_bytes) {
        if (cs->n_dirs >= LIST_MAX_DIRS || cs->bytes + e->bytes > cs->max_bytes) drop_all_locked(cs);
        uint64_t b = pq_hash_str(dir) % LIST_BUCKETS;
        e->next = cs->buckets[b];
        cs->buckets[b] = e;
        cs->n_dirs++;
        cs->bytes += e->bytes;
        (void)fresh_copy_locked(cs, dir, e->fetched_ms, &copy, &oom);
        e = NULL;
    }
    if (f->waiters == 0) {
        free(f->dir);
        free(f);
    } else {
        pthread_cond_broadcast(&cs->flight_done);
    }
    pthread_mutex_unlock(&cs->mu);
    if (rc == PQ_OK && oom) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) replay(e ? e : &copy, cb, ctx);
    for (int32_t i = 0; i < copy.n; i++) free(copy.names[i]);
    free(copy.names);
    free(copy.ents);
    free_list_entry(e); /* not kept: failed, or older than an invalidation */
    return rc;
}

static int cs_create(pq_store *s, const char *path, pq_upload **out, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    return cs->inner->ops->create(cs->inner, path, out, err);
}

static int cs_mkdir(pq_store *s, const char *path, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    return cs->inner->ops->mkdir(cs->inner, path, err);
}

static void cs_destroy(pq_store *s)
{
    cached_store *cs = (cached_store *)s;
    drop_all_locked(cs);
    pthread_mutex_destroy(&cs->mu);
    pthread_cond_destroy(&cs->flight_done);
    pq_store_destroy(cs->inner);
    free(s->root);
    free(cs);
}

static int cs_rmdir(pq_store *s, const char *path, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    if (!cs->inner->ops->rmdir) return PQ_OK;
    return cs->inner->ops->rmdir(cs->inner, path, err);
}

static int cs_chown_dir(pq_store *s, const char *path, uint32_t uid, uint32_t gid, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    if (!cs->inner->ops->chown_dir) return PQ_OK;
    return cs->inner->ops->chown_dir(cs->inner, path, uid, gid, err);
}

static int cs_remove(pq_store *s, const char *path, pq_error *err)
{
    cached_store *cs = (cached_store *)s;
    if (!cs->inner->ops->remove) return pq_fail(err, PQ_E_UNSUPPORTED, "%s: this store removes no file", path);
    return cs->inner->ops->remove(cs->inner, path, err);
}

static const pq_store_ops cached_store_ops = {cs_open,    cs_stat,  cs_list,      cs_create, cs_mkdir,
                                              cs_destroy, cs_rmdir, cs_chown_dir, cs_remove};

int pq_store_cached_new(pq_store *inner, uint64_t ttl_ms, pq_cache_counters *counters, pq_store **out,
                        pq_error *err)
{
    cached_store *cs = calloc(1, sizeof *cs);
    char *root = strdup(inner->root ? inner->root : "");
    if (!cs || !root) {
        free(cs);
        free(root);
        return PQ_NOMEM(err);
    }
    cs->base.ops = &cached_store_ops;
    cs->base.parallel_requests = inner->parallel_requests;
    cs->base.local_dir = inner->local_dir;
    cs->base.modified_granularity_ms = inner->modified_granularity_ms;
    cs->base.root = root;
    cs->inner = inner;
    cs->ttl_ms = ttl_ms;
    cs->max_bytes = LIST_MAX_BYTES;
    cs->counters = counters;
    pthread_mutex_init(&cs->mu, NULL);
    pthread_cond_init(&cs->flight_done, NULL);
    *out = &cs->base;
    return PQ_OK;
}

pq_store *pq_store_cached_inner(pq_store *cached)
{
    return ((cached_store *)cached)->inner;
}

void pq_store_cached_invalidate(pq_store *cached, const char *dir)
{
    cached_store *cs = (cached_store *)cached;
    pthread_mutex_lock(&cs->mu);
    if (dir) drop_dir_locked(cs, dir);
    else drop_all_locked(cs);
    cs->generation++;
    pthread_mutex_unlock(&cs->mu);
}

/* ------------------------------------------------------------------ footer cache */

struct pq_footer_ref {
    pq_footer_ref *next, *prev;   /* LRU list (most recent first) */
    pq_footer_ref *chain;         /* hash chain */
    char *path;
    uint64_t hash;                /* pq_hash_str(path) */
    uint64_t size;
    int64_t mtime_ns;
    uint64_t tag;                 /* pq_footer_view.tag */
    pq_footer *ft;
    size_t bytes;
    int refs;                     /* users, plus 1 while in the cache */
    bool in_cache;
    /* A footer no cache holds (pq_footer_ref_own): its users, counted
     * without any cache's lock. */
    bool owned;
    _Atomic int owned_refs;
};

/* Buckets to start with; the table doubles when it holds more footers than
 * buckets (a fixed 1,024 made a 100,000-file scan walk chains of 70 paths
 * under the cache's lock: a fifth of the mount's CPU in strcmp). */
#define FOOTER_BUCKETS 1024
#define FOOTER_SIZE_SLOTS 64

/* The largest footer seen per table (a slot per hash of the file's directory
 * with its trailing Hive "k=v" components removed; collisions only make a
 * guess worse).  A table's files usually have footers of similar size, so the
 * tail read of the next file is sized from them instead of 64 KiB: a scan of
 * many files reads little more than their footers. */
typedef struct footer_size_slot {
    uint64_t table_hash;
    uint32_t max_meta_len;
} footer_size_slot;

struct pq_footer_cache {
    pthread_mutex_t mu;
    footer_size_slot sizes[FOOTER_SIZE_SLOTS];
    pq_footer_ref **buckets;
    size_t n_buckets, n_entries;  /* n_buckets a power of two */
    pq_footer_ref lru;            /* sentinel */
    size_t bytes, max_bytes;
    pq_cache_counters *counters;
};

pq_footer_cache *pq_footer_cache_new(size_t max_bytes, pq_cache_counters *counters)
{
    pq_footer_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->buckets = calloc(FOOTER_BUCKETS, sizeof *c->buckets);
    if (!c->buckets) {
        free(c);
        return NULL;
    }
    c->n_buckets = FOOTER_BUCKETS;
    pthread_mutex_init(&c->mu, NULL);
    c->lru.next = c->lru.prev = &c->lru;
    c->max_bytes = max_bytes;
    c->counters = counters;
    return c;
}

static void ref_free(pq_footer_ref *r)
{
    pq_footer_free(r->ft);
    free(r->path);
    free(r);
}

static void unlink_locked(pq_footer_cache *c, pq_footer_ref *r)
{
    pq_footer_ref **pp = &c->buckets[r->hash & (c->n_buckets - 1)];
    while (*pp && *pp != r) pp = &(*pp)->chain;
    if (*pp) *pp = r->chain;
    c->n_entries--;
    r->prev->next = r->next;
    r->next->prev = r->prev;
    r->in_cache = false;
    c->bytes -= r->bytes;
}

void pq_footer_cache_usage(pq_footer_cache *c, size_t *bytes, size_t *max_bytes)
{
    pthread_mutex_lock(&c->mu);
    *bytes = c->bytes;
    *max_bytes = c->max_bytes;
    pthread_mutex_unlock(&c->mu);
}

void pq_footer_cache_free(pq_footer_cache *c)
{
    if (!c) return;
    while (c->lru.next != &c->lru) {
        pq_footer_ref *r = c->lru.next;
        unlink_locked(c, r);
        if (--r->refs == 0) ref_free(r);
    }
    pthread_mutex_destroy(&c->mu);
    free(c->buckets);
    free(c);
}

pq_footer_ref *pq_footer_ref_own(pq_footer *ft)
{
    pq_footer_ref *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->ft = ft;
    r->owned = true;
    atomic_init(&r->owned_refs, 1);
    return r;
}

pq_footer_ref *pq_footer_ref_hold(pq_footer_cache *c, pq_footer_ref *r)
{
    if (r->owned) {
        atomic_fetch_add(&r->owned_refs, 1);
        return r;
    }
    pthread_mutex_lock(&c->mu);
    r->refs++;
    pthread_mutex_unlock(&c->mu);
    return r;
}

const pq_footer *pq_footer_ref_get(const pq_footer_ref *r)
{
    return r->ft;
}

void pq_footer_ref_put(pq_footer_cache *c, pq_footer_ref *r)
{
    if (!r) return;
    if (r->owned) {
        if (atomic_fetch_sub(&r->owned_refs, 1) == 1) ref_free(r);
        return;
    }
    pthread_mutex_lock(&c->mu);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&c->mu);
    if (last) ref_free(r);
}

static uint64_t table_hash_of(const char *path)
{
    size_t end = strlen(path);
    for (;;) {
        while (end && path[end - 1] != '/') end--; /* to the directory */
        if (!end) break;
        size_t start = end - 1;
        while (start && path[start - 1] != '/') start--;
        if (!memchr(path + start, '=', end - 1 - start))
            break;
        end = start; /* a partition directory: go up */
    }
    return pq_hash_bytes(path, end) | 1; /* never 0: 0 marks an empty slot */
}

/* The tail to read for a file of this table, from its largest footer so far. */
static size_t footer_guess_locked(const pq_footer_cache *c, uint64_t th)
{
    const footer_size_slot *s = &c->sizes[th % FOOTER_SIZE_SLOTS];
    return pq_footer_guess(s->table_hash == th ? s->max_meta_len : 0);
}

static void footer_seen_locked(pq_footer_cache *c, uint64_t th, uint32_t meta_len)
{
    footer_size_slot *s = &c->sizes[th % FOOTER_SIZE_SLOTS];
    if (s->table_hash != th) {
        s->table_hash = th;
        s->max_meta_len = meta_len;
    } else if (meta_len > s->max_meta_len) {
        s->max_meta_len = meta_len;
    }
}

/* Doubles the buckets once they hold more footers than buckets (kept as
 * they are when the memory is not there: chains are only longer). */
static void grow_locked(pq_footer_cache *c)
{
    if (c->n_entries <= c->n_buckets || c->n_buckets > SIZE_MAX / 2 / sizeof *c->buckets) return;
    size_t n = c->n_buckets * 2;
    pq_footer_ref **b = calloc(n, sizeof *b);
    if (!b) return;
    for (size_t i = 0; i < c->n_buckets; i++)
        for (pq_footer_ref *r = c->buckets[i], *next; r; r = next) {
            next = r->chain;
            r->chain = b[r->hash & (n - 1)];
            b[r->hash & (n - 1)] = r;
        }
    free(c->buckets);
    c->buckets = b;
    c->n_buckets = n;
}

int pq_footer_cache_get(pq_footer_cache *c, pq_store *store, const char *path, const pq_stat *id,
                        pq_footer_ref **out, pq_error *err)
{
    return pq_footer_cache_get_as(c, store, path, id, NULL, out, err);
}

int pq_footer_cache_get_as(pq_footer_cache *c, pq_store *store, const char *path, const pq_stat *id,
                           const pq_footer_view *as, pq_footer_ref **out, pq_error *err)
{
    return pq_footer_cache_get_from(c, store, path, id, as, NULL, out, err);
}

int pq_footer_cache_get_from(pq_footer_cache *c, pq_store *store, const char *path, const pq_stat *id,
                             const pq_footer_view *as, pq_file *file, pq_footer_ref **out, pq_error *err)
{
    uint64_t tag = as ? as->tag : 0;
    uint64_t th = table_hash_of(path);
    uint64_t hash = pq_hash_str(path);
    pthread_mutex_lock(&c->mu);
    for (pq_footer_ref *r = c->buckets[hash & (c->n_buckets - 1)]; r; r = r->chain) {
        if (r->hash != hash || strcmp(r->path, path)) continue;
        if (r->size == id->size && r->mtime_ns == id->mtime_ns && r->tag == tag) {
            r->refs++;
            /* most recently used first */
            r->prev->next = r->next;
            r->next->prev = r->prev;
            r->next = c->lru.next;
            r->prev = &c->lru;
            c->lru.next->prev = r;
            c->lru.next = r;
            pthread_mutex_unlock(&c->mu);
            if (c->counters) atomic_fetch_add(&c->counters->footer_hits, 1);
            *out = r;
            return PQ_OK;
        }
        /* The file changed (or is seen as another table's schema): drop
         * the stale entry. */
        unlink_locked(c, r);
        if (--r->refs == 0) ref_free(r);
        break;
    }
    size_t guess = footer_guess_locked(c, th);
    pthread_mutex_unlock(&c->mu);
    if (c->counters) atomic_fetch_add(&c->counters->footer_misses, 1);

    pq_file *f = file;
    if (!f) {
        PQ_TRY(store->ops->open(store, path, &f, err));
        /* Not another file's footer under this identity. */
        if ((as && as->size_only ? pq_file_check_size(f, id->size, err) : pq_file_check_listed(f, id, err)) !=
            PQ_OK) {
            pq_file_close(f);
            return PQ_ERR;
        }
    }
    pq_footer *ft;
    int rc = pq_footer_read_guess(f, guess, &ft, err);
    if (f != file) pq_file_close(f);
    if (rc != PQ_OK) return PQ_ERR;
    if (as && as->prepare) as->prepare(as->ctx, ft);
    pq_footer_ref *r = calloc(1, sizeof *r);
    if (r) r->path = strdup(path);
    if (!r || !r->path) {
        free(r);
        pq_footer_free(ft);
        return PQ_NOMEM(err);
    }
    r->ft = ft;
    r->hash = hash;
    r->size = id->size;
    r->mtime_ns = id->mtime_ns;
    r->tag = tag;
    /* What it holds: the Thrift bytes and the arenas' blocks (not only the
     * bytes handed out: a block's unused rest is memory too). */
    r->bytes = ft->meta_len + ft->arena.reserved + ft->schema.arena.reserved + sizeof *ft + sizeof *r + strlen(path) + 1 +
               4 * 16 /* malloc's own header per allocation */;
    r->refs = 2; /* the caller and the cache */
    pthread_mutex_lock(&c->mu);
    c->n_entries++;
    grow_locked(c);
    r->chain = c->buckets[hash & (c->n_buckets - 1)];
    c->buckets[hash & (c->n_buckets - 1)] = r;
    r->next = c->lru.next;
    r->prev = &c->lru;
    c->lru.next->prev = r;
    c->lru.next = r;
    r->in_cache = true;
    c->bytes += r->bytes;
    footer_seen_locked(c, th, ft->meta_len);
    pq_footer_ref *victims = NULL;
    while (c->bytes > c->max_bytes && c->lru.prev != r) {
        pq_footer_ref *v = c->lru.prev;
        unlink_locked(c, v);
        if (--v->refs == 0) {
            v->chain = victims;
            victims = v;
        }
    }
    pthread_mutex_unlock(&c->mu);
    while (victims) {
        pq_footer_ref *next = victims->chain;
        ref_free(victims);
        victims = next;
    }
    *out = r;
    return PQ_OK;
}
