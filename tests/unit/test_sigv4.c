/* SigV4 signing: SHA-256 (FIPS 180-2 examples), HMAC-SHA256 (RFC 4231), the
 * four S3 examples from the AWS "Signature Calculations for the Authorization
 * Header: Transferring Payload in a Single Chunk" page, the signer's own
 * rules (session token, query canonicalization, bounds), and libcrypto's
 * failures reported, not ignored (its allocations made to fail). */
#include <stdlib.h>

#include <openssl/crypto.h>

#include "check.h"
#include "sigv4.h"

static const char *hex_of(const uint8_t d[32])
{
    static char buf[65];
    pq_sha256_hex(d, buf);
    return buf;
}

static const char *sha_hex(const char *s, size_t n)
{
    uint8_t d[32];
    pq_error err = {0};
    CHECK_EQ_INT(pq_sha256(s, n, d, &err), PQ_OK);
    return hex_of(d);
}

static void test_sha256(void)
{
    CHECK_EQ_STR(sha_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK_EQ_STR(sha_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    CHECK_EQ_STR(sha_hex(m448, strlen(m448)),
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    const char *million = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    char *a = malloc(1000000);
    CHECK(a != NULL);
    if (!a) return;
    memset(a, 'a', 1000000);
    CHECK_EQ_STR(sha_hex(a, 1000000), million);

    /* Incremental, in uneven pieces that straddle the 64-byte blocks. */
    pq_sha256_ctx c;
    uint8_t d[32];
    CHECK_EQ_INT(pq_sha256_init(&c, NULL), PQ_OK);
    for (size_t off = 0, step = 1; off < 1000000; step = step % 131 + 7) {
        size_t n = 1000000 - off < step ? 1000000 - off : step;
        pq_sha256_update(&c, a + off, n);
        off += n;
    }
    CHECK_EQ_INT(pq_sha256_final(&c, d, NULL), PQ_OK);
    CHECK_EQ_STR(hex_of(d), million);
    free(a);

    /* Lengths around the padding boundary (55, 56, 63, 64 bytes) agree
     * between one-shot and byte-at-a-time. */
    static const size_t lens[] = {55, 56, 63, 64, 65, 119, 120};
    char buf[128];
    memset(buf, 'x', sizeof buf);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        char one[65];
        CHECK_EQ_INT(pq_sha256(buf, lens[i], d, NULL), PQ_OK);
        pq_sha256_hex(d, one);
        CHECK_EQ_INT(pq_sha256_init(&c, NULL), PQ_OK);
        for (size_t j = 0; j < lens[i]; j++) pq_sha256_update(&c, buf + j, 1);
        CHECK_EQ_INT(pq_sha256_final(&c, d, NULL), PQ_OK);
        CHECK_EQ_STR(hex_of(d), one);
    }
}

static void test_hmac(void)
{
    uint8_t key[131], d[32];

    memset(key, 0x0b, 20);
    CHECK_EQ_INT(pq_hmac_sha256(key, 20, "Hi There", 8, d, NULL), PQ_OK);
    CHECK_EQ_STR(hex_of(d), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");

    const char *data2 = "what do ya want for nothing?";
    CHECK_EQ_INT(pq_hmac_sha256("Jefe", 4, data2, strlen(data2), d, NULL), PQ_OK);
    CHECK_EQ_STR(hex_of(d), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    memset(key, 0xaa, 131);
    const char *data6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    CHECK_EQ_INT(pq_hmac_sha256(key, 131, data6, strlen(data6), d, NULL), PQ_OK);
    CHECK_EQ_STR(hex_of(d), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

    /* The output may be the key (SigV4's chain): case 1 again, in place. */
    memset(key, 0x0b, 32);
    CHECK_EQ_INT(pq_hmac_sha256(key, 20, "Hi There", 8, key, NULL), PQ_OK);
    CHECK_EQ_STR(hex_of(key), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static pq_sigv4_request aws_example(void)
{
    pq_sigv4_request rq = {0};
    rq.method = "GET";
    rq.host = "examplebucket.s3.amazonaws.com";
    rq.path = "/";
    rq.payload_hash = EMPTY_SHA;
    rq.region = "us-east-1";
    rq.service = "s3";
    rq.access_key = "AKIAIOSFODNN7EXAMPLE";
    rq.secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
    rq.amz_date = "20130524T000000Z";
    return rq;
}

/* The signature part of an Authorization value ("" when absent). */
static const char *sig_of(const pq_sigv4_result *r)
{
    const char *s = strstr(r->authorization, "Signature=");
    return s ? s + 10 : "";
}

/* The SignedHeaders list, copied out of an Authorization value. */
static const char *signed_of(const pq_sigv4_result *r)
{
    static char buf[512];
    const char *s = strstr(r->authorization, "SignedHeaders=");
    if (!s) return "";
    s += 14;
    size_t n = strcspn(s, ",");
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

static void test_aws_examples(void)
{
    pq_sigv4_result r;
    pq_error err = {0};

    /* GET Object with a Range header. */
    pq_sigv4_request rq = aws_example();
    pq_sigv4_header range = {"Range", "bytes=0-9"};
    rq.path = "/test.txt";
    rq.headers = &range;
    rq.n_headers = 1;
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(r.authorization,
                 "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                 "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                 "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    CHECK_EQ_STR(r.amz_date, "20130524T000000Z");
    CHECK_EQ_STR(r.content_sha256, EMPTY_SHA);

    /* GET Bucket (List Objects). */
    rq = aws_example();
    rq.query = "max-keys=2&prefix=J";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(sig_of(&r), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
    CHECK_EQ_STR(signed_of(&r), "host;x-amz-content-sha256;x-amz-date");
    /* Order in the request does not matter. */
    rq.query = "prefix=J&max-keys=2";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(sig_of(&r), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");

    /* GET Bucket Lifecycle: a parameter without '=' signs as "lifecycle=". */
    rq = aws_example();
    rq.query = "lifecycle";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(sig_of(&r), "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    CHECK_EQ_STR(signed_of(&r), "host;x-amz-content-sha256;x-amz-date");

    /* PUT Object: an encoded path, headers in mixed case and order. */
    rq = aws_example();
    pq_sigv4_header put_hdrs[] = {{"x-amz-storage-class", "REDUCED_REDUNDANCY"},
                                  {"Date", "Fri, 24 May 2013 00:00:00 GMT"}};
    rq.method = "PUT";
    rq.path = "/test%24file.text";
    rq.headers = put_hdrs;
    rq.n_headers = 2;
    rq.payload_hash = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
    CHECK_EQ_STR(sha_hex("Welcome to Amazon S3.", 21), rq.payload_hash);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(sig_of(&r), "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
    CHECK_EQ_STR(signed_of(&r), "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
    CHECK_EQ_STR(r.content_sha256, rq.payload_hash);

    /* Header values are trimmed and inner space runs collapsed before signing. */
    pq_sigv4_header spaced[] = {{"X-AMZ-STORAGE-CLASS", "  REDUCED_REDUNDANCY "},
                                {"date", "Fri,  24 May   2013 00:00:00 GMT"}};
    rq.headers = spaced;
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(sig_of(&r), "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

static void test_signer_rules(void)
{
    pq_sigv4_result r, r2;
    pq_error err = {0};

    /* A session token is signed as x-amz-security-token.  The signature is
     * from an independent implementation (Node crypto, the AWS algorithm). */
    pq_sigv4_request rq = aws_example();
    rq.session_token = "FQoGZXIvYXdzEXAMPLETOKEN";
    rq.query = "list-type=2&prefix=a%2Fb";
    rq.payload_hash = "UNSIGNED-PAYLOAD";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
    CHECK_EQ_STR(signed_of(&r), "host;x-amz-content-sha256;x-amz-date;x-amz-security-token");
    CHECK_EQ_STR(sig_of(&r), "5906631cec7407540a506feb5d24d60061aeeeb9ee5a1ae2d96cd0221582bff8");
    CHECK_EQ_STR(r.content_sha256, "UNSIGNED-PAYLOAD");

    /* Query canonicalization sorts, decodes and re-encodes. */
    rq.query = "prefix=a/b&list-type=2";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r2, &err), PQ_OK);
    CHECK_EQ_STR(r2.authorization, r.authorization);
    rq.query = "prefix=a%2fb&list-type=2";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r2, &err), PQ_OK);
    CHECK_EQ_STR(r2.authorization, r.authorization);
    rq.query = "prefix=a%2Fc&list-type=2";
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r2, &err), PQ_OK);
    CHECK(strcmp(r2.authorization, r.authorization) != 0);

    /* Without a token the header is not signed. */
    rq.session_token = NULL;
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r2, &err), PQ_OK);
    CHECK_EQ_STR(signed_of(&r2), "host;x-amz-content-sha256;x-amz-date");

    /* amz_date NULL: the current UTC time, in the same shape. */
    rq.amz_date = NULL;
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r2, &err), PQ_OK);
    CHECK_EQ_INT(strlen(r2.amz_date), 16);
    CHECK(r2.amz_date[8] == 'T' && r2.amz_date[15] == 'Z');
    CHECK(strstr(r2.authorization, "/us-east-1/s3/aws4_request") != NULL);
}

static void test_bounds(void)
{
    pq_sigv4_result r;
    pq_error err;
    size_t big = 200000;
    char *s = malloc(big + 1);
    CHECK(s != NULL);
    if (!s) return;
    memset(s, 'p', big);
    s[big] = '\0';

    /* Huge path, query, header value, header name, access key. */
    pq_sigv4_request rq = aws_example();
    rq.path = s;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);

    rq = aws_example();
    rq.query = s;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);

    pq_sigv4_header h = {"x-big", s};
    rq = aws_example();
    rq.headers = &h;
    rq.n_headers = 1;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);

    /* A 2000-byte name fits the canonical request but not Authorization. */
    s[2000] = '\0';
    h.name = s;
    h.value = "v";
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);

    rq = aws_example();
    rq.access_key = s;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    free(s);

    /* Malformed input. */
    rq = aws_example();
    rq.amz_date = "2013-05-24";
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);

    pq_sigv4_header bad[] = {{"x-a", "v\r\nx-b: injected"}, {"Host", "evil"}};
    rq = aws_example();
    rq.headers = &bad[0];
    rq.n_headers = 1;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
    rq.headers = &bad[1];
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);

    rq = aws_example();
    rq.secret_key = NULL;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_USAGE);
}

