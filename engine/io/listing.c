#include "listing.h"
#include "numfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "http.h"

/* Hands one entry on unless its name cannot be a path component. */
static int emit(pq_listing_cb cb, void *ctx, const pq_listing_entry *e, pq_error *err)
{
    const char *n = e->name;
    if (!n[0] || !strcmp(n, ".") || !strcmp(n, "..") || strchr(n, '/')) return 0;
    return cb(ctx, e, err);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* Appends code point u as UTF-8; false when it does not fit. */
static bool put_utf8(char *out, size_t cap, size_t *k, unsigned u)
{
    if (*k + 5 > cap) return false;
    if (u < 0x80) {
        out[(*k)++] = (char)u;
    } else if (u < 0x800) {
        out[(*k)++] = (char)(0xC0 | u >> 6);
        out[(*k)++] = (char)(0x80 | (u & 63));
    } else if (u < 0x10000) {
        out[(*k)++] = (char)(0xE0 | u >> 12);
        out[(*k)++] = (char)(0x80 | ((u >> 6) & 63));
        out[(*k)++] = (char)(0x80 | (u & 63));
    } else {
        out[(*k)++] = (char)(0xF0 | u >> 18);
        out[(*k)++] = (char)(0x80 | ((u >> 12) & 63));
        out[(*k)++] = (char)(0x80 | ((u >> 6) & 63));
        out[(*k)++] = (char)(0x80 | (u & 63));
    }
    return true;
}

/* ------------------------------------------------------------------ JSON */

/* Longest entry name taken from a JSON listing (a path component; every
 * file system here keeps names far shorter). */
#define LISTING_NAME_MAX 4095

/* One element of the array: {"name":"x","type":"directory"|"file",
 * "mtime":"...","size":N}; other keys and types (nginx's "other" for sockets
 * and such) are skipped, and so is a name holding a NUL (\u0000: no file
 * name does).  Returns what emit returns, or PQ_ERR. */
static int json_entry(const json_t *obj, size_t index, const char *what, pq_listing_cb cb, void *ctx, pq_error *err)
{
    if (!json_is_object(obj))
        return pq_fail(err, PQ_E_IO, "%s: the JSON listing's entry %zu is not an object", what, index);
    const json_t *name = json_object_get(obj, "name"), *type = json_object_get(obj, "type");
    const json_t *mtime = json_object_get(obj, "mtime"), *size = json_object_get(obj, "size");
    if (!json_is_string(type)) return 0;
    bool is_dir = !strcmp(json_string_value(type), "directory"), is_file = !strcmp(json_string_value(type), "file");
    if (!is_dir && !is_file) return 0;
    if (!json_is_string(name))
        return pq_fail(err, PQ_E_IO, "%s: the JSON listing's entry %zu has no \"name\" string", what, index);
    size_t name_len = json_string_length(name);
    if (name_len > LISTING_NAME_MAX)
        return pq_fail(err, PQ_E_IO, "%s: the JSON listing's entry %zu has a name over %d bytes", what, index,
                       LISTING_NAME_MAX);
    if (strlen(json_string_value(name)) != name_len) return 0;
    pq_listing_entry e = {.name = json_string_value(name), .etag = "", .is_dir = is_dir};
    if (json_is_string(mtime)) e.mtime = pq_http_parse_date(json_string_value(mtime));
    if (json_is_integer(size) && json_integer_value(size) >= 0) {
        e.size = (uint64_t)json_integer_value(size);
        e.has_size = true;
    }
    return emit(cb, ctx, &e, err);
}

/* nginx's autoindex_format json: an array of entries, parsed by jansson
 * (a parse error names its line, column and what jansson found wrong). */
static int parse_json(const char *p, const char *end, const char *what, pq_listing_cb cb, void *ctx, pq_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(p, (size_t)(end - p), JSON_ALLOW_NUL, &jerr);
    if (!root)
        return pq_fail(err, PQ_E_IO, "%s: bad JSON listing: %s (line %d, column %d)", what, jerr.text, jerr.line,
                       jerr.column);
    int rc = PQ_OK;
    if (!json_is_array(root)) {
        rc = pq_fail(err, PQ_E_IO, "%s: not a JSON listing (not an array)", what);
    } else {
        for (size_t i = 0; i < json_array_size(root); i++) {
            int r = json_entry(json_array_get(root, i), i, what, cb, ctx, err);
            if (r != 0) {
                rc = r > 0 ? PQ_OK : PQ_ERR;
                break;
            }
        }
    }
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------------ HTML */

/* Every href="NAME" or href='NAME' that is a plain relative name. */
static int parse_html(const char *p, const char *end, pq_listing_cb cb, void *ctx, pq_error *err)
{
    char name[4096];
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}, {"&#x27;", '\''}};
    while (p < end) {
        const char *h = memmem(p, (size_t)(end - p), "href=", 5);
        if (!h) break;
        p = h + 5;
        if (p >= end || (*p != '"' && *p != '\'')) continue;
        char q = *p++;
        const char *e = memchr(p, q, (size_t)(end - p));
        if (!e) break;
        size_t n = (size_t)(e - p);
        const char *link = p;
        p = e + 1;
        if (n == 0 || n >= sizeof name || *link == '?' || *link == '/' || *link == '#' || memchr(link, ':', n)) continue;
        /* HTML entities, then percent escapes. */
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            bool done = false;
            for (size_t j = 0; j < sizeof ents / sizeof ents[0] && !done; j++) {
                size_t el = strlen(ents[j].ent);
                if (n - i >= el && !memcmp(link + i, ents[j].ent, el)) {
                    name[k++] = ents[j].c;
                    i += el - 1;
                    done = true;
                }
            }
            if (!done) name[k++] = link[i];
        }
        k = pq_url_decode(name, k);
        name[k] = '\0';
        pq_listing_entry ent = {.name = name, .etag = ""};
        if (k > 0 && name[k - 1] == '/') {
            ent.is_dir = true;
            name[--k] = '\0';
        }
        if (strlen(name) != k) continue; /* a %00 */
        int rc = emit(cb, ctx, &ent, err);
        if (rc != 0) return rc > 0 ? PQ_OK : PQ_ERR;
    }
    return PQ_OK;
}

