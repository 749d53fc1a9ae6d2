/* Column chunk reader: one leaf column of one row group, page by page.
 *
 * The chunk's bytes are fetched by the caller (one merged read per row group,
 * or just the pages a selection needs) and handed over as byte ranges; the
 * reader walks page headers from the first page, decompresses, decodes levels
 * and values, and returns batches of whole rows.  Byte-array values are views
 * into page buffers that stay valid until the next read/skip call. */
#ifndef PQ_COLUMN_H
#define PQ_COLUMN_H

#include "encoding.h"
#include "io.h"
#include "meta.h"
#include "schema.h"

/* A fetched piece of the file. */
typedef struct pq_byte_range {
    uint64_t off;
    uint64_t len;
    const uint8_t *data;
} pq_byte_range;

typedef struct pq_col_batch {
    int32_t n_rows;
    int32_t n_levels;          /* level entries; == n_rows when max_rep == 0 */
    const uint16_t *def;       /* NULL when max_def == 0 (every entry is a value) */
    const uint16_t *rep;       /* NULL when max_rep == 0 */
    int32_t n_values;          /* non-null values: entries with def == max_def */
    const void *values;        /* typed array (see encoding.h) of n_values */
} pq_col_batch;

typedef struct pq_col_counters {
    uint64_t pages_read;       /* pages decompressed and decoded */
    uint64_t pages_skipped;    /* data pages skipped without decoding */
    uint64_t values_decoded;
    uint64_t bytes_decompressed;
    uint64_t bytes_fetched;    /* read on demand (pq_col_source.file) */
} pq_col_counters;

typedef struct pq_col_reader pq_col_reader;

typedef struct pq_col_source {
    const char *file_name;     /* for messages */
    const pq_column_chunk *chunk;
    const pq_leaf *leaf;
    int32_t row_group;
    int64_t row_group_rows;
    const pq_byte_range *ranges; /* sorted, non-overlapping; must cover every page read */
    int32_t n_ranges;
    uint64_t first_page_off;   /* extent start */
    uint64_t end_off;          /* extent end */
    const pq_offset_index *offset_index; /* optional: enables page skipping without headers */
    /* > 0: the reader is never asked for rows at or past this one (a limit, a
     * selection that ends early, the last row a filter keeps), so a flat
     * column's page that holds it is decompressed and decoded only as far as
     * needed.  Reads past it fail; skips past it are allowed. */
    int64_t rows_needed;
    /* Optional: where to read bytes of the chunk that `ranges` lack (a caller
     * that fetched only the chunk's start).  NULL: every page read must lie
     * in `ranges`. */
    pq_file *file;
} pq_col_source;

/* How many bytes from the start of a page (or chunk) of `len` compressed
 * bytes and `rows` rows to fetch first when only its first `needed` rows will
 * be read: `len` when that is most of it or the codec cannot decode a prefix
 * (fetching the start would only cost a second read), else a proportional
 * share and some slack (the reader reads on if it falls short). */
uint64_t pq_prefix_fetch_len(pq_codec codec, uint64_t len, int64_t needed, int64_t rows);

int pq_col_reader_open(const pq_col_source *src, pq_col_reader **out, pq_error *err);
void pq_col_reader_free(pq_col_reader *r);

/* Reads up to max_rows whole rows (fewer only at the end of the chunk). */
int pq_col_read(pq_col_reader *r, int32_t max_rows, pq_col_batch *out, pq_error *err);
/* Reads the next n_rows rows but materializes only those with keep[i] != 0:
 * the batch holds just the kept rows (n_rows = how many).  Runs of dropped
 * rows are skipped as in pq_col_skip, whole pages without decoding. */
int pq_col_read_selected(pq_col_reader *r, int32_t n_rows, const uint8_t *keep, pq_col_batch *out,
                         pq_error *err);
/* Skips n rows without materializing values; whole pages are skipped without
 * decompression (and, reading on demand, without fetching) when their row
 * count is known.  Skips are put off until the next read, so consecutive
 * skips add up to whole pages; a chunk that ends early is reported then. */
int pq_col_skip(pq_col_reader *r, int64_t n_rows, pq_error *err);
/* Rows consumed so far (read or skipped). */
int64_t pq_col_position(const pq_col_reader *r);
const pq_col_counters *pq_col_reader_counters(const pq_col_reader *r);

#endif
