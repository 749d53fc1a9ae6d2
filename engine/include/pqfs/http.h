/* HTTP(S) requests for the remote stores, through libcurl.
 *
 * One client per store: a pool of curl handles (each keeps its connection
 * alive between requests), retries with backoff for what is worth retrying
 * (connection failures, timeouts, 429 and 5xx), and range reads straight
 * into the caller's buffer.  A reply's status is the caller's to judge;
 * pq_http_status_fail turns one into an error naming the URL. */
#ifndef PQ_HTTP_H
#define PQ_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "mem.h"
#include "status.h"

typedef struct pq_http pq_http;

typedef struct pq_http_opts {
    int max_attempts;            /* tries per request (default 4) */
    long connect_timeout_ms;     /* default 10 s */
    long stall_timeout_s;        /* a transfer slower than 1 byte/s this long fails (default 30 s) */
    unsigned backoff_ms;         /* first retry's pause, x4 per retry (default 50) */
    const char *userpwd;         /* "user:password" for HTTP basic auth, or NULL (copied) */
    bool follow_redirects;       /* 3xx to http(s), up to 5 (not for signed requests: S3) */
    /* An HTTP store: skip the listing of the root that checks the URL at
     * once (a caller reading one object by name needs no listing). */
    bool no_probe;
} pq_http_opts;

void pq_http_opts_init(pq_http_opts *o);

typedef struct pq_http_req {
    const char *method;          /* "GET", "HEAD", "PUT", "POST" or "DELETE" */
    const char *url;
    bool has_range;              /* bytes [range_off, range_off + range_len) */
    uint64_t range_off, range_len;
    const char *const *headers;  /* extra "Name: value" lines */
    int n_headers;
    /* The body goes into `into` (at most into_cap bytes: a range read), or
     * is appended to `body`, or is dropped. */
    void *into;
    size_t into_cap;
    pq_buf *body;
    /* When set, gets the reply's ETag whole, as sent (quotes and a W/
     * included; NUL-terminated), however long: remote reads compare it
     * byte for byte with what a listing said.  rp->has_etag says whether
     * the reply had one. */
    pq_buf *etag;
    /* PUT and POST: the request body, upload_len bytes at upload_data. */
    const void *upload_data;
    uint64_t upload_len;
    /* Called before each attempt (a retry signs again: the date moves);
     * appends header lines to `lines`, each "Name: value" and a NUL. */
    int (*sign)(void *ctx, const struct pq_http_req *rq, pq_buf *lines, pq_error *err);
    void *sign_ctx;
} pq_http_req;

typedef struct pq_http_reply {
    long status;
    uint64_t body_len;           /* bytes delivered into `into` or `body` */
    bool has_length;
    uint64_t content_length;
    bool has_total;              /* Content-Range: bytes A-B/TOTAL */
    uint64_t range_start, total;
    bool has_etag;               /* an ETag header came (its value: pq_http_req.etag) */
    int64_t last_modified;       /* Unix seconds; 0 when none (or not a date) */
    char content_type[96];
} pq_http_reply;

int pq_http_new(const pq_http_opts *o, pq_http **out, pq_error *err);
/* Stops every transfer in flight, in every client, and fails new ones
 * (PQ_E_CANCELLED): the daemon is going away. */
void pq_http_cancel_all(void);
void pq_http_free(pq_http *h);

/* Performs the request (with retries).  PQ_OK once a reply came, whatever
 * its status; PQ_E_IO when none did. */
int pq_http_do(pq_http *h, const pq_http_req *rq, pq_http_reply *rp, pq_error *err);

/* An error for a reply that is not what the caller wanted: 404 is
 * PQ_E_NOTFOUND, everything else PQ_E_IO, the message naming method, URL
 * and status (and the S3 error code when the body has one). */
int pq_http_status_fail(const pq_http_req *rq, const pq_http_reply *rp, const pq_buf *body, pq_error *err);

/* Splits the credentials out of a URL: *clean gets the URL without its
 * "user:password@" (what messages may show), *userpwd the decoded
 * "user:password" (NULL when there is none).  Both malloc'd; PQ_E_NOMEM. */
int pq_url_split_credentials(const char *url, char **clean, char **userpwd, pq_error *err);

/* An HTTP date ("Mon, 30 Nov 2026 08:00:00 GMT") as Unix seconds; 0 when
 * it is not one. */
int64_t pq_http_parse_date(const char *s);

/* Appends s to b percent-encoded (RFC 3986 unreserved characters kept,
 * and '/' when keep_slash). */
int pq_url_encode(pq_buf *b, const char *s, size_t n, bool keep_slash);
/* Decodes %XX in place; returns the new length (a bad escape is kept). */
size_t pq_url_decode(char *s, size_t n);

#endif
