/* A lake in an S3-compatible bucket: s3://bucket[/prefix].
 *
 * Listings are ListObjectsV2 with delimiter '/' (one level, paged with
 * continuation tokens); reads are ranged GETs with If-Match on the listed
 * ETag; a write streams as a multipart upload (one PUT when small), which
 * the commit completes, so the object appears whole or not at all.  S3 has no directories: mkdir
 * succeeds without a request (a prefix exists once a key is under it).
 * Requests are signed with AWS Signature Version 4 when keys are given. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listing.h"
#include "remote.h"
#include "sigv4.h"

typedef struct s3_store {
    pq_store base;
    pq_remote r;
    char *bucket, *prefix;       /* prefix without slashes at either end; "" for none */
    char *endpoint;              /* scheme://host[:port], no trailing slash */
    char *bucket_url;            /* endpoint/bucket or scheme://bucket.host */
    bool path_style;
    char *region, *access_key, *secret_key, *token;
} s3_store;

/* ------------------------------------------------------------------ signing */

/* "Name: value" and a NUL, as pq_http's sign hook takes header lines. */
static int add_line(pq_buf *lines, const char *name, const char *value)
{
    return pq_buf_printf(lines, "%s: %s", name, value) || pq_buf_append(lines, "", 1) ? -1 : 0;
}

static int s3_sign(void *ctx, const pq_http_req *rq, pq_buf *lines, pq_error *err)
{
    s3_store *ss = ctx;
    /* scheme://host[:port]/path?query */
    const char *h = strstr(rq->url, "://");
    if (!h) return pq_fail(err, PQ_E_USAGE, "%s: not a URL", rq->url);
    h += 3;
    /* The host ends at the path or, without one, at the query. */
    const char *path = strpbrk(h, "/?");
    if (path && *path == '?') path = NULL;
    const char *host_end = path ? path : h + strcspn(h, "?");
    char host[512], pathbuf[4096];
    size_t hl = (size_t)(host_end - h);
    if (hl >= sizeof host) return pq_fail(err, PQ_E_USAGE, "%s: host too long", rq->url);
    memcpy(host, h, hl);
    host[hl] = '\0';
    const char *q = strchr(path ? path : h, '?');
    size_t pl = path ? (q ? (size_t)(q - path) : strlen(path)) : 0;
    if (pl >= sizeof pathbuf) return pq_fail(err, PQ_E_USAGE, "%s: path too long", rq->url);
    memcpy(pathbuf, path ? path : "/", path ? pl : 1);
    pathbuf[path ? pl : 1] = '\0';
    pq_sigv4_request sr = {
        .method = rq->method,
        .host = host,
        .path = pathbuf,
        .query = q ? q + 1 : NULL,
        .payload_hash = "UNSIGNED-PAYLOAD",
        .region = ss->region,
        .service = "s3",
        .access_key = ss->access_key,
        .secret_key = ss->secret_key,
        .session_token = ss->token,
    };
    pq_sigv4_result res;
    PQ_TRY(pq_sigv4_sign(&sr, &res, err));
    if (add_line(lines, "Authorization", res.authorization) || add_line(lines, "x-amz-date", res.amz_date) ||
        add_line(lines, "x-amz-content-sha256", res.content_sha256) ||
        (ss->token && add_line(lines, "x-amz-security-token", ss->token)))
        return PQ_NOMEM(err);
    return PQ_OK;
}

/* ------------------------------------------------------------------ keys and URLs */

/* The object key of a store path ("" is the prefix itself). */
static int key_of(const s3_store *ss, const char *path, pq_buf *out)
{
    pq_buf_clear(out);
    if (pq_buf_cat(out, ss->prefix)) return -1;
    if (ss->prefix[0] && path[0] && pq_buf_cat(out, "/")) return -1;
    return pq_buf_cat(out, path);
}

static char *object_url(const s3_store *ss, const char *path)
{
    pq_buf key, url;
    pq_buf_init(&key);
    pq_buf_init(&url);
    if (key_of(ss, path, &key) || pq_buf_cat(&url, ss->bucket_url) ||
        pq_buf_cat(&url, "/") || pq_url_encode(&url, key.data, key.len, true)) {
        pq_buf_free(&key);
        pq_buf_free(&url);
        return NULL;
    }
    pq_buf_free(&key);
    return url.data;
}

