/* A lake behind a plain HTTP(S) file server, read-only.
 *
 * Directories are listed by GETting them with a trailing slash.  Two answers
 * are understood: nginx's `autoindex_format json` (names, types, sizes and
 * times in one request) and an HTML index of links (Apache, nginx's default,
 * python -m http.server), whose files are then sized with a HEAD each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), n = strlen(name);
    char *p = malloc(a + n + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t k = a;
    if (a) p[k++] = '/';
    memcpy(p + k, name, n + 1);
    return p;
}

static int http_open(pq_store *s, const char *path, pq_file **out, pq_error *err)
{
    http_store *hs = (http_store *)s;
    char *url = url_of(hs, path, false);
    if (!url) return pq_fail(err, PQ_E_NOMEM, "out of memory");
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
    if (!url) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    pq_http_reply rp;
    pq_http_req rq = {.method = "HEAD", .url = url, .upload_fd = -1};
    int rc = pq_http_do(hs->r.http, &rq, &rp, err);
    if (rc == PQ_OK && rp.status / 100 == 2 && rp.has_length && strncmp(rp.content_type, "text/html", 9)) {
        out->size = rp.content_length;
        out->mtime_ns = pq_remote_identity(rp.etag, rp.last_modified);
    } else if (rc == PQ_OK) {
        /* A directory answers with a redirect to its slashed name, or with
         * its index. */
        free(url);
        url = url_of(hs, path, true);
        if (!url) return pq_fail(err, PQ_E_NOMEM, "out of memory");
        rc = pq_remote_head(&hs->r, url, &rp, err);
        out->is_dir = rc == PQ_OK;
    }
    free(url);
    return rc;
}

/* ------------------------------------------------------------------ listings */

typedef struct list_ctx {
    http_store *hs;
    const char *dir;
    pq_list_cb cb;
    void *cb_ctx;
    bool stopped;
} list_ctx;

/* Hands one entry to the callback; files without a size get a HEAD. */
static int emit(list_ctx *lc, char *name, bool is_dir, bool has_size, uint64_t size, int64_t mtime, pq_error *err)
{
    if (lc->stopped || !name[0] || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/')) return PQ_OK;
    char *path = join(lc->dir, name);
    if (!path) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    pq_dirent e = {.name = name, .st = {.is_dir = is_dir, .size = size, .mtime_ns = mtime * 1000000000}};
    int rc = PQ_OK;
    if (!is_dir && !has_size) {
        char *url = url_of(lc->hs, path, false);
        pq_http_reply rp;
        rc = url ? pq_remote_head(&lc->hs->r, url, &rp, err) : pq_fail(err, PQ_E_NOMEM, "out of memory");
        if (rc == PQ_OK && !rp.has_length) rc = pq_fail(err, PQ_E_IO, "HEAD %s: no Content-Length", url);
        if (rc == PQ_OK) {
            e.st.size = rp.content_length;
            e.st.mtime_ns = pq_remote_identity(rp.etag, rp.last_modified);
        }
        free(url);
    }
    if (rc == PQ_OK && !is_dir) pq_remote_know(&lc->hs->r, path, e.st.size, NULL);
    free(path);
    if (rc == PQ_OK && lc->cb(lc->cb_ctx, &e)) lc->stopped = true;
    return rc;
}

static bool hex4(const char *s, const char *end, unsigned *out)
{
    if (end - s < 4) return false;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char h = s[i];
        int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10 : -1;
        if (d < 0) return false;
        v = v * 16 + (unsigned)d;
    }
    *out = v;
    return true;
}

/* A JSON string at *p (after its opening quote) decoded in place into out;
 * advances past the closing quote.  \uXXXX becomes UTF-8 (surrogate pairs
 * joined). */
static bool json_string(char **p, char *end, char *out, size_t cap)
{
    char *s = *p;
    size_t k = 0;
    while (s < end && *s != '"') {
        unsigned c = (unsigned char)*s++;
        if (c == '\\') {
            if (s >= end) return false;
            char e = *s++;
            if (e == 'u') {
                unsigned u, lo;
                if (!hex4(s, end, &u)) return false;
                s += 4;
                if (u >= 0xD800 && u < 0xDC00 && end - s >= 6 && s[0] == '\\' && s[1] == 'u' && hex4(s + 2, end, &lo) &&
                    lo >= 0xDC00 && lo < 0xE000) {
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                    s += 6;
                }
                if (k + 4 >= cap) return false;
                if (u < 0x80) out[k++] = (char)u;
                else if (u < 0x800) {
                    out[k++] = (char)(0xC0 | u >> 6);
                    out[k++] = (char)(0x80 | (u & 63));
                } else if (u < 0x10000) {
                    out[k++] = (char)(0xE0 | u >> 12);
                    out[k++] = (char)(0x80 | ((u >> 6) & 63));
                    out[k++] = (char)(0x80 | (u & 63));
                } else {
                    out[k++] = (char)(0xF0 | u >> 18);
                    out[k++] = (char)(0x80 | ((u >> 12) & 63));
                    out[k++] = (char)(0x80 | ((u >> 6) & 63));
                    out[k++] = (char)(0x80 | (u & 63));
                }
                continue;
            }
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : (unsigned char)e;
        }
        if (k + 1 >= cap) return false;
        out[k++] = (char)c;
    }
    if (s >= end) return false;
    out[k] = '\0';
    *p = s + 1;
    return true;
}

/* nginx autoindex_format json: [{"name":"x","type":"directory"|"file",
 * "mtime":"...","size":N}, ...].  Other keys and value types are skipped. */
