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
    int64_t mtime;               /* Unix seconds; 0: not given */
    char *etag;                  /* whole, as listed; NULL: not given */
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
    if (!r->known) return PQ_NOMEM(err);
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
                free(e->etag);
                free(e);
            }
        pthread_mutex_destroy(&r->known->mu);
        free(r->known);
    }
    pq_http_free(r->http);
    memset(r, 0, sizeof *r);
}

/* Remembers what a listing said of `path` (etag "" or NULL: none; mtime 0:
 * none).  The ETag is kept whole, whatever its length: a part of one could
 * not be compared, and a file without one is read unchecked. */
static int remember(pq_remote *r, const char *path, uint64_t size, const char *etag, int64_t mtime, pq_error *err)
{
    char *tag = NULL;
    if (etag && etag[0] && !(tag = strdup(etag))) return PQ_NOMEM(err);
    size_t n = strlen(path);
    unsigned h = (unsigned)(pq_hash_bytes(path, n) % KNOWN_BUCKETS);
    pthread_mutex_lock(&r->known->mu);
    known_entry *e = r->known->b[h];
    while (e && strcmp(e->path, path)) e = e->next;
    if (!e && (e = malloc(sizeof *e + n + 1)) != NULL) {
        memcpy(e->path, path, n + 1);
        e->etag = NULL;
        e->next = r->known->b[h];
        r->known->b[h] = e;
    }
    if (e) {
        e->size = size;
        e->mtime = mtime;
        free(e->etag);
        e->etag = tag;
    }
    pthread_mutex_unlock(&r->known->mu);
    if (!e) {
        free(tag);
        return PQ_NOMEM(err);
    }
    return PQ_OK;
}

/* What the last listing said of `path`: 1 (*etag malloc'd, or NULL), 0 when
 * none showed it, PQ_ERR when out of memory. */
static int recall(pq_remote *r, const char *path, uint64_t *size, char **etag, int64_t *mtime, pq_error *err)
{
    unsigned h = (unsigned)(pq_hash_bytes(path, strlen(path)) % KNOWN_BUCKETS);
    bool oom = false;
    pthread_mutex_lock(&r->known->mu);
    known_entry *e = r->known->b[h];
    while (e && strcmp(e->path, path)) e = e->next;
    if (e) {
        *size = e->size;
        *mtime = e->mtime;
        *etag = e->etag ? strdup(e->etag) : NULL;
        oom = e->etag && !*etag;
    }
    pthread_mutex_unlock(&r->known->mu);
    if (oom) return PQ_NOMEM(err);
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
        e.st.modified_ms = le->mtime > 0 && le->mtime < INT64_MAX / 1000 ? le->mtime * 1000 : 0;
        char *path = pq_path_join(lc->dir, le->name);
        if (!path) return PQ_NOMEM(err);
        int rc = remember(lc->r, path, le->size, le->etag, le->mtime, err);
        free(path);
        if (rc != PQ_OK) return PQ_ERR;
    }
    return lc->cb(lc->cb_ctx, &e) ? 1 : 0;
}

/* ------------------------------------------------------------------ requests */

int pq_remote_head(pq_remote *r, const char *url, pq_http_reply *rp, pq_buf *etag, pq_error *err)
{
    pq_http_req rq = {.method = "HEAD", .url = url, .etag = etag, .sign = r->sign, .sign_ctx = r->sign_ctx};
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
    /* What every reply must carry: the listing's ETag and time (a file no
     * listing showed: its HEAD's), fixed before the first read. */
    char *etag;                  /* NULL: none given */
    int64_t mtime;               /* Unix seconds; 0: none given */
    char *precondition;          /* "If-Match: ETAG", "If-Unmodified-Since: DATE", or NULL */
} remote_file;

static bool http_date(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    return gmtime_r(&tt, &tm) && strftime(out, cap, "%a, %d %b %Y %H:%M:%S GMT", &tm) > 0;
}

/* Takes `etag` (malloc'd, or NULL) and `mtime` as the file's identity, and
 * the precondition that asks the server for it: If-Match on the ETag, else
 * If-Unmodified-Since on the time (on failure, etag stays the caller's).
 * A weak ETag (W/"...") goes as the time: If-Match compares strongly (RFC
 * 9110 13.1.1), so a server that honours it would refuse every read. */
static int set_identity(remote_file *rf, char *etag, int64_t mtime, pq_error *err)
{
    pq_buf b;
    pq_buf_init(&b);
    char date[64];
    int e = 0;
    if (etag && strncmp(etag, "W/", 2)) e = pq_buf_printf(&b, "If-Match: %s", etag);
    else if (mtime > 0 && http_date(mtime, date, sizeof date)) e = pq_buf_printf(&b, "If-Unmodified-Since: %s", date);
    if (e) {
        pq_buf_free(&b);
        return PQ_NOMEM(err);
    }
    rf->precondition = b.data;
    rf->etag = etag;
    rf->mtime = mtime;
    return PQ_OK;
}

static int file_size(pq_file *f, uint64_t *out, pq_error *err)
{
    remote_file *rf = (remote_file *)f;
    pthread_mutex_lock(&rf->mu);
    int rc = PQ_OK;
    if (!rf->has_size) {
        /* Never listed: the HEAD says what the file is, reads hold it to that. */
        pq_http_reply rp;
        pq_buf etag;
        pq_buf_init(&etag);
        rc = pq_remote_head(rf->r, rf->url, &rp, &etag, err);
        if (rc == PQ_OK && !rp.has_length) rc = pq_fail(err, PQ_E_IO, "HEAD %s: no Content-Length", rf->url);
        if (rc == PQ_OK && !rf->etag && !rf->mtime) {
            char *tag = rp.has_etag && etag.len ? strdup(etag.data) : NULL;
            if (rp.has_etag && etag.len && !tag) rc = PQ_NOMEM(err);
            else rc = set_identity(rf, tag, rp.last_modified, err);
            if (rc != PQ_OK) free(tag);
        }
        if (rc == PQ_OK) {
            rf->size = rp.content_length;
            rf->has_size = true;
        }
        pq_buf_free(&etag);
    }
    *out = rf->size;
    pthread_mutex_unlock(&rf->mu);
    return rc;
}