/* ------------------------------------------------------------------ listing */

static int s3_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    s3_store *ss = (s3_store *)s;
    pq_buf prefix, url, body;
    pq_buf_init(&prefix);
    pq_buf_init(&url);
    pq_buf_init(&body);
    char token[1024] = "";
    int rc = PQ_OK;
    if (key_of(ss, dir, &prefix) || (prefix.len && pq_buf_cat(&prefix, "/")))
        rc = PQ_NOMEM(err);
    pq_remote_list_ctx lc = {&ss->r, dir, cb, ctx};
    bool stopped = false;
    do {
        if (rc != PQ_OK) break;
        /* Parameters in AWS's canonical order (the signature sorts them anyway). */
        pq_buf_clear(&url);
        bool ok = !pq_buf_printf(&url, "%s?", ss->bucket_url);
        if (ok && token[0])
            ok = !pq_buf_cat(&url, "continuation-token=") && !pq_url_encode(&url, token, strlen(token), false) &&
                 !pq_buf_cat(&url, "&");
        if (ok)
            ok = !pq_buf_cat(&url, "delimiter=%2F&list-type=2&prefix=") &&
                 !pq_url_encode(&url, prefix.data, prefix.len, false);
        if (!ok) {
            rc = PQ_NOMEM(err);
            break;
        }
        pq_http_reply rp;
        rc = pq_remote_get(&ss->r, url.data, &body, &rp, err);
        if (rc != PQ_OK) break;
        char what[4200];
        snprintf(what, sizeof what, "GET %s", url.data);
        rc = pq_listing_parse_s3(body.data ? body.data : "", body.len, prefix.data, what, pq_remote_list_entry, &lc, token,
                                 sizeof token, &stopped, err);
    } while (rc == PQ_OK && !stopped && token[0]);
    pq_buf_free(&prefix);
    pq_buf_free(&url);
    pq_buf_free(&body);
    return rc;
}

/* ------------------------------------------------------------------ files */

static int s3_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    s3_store *ss = (s3_store *)s;
    char *url = object_url(ss, path);
    if (!url) return PQ_NOMEM(err);
    int rc = pq_remote_open(&ss->r, path, url, out, err);
    free(url);
    return rc;
}

typedef struct stat_probe {
    bool any;
} stat_probe;

static int probe_any(void *ctx, const pq_dirent *e)
{
    (void)e;
    ((stat_probe *)ctx)->any = true;
    return 1;
}

static int s3_stat(pq_store *s, const char *path, pq_stat *out, pq_error *err)
{
    s3_store *ss = (s3_store *)s;
    memset(out, 0, sizeof *out);
    if (!path[0]) {
        out->is_dir = true;
        return PQ_OK;
    }
    char *url = object_url(ss, path);
    if (!url) return PQ_NOMEM(err);
    pq_http_reply rp;
    pq_buf etag;
    pq_buf_init(&etag);
    int rc = pq_remote_head(&ss->r, url, &rp, &etag, err);
    free(url);
    if (rc == PQ_OK) {
        out->size = rp.content_length;
        out->mtime_ns = pq_remote_identity(rp.has_etag ? etag.data : NULL, rp.last_modified);
        out->modified_ms = rp.last_modified > 0 && rp.last_modified < INT64_MAX / 1000 ? rp.last_modified * 1000 : 0;
    }
    pq_buf_free(&etag);
    if (rc == PQ_OK) return PQ_OK;
    if (err && err->cls != PQ_E_NOTFOUND) return PQ_ERR;
    /* Not an object: a "directory" when some key is under it. */
    stat_probe sp = {false};
    PQ_TRY(s3_list(s, path, probe_any, &sp, err));
    if (!sp.any) return pq_fail(err, PQ_E_NOTFOUND, "s3://%s/%s: no such key or prefix", ss->bucket, path);
    out->is_dir = true;
    return PQ_OK;
}

/* ------------------------------------------------------------------ uploads */

