#include "http.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "dlib.h"
#include "numfmt.h"

/* Idle handles kept for reuse: each holds its connection open. */
#define POOL_MAX 32

struct pq_http {
    pq_http_opts o;
    char *userpwd;
    pthread_mutex_t mu;
    CURL *idle[POOL_MAX];
    int n_idle;
};

/* libcurl is loaded when the first remote store is made, not linked: it
 * brings about thirty shared libraries (TLS, Kerberos, LDAP, ...) whose
 * loading and relocation took 10 of the 11 ms every pqtool process spent
 * before doing anything, local sources included. */
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *c);
    CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
    void (*easy_reset)(CURL *c);
    void (*easy_cleanup)(CURL *c);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
    void (*slist_free_all)(struct curl_slist *list);
} cu;

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static char global_error[256]; /* empty: libcurl is loaded and initialized */

static void global_init(void)
{
    static const char *const sonames[] = {"libcurl.so.4", "libcurl.so"};
    const pq_dl_sym syms[] = {
        {"curl_global_init", &cu.global_init},     {"curl_easy_init", &cu.easy_init},
        {"curl_easy_setopt", &cu.easy_setopt},     {"curl_easy_perform", &cu.easy_perform},
        {"curl_easy_getinfo", &cu.easy_getinfo},   {"curl_easy_reset", &cu.easy_reset},
        {"curl_easy_cleanup", &cu.easy_cleanup},   {"curl_easy_strerror", &cu.easy_strerror},
        {"curl_slist_append", &cu.slist_append},   {"curl_slist_free_all", &cu.slist_free_all},
    };
    if (!pq_dl_load("libcurl", sonames, sizeof sonames / sizeof *sonames, syms, sizeof syms / sizeof *syms,
                    global_error, sizeof global_error))
        return;
    CURLcode rc = cu.global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) snprintf(global_error, sizeof global_error, "%s", cu.easy_strerror(rc));
}

void pq_http_opts_init(pq_http_opts *o)
{
    o->max_attempts = 4;
    o->connect_timeout_ms = 10000;
    o->stall_timeout_s = 30;
    o->backoff_ms = 50;
    o->userpwd = NULL;
    o->follow_redirects = false;
}

int pq_http_new(const pq_http_opts *o, pq_http **out, pq_error *err)
{
    pthread_once(&global_once, global_init);
    if (global_error[0]) return pq_fail(err, PQ_E_IO, "libcurl: %s", global_error);
    pq_http *h = calloc(1, sizeof *h);
    if (!h) return PQ_NOMEM(err);
    if (o) h->o = *o;
    else pq_http_opts_init(&h->o);
    if (h->o.max_attempts < 1) h->o.max_attempts = 1;
    h->o.userpwd = NULL;
    if (o && o->userpwd && !(h->userpwd = strdup(o->userpwd))) {
        free(h);
        return PQ_NOMEM(err);
    }
    pthread_mutex_init(&h->mu, NULL);
    *out = h;
    return PQ_OK;
}

void pq_http_free(pq_http *h)
{
    if (!h) return;
    for (int i = 0; i < h->n_idle; i++) cu.easy_cleanup(h->idle[i]);
    if (h->userpwd) {
        memset(h->userpwd, 0, strlen(h->userpwd));
        free(h->userpwd);
    }
    pthread_mutex_destroy(&h->mu);
    free(h);
}

static CURL *take_handle(pq_http *h)
{
    pthread_mutex_lock(&h->mu);
    CURL *c = h->n_idle ? h->idle[--h->n_idle] : NULL;
    pthread_mutex_unlock(&h->mu);
    if (c) cu.easy_reset(c); /* keeps the connection, forgets the options */
    else c = cu.easy_init();
    return c;
}

static void give_handle(pq_http *h, CURL *c, bool keep)
{
    if (keep) {
        pthread_mutex_lock(&h->mu);
        if (h->n_idle < POOL_MAX) {
            h->idle[h->n_idle++] = c;
            c = NULL;
        }
        pthread_mutex_unlock(&h->mu);
    }
    if (c) cu.easy_cleanup(c);
}

/* ------------------------------------------------------------------ one transfer */

