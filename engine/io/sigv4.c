/* AWS Signature Version 4 for S3 ("Transferring Payload in a Single Chunk"):
 * canonical request -> string to sign -> HMAC chain -> Authorization.
 *
 * Text is assembled in bounded builders whose overflow is sticky and checked
 * once at the end, so a huge path or header turns into PQ_E_USAGE rather than
 * a write past a buffer.  Secrets and derived keys are wiped before return. */
#include "sigv4.h"

#include "dlib.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/opensslv.h>

/* S3 rejects requests with more than ~8 KiB of URL or 8 KiB of headers, so a
 * canonical request past this is a caller bug, not something to sign. */
#define SIGV4_MAX_CANONICAL (64 * 1024)

/* ---- SHA-256 and HMAC-SHA256, by libcrypto ---- */

/* libcrypto is loaded on first use, not linked, as libcurl is (http.c):
 * linked, it cost every pqtool start 1.1 ms as libcrypto.so.3 and 0.5 ms as
 * the static archive (17,000 relocations, 100 more pages touched), against
 * the 1.1 ms such a start takes, though only S3 requests and the mount's
 * result keys hash anything.  Loaded by its soname, it is the one copy that
 * libcurl's TLS uses too.  The headers give the types only. */
static struct {
    EVP_MD_CTX *(*md_ctx_new)(void);
    void (*md_ctx_free)(EVP_MD_CTX *c);
    int (*digest_init_ex)(EVP_MD_CTX *c, const EVP_MD *md, ENGINE *engine);
    int (*digest_update)(EVP_MD_CTX *c, const void *data, size_t len);
    int (*digest_final_ex)(EVP_MD_CTX *c, unsigned char *md, unsigned int *len);
    const EVP_MD *(*sha256)(void);
    unsigned char *(*hmac)(const EVP_MD *md, const void *key, int key_len, const unsigned char *data,
                           size_t len, unsigned char *out, unsigned int *out_len);
    unsigned long (*err_peek_error)(void);
    void (*err_error_string_n)(unsigned long e, char *buf, size_t len);
    void (*err_clear_error)(void);
} lc;

#define PQ_STR_(x) #x
#define PQ_STR(x) PQ_STR_(x)
#define LIBCRYPTO_SONAME "libcrypto.so." PQ_STR(OPENSSL_SHLIB_VERSION)

static pthread_once_t libcrypto_once = PTHREAD_ONCE_INIT;
static char libcrypto_error[256]; /* empty: libcrypto is loaded */

static void libcrypto_load(void)
{
    static const char *const sonames[] = {LIBCRYPTO_SONAME};
    const pq_dl_sym syms[] = {
        {"EVP_MD_CTX_new", &lc.md_ctx_new},         {"EVP_MD_CTX_free", &lc.md_ctx_free},
        {"EVP_DigestInit_ex", &lc.digest_init_ex},  {"EVP_DigestUpdate", &lc.digest_update},
        {"EVP_DigestFinal_ex", &lc.digest_final_ex}, {"EVP_sha256", &lc.sha256},
        {"HMAC", &lc.hmac},                         {"ERR_peek_error", &lc.err_peek_error},
        {"ERR_error_string_n", &lc.err_error_string_n}, {"ERR_clear_error", &lc.err_clear_error},
    };
    pq_dl_load("libcrypto", sonames, 1, syms, sizeof syms / sizeof *syms, libcrypto_error,
               sizeof libcrypto_error);
}

/* A failed libcrypto call as a pq_error.  Its one realistic cause is an
 * allocation (the context, the provider's state: ERR_R_MALLOC_FAILURE, or no
 * reason at all, as EVP_MD_CTX_new queues none); anything else (a
 * configuration whose providers offer no SHA-256) is reported with
 * libcrypto's own reason.  The thread's error queue is emptied either way, so
 * that a later call reports nothing stale. */