/* An upload streams: bytes collect in memory, and a file that outgrows one
 * part goes up as a multipart upload, up to PARTS_IN_FLIGHT parts sending
 * (each on its own thread) while the writer fills the next: one S3
 * connection carries far less than the writer makes.  S3 shows the object
 * only when the upload is completed, so it appears whole or not at all.  A
 * file smaller than a part is one PUT.
 * Parts are 8 MiB, doubling every 1,000 parts up to 64 MiB: S3 takes
 * 10,000 parts of at least 5 MiB (but the last), so files up to ~500 GB. */
#define PART_SIZE_FIRST ((size_t)8 << 20)
#define PART_SIZE_DOUBLINGS 3
#define PARTS_MAX 10000
#define PARTS_IN_FLIGHT 4
#define PARTS_IN_FLIGHT_BYTES ((size_t)64 << 20) /* fewer parts in flight once they are larger */

static size_t part_size_after(int parts)
{
    int doublings = parts / 1000;
    return PART_SIZE_FIRST << (doublings > PART_SIZE_DOUBLINGS ? PART_SIZE_DOUBLINGS : doublings);
}

typedef struct s3_upload s3_upload;

/* A part being sent. */
typedef struct part_slot {
    s3_upload *su;
    pthread_t thread;
    bool threaded;               /* joined by wait_oldest; else sent already */
    pq_buf data;
    int number;
    int rc;
    pq_error err;
    pq_buf etag;                 /* the part's ETag, whole (the completion names it) */
} part_slot;

struct s3_upload {
    pq_upload base;
    s3_store *ss;
    char *url;
    pq_buf fill;                 /* bytes not sent yet */
    char *upload_id;             /* the multipart upload, once a part went */
    pq_buf parts_xml;            /* <Part> elements of the parts sent, in order */
    int parts;                   /* parts sent or sending */
    /* Parts in flight, oldest first in a ring: recorded in part order, as
     * the completion must list them. */
    part_slot slots[PARTS_IN_FLIGHT];
    int oldest, in_flight;
};

/* A request with `data` as its body; PQ_OK only for a 2xx reply.  `body`
 * gets the reply's body. */
static int s3_request(s3_upload *su, const char *method, const char *url, const void *data, size_t len,
                      pq_buf *body, pq_http_reply *rp, pq_buf *etag, pq_error *err)
{
    pq_http_req rq = {.method = method, .url = url, .body = body, .upload_data = data, .upload_len = len,
                      .etag = etag, .sign = su->ss->r.sign, .sign_ctx = su->ss->r.sign_ctx};
    PQ_TRY(pq_http_do(su->ss->r.http, &rq, rp, err));
    if (rp->status / 100 != 2) {
        pq_http_status_fail(&rq, rp, body, err);
        /* An upload's 404 (NoSuchUpload: the server forgot it) is a storage
         * error, not "no such file" for the name being written. */
        if (err->cls == PQ_E_NOTFOUND) err->cls = PQ_E_IO;
        return PQ_ERR;
    }
    if (!strcmp(method, "PUT") && su->base.counters)
        atomic_fetch_add_explicit(&su->base.counters->write_bytes, len, memory_order_relaxed);
    return PQ_OK;
}

/* The object's URL with a query ("?uploads", "?uploadId=..."). */
static char *upload_url(const s3_upload *su, int part_number)
{
    pq_buf u;
    pq_buf_init(&u);
    bool ok = !pq_buf_cat(&u, su->url);
    if (ok && part_number > 0) ok = !pq_buf_printf(&u, "?partNumber=%d&uploadId=", part_number);
    else if (ok) ok = !pq_buf_cat(&u, "?uploadId=");
    if (ok) ok = !pq_url_encode(&u, su->upload_id, strlen(su->upload_id), false);
    if (!ok) {
        pq_buf_free(&u);
        return NULL;
    }
    return u.data;
}

static void *send_part_main(void *arg)
{
    part_slot *ps = arg;
    pq_error_clear(&ps->err);
    char *url = upload_url(ps->su, ps->number);
    if (!url) {
        ps->rc = PQ_NOMEM(&ps->err);
        return NULL;
    }
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    ps->rc = s3_request(ps->su, "PUT", url, ps->data.data, ps->data.len, &body, &rp, &ps->etag, &ps->err);
    if (ps->rc == PQ_OK && (!rp.has_etag || !ps->etag.len))
        ps->rc = pq_fail(&ps->err, PQ_E_IO, "PUT %s: the part's reply has no ETag", url);
    pq_buf_free(&body);
    free(url);
    return NULL;
}