typedef struct transfer {
    const pq_http_req *rq;
    pq_http_reply *rp;
    bool overflow;               /* more body than `into` holds */
    long status;                 /* of the response being received */
    uint64_t skip;               /* body bytes before the range (a server that ignores ranges) */
    uint64_t upload_at;
    bool oom;                    /* a header could not be kept */
} transfer;

static bool header_is(const char *line, size_t n, const char *name, const char **value, size_t *vlen)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) || line[k] != ':') return false;
    const char *v = line + k + 1, *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    *value = v;
    *vlen = (size_t)(end - v);
    return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if (!n) return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *ctx)
{
    transfer *t = ctx;
    size_t n = size * nitems;
    pq_http_reply *rp = t->rp;
    const char *v;
    size_t vl;
    if (n >= 5 && !strncmp(line, "HTTP/", 5)) {
        /* A new response (after a 100 Continue, a redirect): its headers only. */
        memset(rp, 0, sizeof *rp);
        if (t->rq->etag) {
            t->rq->etag->len = 0;
            t->rq->etag->data[0] = '\0'; /* attempt() made room */
        }
        const char *sp = memchr(line, ' ', n);
        t->status = sp && sp + 4 <= line + n ? strtol(sp + 1, NULL, 10) : 0;
        /* A 200 to a range request is the whole object: the range is
         * cut out of it as it streams by. */
        t->skip = t->rq->has_range && t->status == 200 ? t->rq->range_off : 0;
    } else if (header_is(line, n, "Content-Length", &v, &vl)) {
        rp->has_length = parse_u64(v, vl, &rp->content_length);
    } else if (header_is(line, n, "Content-Range", &v, &vl)) {
        /* bytes A-B/TOTAL */
        const char *end = v + vl, *dash = memchr(v, '-', vl), *slash = memchr(v, '/', vl);
        if (vl > 6 && !strncasecmp(v, "bytes ", 6) && dash && slash && dash < slash &&
            parse_u64(v + 6, (size_t)(dash - v - 6), &rp->range_start) &&
            parse_u64(slash + 1, (size_t)(end - slash - 1), &rp->total))
            rp->has_total = true;
    } else if (header_is(line, n, "ETag", &v, &vl)) {
        rp->has_etag = true;
        pq_buf *e = t->rq->etag;
        if (e) {
            pq_buf_clear(e);
            if (pq_buf_reserve(e, vl + 1)) {
                t->oom = true;
                return 0; /* curl stops the transfer */
            }
            memcpy(e->data, v, vl);
            e->data[vl] = '\0';
            e->len = vl;
        }
    } else if (header_is(line, n, "Last-Modified", &v, &vl)) {
        /* Every date form is under 64 bytes: a longer value is no date. */
        char date[64];
        if (vl < sizeof date) {
            memcpy(date, v, vl);
            date[vl] = '\0';
            rp->last_modified = pq_http_parse_date(date);
        }
    } else if (header_is(line, n, "Content-Type", &v, &vl)) {
        size_t k = vl < sizeof rp->content_type - 1 ? vl : sizeof rp->content_type - 1;
        memcpy(rp->content_type, v, k);
        rp->content_type[k] = '\0';
    }
    return n;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    transfer *t = ctx;
    size_t n = size * nmemb, all = n;
    const pq_http_req *rq = t->rq;
    pq_http_reply *rp = t->rp;
    if (t->skip) {
        size_t k = t->skip < n ? (size_t)t->skip : n;
        t->skip -= k;
        data += k;
        n -= k;
        if (!n) return all;
    }
    if (rq->into) {
        size_t room = rq->into_cap - (size_t)rp->body_len;
        if (n > room) {
            /* More than the range (a server that ignores ranges): take
             * what was asked and stop the transfer. */
            memcpy((char *)rq->into + rp->body_len, data, room);
            rp->body_len += room;
            t->overflow = true;
            return 0;
        }
        memcpy((char *)rq->into + rp->body_len, data, n);
    } else if (rq->body) {
        if (pq_buf_append(rq->body, data, n)) return 0;
    }
    rp->body_len += n;
    return all;
}

static size_t on_upload(char *buf, size_t size, size_t nitems, void *ctx)
{
    transfer *t = ctx;
    size_t want = size * nitems;
    uint64_t left = t->rq->upload_len - t->upload_at;
    if (want > left) want = (size_t)left;
    if (!want) return 0;
    memcpy(buf, (const char *)t->rq->upload_data + t->upload_at, want);
    t->upload_at += want;
    return want;
}