static int crypto_fail(pq_error *err, const char *what)
{
    unsigned long e = lc.err_peek_error(); /* the first: the cause, the rest its callers */
    char why[256];
    if (e) lc.err_error_string_n(e, why, sizeof why);
    lc.err_clear_error();
    if (!e || ERR_GET_REASON(e) == ERR_R_MALLOC_FAILURE)
        return pq_fail(err, PQ_E_NOMEM, "%s: out of memory", what);
    return pq_fail(err, PQ_E_UNSUPPORTED, "%s: libcrypto: %s", what, why);
}

static int libcrypto_ready(pq_error *err, const char *what)
{
    pthread_once(&libcrypto_once, libcrypto_load);
    if (libcrypto_error[0]) return pq_fail(err, PQ_E_UNSUPPORTED, "%s: %s", what, libcrypto_error);
    return PQ_OK;
}

int pq_sha256_init(pq_sha256_ctx *c, pq_error *err)
{
    c->md = NULL;
    c->failed = false;
    PQ_TRY(libcrypto_ready(err, "sha256"));
    c->md = lc.md_ctx_new();
    if (!c->md || !lc.digest_init_ex(c->md, lc.sha256(), NULL)) {
        lc.md_ctx_free(c->md);
        c->md = NULL;
        return crypto_fail(err, "sha256");
    }
    return PQ_OK;
}

void pq_sha256_update(pq_sha256_ctx *c, const void *data, size_t len)
{
    if (!c->failed && !lc.digest_update(c->md, data, len)) c->failed = true;
}

int pq_sha256_final(pq_sha256_ctx *c, uint8_t out[32], pq_error *err)
{
    unsigned int n = 0;
    int ok = !c->failed && lc.digest_final_ex(c->md, out, &n) && n == 32;
    lc.md_ctx_free(c->md);
    c->md = NULL;
    return ok ? PQ_OK : crypto_fail(err, "sha256");
}

int pq_sha256(const void *data, size_t len, uint8_t out[32], pq_error *err)
{
    pq_sha256_ctx c;
    PQ_TRY(pq_sha256_init(&c, err));
    pq_sha256_update(&c, data, len);
    return pq_sha256_final(&c, out, err);
}

int pq_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len, uint8_t out[32],
                   pq_error *err)
{
    if (key_len > INT_MAX) return pq_fail(err, PQ_E_USAGE, "hmac-sha256: key too long");
    PQ_TRY(libcrypto_ready(err, "hmac-sha256"));
    /* Into mac first: out may be key (the SigV4 key chain), and libcrypto
     * does not promise to have read all of the key before it writes. */
    uint8_t mac[32];
    unsigned int n = 0;
    int ok = lc.hmac(lc.sha256(), key, (int)key_len, data, len, mac, &n) && n == 32;
    if (ok) memcpy(out, mac, 32);
    explicit_bzero(mac, sizeof mac);
    return ok ? PQ_OK : crypto_fail(err, "hmac-sha256");
}

void pq_sha256_hex(const uint8_t digest[32], char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[64] = '\0';
}

/* ---- bounded text builder ---- */

