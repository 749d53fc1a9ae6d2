/* Directory listings as remote servers send them, parsed.
 *
 * Pure functions over a response body (no I/O), so that what an untrusted
 * server sends can be fuzzed and unit-tested: nginx's autoindex JSON, an HTML
 * index of links, and S3's ListObjectsV2 XML.  Names come out decoded (JSON
 * escapes, HTML entities, percent escapes, XML entities); an entry whose name
 * is empty, "." or "..", or holds a '/' is never passed on. */
#ifndef PQ_LISTING_H
#define PQ_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct pq_listing_entry {
    const char *name;            /* one path component */
    bool is_dir;
    bool has_size;
    uint64_t size;
    int64_t mtime;               /* Unix seconds; 0 when not given */
    const char *etag;            /* as sent (quotes kept); "" when not given */
} pq_listing_entry;

/* Returns 0 to go on, 1 to stop, PQ_ERR (with err set) to fail. */
typedef int (*pq_listing_cb)(void *ctx, const pq_listing_entry *e, pq_error *err);

/* An HTTP directory index: JSON (nginx autoindex_format json) when the
 * content type says so or the body starts with '[', else HTML links
 * (<a href="NAME">, a trailing '/' for a directory; absolute, parent and
 * query links skipped).  `what` names the listing in messages. */
int pq_listing_parse_http(const char *body, size_t len, const char *content_type, const char *what,
                          pq_listing_cb cb, void *ctx, pq_error *err);

/* One page of a ListObjectsV2 answer for `prefix` (ending in '/', or ""):
 * objects and common prefixes one level below it, in the order sent.  When
 * the answer is truncated, next_token receives its continuation token (else
 * ""); *stopped says the callback stopped. */
int pq_listing_parse_s3(const char *body, size_t len, const char *prefix, const char *what, pq_listing_cb cb,
                        void *ctx, char *next_token, size_t token_cap, bool *stopped, pq_error *err);

/* The text of the first <tag>...</tag> in an S3 XML answer (an upload id,
 * an error code), entities decoded; false when there is none or it does
 * not fit in cap bytes with its NUL. */
bool pq_xml_text(const char *body, size_t len, const char *tag, char *out, size_t cap);

#endif