static int parse_json(list_ctx *lc, char *p, char *end, const char *url, pq_error *err)
{
    char name[4096], key[32], sval[4096];
    while (p < end && *p != '[') p++;
    if (p >= end) return pq_fail(err, PQ_E_IO, "GET %s: not a JSON listing", url);
    p++;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ',')) p++;
        if (p >= end) return pq_fail(err, PQ_E_IO, "GET %s: the JSON listing is cut short", url);
        if (*p == ']') return PQ_OK;
        if (*p != '{') return pq_fail(err, PQ_E_IO, "GET %s: unexpected '%c' in the JSON listing", url, *p);
        p++;
        bool is_dir = false, is_file = false, has_size = false;
        uint64_t size = 0;
        int64_t mtime = 0;
        name[0] = '\0';
        for (;;) {
            while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ',')) p++;
            if (p < end && *p == '}') {
                p++;
                break;
            }
            if (p >= end || *p != '"') return pq_fail(err, PQ_E_IO, "GET %s: bad JSON listing", url);
            p++;
            bool key_ok = json_string(&p, end, key, sizeof key);
            if (!key_ok) return pq_fail(err, PQ_E_IO, "GET %s: bad JSON listing (a key)", url);
            while (p < end && (*p == ' ' || *p == ':')) p++;
            if (p < end && *p == '"') {
                p++;
                if (!json_string(&p, end, sval, sizeof sval))
                    return pq_fail(err, PQ_E_IO, "GET %s: bad JSON listing (a string)", url);
                if (!strcmp(key, "name")) snprintf(name, sizeof name, "%s", sval);
                else if (!strcmp(key, "type")) {
                    is_dir = !strcmp(sval, "directory");
                    is_file = !strcmp(sval, "file");
                } else if (!strcmp(key, "mtime")) mtime = pq_http_parse_date(sval);
            } else {
                char *num = p;
                while (p < end && *p != ',' && *p != '}') p++;
                if (!strcmp(key, "size")) {
                    char *e;
                    unsigned long long v = strtoull(num, &e, 10);
                    if (e > num && e <= p) {
                        size = v;
                        has_size = true;
                    }
                }
            }
        }
        if (is_dir || is_file) PQ_TRY(emit(lc, name, is_dir, has_size, size, mtime, err));
    }
}

/* An HTML index: every <a href="NAME"> or href='NAME' that is a plain
 * relative name (a trailing '/' marks a directory). */
static int parse_html(list_ctx *lc, char *p, char *end, pq_error *err)
{
    char name[4096];
    while (p < end) {
        char *h = memmem(p, (size_t)(end - p), "href=", 5);
        if (!h) break;
        p = h + 5;
        if (p >= end || (*p != '"' && *p != '\'')) continue;
        char q = *p++;
        char *e = memchr(p, q, (size_t)(end - p));
        if (!e) break;
        size_t n = (size_t)(e - p);
        if (n == 0 || n >= sizeof name || *p == '?' || *p == '/' || *p == '#' || memchr(p, ':', n)) {
            p = e + 1;
            continue;
        }
        /* HTML entities, then percent escapes. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            static const struct {
                const char *ent;
                char c;
            } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}, {"&#x27;", '\''}};
            bool done = false;
            for (size_t j = 0; j < sizeof ents / sizeof ents[0] && !done; j++) {
                size_t el = strlen(ents[j].ent);
                if (n - i >= el && !memcmp(p + i, ents[j].ent, el)) {
                    name[k++] = ents[j].c;
                    i += el - 1;
                    done = true;
                }
            }
            if (!done) name[k++] = p[i];
        }
        k = pq_url_decode(name, k);
        name[k] = '\0';
        bool is_dir = k > 0 && name[k - 1] == '/';
        if (is_dir) name[--k] = '\0';
        p = e + 1;
        if (!strcmp(name, "..") || !strcmp(name, ".")) continue;
        PQ_TRY(emit(lc, name, is_dir, false, 0, 0, err));
    }
    return PQ_OK;
}

static int http_list(pq_store *s, const char *dir, pq_list_cb cb, void *ctx, pq_error *err)
{
    http_store *hs = (http_store *)s;
    char *url = url_of(hs, dir, true);
    if (!url) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    int rc = pq_remote_get(&hs->r, url, &body, &rp, err);
    if (rc == PQ_OK) {
        list_ctx lc = {hs, dir, cb, ctx, false};
        char *p = body.data, *end = body.data + body.len;
        while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
        if (strstr(rp.content_type, "json") || (p < end && *p == '[')) rc = parse_json(&lc, p, end, url, err);
        else rc = parse_html(&lc, p, end, err);
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
    if (!hs) return pq_fail(err, PQ_E_NOMEM, "out of memory");
    hs->base_url = strdup(url);
    hs->base.root = strdup(url);
    if (!hs->base_url || !hs->base.root) {
        free(hs->base_url);
        free(hs->base.root);
        free(hs);
        return pq_fail(err, PQ_E_NOMEM, "out of memory");
    }
    size_t n = strlen(hs->base_url);
    while (n > 8 && hs->base_url[n - 1] == '/') hs->base_url[--n] = '\0';
    hs->base.ops = &http_store_ops;
    if (pq_remote_init(&hs->r, ho, &hs->base.counters, err) != PQ_OK) {
        free(hs->base_url);
        free(hs->base.root);
        free(hs);
        return PQ_ERR;
    }
    /* The root must answer as a listing: a wrong URL fails at mount. */
    pq_buf body;
    pq_buf_init(&body);
    pq_http_reply rp;
    char *root = url_of(hs, "", true);
    int rc = root ? pq_remote_get(&hs->r, root, &body, &rp, err) : pq_fail(err, PQ_E_NOMEM, "out of memory");
    free(root);
    pq_buf_free(&body);
    if (rc != PQ_OK) {
        http_destroy(&hs->base);
        return PQ_ERR;
    }
    *out = &hs->base;
    return PQ_OK;
}