int pq_listing_parse_http(const char *body, size_t len, const char *content_type, const char *what,
                          pq_listing_cb cb, void *ctx, pq_error *err)
{
    const char *p = body, *end = body + len;
    while (p < end && is_space(*p)) p++;
    if ((content_type && strstr(content_type, "json")) || (p < end && *p == '['))
        return parse_json(p, end, what, cb, ctx, err);
    return parse_html(p, end, cb, ctx, err);
}

/* ------------------------------------------------------------------ S3 XML */

static const char *find(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    if (p >= end || (size_t)(end - p) < n) return NULL;
    return memmem(p, (size_t)(end - p), s, n);
}

/* The text of <tag>...</tag> inside [p, end), XML entities decoded. */
static bool tag_text(const char *p, const char *end, const char *tag, char *out, size_t cap)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    const char *a = find(p, end, open);
    if (!a) return false;
    a += strlen(open);
    const char *b = find(a, end, close);
    if (!b) return false;
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    size_t k = 0;
    for (const char *s = a; s < b; s++) {
        if (*s == '&') {
            bool done = false;
            for (size_t j = 0; j < sizeof ents / sizeof ents[0] && !done; j++) {
                size_t el = strlen(ents[j].ent);
                if ((size_t)(b - s) >= el && !memcmp(s, ents[j].ent, el)) {
                    if (k + 1 >= cap) return false;
                    out[k++] = ents[j].c;
                    s += el - 1;
                    done = true;
                }
            }
            if (!done && b - s > 3 && s[1] == '#') {
                /* &#NN; or &#xNN; as UTF-8 */
                unsigned long v = 0;
                const char *d = s + 2;
                bool hex = *d == 'x' || *d == 'X';
                if (hex) d++;
                const char *digits = d;
                while (d < b && d - digits < 8 &&
                       ((*d >= '0' && *d <= '9') || (hex && (((*d | 32) >= 'a' && (*d | 32) <= 'f')))))
                    v = v * (hex ? 16 : 10) + (unsigned long)(*d <= '9' ? *d - '0' : (*d | 32) - 'a' + 10), d++;
                if (d > digits && d < b && *d == ';' && v > 0 && v < 0x110000) {
                    if (!put_utf8(out, cap, &k, (unsigned)v)) return false;
                    s = d;
                    done = true;
                }
            }
            if (done) continue;
        }
        if (k + 1 >= cap) return false;
        out[k++] = *s;
    }
    out[k] = '\0';
    return strlen(out) == k; /* a &#0; or a NUL is no name */
}

