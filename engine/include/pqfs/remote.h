/* Remote stores: a lake behind HTTP(S) (a static file server with directory
 * listings) or an S3-compatible bucket.
 *
 * Both hand out files read with ranged GETs (pq_file), whose size comes from
 * the last listing of their directory (a HEAD when the file was never
 * listed), and whose listed ETag is sent as If-Match (without one, the
 * listed time as If-Unmodified-Since).  Every reply must also carry that
 * ETag and time (servers that ignore the preconditions exist), so a file
 * replaced while it is read fails instead of mixing two versions. */
#ifndef PQ_REMOTE_H
#define PQ_REMOTE_H

#include "http.h"
#include "io.h"
#include "listing.h"

typedef struct pq_s3_opts {
    const char *endpoint;        /* "http://127.0.0.1:9000"; NULL: https://s3.REGION.amazonaws.com */
    const char *region;          /* default us-east-1 */
    bool path_style;             /* ENDPOINT/BUCKET/KEY, else BUCKET.HOST/KEY */
    const char *access_key_id, *secret_access_key, *session_token; /* NULL: unsigned requests */
    /* Skip the listing that checks at once that the bucket answers (a
     * caller that lists straight away gets the same error from that). */
    bool no_probe;
} pq_s3_opts;

/* url: http://host[:port]/prefix or https://...; read-only. */
int pq_store_http_new(const char *url, const pq_http_opts *ho, pq_store **out, pq_error *err);
/* url: s3://bucket[/prefix]. */
int pq_store_s3_new(const char *url, const pq_s3_opts *so, const pq_http_opts *ho, pq_store **out, pq_error *err);

/* ---- shared by the two stores (remote.c) ---- */

/* Signs one request (S3), or NULL. */
typedef int (*pq_remote_sign_fn)(void *ctx, const pq_http_req *rq, pq_buf *lines, pq_error *err);

typedef struct pq_remote_known pq_remote_known;

typedef struct pq_remote {
    pq_http *http;
    pq_remote_sign_fn sign;
    void *sign_ctx;
    pq_io_counters *counters;
    pq_remote_known *known;      /* path -> size, ETag and time, from listings */
} pq_remote;

int pq_remote_init(pq_remote *r, const pq_http_opts *ho, pq_io_counters *counters, pq_error *err);
void pq_remote_fini(pq_remote *r);
/* A listed entry passed on to a store's list callback: a file's size,
 * ETag and time remembered for its reads, its identity made from them.  A
 * pq_listing_cb over this context. */
typedef struct pq_remote_list_ctx {
    pq_remote *r;
    const char *dir;             /* the store path listed */
    pq_list_cb cb;
    void *cb_ctx;
} pq_remote_list_ctx;
int pq_remote_list_entry(void *ctx, const pq_listing_entry *le, pq_error *err);
/* Opens `url` (the store's `path`): no request until a read, or a HEAD for
 * the size and identity of a file no listing showed.  A listed file's
 * pq_file.opened is what the last listing said (pq_file_check_listed). */
int pq_remote_open(pq_remote *r, const char *path, const char *url, pq_file **out, pq_error *err);
/* HEAD url: PQ_E_NOTFOUND when it is not there.  etag (may be NULL) gets
 * the reply's ETag (pq_http_req.etag). */
int pq_remote_head(pq_remote *r, const char *url, pq_http_reply *rp, pq_buf *etag, pq_error *err);
/* GET url into body (a listing); counts a list request. */
int pq_remote_get(pq_remote *r, const char *url, pq_buf *body, pq_http_reply *rp, pq_error *err);

/* A hash of an ETag (or a size and Last-Modified) as the file's identity. */
int64_t pq_remote_identity(const char *etag, int64_t last_modified);

/* pq_store.parallel_requests of the HTTP and S3 stores: footers of a table
 * are fetched this many at a time (a point lookup over 32 files on a 2-core
 * machine: 16 round trips with two at a time, 1 with 32), and the scan keeps
 * this many reads going. */
#define PQ_REMOTE_PARALLEL_REQUESTS 32
/* pq_file.parallel_reads of their files: a fetch's merged ranges (a
 * projection's columns either side of a filter column) read together, so
 * the scan runs PQ_REMOTE_PARALLEL_REQUESTS / this row groups at once. */
#define PQ_REMOTE_PARALLEL_READS 4

#endif