/* curl rewinds a body to send it again on a new connection (the kept-alive
 * one was closed by the server): the body is in memory, any offset will do. */
static int on_seek(void *ctx, curl_off_t offset, int origin)
{
    transfer *t = ctx;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > t->rq->upload_len) return CURL_SEEKFUNC_FAIL;
    t->upload_at = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* Set at shutdown: transfers in flight stop (a stalled one held the daemon
 * for its whole stall timeout, minutes) and no new attempt starts. */
static _Atomic bool cancel_all;

void pq_http_cancel_all(void)
{
    cancel_all = true;
}

/* Called about once a second even while nothing arrives. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)ctx, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    return cancel_all ? 1 : 0;
}

static bool retryable_code(CURLcode rc)
{
    switch (rc) {
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

static bool retryable_status(long status)
{
    return status == 429 || status == 500 || status == 502 || status == 503 || status == 504;
}

static bool add_header(struct curl_slist **list, const char *line)
{
    struct curl_slist *n = cu.slist_append(*list, line);
    if (n) *list = n;
    return n != NULL;
}

static int attempt(pq_http *h, const pq_http_req *rq, pq_http_reply *rp, CURLcode *crc, char *cerr, pq_error *err)
{
    memset(rp, 0, sizeof *rp);
    if (rq->body) pq_buf_clear(rq->body);
    if (rq->etag) {
        pq_buf_clear(rq->etag);
        if (pq_buf_reserve(rq->etag, 1)) return PQ_NOMEM(err);
        rq->etag->data[0] = '\0';
    }
    CURL *c = take_handle(h);
    if (!c) return pq_fail(err, PQ_E_NOMEM, "out of memory for an HTTP handle");
    transfer t = {.rq = rq, .rp = rp};
    struct curl_slist *hdrs = NULL;
    /* The signature's lines, each NUL-terminated: made for this attempt
     * (a retry signs again, the date moves). */
    pq_buf signed_lines;
    pq_buf_init(&signed_lines);
    int rc = rq->sign ? rq->sign(rq->sign_ctx, rq, &signed_lines, err) : PQ_OK;
    bool ok = true;
    if (rc == PQ_OK && rq->has_range) {
        char line[128];
        if (rq->range_len == 0) {
            rc = pq_fail(err, PQ_E_USAGE, "%s: empty range", rq->url);
        } else {
            snprintf(line, sizeof line, "Range: bytes=%llu-%llu", (unsigned long long)rq->range_off,
                     (unsigned long long)(rq->range_off + rq->range_len - 1));
            ok = add_header(&hdrs, line);
        }
    }
    for (int i = 0; rc == PQ_OK && ok && i < rq->n_headers; i++) ok = add_header(&hdrs, rq->headers[i]);
    for (size_t at = 0; ok && at < signed_lines.len; at += strlen(signed_lines.data + at) + 1)
        ok = add_header(&hdrs, signed_lines.data + at);
    bool has_body = !strcmp(rq->method, "PUT") || !strcmp(rq->method, "POST");
    /* No "Expect: 100-continue" round trip before a body. */
    if (ok && has_body) ok = add_header(&hdrs, "Expect:");
    pq_buf_free(&signed_lines); /* curl keeps copies */
    if (rc == PQ_OK && !ok) rc = PQ_NOMEM(err);
    if (rc != PQ_OK) {
        cu.slist_free_all(hdrs);
        give_handle(h, c, true);
        return rc;
    }
    cerr[0] = '\0';
    cu.easy_setopt(c, CURLOPT_URL, rq->url);
    cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu.easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
    cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->o.connect_timeout_ms);
    cu.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    cu.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, h->o.stall_timeout_s);
    cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    cu.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    cu.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    if (h->o.follow_redirects) {
        /* Basic auth goes to the first host only (curl's default), and
         * only to http(s). */
        cu.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        cu.easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
        cu.easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    }
    if (h->userpwd) {
        cu.easy_setopt(c, CURLOPT_USERPWD, h->userpwd);
        cu.easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    }
    cu.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    cu.easy_setopt(c, CURLOPT_HEADERDATA, &t);
    cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    cu.easy_setopt(c, CURLOPT_WRITEDATA, &t);
    if (!strcmp(rq->method, "HEAD")) {
        cu.easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (has_body) {
        /* An upload with a known length; POST names its method. */
        cu.easy_setopt(c, CURLOPT_UPLOAD, 1L);
        cu.easy_setopt(c, CURLOPT_READFUNCTION, on_upload);
        cu.easy_setopt(c, CURLOPT_READDATA, &t);
        cu.easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
        cu.easy_setopt(c, CURLOPT_SEEKDATA, &t);
        cu.easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->upload_len);
        if (strcmp(rq->method, "PUT")) cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
    } else if (strcmp(rq->method, "GET")) {
        cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
    }
    *crc = cu.easy_perform(c);
    long status = 0;
    cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    rp->status = status;
    if (*crc == CURLE_WRITE_ERROR && t.overflow) *crc = CURLE_OK; /* had all it asked for */
    cu.slist_free_all(hdrs);
    give_handle(h, c, *crc == CURLE_OK);
    if (t.oom) return pq_fail(err, PQ_E_NOMEM, "%s %s: out of memory for a reply header", rq->method, rq->url);
    return PQ_OK;
}

