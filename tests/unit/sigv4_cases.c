/* Test driver for the differential SigV4 test (tests/unit/sigv4_ref.mjs):
 * reads request cases on stdin, signs each with pq_sigv4_sign() and prints
 * one line per case.  Not a CTest test by itself.
 *
 * Input: one field a line, "NAME HEX" (the value hex-encoded, so any byte
 * but NUL can be passed; an empty value is "NAME" alone), a case from
 * "case ID" to "end":
 *   method host path query payload date region service ak sk token
 *           the pq_sigv4_request fields, as the caller passes them
 *   pathpre + key   path = pathpre followed by pq_url_encode(key, keep '/'),
 *           the key encoded as store_s3.c's object_url does
 *   qenc NAMEHEX VALUEHEX   appends "&name=value" to the query, each part
 *           encoded by pq_url_encode (no '/' kept), as store_s3.c's listing does
 *   header NAMEHEX VALUEHEX an extra header to sign (repeatable)
 * Output: "ID OK <Authorization>\t<x-amz-date>\t<x-amz-content-sha256>\t<path>?<query>"
 * or "ID ERR <message>". */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "mem.h"
#include "sigv4.h"

#define MAX_HEADERS 64
#define MAX_LINE (1 << 20)

enum { F_METHOD, F_HOST, F_PATH, F_QUERY, F_PAYLOAD, F_DATE, F_REGION, F_SERVICE, F_AK, F_SK, F_TOKEN, F_N };
static const char *const field_names[F_N] = {"method", "host",    "path", "query", "payload", "date",
                                             "region", "service", "ak",   "sk",    "token"};

typedef struct sv_case {
    char id[64];
    char *field[F_N];
    pq_buf pathpre, key, qenc;
    bool has_key;
    pq_sigv4_header hdr[MAX_HEADERS];
    int n_hdr;
    bool bad; /* malformed input: reported, never signed */
} sv_case;

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes the hex run at s (up to a space or the end) into a new string;
 * *end is left after it.  NULL on odd length, a non-hex digit or a NUL. */
static char *unhex(const char *s, const char **end)
{
    size_t n = strcspn(s, " ");
    *end = s + n;
    if (n % 2) return NULL;
    char *out = malloc(n / 2 + 1);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hexval(s[i]), lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0 || (hi | lo) == 0) {
            free(out);
            return NULL;
        }
        out[i / 2] = (char)(hi << 4 | lo);
    }
    out[n / 2] = '\0';
    return out;
}

static void case_free(sv_case *c)
{
    for (int i = 0; i < F_N; i++) free(c->field[i]);
    for (int i = 0; i < c->n_hdr; i++) {
        free((char *)c->hdr[i].name);
        free((char *)c->hdr[i].value);
    }
    pq_buf_free(&c->pathpre);
    pq_buf_free(&c->key);
    pq_buf_free(&c->qenc);
    memset(c, 0, sizeof *c);
}

/* Two hex values "A B" -> a and b (both NULL on malformed input). */
static bool unhex2(const char *v, char **a, char **b)
{
    const char *e;
    *a = unhex(v, &e);
    *b = *a && *e == ' ' ? unhex(e + 1, &e) : NULL;
    if (*b && !*e) return true;
    free(*a);
    free(*b);
    *a = *b = NULL;
    return false;
}

static void add_qenc(sv_case *c, const char *name, const char *value)
{
    if ((c->qenc.len && pq_buf_cat(&c->qenc, "&")) || pq_url_encode(&c->qenc, name, strlen(name), false) ||
        pq_buf_cat(&c->qenc, "=") || pq_url_encode(&c->qenc, value, strlen(value), false))
        c->bad = true;
}