/* Adds a sent part to the list the completion names (an ETag is quoted
 * text: & < > escaped). */
static int record_part(s3_upload *su, const part_slot *ps, pq_error *err)
{
    bool ok = !pq_buf_printf(&su->parts_xml, "<Part><PartNumber>%d</PartNumber><ETag>", ps->number);
    for (const char *c = ps->etag.data; ok && *c; c++)
        ok = !(*c == '&' ? pq_buf_cat(&su->parts_xml, "&amp;")
               : *c == '<' ? pq_buf_cat(&su->parts_xml, "&lt;")
               : *c == '>' ? pq_buf_cat(&su->parts_xml, "&gt;")
                           : pq_buf_append(&su->parts_xml, c, 1));
    if (!ok || pq_buf_cat(&su->parts_xml, "</ETag></Part>")) return PQ_NOMEM(err);
    return PQ_OK;
}

/* Waits for the oldest part in flight and records it. */
static int wait_oldest(s3_upload *su, pq_error *err)
{
    part_slot *ps = &su->slots[su->oldest];
    if (ps->threaded) pthread_join(ps->thread, NULL);
    ps->threaded = false;
    su->oldest = (su->oldest + 1) % PARTS_IN_FLIGHT;
    su->in_flight--;
    pq_buf_clear(&ps->data);
    if (ps->rc != PQ_OK) {
        *err = ps->err;
        return PQ_ERR;
    }
    return record_part(su, ps, err);
}

/* Waits for every part in flight; the first failure is the answer. */
static int wait_parts(s3_upload *su, pq_error *err)
{
    int rc = PQ_OK;
    pq_error ignored;
    while (su->in_flight)
        if (wait_oldest(su, rc == PQ_OK ? err : &ignored) != PQ_OK) rc = PQ_ERR;
    return rc;
}

static int start_multipart(s3_upload *su, pq_error *err)
{
    pq_buf u, body;
    pq_buf_init(&u);
    pq_buf_init(&body);
    if (pq_buf_printf(&u, "%s?uploads", su->url)) return PQ_NOMEM(err);
    char *url = u.data;
    pq_http_reply rp;
    int rc = s3_request(su, "POST", url, NULL, 0, &body, &rp, NULL, err);
    char id[1024];
    if (rc == PQ_OK && !pq_xml_text(body.data, body.len, "UploadId", id, sizeof id))
        rc = pq_fail(err, PQ_E_IO, "POST %s: the answer names no UploadId", url);
    if (rc == PQ_OK && !(su->upload_id = strdup(id))) rc = PQ_NOMEM(err);
    pq_buf_free(&body);
    free(url);
    return rc;
}

/* Sends what is in `fill` as the next part (starting the multipart upload
 * first), once a slot is free: at most PARTS_IN_FLIGHT parts, and about
 * PARTS_IN_FLIGHT_BYTES, in memory besides the one filling. */
static int send_part(s3_upload *su, pq_error *err)
{
    size_t by_bytes = PARTS_IN_FLIGHT_BYTES / part_size_after(su->parts);
    int most = by_bytes < 1 ? 1 : by_bytes > PARTS_IN_FLIGHT ? PARTS_IN_FLIGHT : (int)by_bytes;
    while (su->in_flight >= most) PQ_TRY(wait_oldest(su, err));
    if (!su->upload_id) PQ_TRY(start_multipart(su, err));
    if (su->parts >= PARTS_MAX)
        return pq_fail(err, PQ_E_UNSUPPORTED, "%s: more than %d parts, which S3 cannot take", su->url, PARTS_MAX);
    part_slot *ps = &su->slots[(su->oldest + su->in_flight) % PARTS_IN_FLIGHT];
    pq_buf t = ps->data;
    ps->data = su->fill;
    su->fill = t;
    pq_buf_clear(&su->fill);
    ps->su = su;
    ps->number = ++su->parts;
    su->in_flight++;
    /* A thread of its own, not a pool job (threads.h): it belongs to the
     * upload, not to this call, and is joined by a later write or the
     * finish (wait_oldest); it waits on the network for a part of
     * megabytes, next to which a thread start costs nothing. */
    ps->threaded = pthread_create(&ps->thread, NULL, send_part_main, ps) == 0;
    if (!ps->threaded) send_part_main(ps); /* no thread: send it now */
    return PQ_OK;
}

