/* Remote listings (engine/listing): nginx autoindex JSON, HTML link
 * indexes and ListObjectsV2 pages parse to the entries a server meant, with
 * names decoded, and nothing that is not one path component.  Also the
 * credentials of an http(s) URL, split out of it, and HTTP dates
 * (engine/http). */
#include "check.h"
#include "http.h"
#include "listing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct got {
    char text[4096];             /* "name|d|size|mtime|etag;" per entry */
    int n, stop_after;
} got;

static int collect(void *ctx, const pq_listing_entry *e, pq_error *err)
{
    (void)err;
    got *g = ctx;
    size_t used = strlen(g->text);
    char size[32] = "-";
    if (e->has_size) snprintf(size, sizeof size, "%llu", (unsigned long long)e->size);
    snprintf(g->text + used, sizeof g->text - used, "%s|%s|%s|%lld|%s;", e->name, e->is_dir ? "d" : "f", size,
             (long long)e->mtime, e->etag);
    return ++g->n == g->stop_after ? 1 : 0;
}

static int http(const char *body, const char *ctype, got *g)
{
    memset(g, 0, sizeof *g);
    pq_error err;
    return pq_listing_parse_http(body, strlen(body), ctype, "test", collect, g, &err);
}

static void test_json(void)
{
    got g;
    const char *nginx = "[\n{ \"name\":\"dt=2024-01-01\", \"type\":\"directory\", \"mtime\":\"Sun, 29 Nov 2026 13:54:24 GMT\" },\n"
                        "{ \"name\":\"a\\u00e9\\\"b \\ud83d\\ude00.parquet\", \"type\":\"file\", \"mtime\":\"Sun, 29 Nov 2026 13:54:24 GMT\", \"size\":102935507 },\n"
                        "{ \"name\":\"sock\", \"type\":\"other\" },\n"
                        "{ \"name\":\"..\", \"type\":\"directory\" },\n"
                        "{ \"extra\": {\"nested\": [1, \"]}\"]}, \"name\":\"x.parquet\", \"type\":\"file\", \"size\": 0 }\n]";
    CHECK_EQ_INT(http(nginx, "application/json", &g), PQ_OK);
    CHECK_EQ_STR(g.text, "dt=2024-01-01|d|-|1795960464|;a\xc3\xa9\"b \xf0\x9f\x98\x80.parquet|f|102935507|1795960464|;"
                         "x.parquet|f|0|0|;");
    /* Sniffed as JSON by its first byte whatever the content type says. */
    CHECK_EQ_INT(http(" [{\"name\":\"y\",\"type\":\"file\",\"size\":3}]", "text/plain", &g), PQ_OK);
    CHECK_EQ_STR(g.text, "y|f|3|0|;");
    /* Stopping after one entry. */
    memset(&g, 0, sizeof g);
    g.stop_after = 1;
    pq_error err;
    CHECK_EQ_INT(pq_listing_parse_http(nginx, strlen(nginx), "application/json", "t", collect, &g, &err), PQ_OK);
    CHECK_EQ_INT(g.n, 1);
    /* Cut short, or not a listing: errors naming it. */
    CHECK_EQ_INT(http("[{\"name\":\"y\",\"type\":\"file\"", "application/json", &g), PQ_ERR);
    CHECK_EQ_INT(http("{\"name\":1}", "application/json", &g), PQ_ERR);
    CHECK_EQ_INT(http("[{\"name\":\"bad \\u12\"}]", "application/json", &g), PQ_ERR);
    /* Each error names the listing and what was wrong (jansson's words for
     * a parse error, with its place). */
    const char *bad[][2] = {
        {"[{\"name\":\"y\",\"type\":\"file\"", "t: bad JSON listing: "},
        {"[{\"name\":\"bad \\u12\"}]", "invalid escape"},
        {"{\"name\":1}", "t: not a JSON listing (not an array)"},
        {"[1]", "t: the JSON listing's entry 0 is not an object"},
        {"[{\"type\":\"file\"},{\"name\":2,\"type\":\"file\"}]", "entry 0 has no \"name\" string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&g, 0, sizeof g);
        pq_error_clear(&err);
        CHECK_EQ_INT(pq_listing_parse_http(bad[i][0], strlen(bad[i][0]), "application/json", "t", collect, &g, &err),
                     PQ_ERR);
        CHECK(strstr(err.msg, bad[i][1]) != NULL);
        CHECK_EQ_INT(err.cls, PQ_E_IO);
    }
    /* A name holding a NUL is no file's name: left out, the rest kept. */
    const char nul[] = "[{\"name\":\"a\\u0000b\",\"type\":\"file\"},{\"name\":\"c\",\"type\":\"file\",\"size\":1}]";
    CHECK_EQ_INT(http(nul, "application/json", &g), PQ_OK);
    CHECK_EQ_STR(g.text, "c|f|1|0|;");
}

static void test_html(void)
{
    got g;
    const char *idx = "<html><body><pre><a href=\"../\">../</a>\n<a href=\"dt%3D2024-01-01/\">dt=2024-01-01/</a>\n"
                      "<a href='x%20y&amp;z.parquet'>x y&amp;z</a> <a href=\"/abs/\">a</a> <a href=\"?C=N;O=D\">s</a>"
                      "<a href=\"http://elsewhere/x\">e</a><a href=\"a/b.parquet\">n</a><a href=\"nul%00.parquet\">z</a>"
                      "<a href=\"./\">.</a><a href=\"part-0.parquet\">p</a></pre></body></html>";
    CHECK_EQ_INT(http(idx, "text/html", &g), PQ_OK);
    CHECK_EQ_STR(g.text, "dt=2024-01-01|d|-|0|;x y&z.parquet|f|-|0|;part-0.parquet|f|-|0|;");
    CHECK_EQ_INT(http("", "text/html", &g), PQ_OK);
    CHECK_EQ_INT(g.n, 0);
}

static int s3(const char *body, const char *prefix, got *g, char *token, bool *stopped)
{
    pq_error err;
    return pq_listing_parse_s3(body, strlen(body), prefix, "test", collect, g, token, 64, stopped, &err);
}

static void test_s3(void)
{
    got g;
    memset(&g, 0, sizeof g);
    char token[64];
    bool stopped;
    const char *page =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<Name>b</Name><Prefix>t/</Prefix><IsTruncated>true</IsTruncated>"
        "<NextContinuationToken>tok&amp;1</NextContinuationToken>"
        "<Contents><Key>t/</Key><Size>0</Size></Contents>"
        "<Contents><Key>t/a&amp;b&#233;&#x1F600;.parquet</Key><ETag>&quot;abc&quot;</ETag><Size>12</Size></Contents>"
        "<CommonPrefixes><Prefix>t/dt=2024-01-01/</Prefix></CommonPrefixes>"
        "<Contents><Key>other/x.parquet</Key><Size>5</Size></Contents>"
        "<Contents><Key>t/no-size</Key><Size>x</Size></Contents></ListBucketResult>";
    CHECK_EQ_INT(s3(page, "t/", &g, token, &stopped), PQ_OK);
    CHECK_EQ_STR(g.text, "a&b\xc3\xa9\xf0\x9f\x98\x80.parquet|f|12|0|\"abc\";dt=2024-01-01|d|-|0|;no-size|f|-|0|;");
    CHECK_EQ_STR(token, "tok&1");
    CHECK(!stopped);
    memset(&g, 0, sizeof g);
    g.stop_after = 1;
    CHECK_EQ_INT(s3(page, "t/", &g, token, &stopped), PQ_OK);
    CHECK(stopped);
    CHECK_EQ_INT(g.n, 1);
    memset(&g, 0, sizeof g);
    CHECK_EQ_INT(s3("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>", "", &g, token, &stopped),
                 PQ_OK);
    CHECK_EQ_STR(token, "");
    CHECK_EQ_INT(s3("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", "", &g, token, &stopped),
                 PQ_ERR);
    CHECK_EQ_INT(s3("<Error><Code>AccessDenied</Code></Error>", "", &g, token, &stopped), PQ_ERR);
    CHECK_EQ_INT(s3("<ListBucketResult><Contents><Key>a</Key>", "", &g, token, &stopped), PQ_ERR);
}

/* Credentials in a URL are split out (decoded) and never left in it. */
static void test_credentials(void)
{
    char *clean, *up;
    pq_error err;
    CHECK_EQ_INT(pq_url_split_credentials("https://alice:pa%40ss%3A1@host:8443/lake/x@y", &clean, &up, &err), PQ_OK);
    CHECK_EQ_STR(clean, "https://host:8443/lake/x@y");
    CHECK_EQ_STR(up, "alice:pa@ss:1");
    free(clean);
    free(up);
    CHECK_EQ_INT(pq_url_split_credentials("http://bob@host/", &clean, &up, &err), PQ_OK);
    CHECK_EQ_STR(clean, "http://host/");
    CHECK_EQ_STR(up, "bob:");
    free(clean);
    free(up);
    CHECK_EQ_INT(pq_url_split_credentials("http://host/a@b", &clean, &up, &err), PQ_OK);
    CHECK_EQ_STR(clean, "http://host/a@b");
    CHECK(up == NULL);
    free(clean);
}

/* The three date forms of RFC 9110 section 5.6.7, parsed without libcurl
 * (which is loaded only for requests); anything else is 0, "unknown". */
static void test_http_dates(void)
{
    /* 784111777: RFC 9110's example instant, 1994-11-06 08:49:37 UTC. */
    CHECK_EQ_INT(pq_http_parse_date("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    CHECK_EQ_INT(pq_http_parse_date("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    CHECK_EQ_INT(pq_http_parse_date("Sun Nov  6 08:49:37 1994"), 784111777);
    CHECK_EQ_INT(pq_http_parse_date("Sun, 29 Nov 2026 13:54:24 GMT"), 1795960464);
    CHECK_EQ_INT(pq_http_parse_date("Tue, 29 Feb 2028 23:59:59 GMT"), 1835481599);
    CHECK_EQ_INT(pq_http_parse_date("Thu, 01 Jan 1970 00:00:01 GMT"), 1);
    const char *bad[] = {"", "yesterday", "Sun, 06 Nov 1994 08:49:37 CET", "Sun, 06 Xyz 1994 08:49:37 GMT",
                         "Sun, 32 Nov 1994 08:49:37 GMT", "Sat, 30 Feb 2027 00:00:00 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
                         "Sun, 06 Nov 1994 08:49:37 GMT trailing", "Sun, 06 Nov 1994 08:49", "2024-01-01T00:00:00Z"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) CHECK_EQ_INT(pq_http_parse_date(bad[i]), 0);
    CHECK_EQ_INT(pq_http_parse_date(NULL), 0);
}

int main(void)
{
    test_credentials();
    test_http_dates();
    test_json();
    test_html();
    test_s3();
    return check_report();
}