int pq_listing_parse_s3(const char *body, size_t len, const char *prefix, const char *what, pq_listing_cb cb,
                        void *ctx, char *next_token, size_t token_cap, bool *stopped, pq_error *err)
{
    const char *p = body, *end = body + len;
    char key[4096], val[256];
    /* An ETag is kept whole, however long (reads compare it byte for byte):
     * room for all of its entry's text. */
    char *etag = NULL;
    size_t etag_cap = 0;
    int rc = PQ_OK;
    size_t plen = strlen(prefix);
    next_token[0] = '\0';
    *stopped = false;
    if (!find(p, end, "<ListBucketResult")) return pq_fail(err, PQ_E_IO, "%s: not a ListObjectsV2 answer", what);
    /* Objects and common prefixes, in the order sent. */
    for (;;) {
        const char *c = find(p, end, "<Contents>"), *cp = find(p, end, "<CommonPrefixes>");
        if (!c && !cp) break;
        bool is_dir = cp && (!c || cp < c);
        const char *a = is_dir ? cp : c;
        const char *b = find(a, end, is_dir ? "</CommonPrefixes>" : "</Contents>");
        if (!b) {
            rc = pq_fail(err, PQ_E_IO, "%s: a listing entry is cut short", what);
            break;
        }
        p = b + 1;
        if (!tag_text(a, b, is_dir ? "Prefix" : "Key", key, sizeof key)) continue;
        size_t kl = strlen(key);
        if (kl < plen || memcmp(key, prefix, plen)) continue;
        char *name = key + plen;
        size_t nl = kl - plen;
        if (is_dir && nl && name[nl - 1] == '/') name[--nl] = '\0';
        pq_listing_entry e = {.name = name, .is_dir = is_dir, .etag = ""};
        if (!is_dir) {
            if (tag_text(a, b, "Size", val, sizeof val)) {
                char *q;
                e.size = strtoull(val, &q, 10);
                e.has_size = q > val && *q == '\0';
            }
            /* ISO 8601 in UTC ("2009-10-12T17:50:30.000Z"): whole seconds
             * kept, as HTTP's Last-Modified gives them. */
            int64_t ns;
            int zoned;
            if (tag_text(a, b, "LastModified", val, sizeof val) &&
                pq_parse_timestamp_ns(val, strlen(val), &ns, &zoned) == 0 && zoned && ns > 0)
                e.mtime = ns / 1000000000;
            size_t need = (size_t)(b - a) + 1;
            if (need > etag_cap) {
                char *grown = realloc(etag, need);
                if (!grown) {
                    rc = pq_fail(err, PQ_E_NOMEM, "%s: out of memory", what);
                    break;
                }
                etag = grown;
                etag_cap = need;
            }
            if (tag_text(a, b, "ETag", etag, etag_cap)) e.etag = etag;
        }
        int k = emit(cb, ctx, &e, err);
        if (k != 0) {
            rc = k < 0 ? PQ_ERR : PQ_OK;
            *stopped = k > 0;
            break;
        }
    }
    free(etag);
    if (rc != PQ_OK || *stopped) return rc;
    if (tag_text(body, end, "IsTruncated", val, sizeof val) && !strcmp(val, "true") &&
        !tag_text(body, end, "NextContinuationToken", next_token, token_cap))
        return pq_fail(err, PQ_E_IO, "%s: a truncated listing without a continuation token", what);
    return PQ_OK;
}

bool pq_xml_text(const char *body, size_t len, const char *tag, char *out, size_t cap)
{
    if (!body || cap == 0 || strlen(tag) > 60) return false;
    return tag_text(body, body + len, tag, out, cap);
}