/* libcrypto's allocator, which fails every allocation while set. */
static int crypto_allocs_fail;

static void *crypto_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    return crypto_allocs_fail ? NULL : malloc(n);
}

static void *crypto_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file, (void)line;
    return crypto_allocs_fail ? NULL : realloc(p, n);
}

static void crypto_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    free(p);
}

static void test_crypto_failures(void)
{
    uint8_t d[32];
    pq_error err;
    /* libcrypto set up beforehand: it initializes on first use, and does not
     * try again after an initialization that failed. */
    CHECK_EQ_INT(pq_hmac_sha256("key", 3, "abc", 3, d, NULL), PQ_OK);

    crypto_allocs_fail = 1;
    pq_sha256_ctx c;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sha256_init(&c, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOMEM);
    CHECK_EQ_STR(err.msg, "sha256: out of memory");
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sha256("abc", 3, d, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOMEM);
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_hmac_sha256("key", 3, "abc", 3, d, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOMEM);
    CHECK_EQ_STR(err.msg, "hmac-sha256: out of memory");
    pq_sigv4_request rq = aws_example();
    pq_sigv4_result r;
    pq_error_clear(&err);
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_ERR);
    CHECK_EQ_INT(err.cls, PQ_E_NOMEM);
    CHECK_EQ_STR(err.msg, "sigv4: sha256: out of memory");
    crypto_allocs_fail = 0;

    /* Nothing left behind: the same calls work again. */
    CHECK_EQ_STR(sha_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK_EQ_INT(pq_sigv4_sign(&rq, &r, &err), PQ_OK);
}

int main(void)
{
    /* Before libcrypto allocates anything, or it keeps its own allocator. */
    CHECK_EQ_INT(CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free), 1);
    test_sha256();
    test_hmac();
    test_aws_examples();
    test_signer_rules();
    test_bounds();
    test_crypto_failures();
    return check_report();
}
