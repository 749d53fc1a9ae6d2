#include "remote.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mem.h"

/* ------------------------------------------------------------------ what listings said */

#define KNOWN_BUCKETS 4096

typedef struct known_entry {
    struct known_entry *next;
    uint64_t size;
    int64_t mtime;
    char etag[96];
    char path[];
} known_entry;

struct pq_remote_known {
    pthread_mutex_t mu;
    known_entry *b[KNOWN_BUCKETS];
};

int pq_remote_init(pq_remote *r, const pq_http_opts *ho, pq_io_counters *counters, pq_error *err)
{
    memset(r, 0, sizeof *r);
    r->counters = counters;
    r->known = calloc(1, sizeof *r->known);
    if (!r->known) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    pthread_mutex_init(&r->known->mu, NULL);
    if (pq_http_new(ho, &r->http, err) != PQ_OK) {
        pthread_mutex_destroy(&r->known->mu);
        free(r->known);
        r->known = NULL;
        return PQ_ERR;
    }
    return PQ_OK;
}

void pq_remote_fini(pq_remote *r)
{
    if (r->known) {
        for (int i = 0; i < KNOWN_BUCKETS; i++)
            for (known_entry *e = r->known->b[i], *n; e; e = n) {
                n = e->next;
                free(e);
            }
        pthread_mutex_destroy(&r->known->mu);
        free(r->known);
    }
    pq_http_free(r->http);
    memset(r, 0, sizeof *r);
}

void pq_remote_know(pq_remote *r, const char *path, uint64_t size, const char *etag, int64_t mtime)
{
    size_t n = strlen(path);
    unsigned h = (unsigned)(pq_hash_bytes(path, n) % KNOWN_BUCKETS);
    pthread_mutex_lock(&r->known->mu);
    known_entry *e = r->known->b[h];
    while (e && strcmp(e->path, path)) e = e->next;
    if (!e && (e = malloc(sizeof *e + n + 1)) != NULL) {
        memcpy(e->path, path, n + 1);
        e->next = r->known->b[h];
        r->known->b[h] = e;
    }
    if (e) {
        e->size = size;
        e->mtime = mtime;
        snprintf(e->etag, sizeof e->etag, "%s", etag && strlen(etag) < sizeof e->etag ? etag : "");
    }
    pthread_mutex_unlock(&r->known->mu);
}

static bool known(pq_remote *r, const char *path, uint64_t *size, char *etag, size_t cap, int64_t *mtime)
{
    unsigned h = (unsigned)(pq_hash_bytes(path, strlen(path)) % KNOWN_BUCKETS);
    pthread_mutex_lock(&r->known->mu);
    known_entry *e = r->known->b[h];
    while (e && strcmp(e->path, path)) e = e->next;
    if (e) {
        *size = e->size;
        *mtime = e->mtime;
        snprintf(etag, cap, "%s", e->etag);
    }
    pthread_mutex_unlock(&r->known->mu);
    return e != NULL;
}

int64_t pq_remote_identity(const char *etag, int64_t last_modified)
{
    if (etag && etag[0]) return (int64_t)(pq_hash_bytes(etag, strlen(etag)) >> 1);
    return last_modified * 1000000000;
}

int pq_remote_list_entry(void *ctx, const pq_listing_entry *le, pq_error *err)
{
    pq_remote_list_ctx *lc = ctx;
    pq_dirent e = {.name = le->name, .st = {.is_dir = le->is_dir, .size = le->size}};
    if (!le->is_dir) {
        e.st.mtime_ns = pq_remote_identity(le->etag, le->mtime);
        char *path = pq_path_join(lc->dir, le->name);
        if (!path) return pq_fail(err, PQ_E_NOMEM, "out of memory");
        pq_remote_know(lc->r, path, le->size, le->etag, le->mtime);
        free(path);
    }
    return lc->cb(lc->cb_ctx, &e) ? 1 : 0;
}

/* ------------------------------------------------------------------ requests */

int pq_remote_head(pq_remote *r, const char *url, pq_http_reply *rp, pq_error *err)
{
    pq_http_req rq = {.method = "HEAD", .url = url, .sign = r->sign, .sign_ctx = r->sign_ctx};
    PQ_TRY(pq_http_do(r->http, &rq, rp, err));
    pq_io_count_read(r->counters, 0);
    if (rp->status / 100 != 2) return pq_http_status_fail(&rq, rp, NULL, err);
    return PQ_OK;
}

int pq_remote_get(pq_remote *r, const char *url, pq_buf *body, pq_http_reply *rp, pq_error *err)
{
    pq_http_req rq = {.method = "GET", .url = url, .body = body, .sign = r->sign,
                      .sign_ctx = r->sign_ctx};
    PQ_TRY(pq_http_do(r->http, &rq, rp, err));
    if (r->counters) atomic_fetch_add_explicit(&r->counters->list_requests, 1, memory_order_relaxed);
    if (rp->status / 100 != 2) return pq_http_status_fail(&rq, rp, body, err);
    return PQ_OK;
}

/* ------------------------------------------------------------------ files */