/* A reply must carry the identity its file was listed with: the same ETag,
 * byte for byte (a W/ and a multipart "-N" tag included), and the same
 * Last-Modified, to the second, whichever of the two the listing gave.  A
 * server that ignores If-Match and If-Unmodified-Since (s3rver; python's
 * http.server, which takes no precondition) serves a replaced object
 * anyway, whose bytes at the old footer's offsets would mix two versions.
 * A reply without a header the listing gave cannot be told from a changed
 * object, and fails as one. */
static int check_identity(const remote_file *rf, const pq_http_reply *rp, const pq_buf *etag, pq_error *err)
{
    if (rf->etag) {
        if (!rp->has_etag || !etag->len)
            return pq_fail(err, PQ_E_IO, "GET %s: the reply has no ETag, the listing gave %s: cannot tell it is the object listed",
                           rf->url, rf->etag);
        if (strcmp(etag->data, rf->etag))
            return pq_fail(err, PQ_E_IO, "GET %s: changed since it was listed (ETag %s, listed %s)", rf->url, etag->data,
                           rf->etag);
    }
    if (rf->mtime > 0) {
        char got[64] = "", want[64] = "";
        if (!http_date(rf->mtime, want, sizeof want)) snprintf(want, sizeof want, "%lld", (long long)rf->mtime);
        if (!rp->last_modified)
            return pq_fail(err, PQ_E_IO,
                           "GET %s: the reply has no Last-Modified, the listing gave %s: cannot tell it is the object listed",
                           rf->url, want);
        if (rp->last_modified != rf->mtime) {
            if (!http_date(rp->last_modified, got, sizeof got))
                snprintf(got, sizeof got, "%lld", (long long)rp->last_modified);
            return pq_fail(err, PQ_E_IO, "GET %s: changed since it was listed (Last-Modified %s, listed %s)", rf->url,
                           got, want);
        }
    }
    return PQ_OK;
}

/* The reply to a range read of [off, off + len) of a file of `size` bytes:
 * a 2xx for the object listed, with those bytes. */
static int check_reply(const remote_file *rf, const pq_http_req *rq, const pq_http_reply *rp, const pq_buf *etag,
                       uint64_t size, pq_error *err)
{
    if (rp->status != 206 && rp->status != 200) {
        pq_http_status_fail(rq, rp, NULL, err);
        /* A file the listing had: gone now is a storage error (EIO), not
         * "no such file" for a name that is still listed. */
        if (err->cls == PQ_E_NOTFOUND) err->cls = PQ_E_IO;
        return PQ_ERR;
    }
    if (rp->has_total && rp->total != size)
        return pq_fail(err, PQ_E_IO, "GET %s: the object is %llu bytes now, %llu when listed (changed)", rf->url,
                       (unsigned long long)rp->total, (unsigned long long)size);
    PQ_TRY(check_identity(rf, rp, etag, err));
    if (rp->body_len != rq->range_len || (rp->has_total && rp->range_start != rq->range_off))
        return pq_fail(err, PQ_E_IO, "GET %s: asked for %llu bytes at %llu, got %llu", rf->url,
                       (unsigned long long)rq->range_len, (unsigned long long)rq->range_off,
                       (unsigned long long)rp->body_len);
    return PQ_OK;
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
    /* The identity is fixed once the size is known (file_size). */
    const char *hdr[1];
    int n_hdr = 0;
    if (rf->precondition) hdr[n_hdr++] = rf->precondition;
    pq_buf etag;
    pq_buf_init(&etag);
    pq_http_req rq = {.method = "GET", .url = rf->url, .has_range = true, .range_off = off, .range_len = len,
                      .headers = hdr, .n_headers = n_hdr, .into = buf, .into_cap = len, .etag = &etag,
                      .sign = rf->r->sign, .sign_ctx = rf->r->sign_ctx};
    pq_http_reply rp;
    int rc = pq_http_do(rf->r->http, &rq, &rp, err);
    if (rc == PQ_OK) rc = check_reply(rf, &rq, &rp, &etag, size, err);
    pq_buf_free(&etag);
    if (rc == PQ_OK) pq_io_count_read(f->counters, len);
    return rc;
}

static void file_close(pq_file *f)
{
    remote_file *rf = (remote_file *)f;
    pthread_mutex_destroy(&rf->mu);
    free(rf->precondition);
    free(rf->etag);
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
        return PQ_NOMEM(err);
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
    char *etag = NULL;
    int64_t mtime = 0;
    int k = recall(r, path, &rf->size, &etag, &mtime, err);
    if (k == 1) k = set_identity(rf, etag, mtime, err) == PQ_OK ? 1 : PQ_ERR;
    if (k == PQ_ERR) {
        free(etag);
        file_close(&rf->base);
        return PQ_ERR;
    }
    rf->has_size = k == 1;
    /* What the last listing said, to check against the listing a scan
     * works from: another listing may have come since. */
    rf->base.has_identity = rf->has_size;
    rf->base.opened.size = rf->size;
    rf->base.opened.mtime_ns = pq_remote_identity(etag, mtime);
    *out = &rf->base;
    return PQ_OK;
}
