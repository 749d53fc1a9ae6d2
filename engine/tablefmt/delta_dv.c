/* Delta Lake deletion vectors (PROTOCOL.md, "Deletion Vector Format"):
 * the row indexes a descriptor deletes, decoded with CRoaring.
 *
 *   storageType u: <random prefix><z85 uuid, 20 chars> -> the file
 *                  <table>/<prefix>/deletion_vector_<uuid>.bin
 *   storageType i: the z85 of the bitmap bytes, inline
 *   storageType p: an absolute path (refused: outside the table)
 *
 * A file holds a version byte (1), then per vector: its size (big endian
 * uint32), the bytes, their CRC-32 (big endian).  The bytes: a magic number
 * (1681511377, little endian), then a 64-bit roaring bitmap in the portable
 * format: a bucket count (uint64), then per bucket its key (the high 32
 * bits, uint32) and a 32-bit portable roaring bitmap, keys ascending. */
#include "tablefmt.h"

#include <stdlib.h>
#include <string.h>

#include <roaring/roaring.h>
#include <zlib.h>

#include "delta_log.h"
#include "mem.h"

#define DV_MAGIC 1681511377u
/* Rows a vector may delete here (8 bytes each in memory). */
#define DV_MAX_ROWS ((uint64_t)1 << 28)

static const char z85_chars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

int pq_z85_decode(const char *s, size_t n, uint8_t *out)
{
    if (n % 5) return -1;
    for (size_t i = 0; i < n; i += 5) {
        uint64_t v = 0;
        for (int k = 0; k < 5; k++) {
            const char *c = s[i + k] ? strchr(z85_chars, s[i + k]) : NULL;
            if (!c) return -1;
            v = v * 85 + (uint64_t)(c - z85_chars);
        }
        if (v > UINT32_MAX) return -1;
        for (int k = 0; k < 4; k++) out[i / 5 * 4 + (size_t)k] = (uint8_t)(v >> (24 - 8 * k));
    }
    return 0;
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

int pq_delta_dv_decode(const uint8_t *p, size_t len, uint64_t cardinality, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err)
{
    *rows = NULL;
    *n_rows = 0;
    if (len < 12 || load_le32(p) != DV_MAGIC)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector: not a RoaringBitmapArray (magic number)");
    uint64_t buckets = (uint64_t)load_le32(p + 4) | (uint64_t)load_le32(p + 8) << 32;
    if (buckets > (len - 12) / 4)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector: %llu buckets in %zu bytes", (unsigned long long)buckets, len);
    if (cardinality > DV_MAX_ROWS)
        return pq_fail(err, PQ_E_UNSUPPORTED, "deletion vector: %llu rows (more than %llu are not read)",
                       (unsigned long long)cardinality, (unsigned long long)DV_MAX_ROWS);
    uint64_t *out = malloc(sizeof *out * (size_t)(cardinality + 1));
    if (!out) return PQ_NOMEM(err);
    size_t at = 12;
    uint64_t n = 0;
    int64_t last_key = -1;
    for (uint64_t b = 0; b < buckets; b++) {
        if (len - at < 4) goto cut;
        uint32_t key = load_le32(p + at);
        at += 4;
        if (key & 0x80000000u || (int64_t)key <= last_key) {
            free(out);
            return pq_fail(err, PQ_E_CORRUPT, "deletion vector: bucket key %u out of order or negative", key);
        }
        last_key = key;
        size_t size = roaring_bitmap_portable_deserialize_size((const char *)p + at, len - at);
        roaring_bitmap_t *bm = size ? roaring_bitmap_portable_deserialize_safe((const char *)p + at, len - at) : NULL;
        if (!bm) goto cut;
        at += size;
        uint64_t count = roaring_bitmap_get_cardinality(bm);
        if (count > cardinality - n) {
            roaring_bitmap_free(bm);
            free(out);
            return pq_fail(err, PQ_E_CORRUPT, "deletion vector: more rows than its cardinality (%llu)",
                           (unsigned long long)cardinality);
        }
        roaring_uint32_iterator_t it;
        roaring_init_iterator(bm, &it);
        for (; it.has_value; roaring_advance_uint32_iterator(&it)) out[n++] = (uint64_t)key << 32 | it.current_value;
        roaring_bitmap_free(bm);
    }
    if (n != cardinality) {
        free(out);
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector: %llu rows where its cardinality says %llu",
                       (unsigned long long)n, (unsigned long long)cardinality);
    }
    *rows = out;
    *n_rows = n;
    return PQ_OK;
cut:
    free(out);
    return pq_fail(err, PQ_E_CORRUPT, "deletion vector: a bucket is cut short or not a roaring bitmap (at byte %zu of %zu)",
                   at, len);
}

