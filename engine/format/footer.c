#include "footer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* parquet-mr before 1.2.9 (or without a version) under-reported chunk sizes. */
static bool writer_is_old_parquet_mr(const char *created_by)
{
    if (!created_by || strncmp(created_by, "parquet-mr", 10) != 0) return false;
    const char *v = strstr(created_by, "version ");
    if (!v) return true;
    int major = 0, minor = 0, patch = 0;
    if (sscanf(v + 8, "%d.%d.%d", &major, &minor, &patch) < 2) return true;
    if (major != 1) return major < 1;
    if (minor != 2) return minor < 2;
    return patch < 9;
}

static int validate(pq_footer *ft, pq_error *err)
{
    const pq_file_meta *m = &ft->meta;
    if (m->encryption_algorithm)
        return pq_fail(err, PQ_E_UNSUPPORTED, "encrypted file (plaintext footer) is not supported");
    if (m->num_rows < 0) return pq_fail(err, PQ_E_CORRUPT, "negative row count %lld", (long long)m->num_rows);
    PQ_TRY(pq_schema_build(m, &ft->schema, err));
    ft->legacy_chunk_sizes = writer_is_old_parquet_mr(m->created_by);
    int64_t rows = 0;
    for (int32_t g = 0; g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        if (rg->num_rows < 0)
            return pq_fail(err, PQ_E_CORRUPT, "row group %d has a negative row count", g);
        if (rg->n_columns != ft->schema.n_leaves)
            return pq_fail(err, PQ_E_CORRUPT, "row group %d has %d column chunks, the schema has %d columns",
                           g, rg->n_columns, ft->schema.n_leaves);
        if (__builtin_add_overflow(rows, rg->num_rows, &rows))
            return pq_fail(err, PQ_E_CORRUPT, "row counts overflow");
        for (int32_t c = 0; c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            if (cc->encrypted && !cc->has_meta) continue; /* refused when read */
            if (!cc->has_meta)
                return pq_fail(err, PQ_E_CORRUPT, "row group %d column %d has no metadata", g, c);
            if (cc->file_path && cc->file_path[0])
                return pq_fail(err, PQ_E_UNSUPPORTED,
                               "column chunk stored in another file ('%s') is not supported", cc->file_path);
            pq_chunk_extent ext;
            if (pq_chunk_extent_of(cc, ft->file_size, ft->legacy_chunk_sizes, &ext, err) != PQ_OK) {
                pq_error_prefix(err, "row group %d column '%s': ", g, ft->schema.leaves[c].path);
                return PQ_ERR;
            }
        }
    }
    return PQ_OK;
}

static int build(const uint8_t *meta_bytes, uint32_t meta_len, uint64_t file_size, pq_footer **out,
                 pq_error *err)
{
    pq_footer *ft = calloc(1, sizeof *ft);
    if (!ft) return PQ_NOMEM(err);
    /* Blocks sized from the footer: decoded, it takes a few times its
     * Thrift bytes, and a table's many small files each keep one
     * (a fixed 64 KiB block was most of a 25,000-file scan's heap). */
    size_t block = (size_t)meta_len * 4;
    pq_arena_init(&ft->arena, block < 2048 ? 2048 : block > 64 * 1024 ? 64 * 1024 : block);
    ft->file_size = file_size;
    ft->meta_len = meta_len;
    ft->meta_buf = malloc(meta_len ? meta_len : 1);
    if (!ft->meta_buf) {
        pq_footer_free(ft);
        return pq_fail(err, PQ_E_NOMEM, "out of memory for a footer of %u bytes", meta_len);
    }
    memcpy(ft->meta_buf, meta_bytes, meta_len);
    if (pq_decode_file_meta(ft->meta_buf, meta_len, &ft->arena, &ft->meta, err) != PQ_OK) {
        pq_error_prefix(err, "footer: ");
        pq_footer_free(ft);
        return PQ_ERR;
    }
    if (validate(ft, err) != PQ_OK) {
        pq_footer_free(ft);
        return PQ_ERR;
    }
    *out = ft;
    return PQ_OK;
}

static int check_tail(const uint8_t *last8, uint64_t file_size, uint32_t *meta_len, pq_error *err)
{
    if (!memcmp(last8 + 4, "PARE", 4))
        return pq_fail(err, PQ_E_UNSUPPORTED, "encrypted file (encrypted footer) is not supported");
    if (memcmp(last8 + 4, "PAR1", 4))
        return pq_fail(err, PQ_E_CORRUPT, "not a Parquet file (no PAR1 magic at the end)");
    uint32_t len = (uint32_t)last8[0] | (uint32_t)last8[1] << 8 | (uint32_t)last8[2] << 16 |
                   (uint32_t)last8[3] << 24;
    if ((uint64_t)len + 12 > file_size)
        return pq_fail(err, PQ_E_CORRUPT, "footer length %u exceeds the file size %llu", len,
                       (unsigned long long)file_size);
    *meta_len = len;
    return PQ_OK;
}

int pq_footer_parse(const uint8_t *tail, size_t tail_len, uint64_t file_size, pq_footer **out,
                    pq_error *err)
{
    if (file_size < 12 || tail_len < 8 || tail_len > file_size)
        return pq_fail(err, PQ_E_CORRUPT, "file of %llu bytes is too small to be Parquet",
                       (unsigned long long)file_size);
    uint32_t meta_len;
    PQ_TRY(check_tail(tail + tail_len - 8, file_size, &meta_len, err));
    if ((uint64_t)meta_len + 8 > tail_len)
        return pq_fail(err, PQ_E_CORRUPT, "footer not within the given tail");
    return build(tail + tail_len - 8 - meta_len, meta_len, file_size, out, err);
}

