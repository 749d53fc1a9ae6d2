/* AWS Signature Version 4 for S3 ("Transferring Payload in a Single Chunk"):
 * canonical request -> string to sign -> HMAC chain -> Authorization.
 *
 * Text is assembled in bounded builders whose overflow is sticky and checked
 * once at the end, so a huge path or header turns into PQ_E_USAGE rather than
 * a write past a buffer.  Secrets and derived keys are wiped before return. */
#include "sigv4.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* S3 rejects requests with more than ~8 KiB of URL or 8 KiB of headers, so a
 * canonical request past this is a caller bug, not something to sign. */
#define SIGV4_MAX_CANONICAL (64 * 1024)

/* ---- SHA-256 ---- */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha256_k[i] + w[i];
        uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void pq_sha256_init(pq_sha256_ctx *c)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, iv, sizeof iv);
    c->total = 0;
    c->used = 0;
}

void pq_sha256_update(pq_sha256_ctx *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->total += len;
    if (c->used) {
        size_t take = 64 - c->used < len ? 64 - c->used : len;
        memcpy(c->buf + c->used, p, take);
        c->used += take; p += take; len -= take;
        if (c->used < 64) return;
        sha256_block(c->h, c->buf);
        c->used = 0;
    }
    for (; len >= 64; p += 64, len -= 64) sha256_block(c->h, p);
    memcpy(c->buf, p, len);
    c->used = len;
}

void pq_sha256_final(pq_sha256_ctx *c, uint8_t out[32])
{
    uint64_t bits = c->total * 8;
    uint8_t pad[72] = {0x80};
    /* Pad to 56 mod 64, then the 64-bit big-endian bit length. */
    size_t padlen = c->used < 56 ? 56 - c->used : 120 - c->used;
    for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    pq_sha256_update(c, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(c->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->h[i];
    }
}

void pq_sha256(const void *data, size_t len, uint8_t out[32])
{
    pq_sha256_ctx c;
    pq_sha256_init(&c);
    pq_sha256_update(&c, data, len);
    pq_sha256_final(&c, out);
}

/* memset that the optimizer may not drop: used on key material. */
static void wipe(void *p, size_t n)
{
    volatile uint8_t *v = p;
    while (n--) *v++ = 0;
}

void pq_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                    uint8_t out[32])
{
    uint8_t k[64] = {0}, pad[64], inner[32];
    if (key_len > 64) pq_sha256(key, key_len, k);
    else memcpy(k, key, key_len);
    pq_sha256_ctx c;
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
    pq_sha256_init(&c);
    pq_sha256_update(&c, pad, 64);
    pq_sha256_update(&c, data, len);
    pq_sha256_final(&c, inner);
    for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
    pq_sha256_init(&c);
    pq_sha256_update(&c, pad, 64);
    pq_sha256_update(&c, inner, 32);
    pq_sha256_final(&c, out);
    wipe(k, sizeof k);
    wipe(pad, sizeof pad);
    wipe(&c, sizeof c);
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
        pq_sha256(creq.p, creq.len, digest);
        pq_sha256_hex(digest, creq_hex);
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
    pq_hmac_sha256(k0, 4 + slen, date, 8, k);
    pq_hmac_sha256(k, 32, rq->region, strlen(rq->region), k);
    pq_hmac_sha256(k, 32, rq->service, strlen(rq->service), k);
    pq_hmac_sha256(k, 32, "aws4_request", 12, k);
    pq_hmac_sha256(k, 32, sts, st.len, sig);
    wipe(k0, sizeof k0);
    wipe(k, sizeof k);
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