/* Fills parts of exactly the part size, each sent when full: a larger
 * write (a whole row group arrives at once) becomes several parts that go
 * up side by side, every byte copied once. */
static int s3_upload_write(pq_upload *u, const void *buf, size_t len, pq_error *err)
{
    s3_upload *su = (s3_upload *)u;
    const char *p = buf;
    while (len > 0) {
        size_t room = part_size_after(su->parts) - su->fill.len, take = len < room ? len : room;
        if (pq_buf_append(&su->fill, p, take)) return pq_fail(err, PQ_E_NOMEM, "%s: out of memory for an upload", su->url);
        p += take;
        len -= take;
        if (take == room) PQ_TRY(send_part(su, err));
    }
    return PQ_OK;
}

/* Ends a multipart upload that will not complete, so S3 keeps no parts. */
static void abandon_multipart(s3_upload *su)
{
    pq_error ignored;
    (void)wait_parts(su, &ignored);
    if (!su->upload_id) return;
    char *url = upload_url(su, 0);
    if (!url) return;
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    (void)s3_request(su, "DELETE", url, NULL, 0, &body, &rp, NULL, &ignored);
    pq_buf_free(&body);
    free(url);
}

static void s3_upload_free(s3_upload *su)
{
    pq_buf_free(&su->fill);
    for (int i = 0; i < PARTS_IN_FLIGHT; i++) {
        pq_buf_free(&su->slots[i].data);
        pq_buf_free(&su->slots[i].etag);
    }
    pq_buf_free(&su->parts_xml);
    free(su->upload_id);
    free(su->url);
    free(su);
}

/* CompleteMultipartUpload.  S3 may answer 200 with an error document (the
 * completion failed after the status went out): that is retried, as AWS
 * asks. */
static int complete_multipart(s3_upload *su, pq_error *err)
{
    pq_buf req, body;
    pq_buf_init(&req);
    pq_buf_init(&body);
    char *url = upload_url(su, 0);
    int rc = PQ_OK;
    if (!url || pq_buf_cat(&req, "<CompleteMultipartUpload>") || pq_buf_append(&req, su->parts_xml.data, su->parts_xml.len) ||
        pq_buf_cat(&req, "</CompleteMultipartUpload>"))
        rc = PQ_NOMEM(err);
    for (int attempt = 1; rc == PQ_OK; attempt++) {
        pq_http_reply rp;
        rc = s3_request(su, "POST", url, req.data, req.len, &body, &rp, NULL, err);
        char code[64];
        if (rc != PQ_OK || !pq_xml_text(body.data, body.len, "Code", code, sizeof code) ||
            !memmem(body.data, body.len, "<Error>", 7))
            break;
        if (attempt >= 3 || (strcmp(code, "InternalError") && strcmp(code, "SlowDown") && strcmp(code, "ServiceUnavailable")))
            rc = pq_fail(err, PQ_E_IO, "POST %s: completing the upload failed: %s", url, code);
    }
    pq_buf_free(&req);
    pq_buf_free(&body);
    free(url);
    return rc;
}

static int s3_upload_commit(pq_upload *u, pq_error *err)
{
    s3_upload *su = (s3_upload *)u;
    int rc = PQ_OK;
    if (!su->upload_id) {
        pq_buf body;
        pq_buf_init(&body);
        pq_http_reply rp;
        rc = s3_request(su, "PUT", su->url, su->fill.data, su->fill.len, &body, &rp, NULL, err);
        pq_buf_free(&body);
    } else {
        if (su->fill.len) rc = send_part(su, err);
        if (rc == PQ_OK) rc = wait_parts(su, err);
        if (rc == PQ_OK) rc = complete_multipart(su, err);
        if (rc != PQ_OK) abandon_multipart(su);
    }
    s3_upload_free(su);
    return rc;
}

/* One PUT with If-None-Match: * (S3's conditional write): 412 when the
 * key exists.  A log commit is small: one that outgrew a part is refused. */