/* storageType u: <table>/<prefix>/deletion_vector_<uuid>.bin. */
static int dv_file_path(const char *root, const char *v, char **out, pq_error *err)
{
    size_t n = strlen(v);
    if (n < 20) return pq_fail(err, PQ_E_CORRUPT, "deletion vector '%.60s': shorter than its 20-character UUID", v);
    size_t plen = n - 20;
    uint8_t u[16];
    if (pq_z85_decode(v + plen, 20, u) != 0)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector '%.60s': the UUID is not z85", v);
    /* The random prefix is one directory name. */
    if (memchr(v, '/', plen) || (plen == 1 && v[0] == '.') || (plen == 2 && v[0] == '.' && v[1] == '.'))
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector '%.60s': the prefix is not a directory name", v);
    char name[64];
    static const char hex[] = "0123456789abcdef";
    char *w = name;
    w += sizeof "deletion_vector_" - 1;
    memcpy(name, "deletion_vector_", sizeof "deletion_vector_" - 1);
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *w++ = '-';
        *w++ = hex[u[i] >> 4];
        *w++ = hex[u[i] & 15];
    }
    memcpy(w, ".bin", 5);
    char *prefix = strndup(v, plen);
    char *dir = prefix ? pq_path_join(root, prefix) : NULL;
    *out = dir ? pq_path_join(dir, name) : NULL;
    free(prefix);
    free(dir);
    return *out ? PQ_OK : PQ_NOMEM(err);
}

/* The vector's bytes from its file: version byte, size, bytes, CRC-32. */
static int dv_file_bytes(pq_store *store, const char *path, const pq_tf_deletes *d, uint8_t **out, pq_error *err)
{
    pq_file *f;
    PQ_TRY(store->ops->open(store, path, &f, err));
    uint64_t size = 0;
    uint64_t off = d->offset >= 0 ? (uint64_t)d->offset : 1; /* absent: the first vector, after the version byte */
    uint64_t want = (uint64_t)d->size_in_bytes;
    uint8_t head[4], version = 0, *bytes = NULL;
    int rc = pq_file_size(f, &size, err);
    if (rc == PQ_OK && (off < 1 || off > size || size - off < 8 || size - off - 8 < want))
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: a deletion vector of %llu bytes at %llu does not fit in %llu bytes",
                     f->name, (unsigned long long)want, (unsigned long long)off, (unsigned long long)size);
    if (rc == PQ_OK) rc = pq_read_at(f, &version, 1, 0, err);
    if (rc == PQ_OK && version != 1)
        rc = pq_fail(err, PQ_E_UNSUPPORTED, "%s: deletion vector file format %u (only 1 is read)", f->name, version);
    if (rc == PQ_OK) rc = pq_read_at(f, head, 4, off, err);
    if (rc == PQ_OK && load_be32(head) != want)
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: the deletion vector at %llu holds %u bytes, the log says %llu", f->name,
                     (unsigned long long)off, load_be32(head), (unsigned long long)want);
    if (rc == PQ_OK && !(bytes = malloc((size_t)want + 4))) rc = PQ_NOMEM(err);
    if (rc == PQ_OK) rc = pq_read_at(f, bytes, (size_t)want + 4, off + 4, err);
    if (rc == PQ_OK && (uint32_t)crc32(0, bytes, (uInt)want) != load_be32(bytes + want))
        rc = pq_fail(err, PQ_E_CORRUPT, "%s: the deletion vector at %llu fails its CRC-32", f->name,
                     (unsigned long long)off);
    pq_file_close(f);
    if (rc != PQ_OK) {
        free(bytes);
        return PQ_ERR;
    }
    *out = bytes;
    return PQ_OK;
}

int pq_tf_deleted_rows(const pq_tf_snapshot *s, pq_store *store, int file, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err)
{
    *rows = NULL;
    *n_rows = 0;
    if (!s->files || file < 0 || file >= s->table->n_files || !s->files[file].deletes.storage) return PQ_OK;
    const pq_tf_deletes *d = &s->files[file].deletes;
    if (d->size_in_bytes < 0 || d->size_in_bytes > (1 << 30) || d->cardinality < 0)
        return pq_fail(err, PQ_E_CORRUPT, "deletion vector of %s: %lld bytes, %lld rows", s->table->files[file].path,
                       (long long)d->size_in_bytes, (long long)d->cardinality);
    uint8_t *bytes = NULL;
    int rc;
    if (d->storage == 'i') {
        size_t n = strlen(d->path_or_inline);
        if (n % 5 || n / 5 * 4 < (uint64_t)d->size_in_bytes || !(bytes = malloc(n / 5 * 4 + 1)))
            return bytes || n % 5 || n / 5 * 4 < (uint64_t)d->size_in_bytes
                       ? pq_fail(err, PQ_E_CORRUPT, "inline deletion vector of %s: %zu characters for %lld bytes",
                                 s->table->files[file].path, n, (long long)d->size_in_bytes)
                       : PQ_NOMEM(err);
        rc = pq_z85_decode(d->path_or_inline, n, bytes) == 0
                 ? PQ_OK
                 : pq_fail(err, PQ_E_CORRUPT, "inline deletion vector of %s: not z85", s->table->files[file].path);
    } else if (d->storage == 'u') {
        char *path;
        PQ_TRY(dv_file_path(s->table->root, d->path_or_inline, &path, err));
        rc = dv_file_bytes(store, path, d, &bytes, err);
        free(path);
    } else {
        return pq_fail(err, PQ_E_UNSUPPORTED, "deletion vector of %s: an absolute path ('%.100s') is not read",
                       s->table->files[file].path, d->path_or_inline);
    }
    if (rc == PQ_OK) rc = pq_delta_dv_decode(bytes, (size_t)d->size_in_bytes, (uint64_t)d->cardinality, rows, n_rows, err);
    if (rc != PQ_OK && !strstr(err->msg, s->table->files[file].path)) pq_error_prefix(err, "%s: ", s->table->files[file].path);
    free(bytes);
    return rc;
}