typedef struct remote_file {
    pq_file base;
    pq_remote *r;
    char *url;
    pthread_mutex_t mu;          /* the lazy HEAD */
    bool has_size;
    uint64_t size;
    char etag[96];
    char if_match[112];          /* "If-Match: ETAG", or "If-Unmodified-Since: DATE" */
} remote_file;

static int file_size(pq_file *f, uint64_t *out, pq_error *err)
{
    remote_file *rf = (remote_file *)f;
    pthread_mutex_lock(&rf->mu);
    int rc = PQ_OK;
    if (!rf->has_size) {
        pq_http_reply rp;
        rc = pq_remote_head(rf->r, rf->url, &rp, err);
        if (rc == PQ_OK && !rp.has_length)
            rc = pq_fail(err, PQ_E_IO, "HEAD %s: no Content-Length", rf->url);
        if (rc == PQ_OK) {
            rf->size = rp.content_length;
            rf->has_size = true;
            if (!rf->etag[0] && rp.etag[0] && strlen(rp.etag) < sizeof rf->etag) {
                snprintf(rf->etag, sizeof rf->etag, "%s", rp.etag);
                snprintf(rf->if_match, sizeof rf->if_match, "If-Match: %s", rf->etag);
            }
        }
    }
    *out = rf->size;
    pthread_mutex_unlock(&rf->mu);
    return rc;
}

static int file_read_at(pq_file *f, void *buf, size_t len, uint64_t off, pq_error *err)
{
    remote_file *rf = (remote_file *)f;
    if (len == 0) return PQ_OK;
    uint64_t size;
    PQ_TRY(file_size(f, &size, err));
    if (off > size || len > size - off)
        return pq_fail(err, PQ_E_CORRUPT, "unexpected end of file reading %zu bytes at offset %llu", len,
                       (unsigned long long)off);
    const char *hdr[1];
    int n_hdr = 0;
    pthread_mutex_lock(&rf->mu);
    if (rf->if_match[0]) hdr[n_hdr++] = rf->if_match;
    pthread_mutex_unlock(&rf->mu);
    pq_http_req rq = {.method = "GET", .url = rf->url, .has_range = true, .range_off = off, .range_len = len,
                      .headers = hdr, .n_headers = n_hdr, .into = buf, .into_cap = len,
                      .sign = rf->r->sign, .sign_ctx = rf->r->sign_ctx};
    pq_http_reply rp;
    PQ_TRY(pq_http_do(rf->r->http, &rq, &rp, err));
    if (rp.status != 206 && rp.status != 200) {
        pq_http_status_fail(&rq, &rp, NULL, err);
        /* A file the listing had: gone now is a storage error (EIO), not
         * "no such file" for a name that is still listed. */
        if (err->cls == PQ_E_NOTFOUND) err->cls = PQ_E_IO;
        return PQ_ERR;
    }
    if (rp.has_total && rp.total != size)
        return pq_fail(err, PQ_E_IO, "GET %s: the object is %llu bytes now, %llu when listed (changed)", rf->url,
                       (unsigned long long)rp.total, (unsigned long long)size);
    if (rp.body_len != len || (rp.has_total && rp.range_start != off))
        return pq_fail(err, PQ_E_IO, "GET %s: asked for %zu bytes at %llu, got %llu", rf->url, len,
                       (unsigned long long)off, (unsigned long long)rp.body_len);
    pq_io_count_read(f->counters, len);
    return PQ_OK;
}

static void file_close(pq_file *f)
{
    remote_file *rf = (remote_file *)f;
    pthread_mutex_destroy(&rf->mu);
    free(rf->url);
    free(f->name);
    free(rf);
}

static const pq_file_ops remote_file_ops = {file_read_at, file_size, file_close};

int pq_remote_open(pq_remote *r, const char *path, const char *url, pq_file **out, pq_error *err)
{
    remote_file *rf = calloc(1, sizeof *rf);
    char *u = strdup(url), *n = strdup(url);
    if (!rf || !u || !n) {
        free(rf);
        free(u);
        free(n);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&rf->mu, NULL);
    rf->base.ops = &remote_file_ops;
    rf->base.name = n;
    rf->base.counters = r->counters;
    /* A request costs a round trip: gaps below this are read through. */
    rf->base.merge_gap = 256 * 1024;
    rf->base.parallel_reads = PQ_REMOTE_PARALLEL_READS;
    rf->r = r;
    rf->url = u;
    int64_t mtime = 0;
    rf->has_size = known(r, path, &rf->size, rf->etag, sizeof rf->etag, &mtime);
    if (rf->etag[0]) {
        snprintf(rf->if_match, sizeof rf->if_match, "If-Match: %s", rf->etag);
    } else if (mtime > 0) {
        /* No ETag (nginx's JSON listing): the listed time, to the second. */
        time_t t = (time_t)mtime;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(rf->if_match, sizeof rf->if_match, "If-Unmodified-Since: %a, %d %b %Y %H:%M:%S GMT", &tm);
    }
    *out = &rf->base;
    return PQ_OK;
}
