/* Row group reader: fetches the byte ranges of the wanted column chunks
 * (nearby ranges merged into one read, as object stores charge per request)
 * and opens one column reader per wanted leaf. */
#ifndef PQ_ROWGROUP_H
#define PQ_ROWGROUP_H

#include "column.h"
#include "footer.h"

typedef struct pq_rg_reader {
    int32_t row_group;
    int64_t num_rows;
    int32_t n_cols;
    int32_t *leaf_of;          /* leaf index of each reader */
    pq_col_reader **cols;
    pq_byte_range *ranges;     /* fetched bytes, sorted by offset */
    int32_t n_ranges;
    uint64_t bytes_fetched;
} pq_rg_reader;

/* Opens readers for `leaves` (leaf indexes, any order, no duplicates) of row
 * group `rg`.  Fetches every needed chunk in full. */
int pq_rg_open(pq_file *f, const pq_footer *ft, int32_t rg, const int32_t *leaves, int32_t n_leaves,
               pq_rg_reader **out, pq_error *err);
void pq_rg_close(pq_rg_reader *r);

/* The reader of leaf `leaf`, or NULL when it was not opened. */
pq_col_reader *pq_rg_column(const pq_rg_reader *r, int32_t leaf);

/* Sorts and merges [off, off+len) requests (gap below `merge_gap` joined),
 * reads them, and returns the fetched ranges.  Shared by the page-selective
 * reads of the scan.  `have` (n_have, may be 0): ranges fetched already; a
 * merge never spans one (it would download those bytes again). */
int pq_fetch_ranges(pq_file *f, const pq_byte_range *want, int32_t n_want, uint64_t merge_gap,
                    const pq_byte_range *have, int32_t n_have, pq_byte_range **out, int32_t *n_out,
                    uint64_t *bytes, pq_error *err);
void pq_free_ranges(pq_byte_range *ranges, int32_t n);

#endif
