/* fuzz_listing: what a remote server sends as a directory listing.  The
 * first byte picks the parser (even: an HTTP index, JSON or HTML by its
 * content; odd: one ListObjectsV2 page under the prefix "t/"); the rest is
 * the body.
 *
 * Every entry handed on has a name that is a path component (not empty, not
 * "." or "..", no '/', no NUL inside its length) and fits in the input (a
 * decoded name is never longer than what encoded it); an S3 entry's size is
 * only claimed when given; a continuation token is NUL-terminated within its
 * buffer.  An error is PQ_E_IO.  Stopping after the first entry (every
 * other input) stops the parse.
 *
 * The text of an S3 answer's <UploadId> or <Code> (by bit 3 of the first
 * byte) is NUL-terminated and no longer than the body.
 *
 * The body is also taken as a URL (up to 4 KiB, to its first NUL): splitting
 * out its credentials leaves it unchanged when it has none, and shorter by
 * at least what was split out (decoded, they are no longer) when it has. */
#include "fuzz_common.h"

#include <stdbool.h>

#include "http.h"
#include "listing.h"

typedef struct seen {
    size_t body_len;
    int n;
    bool stop_first;
} seen;

static int on_entry(void *ctx, const pq_listing_entry *e, pq_error *err)
{
    (void)err;
    seen *s = ctx;
    size_t n = strlen(e->name);
    FUZZ_CHECK(n > 0 && strcmp(e->name, ".") && strcmp(e->name, ".."), "name '%s'", e->name);
    FUZZ_CHECK(!strchr(e->name, '/'), "name '%s' has a slash", e->name);
    FUZZ_CHECK(n <= s->body_len, "name of %zu bytes from %zu bytes", n, s->body_len);
    FUZZ_CHECK(e->etag != NULL, "etag is NULL");
    FUZZ_CHECK(s->n == 0 || !s->stop_first, "an entry after the callback stopped the parse");
    s->n++;
    return s->stop_first ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20)) return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    seen s = {len, 0, (data[0] & 2) != 0};
    pq_error err;
    pq_error_clear(&err);
    int rc;
    if (data[0] & 1) {
        char token[64];
        bool stopped = false;
        rc = pq_listing_parse_s3(body, len, "t/", "fuzz", on_entry, &s, token, sizeof token, &stopped, &err);
        if (rc == PQ_OK) FUZZ_CHECK(memchr(token, 0, sizeof token) != NULL, "token not terminated");
        if (rc == PQ_OK && stopped) FUZZ_CHECK(s.stop_first && s.n == 1, "stopped without being asked");
    } else {
        rc = pq_listing_parse_http(body, len, (data[0] & 4) ? "application/json" : "text/html", "fuzz", on_entry, &s,
                                   &err);
    }
    if (rc != PQ_OK) FUZZ_CHECK(err.cls == PQ_E_IO, "error class %d: %s", (int)err.cls, err.msg);

    /* An element's text (an upload id, an error code): terminated within
     * its buffer, never longer than the body. */
    char text[64];
    if (pq_xml_text(body, len, (data[0] & 8) ? "UploadId" : "Code", text, sizeof text))
        FUZZ_CHECK(memchr(text, 0, sizeof text) && strlen(text) <= len, "element text not terminated or too long");

    /* The body as a URL: its credentials split out, the rest kept. */
    char url[4096];
    size_t n = len < sizeof url - 1 ? len : sizeof url - 1;
    memcpy(url, body, n);
    url[n] = '\0';
    char *clean = NULL, *userpwd = NULL;
    if (pq_url_split_credentials(url, &clean, &userpwd, &err) == PQ_OK) {
        size_t ul = strlen(url), cl = strlen(clean);
        FUZZ_CHECK(userpwd ? cl < ul : !strcmp(clean, url), "clean '%s' of '%s'", clean, url);
        FUZZ_CHECK(!userpwd || strlen(userpwd) <= ul - cl, "credentials longer than what they came from");
        free(clean);
        free(userpwd);
    }
    return 0;
}