/* One "NAME VALUE" line of a case. */
static void case_line(sv_case *c, const char *name, const char *v)
{
    const char *e;
    char *a, *b;
    if (!strcmp(name, "header") || !strcmp(name, "qenc")) {
        if (!unhex2(v, &a, &b) || (name[0] == 'h' && c->n_hdr == MAX_HEADERS)) {
            free(a);
            free(b);
            c->bad = true;
        } else if (name[0] == 'h') {
            c->hdr[c->n_hdr].name = a;
            c->hdr[c->n_hdr++].value = b;
        } else {
            add_qenc(c, a, b);
            free(a);
            free(b);
        }
        return;
    }
    char *val = unhex(v, &e);
    if (!val || *e) {
        free(val);
        c->bad = true;
        return;
    }
    if (!strcmp(name, "pathpre") || !strcmp(name, "key")) {
        pq_buf *dst = name[0] == 'p' ? &c->pathpre : &c->key;
        c->has_key |= name[0] == 'k';
        if (pq_buf_cat(dst, val)) c->bad = true;
        free(val);
        return;
    }
    for (int i = 0; i < F_N; i++)
        if (!strcmp(name, field_names[i])) {
            free(c->field[i]);
            c->field[i] = val;
            return;
        }
    free(val);
    c->bad = true;
}

/* Builds the path and query the case asks for and signs it. */
static void case_sign(sv_case *c)
{
    if (c->bad) {
        printf("%s ERR malformed case\n", c->id);
        return;
    }
    pq_buf path, query;
    pq_buf_init(&path);
    pq_buf_init(&query);
    bool ok = true;
    if (c->has_key)
        ok = !pq_buf_cat(&path, c->pathpre.data ? c->pathpre.data : "") &&
             !pq_url_encode(&path, c->key.data ? c->key.data : "", c->key.len, true);
    else if (c->field[F_PATH])
        ok = !pq_buf_cat(&path, c->field[F_PATH]);
    if (ok && c->field[F_QUERY]) ok = !pq_buf_cat(&query, c->field[F_QUERY]);
    if (ok && c->qenc.len) ok = !(query.len && pq_buf_cat(&query, "&")) && !pq_buf_cat(&query, c->qenc.data);
    if (!ok) {
        printf("%s ERR out of memory\n", c->id);
    } else {
        pq_sigv4_request rq = {
            .method = c->field[F_METHOD],
            .host = c->field[F_HOST],
            .path = path.data,
            .query = query.data,
            .headers = c->hdr,
            .n_headers = c->n_hdr,
            .payload_hash = c->field[F_PAYLOAD],
            .region = c->field[F_REGION],
            .service = c->field[F_SERVICE],
            .access_key = c->field[F_AK],
            .secret_key = c->field[F_SK],
            .session_token = c->field[F_TOKEN],
            .amz_date = c->field[F_DATE],
        };
        pq_sigv4_result res;
        pq_error err = {0};
        if (pq_sigv4_sign(&rq, &res, &err) == PQ_OK)
            printf("%s OK %s\t%s\t%s\t%s?%s\n", c->id, res.authorization, res.amz_date, res.content_sha256,
                   path.data ? path.data : "", query.data ? query.data : "");
        else
            printf("%s ERR %s\n", c->id, err.msg);
    }
    pq_buf_free(&path);
    pq_buf_free(&query);
}

int main(void)
{
    char *line = malloc(MAX_LINE);
    if (!line) return 2;
    sv_case c;
    memset(&c, 0, sizeof c);
    bool in_case = false;
    int rc = 0;
    while (fgets(line, MAX_LINE, stdin)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = '\0';
        else if (!feof(stdin)) {
            fprintf(stderr, "sigv4_cases: line too long\n");
            rc = 2;
            break;
        }
        char *sp = strchr(line, ' ');
        const char *v = sp ? sp + 1 : "";
        if (sp) *sp = '\0';
        if (!strcmp(line, "case")) {
            if (in_case) case_free(&c);
            snprintf(c.id, sizeof c.id, "%s", v);
            in_case = true;
        } else if (!in_case) {
            fprintf(stderr, "sigv4_cases: '%s' outside a case\n", line);
            rc = 2;
            break;
        } else if (!strcmp(line, "end")) {
            case_sign(&c);
            case_free(&c);
            in_case = false;
        } else {
            case_line(&c, line, v);
        }
    }
    if (in_case) case_free(&c);
    free(line);
    if (fflush(stdout) != 0) rc = 2;
    return rc;
}
