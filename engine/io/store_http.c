/* A lake behind a plain HTTP(S) file server, read-only.
 *
 * Directories are listed by GETting them with a trailing slash.  Two answers
 * are understood: nginx's `autoindex_format json` (names, types, sizes and
 * times in one request) and an HTML index of links (Apache, nginx's default,
 * python -m http.server), whose files are then sized with a HEAD each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listing.h"
#include "remote.h"

typedef struct http_store {
    pq_store base;
    pq_remote r;
    char *base_url;              /* no trailing slash */
} http_store;

/* base_url/path[/], percent-encoded; NULL when out of memory. */
static char *url_of(const http_store *hs, const char *path, bool dir)
{
    pq_buf b;
    pq_buf_init(&b);
    if (pq_buf_cat(&b, hs->base_url) || (path[0] && pq_buf_cat(&b, "/")) ||
        pq_url_encode(&b, path, strlen(path), true) || (dir && pq_buf_cat(&b, "/"))) {
        pq_buf_free(&b);
        return NULL;
    }
    return b.data;
}

static int http_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    http_store *hs = (http_store *)s;
    char *url = url_of(hs, path, false);
    if (!url) return PQ_NOMEM(err);
    int rc = pq_remote_open(&hs->r, path, url, out, err);
    free(url);
    return rc;
}

static int http_stat(pq_store *s, const char *path, pq_stat *out, pq_error *err)
{
    http_store *hs = (http_store *)s;
    memset(out, 0, sizeof *out);
    if (!path[0]) {
        out->is_dir = true;
        return PQ_OK;
    }
    char *url = url_of(hs, path, false);
    if (!url) return PQ_NOMEM(err);
    pq_http_reply rp;
    pq_buf etag;
    pq_buf_init(&etag);
    pq_http_req rq = {.method = "HEAD", .url = url, .etag = &etag};
    int rc = pq_http_do(hs->r.http, &rq, &rp, err);
    if (rc == PQ_OK && rp.status / 100 == 2 && rp.has_length && strncmp(rp.content_type, "text/html", 9)) {
        out->size = rp.content_length;
        out->mtime_ns = pq_remote_identity(rp.has_etag ? etag.data : NULL, rp.last_modified);
        out->modified_ms = rp.last_modified > 0 && rp.last_modified < INT64_MAX / 1000 ? rp.last_modified * 1000 : 0;
    } else if (rc == PQ_OK) {
        /* A directory answers with a redirect to its slashed name, or with
         * its index. */
        free(url);
        url = url_of(hs, path, true);
        rc = url ? pq_remote_head(&hs->r, url, &rp, NULL, err) : PQ_NOMEM(err);
        out->is_dir = rc == PQ_OK;
    }
    pq_buf_free(&etag);
    free(url);
    return rc;
}

/* ------------------------------------------------------------------ listings */

/* An HTML index gives no size: a file's HEAD does, with its ETag and
 * time (the read's preconditions); then the entry goes on as any other. */
typedef struct list_ctx {
    pq_remote_list_ctx base;     /* first: pq_remote_list_entry takes it */
    http_store *hs;
} list_ctx;

static int list_entry(void *ctx, const pq_listing_entry *le, pq_error *err)
{
    list_ctx *lc = ctx;
    if (le->is_dir || le->has_size) return pq_remote_list_entry(ctx, le, err);
    http_store *hs = lc->hs;
    char *path = pq_path_join(lc->base.dir, le->name);
    char *url = path ? url_of(hs, path, false) : NULL;
    free(path);
    pq_http_reply rp;
    pq_buf etag;
    pq_buf_init(&etag);
    int rc = url ? pq_remote_head(&hs->r, url, &rp, &etag, err) : PQ_NOMEM(err);
    if (rc == PQ_OK && !rp.has_length) rc = pq_fail(err, PQ_E_IO, "HEAD %s: no Content-Length", url);
    free(url);
    if (rc == PQ_OK) {
        pq_listing_entry sized = *le;
        sized.has_size = true;
        sized.size = rp.content_length;
        sized.etag = rp.has_etag ? etag.data : "";
        sized.mtime = rp.last_modified;
        rc = pq_remote_list_entry(ctx, &sized, err);
    }
    pq_buf_free(&etag);
    return rc;
}