int pq_footer_read(pq_file *f, pq_footer **out, pq_error *err)
{
    return pq_footer_read_guess(f, PQ_FOOTER_SPECULATIVE_READ, out, err);
}

size_t pq_footer_guess(uint32_t max_meta_len)
{
    if (max_meta_len == 0)
        return PQ_FOOTER_SPECULATIVE_READ;
    /* a sixteenth and 256 bytes of slack: statistics strings and varints
     * vary a little between files; a short guess costs one small read */
    size_t g = (size_t)max_meta_len + max_meta_len / 16 + 256 + 8;
    return g < PQ_FOOTER_SPECULATIVE_READ ? g : PQ_FOOTER_SPECULATIVE_READ;
}

int pq_footer_read_guess(pq_file *f, size_t guess, pq_footer **out, pq_error *err)
{
    uint64_t size;
    PQ_TRY(pq_file_size(f, &size, err));
    if (size < 12)
        return pq_fail(err, PQ_E_CORRUPT, "file of %llu bytes is too small to be Parquet",
                       (unsigned long long)size);
    if (guess < 8)
        guess = 8;
    /* A file at most twice the guess is read whole: its data then comes
     * from the kept tail, and a small file costs one read instead of two
     * (one round trip, for a remote store), for at most the guess again in
     * bytes. */
    size_t tail_len = size <= (uint64_t)guess * 2 ? (size_t)size : guess;
    uint8_t *tail = malloc(tail_len);
    if (!tail) return PQ_NOMEM(err);
    int rc = pq_read_at(f, tail, tail_len, size - tail_len, err);
    if (rc != PQ_OK) {
        free(tail);
        return rc;
    }
    uint32_t meta_len;
    if (check_tail(tail + tail_len - 8, size, &meta_len, err) != PQ_OK) {
        free(tail);
        return PQ_ERR;
    }
    if ((uint64_t)meta_len + 8 <= tail_len) {
        if (tail_len == size && memcmp(tail, "PAR1", 4) != 0) {
            free(tail);
            return pq_fail(err, PQ_E_CORRUPT, "not a Parquet file (no PAR1 magic at the start)");
        }
        rc = build(tail + tail_len - 8 - meta_len, meta_len, size, out, err);
        /* Keep what the tail read brought in before the footer: later reads
         * of it (blooms, page indexes, last chunks) cost no storage read. */
        size_t before = tail_len - 8 - meta_len;
        uint8_t *kept = rc == PQ_OK && before ? realloc(tail, before) : NULL;
        if (kept) pq_file_keep_tail(f, kept, size - tail_len, before);
        else free(tail);
        return rc;
    }
    /* The footer is larger than the tail read: read only the bytes before it.
     * check_tail proved meta_len + 12 <= size. */
    size_t have = tail_len - 8, need = (size_t)meta_len - have;
    uint8_t *meta = malloc(meta_len);
    if (!meta) {
        free(tail);
        return pq_fail(err, PQ_E_NOMEM, "out of memory for a footer of %u bytes", meta_len);
    }
    memcpy(meta + need, tail, have);
    free(tail);
    rc = pq_read_at(f, meta, need, size - 8 - meta_len, err);
    if (rc == PQ_OK) rc = build(meta, meta_len, size, out, err);
    free(meta);
    return rc;
}

void pq_footer_free(pq_footer *ft)
{
    if (!ft) return;
    pq_schema_free(&ft->schema);
    pq_arena_free(&ft->arena);
    free(ft->meta_buf);
    free(ft);
}

int pq_chunk_extent_of(const pq_column_chunk *cc, uint64_t file_size, bool legacy_padding,
                       pq_chunk_extent *out, pq_error *err)
{
    if (!cc->has_meta)
        return pq_fail(err, cc->encrypted ? PQ_E_UNSUPPORTED : PQ_E_CORRUPT,
                       cc->encrypted ? "column chunk is encrypted (not supported)"
                                     : "column chunk has no metadata");
    const pq_column_meta *m = &cc->meta;
    int64_t start = m->data_page_offset;
    if (m->has_dictionary_page_offset && m->dictionary_page_offset > 0 &&
        m->dictionary_page_offset < start)
        start = m->dictionary_page_offset;
    int64_t len = m->total_compressed_size;
    if (start < 0 || len < 0)
        return pq_fail(err, PQ_E_CORRUPT, "column chunk has negative offset %lld or size %lld",
                       (long long)start, (long long)len);
    if ((uint64_t)start > file_size || (uint64_t)len > file_size - (uint64_t)start)
        return pq_fail(err, PQ_E_CORRUPT,
                       "column chunk at offset %lld of %lld bytes extends past the end of the "
                       "file (%llu bytes)",
                       (long long)start, (long long)len, (unsigned long long)file_size);
    if (legacy_padding) {
        uint64_t room = file_size - (uint64_t)start - (uint64_t)len;
        len += (int64_t)(room < 100 ? room : 100);
    }
    out->start = (uint64_t)start;
    out->len = (uint64_t)len;
    return PQ_OK;
}
