/* AWS Signature Version 4 request signing for S3, and the SHA-256 and
 * HMAC-SHA256 it needs, computed by OpenSSL's libcrypto (EVP).
 *
 * The caller builds the request (method, host, encoded path and query, the
 * extra headers it will send), pq_sigv4_sign() returns the three header values
 * to add: Authorization, x-amz-date and x-amz-content-sha256 (and the caller
 * sends x-amz-security-token itself when it passed a session token).  Nothing
 * here prints or logs keys, and key material is wiped after use. */
#ifndef PQ_SIGV4_H
#define PQ_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* SHA-256 (FIPS 180-4), incremental and one shot.  These fail only when
 * libcrypto does: out of memory (PQ_E_NOMEM), or a libcrypto configured
 * without SHA-256 (PQ_E_UNSUPPORTED, with its reason). */
typedef struct pq_sha256_ctx {
    struct evp_md_ctx_st *md; /* libcrypto's EVP_MD_CTX, by its struct tag: no OpenSSL header here */
    bool failed;              /* an update failed: final reports it */
} pq_sha256_ctx;

int pq_sha256_init(pq_sha256_ctx *c, pq_error *err);
/* A failure is kept in c and reported by pq_sha256_final. */
void pq_sha256_update(pq_sha256_ctx *c, const void *data, size_t len);
/* Frees what init made, whether it succeeds or not: call it once after every
 * successful init. */
int pq_sha256_final(pq_sha256_ctx *c, uint8_t out[32], pq_error *err);
int pq_sha256(const void *data, size_t len, uint8_t out[32], pq_error *err);

/* HMAC-SHA256 (RFC 2104); keys longer than 64 bytes are hashed first.  out
 * may be key (the SigV4 key chain feeds each key into the next). */
int pq_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len, uint8_t out[32],
                   pq_error *err);

/* 32 bytes -> 64 lowercase hex digits and a NUL. */
void pq_sha256_hex(const uint8_t digest[32], char out[65]);

typedef struct pq_sigv4_header {
    const char *name;
    const char *value;
} pq_sigv4_header;

typedef struct pq_sigv4_request {
    const char *method;          /* "GET", "HEAD", "PUT" */
    const char *host;            /* Host header value, with ":port" when not default */
    const char *path;            /* URI path as sent, already percent-encoded; NULL/"": "/" */
    const char *query;           /* raw query string as sent, or NULL/"" */
    const pq_sigv4_header *headers; /* extra headers to sign (e.g. range), any case */
    int n_headers;
    const char *payload_hash;    /* hex sha256 of the body, or "UNSIGNED-PAYLOAD" */
    const char *region, *service; /* "us-east-1", "s3" */
    const char *access_key, *secret_key, *session_token; /* token may be NULL */
    const char *amz_date;        /* "20130524T000000Z"; NULL: now (UTC) */
} pq_sigv4_request;

typedef struct pq_sigv4_result {
    char authorization[1024];    /* value of the Authorization header */
    char amz_date[17];           /* value of x-amz-date */
    char content_sha256[65];     /* value of x-amz-content-sha256 (= payload_hash) */
} pq_sigv4_result;

/* Sign one request.  Extra headers may not repeat host, x-amz-date,
 * x-amz-content-sha256 or x-amz-security-token (those come from the request
 * fields); repeated extra names are joined with ',' as AWS specifies.  Query
 * parameters are percent-decoded and re-encoded to AWS's rules ('+' is taken
 * as a literal plus, so send spaces as %20).  Missing fields, CR/LF in header
 * text, a malformed amz_date or anything too long for the fixed buffers fail
 * with PQ_E_USAGE; a failed hash or HMAC as pq_sha256 says. */
int pq_sigv4_sign(const pq_sigv4_request *rq, pq_sigv4_result *out, pq_error *err);

#endif