static int s3_upload_commit_new(pq_upload *u, pq_error *err)
{
    s3_upload *su = (s3_upload *)u;
    int rc = PQ_OK;
    if (su->upload_id) {
        abandon_multipart(su);
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: a conditional write of more than one part", su->url);
    } else {
        static const char *const if_absent[] = {"If-None-Match: *"};
        pq_buf body;
        pq_buf_init(&body);
        pq_http_reply rp;
        pq_http_req rq = {.method = "PUT", .url = su->url, .headers = if_absent, .n_headers = 1, .body = &body,
                          .upload_data = su->fill.data, .upload_len = su->fill.len, .sign = su->ss->r.sign,
                          .sign_ctx = su->ss->r.sign_ctx};
        rc = pq_http_do(su->ss->r.http, &rq, &rp, err);
        if (rc == PQ_OK && (rp.status == 412 || rp.status == 409))
            rc = pq_fail(err, PQ_E_EXISTS, "PUT %s: exists (another writer took the name)", su->url);
        else if (rc == PQ_OK && rp.status / 100 != 2) {
            pq_http_status_fail(&rq, &rp, &body, err);
            rc = PQ_ERR;
        } else if (rc == PQ_OK && su->base.counters)
            atomic_fetch_add_explicit(&su->base.counters->write_bytes, su->fill.len, memory_order_relaxed);
        pq_buf_free(&body);
    }
    s3_upload_free(su);
    return rc;
}

static void s3_upload_abort(pq_upload *u)
{
    s3_upload *su = (s3_upload *)u;
    abandon_multipart(su);
    s3_upload_free(su);
}

static const pq_upload_ops s3_upload_ops = {s3_upload_write, s3_upload_commit, s3_upload_abort, NULL,
                                            s3_upload_commit_new};

static int s3_create(pq_store *s, const char *path, pq_upload **out, pq_error *err)
{
    s3_store *ss = (s3_store *)s;
    s3_upload *su = calloc(1, sizeof *su);
    if (!su) return PQ_NOMEM(err);
    su->ss = ss;
    pq_buf_init(&su->fill);
    for (int i = 0; i < PARTS_IN_FLIGHT; i++) {
        pq_buf_init(&su->slots[i].data);
        pq_buf_init(&su->slots[i].etag);
    }
    pq_buf_init(&su->parts_xml);
    su->url = object_url(ss, path);
    if (!su->url) {
        s3_upload_free(su);
        return PQ_NOMEM(err);
    }
    su->base.ops = &s3_upload_ops;
    su->base.counters = &s->counters;
    *out = &su->base;
    return PQ_OK;
}

static int s3_mkdir(pq_store *s, const char *path, pq_error *err)
{
    (void)s, (void)path, (void)err;
    return PQ_OK;
}

/* ------------------------------------------------------------------ the store */

static void s3_destroy(pq_store *s)
{
    s3_store *ss = (s3_store *)s;
    pq_remote_fini(&ss->r);
    free(ss->bucket);
    free(ss->prefix);
    free(ss->endpoint);
    free(ss->bucket_url);
    free(ss->region);
    free(ss->access_key);
    free(ss->secret_key);
    free(ss->token);
    free(s->root);
    free(ss);
}

static int s3_remove(pq_store *s, const char *path, pq_error *err)
{
    s3_store *ss = (s3_store *)s;
    char *url = object_url(ss, path);
    if (!url) return PQ_NOMEM(err);
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    pq_http_req rq = {.method = "DELETE", .url = url, .body = &body, .sign = ss->r.sign, .sign_ctx = ss->r.sign_ctx};
    int rc = pq_http_do(ss->r.http, &rq, &rp, err);
    if (rc == PQ_OK && rp.status / 100 != 2) {
        pq_http_status_fail(&rq, &rp, &body, err);
        rc = PQ_ERR;
    }
    pq_buf_free(&body);
    free(url);
    return rc;
}

static const pq_store_ops s3_store_ops = {
    s3_open, s3_stat, s3_list, s3_create, s3_mkdir, s3_destroy, NULL, NULL, s3_remove,
};

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s || !s[0]) return NULL;
    char *d = strdup(s);
    if (!d) *oom = true;
    return d;
}