int pq_http_do(pq_http *h, const pq_http_req *rq, pq_http_reply *rp, pq_error *err)
{
    unsigned pause_ms = h->o.backoff_ms;
    for (int i = 0;; i++) {
        CURLcode crc = CURLE_OK;
        char cerr[CURL_ERROR_SIZE];
        if (cancel_all) return pq_fail(err, PQ_E_CANCELLED, "%s %s: cancelled (shutting down)", rq->method, rq->url);
        PQ_TRY(attempt(h, rq, rp, &crc, cerr, err));
        if (crc == CURLE_ABORTED_BY_CALLBACK)
            return pq_fail(err, PQ_E_CANCELLED, "%s %s: cancelled (shutting down)", rq->method, rq->url);
        bool last = i + 1 >= h->o.max_attempts;
        if (crc == CURLE_OK && rq->has_range && rp->status == 200) {
            /* The server ignored the range; the body delivered is the
             * range all the same (cut out as it streamed by). */
            rp->status = 206;
            rp->has_total = rp->has_length;
            rp->total = rp->content_length;
            rp->range_start = rq->range_off;
        }
        if (crc == CURLE_OK && (!retryable_status(rp->status) || last)) return PQ_OK;
        if (crc != CURLE_OK && (!retryable_code(crc) || last))
            return pq_fail(err, PQ_E_IO, "%s %s: %s%s%s (after %d attempt%s)", rq->method, rq->url,
                           cu.easy_strerror(crc), cerr[0] ? ": " : "", cerr, i + 1, i ? "s" : "");
        struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        pause_ms *= 4;
    }
}

/* The <Code> of an S3 error body, if there is one. */
static void error_code(const pq_buf *body, char *out, size_t cap)
{
    out[0] = '\0';
    if (!body || !body->len) return;
    const char *s = body->data, *end = s + body->len;
    const char *a = NULL;
    for (const char *p = s; p + 6 <= end; p++)
        if (!memcmp(p, "<Code>", 6)) {
            a = p + 6;
            break;
        }
    if (!a) return;
    const char *b = a;
    while (b < end && *b != '<' && (size_t)(b - a) < cap - 1) b++;
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = '\0';
}

int pq_http_status_fail(const pq_http_req *rq, const pq_http_reply *rp, const pq_buf *body, pq_error *err)
{
    char code[64];
    error_code(body, code, sizeof code);
    pq_errclass cls = rp->status == 404 ? PQ_E_NOTFOUND : PQ_E_IO;
    const char *what = rp->status == 404   ? "not found"
                       : rp->status == 403 ? "access denied"
                       : rp->status == 401 ? "not authorized"
                       : rp->status == 412 ? "changed since it was listed"
                       : rp->status == 416 ? "range not satisfiable"
                                           : "failed";
    /* A precondition that failed says what every other identity check
     * says: "URL: changed since it was listed". */
    if (rp->status == 412)
        return pq_fail(err, cls, "%s %s: %s (HTTP 412%s%s)", rq->method, rq->url, what, code[0] ? ", " : "", code);
    return pq_fail(err, cls, "%s %s: HTTP %ld %s%s%s", rq->method, rq->url, rp->status, what, code[0] ? ", " : "",
                   code);
}