typedef struct sbuf {
    char *p;
    size_t len, cap; /* cap includes the NUL */
    bool full;       /* sticky: some append did not fit */
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (b->full || n >= b->cap - b->len) {
        b->full = true;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_put(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

/* ---- canonical query string ---- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decode %XX (a '%' that starts no valid escape is a literal '%'), then encode
 * every byte outside A-Za-z0-9-._~ as uppercase %XX; writes at most 3*n bytes. */
static size_t aws_reencode(const char *s, size_t n, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            ch = (unsigned char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
            i += 2;
        }
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            out[o++] = (char)ch;
        } else {
            out[o++] = '%';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
    return o;
}

typedef struct qparam {
    const char *name, *value;
} qparam;

static int qparam_cmp(const void *a, const void *b)
{
    const qparam *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static int put_canonical_query(sbuf *b, const char *q, pq_error *err)
{
    size_t qlen = q ? strlen(q) : 0;
    if (qlen == 0) return PQ_OK;
    if (qlen > SIGV4_MAX_CANONICAL) return pq_fail(err, PQ_E_USAGE, "sigv4: query string too long");
    size_t np = 1;
    for (size_t i = 0; i < qlen; i++) np += q[i] == '&';
    /* Every piece grows at most 3x, plus a NUL for each name and value. */
    qparam *ps = malloc(np * sizeof *ps);
    char *arena = malloc(3 * qlen + 2 * np);
    if (!ps || !arena) {
        free(ps);
        free(arena);
        return pq_fail(err, PQ_E_NOMEM, "sigv4: out of memory");
    }
    size_t n = 0;
    char *a = arena;
    for (const char *p = q; p <= q + qlen;) {
        const char *end = strchr(p, '&');
        if (!end) end = q + qlen;
        if (end > p) { /* "a&&b": empty pieces are not parameters */
            const char *eq = memchr(p, '=', (size_t)(end - p));
            const char *nend = eq ? eq : end;
            ps[n].name = a;
            a += aws_reencode(p, (size_t)(nend - p), a) + 1;
            const char *v = eq ? eq + 1 : end; /* no '=': an empty value */
            ps[n].value = a;
            a += aws_reencode(v, (size_t)(end - v), a) + 1;
            n++;
        }
        p = end + 1;
    }
    qsort(ps, n, sizeof *ps, qparam_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i) sb_put(b, "&");
        sb_put(b, ps[i].name);
        sb_put(b, "=");
        sb_put(b, ps[i].value);
    }
    free(ps);
    free(arena);
    return PQ_OK;
}

/* ---- canonical headers ---- */

typedef struct hdr {
    char *name, *value;
    int order; /* input position: keeps repeated names in sending order */
} hdr;

static int hdr_cmp(const void *a, const void *b)
{
    const hdr *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->order > y->order) - (x->order < y->order);
}

static bool is_reserved(const char *lname)
{
    return !strcmp(lname, "host") || !strcmp(lname, "x-amz-date") ||
           !strcmp(lname, "x-amz-content-sha256") || !strcmp(lname, "x-amz-security-token");
}

/* Lowercase the name and trim/collapse the value into `a` (each no longer
 * than its input); fails on text that would break the canonical form. */
static int hdr_fill(hdr *h, char **a, const char *name, const char *value, int order,
                    pq_error *err)
{
    size_t nl = strlen(name);
    /* Explicit PQ_ERR (not pq_fail's value) so analyzers see h is set on success. */
    if (nl == 0 || strcspn(name, " \t\r\n:") != nl) {
        pq_fail(err, PQ_E_USAGE, "sigv4: invalid header name");
        return PQ_ERR;
    }
    if (strpbrk(value, "\r\n")) {
        pq_fail(err, PQ_E_USAGE, "sigv4: header '%s' has a line break", name);
        return PQ_ERR;
    }
    h->name = *a;
    for (size_t i = 0; i < nl; i++) {
        char c = name[i];
        *(*a)++ = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
    }
    *(*a)++ = '\0';
    h->value = *a;
    const char *v = value;
    while (*v == ' ' || *v == '\t') v++;
    bool space = false;
    for (; *v; v++) {
        if (*v == ' ' || *v == '\t') {
            space = true;
            continue;
        }
        if (space && *a > h->value) *(*a)++ = ' ';
        space = false;
        *(*a)++ = *v;
    }
    *(*a)++ = '\0';
    h->order = order;
    return PQ_OK;
}

/* ---- signing ---- */

static bool valid_amz_date(const char *d)
{
    if (strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z') return false;
    for (int i = 0; i < 15; i++)
        if (i != 8 && (d[i] < '0' || d[i] > '9')) return false;
    return true;
}

static int build_canonical(const pq_sigv4_request *rq, const pq_sigv4_result *out, sbuf *creq,
                           sbuf *signed_hdrs, pq_error *err)
{
    int nh = rq->n_headers + 4;
    size_t total = 0;
    for (int i = 0; i < rq->n_headers; i++) {
        if (!rq->headers[i].name || !rq->headers[i].value)
            return pq_fail(err, PQ_E_USAGE, "sigv4: header %d has no name or value", i);
        total += strlen(rq->headers[i].name) + strlen(rq->headers[i].value) + 2;
        if (total > SIGV4_MAX_CANONICAL) return pq_fail(err, PQ_E_USAGE, "sigv4: headers too long");
    }
    const char *token = rq->session_token && *rq->session_token ? rq->session_token : NULL;
    total += strlen(rq->host) + strlen(out->amz_date) + strlen(out->content_sha256) +
             (token ? strlen(token) : 0) + 128;
    hdr *hs = malloc((size_t)nh * sizeof *hs);
    char *arena = malloc(total);
    if (!hs || !arena) {
        free(hs);
        free(arena);
        return pq_fail(err, PQ_E_NOMEM, "sigv4: out of memory");
    }
    char *a = arena;
    int n = 0, rc = PQ_OK;
    for (int i = 0; i < rq->n_headers; i++) {
        if (hdr_fill(&hs[n], &a, rq->headers[i].name, rq->headers[i].value, n, err) != PQ_OK) {
            rc = PQ_ERR;
            break;
        }
        if (is_reserved(hs[n].name)) {
            rc = pq_fail(err, PQ_E_USAGE, "sigv4: header '%s' is set by the signer", hs[n].name);
            break;
        }
        n++;
    }
    const char *fixed[4][2] = {{"host", rq->host},
                               {"x-amz-content-sha256", out->content_sha256},
                               {"x-amz-date", out->amz_date},
                               {"x-amz-security-token", token}};
    for (int i = 0; i < 4 && rc == PQ_OK; i++)
        if (fixed[i][1]) {
            rc = hdr_fill(&hs[n], &a, fixed[i][0], fixed[i][1], n, err);
            n++;
        }
    if (rc == PQ_OK) {
        qsort(hs, (size_t)n, sizeof *hs, hdr_cmp);
        sb_put(creq, rq->method);
        sb_put(creq, "\n");
        sb_put(creq, rq->path && *rq->path ? rq->path : "/");
        sb_put(creq, "\n");
        rc = put_canonical_query(creq, rq->query, err);
    }
    if (rc == PQ_OK) {
        sb_put(creq, "\n");
        for (int i = 0; i < n; i++) {
            if (i && !strcmp(hs[i].name, hs[i - 1].name)) {
                /* A repeated name: AWS signs the values joined by commas. */
                sb_put(creq, ",");
            } else {
                if (i) {
                    sb_put(creq, "\n");
                    sb_put(signed_hdrs, ";");
                }
                sb_put(creq, hs[i].name);
                sb_put(creq, ":");
                sb_put(signed_hdrs, hs[i].name);
            }
            sb_put(creq, hs[i].value);
        }
        sb_put(creq, "\n\n");
        sb_put(creq, signed_hdrs->p);
        sb_put(creq, "\n");
        sb_put(creq, out->content_sha256);
    }
    free(hs);
    free(arena);
    return rc;
}

int pq_sigv4_sign(const pq_sigv4_request *rq, pq_sigv4_result *out, pq_error *err)
{
    if (!rq || !out || !rq->method || !*rq->method || !rq->host || !*rq->host ||
        !rq->payload_hash || !rq->region || !*rq->region || !rq->service || !*rq->service ||
        !rq->access_key || !*rq->access_key || !rq->secret_key || rq->n_headers < 0 ||
        (rq->n_headers > 0 && !rq->headers))
        return pq_fail(err, PQ_E_USAGE, "sigv4: incomplete request");
    if (strlen(rq->payload_hash) >= sizeof out->content_sha256 || !*rq->payload_hash)
        return pq_fail(err, PQ_E_USAGE, "sigv4: invalid payload hash");
    if (strlen(rq->region) > 64 || strlen(rq->service) > 64 || strlen(rq->secret_key) > 512)
        return pq_fail(err, PQ_E_USAGE, "sigv4: region, service or secret key too long");
    if (rq->amz_date) {
        if (!valid_amz_date(rq->amz_date))
            return pq_fail(err, PQ_E_USAGE, "sigv4: amz_date must look like 20130524T000000Z");
        memcpy(out->amz_date, rq->amz_date, 17);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        if (!gmtime_r(&now, &tm) || strftime(out->amz_date, sizeof out->amz_date, "%Y%m%dT%H%M%SZ", &tm) != 16)
            return pq_fail(err, PQ_E_USAGE, "sigv4: cannot format the current time");
    }
    strcpy(out->content_sha256, rq->payload_hash);
    char date[9];
    memcpy(date, out->amz_date, 8);
    date[8] = '\0';

    char shbuf[sizeof out->authorization];
    sbuf signed_hdrs = {shbuf, 0, sizeof shbuf, false};
    shbuf[0] = '\0';
    sbuf creq = {malloc(SIGV4_MAX_CANONICAL), 0, SIGV4_MAX_CANONICAL, false};
    if (!creq.p) return pq_fail(err, PQ_E_NOMEM, "sigv4: out of memory");
    creq.p[0] = '\0';
    int rc = build_canonical(rq, out, &creq, &signed_hdrs, err);
    if (rc == PQ_OK && (creq.full || signed_hdrs.full))
        rc = pq_fail(err, PQ_E_USAGE, "sigv4: request too long to sign");
    uint8_t digest[32];
    char creq_hex[65];
    if (rc == PQ_OK) {
        rc = pq_sha256(creq.p, creq.len, digest, err);
        if (rc == PQ_OK) pq_sha256_hex(digest, creq_hex);
        else pq_error_prefix(err, "sigv4: ");
    }
    free(creq.p);
    if (rc != PQ_OK) return rc;

    /* Scope and string to sign fit easily: region/service are capped above. */
    char scope[256], sts[512];
    sbuf sc = {scope, 0, sizeof scope, false}, st = {sts, 0, sizeof sts, false};
    sb_put(&sc, date); sb_put(&sc, "/"); sb_put(&sc, rq->region); sb_put(&sc, "/");
    sb_put(&sc, rq->service); sb_put(&sc, "/aws4_request");
    sb_put(&st, "AWS4-HMAC-SHA256\n"); sb_put(&st, out->amz_date); sb_put(&st, "\n");
    sb_put(&st, scope); sb_put(&st, "\n"); sb_put(&st, creq_hex);
    if (sc.full || st.full) return pq_fail(err, PQ_E_USAGE, "sigv4: credential scope too long");

    /* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4"+secret, date), region), service), "aws4_request") */
    char k0[4 + 512];
    size_t slen = strlen(rq->secret_key);
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, rq->secret_key, slen);
    uint8_t k[32], sig[32];
    rc = pq_hmac_sha256(k0, 4 + slen, date, 8, k, err);
    if (rc == PQ_OK) rc = pq_hmac_sha256(k, 32, rq->region, strlen(rq->region), k, err);
    if (rc == PQ_OK) rc = pq_hmac_sha256(k, 32, rq->service, strlen(rq->service), k, err);
    if (rc == PQ_OK) rc = pq_hmac_sha256(k, 32, "aws4_request", 12, k, err);
    if (rc == PQ_OK) rc = pq_hmac_sha256(k, 32, sts, st.len, sig, err);
    explicit_bzero(k0, sizeof k0);
    explicit_bzero(k, sizeof k);
    if (rc != PQ_OK) {
        pq_error_prefix(err, "sigv4: ");
        return rc;
    }
    char sig_hex[65];
    pq_sha256_hex(sig, sig_hex);

    sbuf au = {out->authorization, 0, sizeof out->authorization, false};
    out->authorization[0] = '\0';
    sb_put(&au, "AWS4-HMAC-SHA256 Credential=");
    sb_put(&au, rq->access_key); sb_put(&au, "/"); sb_put(&au, scope);
    sb_put(&au, ", SignedHeaders="); sb_put(&au, shbuf);
    sb_put(&au, ", Signature="); sb_put(&au, sig_hex);
    if (au.full) {
        out->authorization[0] = '\0';
        return pq_fail(err, PQ_E_USAGE, "sigv4: Authorization header too long");
    }
    return PQ_OK;
}