int pq_store_s3_new(const char *url, const pq_s3_opts *so, const pq_http_opts *ho, pq_store **out, pq_error *err)
{
    if (strncmp(url, "s3://", 5) || !url[5] || url[5] == '/')
        return pq_fail(err, PQ_E_USAGE, "%s: not an s3://bucket[/prefix] URL", url);
    s3_store *ss = calloc(1, sizeof *ss);
    if (!ss) return PQ_NOMEM(err);
    bool oom = false;
    const char *b = url + 5, *slash = strchr(b, '/');
    ss->bucket = strndup(b, slash ? (size_t)(slash - b) : strlen(b));
    ss->prefix = strdup(slash ? slash + 1 : "");
    const char *region = so && so->region && so->region[0] ? so->region : "us-east-1";
    ss->region = strdup(region);
    ss->base.root = strdup(url);
    if (!ss->bucket || !ss->prefix || !ss->region || !ss->base.root) oom = true;
    if (ss->prefix) {
        size_t n = strlen(ss->prefix);
        while (n && ss->prefix[n - 1] == '/') ss->prefix[--n] = '\0';
    }
    pq_buf ep;
    pq_buf_init(&ep);
    if (so && so->endpoint && so->endpoint[0]) oom |= pq_buf_cat(&ep, so->endpoint) != 0;
    else oom |= pq_buf_printf(&ep, "https://s3.%s.amazonaws.com", region) != 0;
    ss->endpoint = ep.data;
    if (ss->endpoint) {
        size_t n = strlen(ss->endpoint);
        while (n && ss->endpoint[n - 1] == '/') ss->endpoint[--n] = '\0';
    }
    ss->path_style = so && so->path_style;
    ss->access_key = dup_or_null(so ? so->access_key_id : NULL, &oom);
    ss->secret_key = dup_or_null(so ? so->secret_access_key : NULL, &oom);
    ss->token = dup_or_null(so ? so->session_token : NULL, &oom);
    ss->base.ops = &s3_store_ops;
    ss->base.parallel_requests = PQ_REMOTE_PARALLEL_REQUESTS;
    ss->base.modified_granularity_ms = 1000;
    pq_buf bu;
    pq_buf_init(&bu);
    if (!oom && ss->endpoint) {
        const char *sep = strstr(ss->endpoint, "://");
        if (!sep) {
            pq_buf_free(&bu);
            s3_destroy(&ss->base);
            return pq_fail(err, PQ_E_USAGE, "s3 endpoint %s: not a URL", so->endpoint);
        }
        size_t host_len = strcspn(sep + 3, "/");
        if (memchr(sep + 3, '@', host_len)) {
            /* Not echoed: it holds a secret.  Requests are signed with the keys. */
            pq_buf_free(&bu);
            s3_destroy(&ss->base);
            return pq_fail(err, PQ_E_USAGE, "s3 endpoint: a URL with credentials (user:password@) is not supported");
        }
        if (ss->path_style) oom |= pq_buf_printf(&bu, "%s/", ss->endpoint) || pq_url_encode(&bu, ss->bucket, strlen(ss->bucket), false);
        else oom |= pq_buf_printf(&bu, "%.*s%s.%s", (int)(sep + 3 - ss->endpoint), ss->endpoint, ss->bucket, sep + 3) != 0;
    }
    ss->bucket_url = bu.data;
    if (oom || !ss->bucket_url) {
        s3_destroy(&ss->base);
        return PQ_NOMEM(err);
    }
    if ((ss->access_key == NULL) != (ss->secret_key == NULL)) {
        s3_destroy(&ss->base);
        return pq_fail(err, PQ_E_USAGE, "s3: access_key_id and secret_access_key go together");
    }
    if (pq_remote_init(&ss->r, ho, &ss->base.counters, err) != PQ_OK) {
        s3_destroy(&ss->base);
        return PQ_ERR;
    }
    if (ss->access_key) {
        ss->r.sign = s3_sign;
        ss->r.sign_ctx = ss;
    }
    /* The bucket must answer: a wrong endpoint, bucket or key fails at mount. */
    stat_probe sp = {false};
    if (!(so && so->no_probe) && s3_list(&ss->base, "", probe_any, &sp, err) != PQ_OK) {
        s3_destroy(&ss->base);
        return PQ_ERR;
    }
    *out = &ss->base;
    return PQ_OK;
}
