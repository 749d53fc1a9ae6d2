/* Shared by the fuzz targets that take a whole Parquet file (fuzz_file,
 * fuzz_rewrite): which inputs are too slow to be worth scanning, and a sink
 * that keeps only a digest of what is written to it. */
#ifndef PQ_FUZZ_PARQUET_H
#define PQ_FUZZ_PARQUET_H

#include "column.h"
#include "footer.h"
#include "io.h"

#define MAX_ROWS 1000000
#define MAX_PAGE_BYTES (4 << 20)
#define MAX_PAGE_VALUES 1000000
#define MAX_TOTAL_BYTES (32u << 20)
#define MAX_PAGES 10000

/* Opens the input as a Parquet file: its footer, or NULL (a footer that
 * does not read must say why). */
static inline pq_footer *fuzz_open_parquet(const uint8_t *data, size_t size, pq_file **f)
{
    pq_error err;
    *f = NULL;
    if (pq_file_open_mem("fuzz.parquet", data, size, f, &err) != PQ_OK) return NULL;
    pq_footer *ft = NULL;
    if (pq_footer_read(*f, &ft, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        pq_file_close(*f);
        *f = NULL;
        return NULL;
    }
    return ft;
}

/* Whether the file holds at most max_rows rows and pages within the limits
 * above: walks the page headers of every column chunk as the reader would. */
static inline bool small_enough(const pq_footer *ft, const uint8_t *data, size_t size, int64_t max_rows)
{
    const pq_file_meta *m = &ft->meta;
    if (m->num_rows > max_rows) return false;
    int64_t rows = 0;
    uint64_t total = 0, pages = 0;
    pq_arena arena;
    pq_arena_init(&arena, 4096);
    bool ok = true;
    for (int32_t g = 0; ok && g < m->n_row_groups; g++) {
        const pq_row_group *rg = &m->row_groups[g];
        rows += rg->num_rows;
        if (rg->num_rows < 0 || rows > max_rows) ok = false;
        for (int32_t c = 0; ok && c < rg->n_columns; c++) {
            const pq_column_chunk *cc = &rg->columns[c];
            pq_chunk_extent ext;
            pq_error err;
            if (!cc->has_meta || pq_chunk_extent_of(cc, ft->file_size, ft->legacy_chunk_sizes, &ext, &err) != PQ_OK)
                continue;
            uint64_t off = ext.start, end = ext.start + ext.len;
            while (ok && off < end && off < size) {
                pq_page_header h;
                size_t used;
                pq_arena_reset(&arena);
                if (pq_decode_page_header(data + off, size - off, &arena, &h, &used, &err) != PQ_OK ||
                    h.compressed_page_size < 0)
                    break;
                int32_t values = h.has_data ? h.data.num_values
                                 : h.has_data_v2 ? h.data_v2.num_values
                                 : h.has_dict ? h.dict.num_values : 0;
                total += (uint64_t)(h.uncompressed_page_size > 0 ? h.uncompressed_page_size : 0);
                if (h.uncompressed_page_size > MAX_PAGE_BYTES || values > MAX_PAGE_VALUES ||
                    total > MAX_TOTAL_BYTES || ++pages > MAX_PAGES)
                    ok = false;
                off += used + (uint64_t)h.compressed_page_size;
            }
        }
    }
    pq_arena_free(&arena);
    return ok;
}

/* The sink: keeps a digest of the CSV text, nothing else. */
typedef struct digest {
    uint64_t hash;
    uint64_t len;
} digest;

static inline int digest_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    (void)err;
    digest *d = ctx;
    for (size_t i = 0; i < len; i++) d->hash = (d->hash ^ (uint8_t)data[i]) * 1099511628211ull;
    d->len += len;
    return PQ_OK;
}

#endif
