/* Metadata caches of a mount: directory listings and footers.
 *
 * Listings are trusted for metadata_ttl: a caching store wraps the real one
 * and answers `list` from memory while the entry is fresh.  Footers are keyed
 * by file identity (path, size, mtime or ETag) taken from those listings, so a
 * file replaced in the lake gets a new identity once the listing is refreshed
 * and is never served with a stale footer after the TTL.  Both are bounded. */
#ifndef PQ_CACHE_H
#define PQ_CACHE_H

#include "footer.h"
#include "io.h"

typedef struct pq_cache_counters {
    _Atomic uint64_t list_hits, list_misses;
    _Atomic uint64_t footer_hits, footer_misses;
} pq_cache_counters;

/* Wraps `inner` (takes ownership).  Files opened through the wrapper count
 * their bytes in the inner store's counters. */
int pq_store_cached_new(pq_store *inner, uint64_t ttl_ms, pq_cache_counters *counters, pq_store **out,
                        pq_error *err);
pq_store *pq_store_cached_inner(pq_store *cached);
/* Bytes the kept listings hold (at most 64 MiB: past it they are dropped). */
size_t pq_store_cached_bytes(pq_store *cached);
/* Sets that budget (tests), dropping what is kept. */
void pq_store_cached_set_max_bytes(pq_store *cached, size_t max_bytes);
/* Forgets a directory's listing (after a write into it), or all with NULL. */
void pq_store_cached_invalidate(pq_store *cached, const char *dir);

typedef struct pq_footer_cache pq_footer_cache;
typedef struct pq_footer_ref pq_footer_ref;

pq_footer_cache *pq_footer_cache_new(size_t max_bytes, pq_cache_counters *counters);
void pq_footer_cache_free(pq_footer_cache *c);
/* The bytes the cached footers hold, and the budget they are kept within. */
void pq_footer_cache_usage(pq_footer_cache *c, size_t *bytes, size_t *max_bytes);

/* The footer of `path` with identity `id` (from a listing): from the cache,
 * or read through `store` on a miss.  The reference keeps it alive. */
int pq_footer_cache_get(pq_footer_cache *c, pq_store *store, const char *path, const pq_stat *id,
                        pq_footer_ref **out, pq_error *err);

/* How a table format sees a file's footer (pq_footer_cache_get_as). */
typedef struct pq_footer_view {
    /* Footers are shared only under the same tag (a Delta table's schema:
     * the names and types prepare gives). */
    uint64_t tag;
    /* The file's identity is its size alone (a table format's file, which
     * is never rewritten: its log has no mtime of the store's). */
    bool size_only;
    /* Called once on a footer read, before anyone else sees it: a shared
     * footer is never changed after. */
    void (*prepare)(void *ctx, pq_footer *ft);
    void *ctx;
} pq_footer_view;

/* pq_footer_cache_get, the footer as `as` (may be NULL: as read) sees it. */
int pq_footer_cache_get_as(pq_footer_cache *c, pq_store *store, const char *path, const pq_stat *id,
                           const pq_footer_view *as, pq_footer_ref **out, pq_error *err);
/* The same, a miss read from `file` (may be NULL: opened here), the caller's
 * open file of `path`, already checked against `id`: what the footer's read
 * brings in besides the footer stays with that file for its later reads (a
 * small file's data: read once, in one request). */
int pq_footer_cache_get_from(pq_footer_cache *c, pq_store *store, const char *path, const pq_stat *id,
                             const pq_footer_view *as, pq_file *file, pq_footer_ref **out, pq_error *err);
/* A reference to a footer no cache holds (a table's schema made from a
 * file's, pq_tf_table_schema), which it takes over: freed by the last
 * pq_footer_ref_put (whose cache may be NULL for it).  NULL out of memory
 * (ft is not taken then). */
pq_footer_ref *pq_footer_ref_own(pq_footer *ft);
/* One more reference to r (c: its cache; any, or NULL, for an owned one). */
pq_footer_ref *pq_footer_ref_hold(pq_footer_cache *c, pq_footer_ref *r);
const pq_footer *pq_footer_ref_get(const pq_footer_ref *r);
void pq_footer_ref_put(pq_footer_cache *c, pq_footer_ref *r);

uint64_t pq_now_ms(void);

#endif