int pq_url_split_credentials(const char *url, char **clean, char **userpwd, pq_error *err)
{
    *clean = *userpwd = NULL;
    const char *host = strstr(url, "://");
    host = host ? host + 3 : url;
    size_t hl = strcspn(host, "/?#");
    const char *at = memrchr(host, '@', hl);
    if (!at) {
        *clean = strdup(url);
        return *clean ? PQ_OK : PQ_NOMEM(err);
    }
    size_t pre = (size_t)(host - url), ul = (size_t)(at - host);
    *clean = malloc(strlen(url) - ul);
    *userpwd = malloc(ul + 2); /* "user" may gain its ":" */
    if (!*clean || !*userpwd) {
        free(*clean);
        free(*userpwd);
        *clean = *userpwd = NULL;
        return PQ_NOMEM(err);
    }
    memcpy(*clean, url, pre);
    strcpy(*clean + pre, at + 1);
    /* user and password are each percent-encoded in a URL. */
    const char *colon = memchr(host, ':', ul);
    size_t u = colon ? (size_t)(colon - host) : ul;
    memcpy(*userpwd, host, u);
    size_t k = pq_url_decode(*userpwd, u);
    (*userpwd)[k++] = ':';
    if (colon) {
        size_t pl = ul - u - 1;
        memcpy(*userpwd + k, colon + 1, pl);
        k += pq_url_decode(*userpwd + k, pl);
    }
    (*userpwd)[k] = '\0';
    return PQ_OK;
}

static int month_of(const char *s)
{
    static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    for (int i = 0; i < 12; i++)
        if (!strncasecmp(s, names + 3 * i, 3)) return i + 1;
    return 0;
}

/* The three forms RFC 9110 section 5.6.7 says a recipient must accept:
 * IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday,
 * 06-Nov-94 08:49:37 GMT" and asctime "Sun Nov  6 08:49:37 1994". */
int64_t pq_http_parse_date(const char *s)
{
    char wday[16], mon[4], zone[4];
    int d, y, hh, mm, ss, used = 0;
    if (!s) return 0;
    if (sscanf(s, "%15[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d %3s%n", wday, &d, mon, &y, &hh, &mm, &ss, zone,
               &used) == 8 ||
        sscanf(s, "%15[A-Za-z], %2d-%3[A-Za-z]-%4d %2d:%2d:%2d %3s%n", wday, &d, mon, &y, &hh, &mm, &ss, zone,
               &used) == 8) {
        if (strcmp(zone, "GMT") && strcmp(zone, "UTC")) return 0;
        /* RFC 850's two-digit year: 70-99 are 19xx, the rest 20xx. */
        if (y < 100) y += y < 70 ? 2000 : 1900;
    } else if (sscanf(s, "%3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n", wday, mon, &d, &hh, &mm, &ss, &y, &used) ==
               7) {
    } else {
        return 0;
    }
    int m = month_of(mon);
    if (!m || s[used] != '\0' || y < 1970 || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) return 0;
    /* The calendar (and its checks: 30 February is no date) is numfmt's. */
    char iso[16];
    int64_t days;
    int n = snprintf(iso, sizeof iso, "%04d-%02d-%02d", y, m, d);
    if (n < 0 || (size_t)n >= sizeof iso || pq_parse_date(iso, (size_t)n, &days) != 0) return 0;
    int64_t t = days * 86400 + hh * 3600 + mm * 60 + ss;
    return t > 0 ? t : 0;
}

int pq_url_encode(pq_buf *b, const char *s, size_t n, bool keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    if (pq_buf_reserve(b, n * 3 + 1)) return -1;
    char *o = b->data + b->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~' || (c == '/' && keep_slash)) {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
    return 0;
}

size_t pq_url_decode(char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < n && (hi = pq_hex_digit(s[i + 1])) >= 0 && (lo = pq_hex_digit(s[i + 2])) >= 0) {
            s[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            s[o++] = s[i];
        }
    }
    if (o < n) s[o] = '\0';
    return o;
}