static int http_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    http_store *hs = (http_store *)s;
    char *url = url_of(hs, dir, true);
    if (!url) return PQ_NOMEM(err);
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    int rc = pq_remote_get(&hs->r, url, &body, &rp, err);
    if (rc == PQ_OK) {
        list_ctx lc = {{&hs->r, dir, cb, ctx}, hs};
        char what[4200];
        snprintf(what, sizeof what, "GET %s", url);
        rc = pq_listing_parse_http(body.data ? body.data : "", body.len, rp.content_type, what, list_entry, &lc, err);
    }
    pq_buf_free(&body);
    free(url);
    return rc;
}

static int http_create(pq_store *s, const char *path, pq_upload **out, pq_error *err)
{
    (void)out;
    return pq_fail(err, PQ_E_READONLY, "%s/%s: an HTTP source is read-only", s->root, path);
}

static int http_mkdir(pq_store *s, const char *path, pq_error *err)
{
    return pq_fail(err, PQ_E_READONLY, "%s/%s: an HTTP source is read-only", s->root, path);
}

static void http_destroy(pq_store *s)
{
    http_store *hs = (http_store *)s;
    pq_remote_fini(&hs->r);
    free(hs->base_url);
    free(s->root);
    free(hs);
}

static const pq_store_ops http_store_ops = {
    http_open, http_stat, http_list, http_create, http_mkdir, http_destroy, NULL,
};

int pq_store_http_new(const char *url, const pq_http_opts *ho, pq_store **out, pq_error *err)
{
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
        return pq_fail(err, PQ_E_USAGE, "%s: not an http:// or https:// URL", url);
    http_store *hs = calloc(1, sizeof *hs);
    if (!hs) return PQ_NOMEM(err);
    /* Credentials in the URL go to libcurl apart, never into a message. */
    char *userpwd = NULL;
    if (pq_url_split_credentials(url, &hs->base_url, &userpwd, err) != PQ_OK) {
        free(hs);
        return PQ_ERR;
    }
    hs->base.root = strdup(hs->base_url);
    if (!hs->base.root) {
        free(hs->base_url);
        free(userpwd);
        free(hs);
        return PQ_NOMEM(err);
    }
    size_t n = strlen(hs->base_url);
    while (n > 8 && hs->base_url[n - 1] == '/') hs->base_url[--n] = '\0';
    hs->base.ops = &http_store_ops;
    hs->base.parallel_requests = PQ_REMOTE_PARALLEL_REQUESTS;
    hs->base.modified_granularity_ms = 1000;
    pq_http_opts o;
    if (ho) o = *ho;
    else pq_http_opts_init(&o);
    o.userpwd = userpwd;
    o.follow_redirects = true; /* an HTTP lake may sit behind a redirect; S3's signed requests may not */
    int rc = pq_remote_init(&hs->r, &o, &hs->base.counters, err);
    if (userpwd) {
        memset(userpwd, 0, strlen(userpwd));
        free(userpwd);
    }
    if (rc != PQ_OK) {
        free(hs->base_url);
        free(hs->base.root);
        free(hs);
        return PQ_ERR;
    }
    /* The root must answer as a listing: a wrong URL fails at mount. */
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    char *root = o.no_probe ? NULL : url_of(hs, "", true);
    rc = o.no_probe ? PQ_OK
         : root     ? pq_remote_get(&hs->r, root, &body, &rp, err)
                    : PQ_NOMEM(err);
    free(root);
    pq_buf_free(&body);
    if (rc != PQ_OK) {
        http_destroy(&hs->base);
        return PQ_ERR;
    }
    *out = &hs->base;
    return PQ_OK;
}
