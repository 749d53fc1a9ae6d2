/* The access plan: for each row group of a file, what the pruning ladder
 * proved, as one inspectable value.
 *
 * Rungs, each one-sided (it drops only what it proves cannot match), each run
 * only on what the rungs before it kept:
 *   1. partitions    (per file, by the caller: pq_expr_substitute + fold)
 *   1b. log stats    (per file, before its footer: a table format's per-file
 *                    bounds, Delta add.stats, evaluated with pq_expr_prune)
 *   2. statistics    footer min/max/null_count, used only where trusted
 *   3. bloom filter  equality / IN: "definitely absent" prunes
 *   4. dictionary    equality / IN against an all-dictionary chunk's values
 *   5. page index    ColumnIndex + OffsetIndex: pages → row ranges
 *   6. fully matched the statistics prove every row matches: no row filter
 * Bloom filters come before dictionaries because they answer the same
 * question for a few KiB where a dictionary page can be megabytes.
 * The result per row group is SKIP, SCAN (all rows) or SELECT (row ranges),
 * plus the fully-matched flag. */
#ifndef PQ_PLAN_H
#define PQ_PLAN_H

#include "bloom.h"
#include "expr.h"
#include "footer.h"

typedef enum pq_rg_decision {
    PQ_RG_SCAN = 0,
    PQ_RG_SKIP = 1,
    PQ_RG_SELECT = 2,
} pq_rg_decision;

typedef enum pq_rung {
    PQ_RUNG_NONE = 0,
    PQ_RUNG_PARTITION,
    PQ_RUNG_STATS,
    PQ_RUNG_DICTIONARY,
    PQ_RUNG_PAGE_INDEX,
    PQ_RUNG_BLOOM,
    PQ_RUNG_COUNT,
} pq_rung;

const char *pq_rung_name(pq_rung r);

typedef struct pq_row_range {
    int64_t begin, end;        /* [begin, end) rows within the row group */
} pq_row_range;

typedef struct pq_rg_plan {
    int32_t row_group;
    pq_rg_decision decision;
    pq_rung pruned_by;         /* SKIP: the rung that proved it */
    bool fully_matched;        /* every row matches: no row filter */
    pq_row_range *ranges;      /* SELECT: sorted, disjoint, non-empty */
    int32_t n_ranges;
    int64_t rows;
    int64_t rows_selected;     /* rows the scan will decode (all for SCAN) */
    int32_t pages_total;       /* data pages of the filter columns (from the page index) */
    int32_t pages_pruned;
    uint64_t bytes_total;      /* compressed bytes of the columns the query reads */
    uint64_t bytes_to_read;    /* of those, what the plan still needs */
    /* Offset indexes loaded by the page-index rung, per leaf (NULL where
     * not loaded): the scan uses them to fetch only the selected pages. */
    pq_offset_index **offset_index;
    int32_t n_leaves;
} pq_rg_plan;

typedef struct pq_plan_input {
    pq_file *file;
    const pq_footer *footer;
    const pq_expr *pred;           /* with partition values substituted; NULL = no filter */
    const pq_expr_column *cols;    /* the table's columns (data + partition) */
    int n_cols;
    const int32_t *col_leaf;       /* per column: leaf index in this file; -1: partition or nested */
    /* Schema evolution: per leaf of this file, the pq_widen (schema.h) that
     * makes its values the table's type (NULL: none).  The predicate's
     * literals are in the table's type, the file's statistics, page index,
     * dictionary and bloom filter in the file's: an integer leaf widened to
     * DOUBLE has its bounds and dictionary values converted as the scan
     * converts its values, and a bloom filter probed only with the one
     * integer a literal can be. */
    const uint8_t *leaf_widen;
    const int32_t *read_leaves;    /* leaves the scan reads (projection and filter), for bytes */
    int32_t n_read_leaves;
    bool no_stats, no_dictionary, no_page_index, no_bloom; /* disable rungs (tests, benchmarks) */
    /* Rows of the file that are not rows of the table (a Delta deletion
     * vector): indexes from the file's first row, ascending, unique.  The
     * plan selects around them, so they are never decoded nor output. */
    const uint64_t *deleted_rows;
    uint64_t n_deleted;
} pq_plan_input;

/* Plans one row group.  Memory (ranges, indexes) comes from `arena`.  I/O
 * (dictionary pages, page indexes, bloom filters) goes through the file.
 * A rung that fails to read or decode what it needs keeps the row group
 * (it proves nothing) — except for I/O errors, which are returned. */
int pq_plan_row_group(const pq_plan_input *in, int32_t rg, pq_arena *arena, pq_rg_plan *out,
                      pq_error *err);

/* A LIMIT without a filter: only the first `rows` rows of a SCAN row group
 * are needed.  Turns the plan into SELECT [0, rows) and loads the offset
 * indexes, so that only the first pages are fetched. */
int pq_plan_limit_rows(const pq_plan_input *in, int64_t rows, pq_arena *arena, pq_rg_plan *p, pq_error *err);
/* The offset index of one leaf of row group rg, read and validated (*out NULL
 * when the chunk has none, it is unusable, the leaf is nested, or the page
 * index is turned off). */
int pq_plan_offset_index(const pq_plan_input *in, int32_t rg, int32_t leaf, pq_arena *arena,
                         const pq_offset_index **out, pq_error *err);
/* A chunk's offset index, read and validated (pages from row 0, ascending,
 * inside the file); *ok false when there is none or it is unusable.  Only
 * I/O errors are errors. */
int pq_offset_index_load(pq_file *f, const pq_footer *ft, const pq_column_chunk *cc, int64_t rg_rows,
                         pq_arena *arena, pq_offset_index *out, bool *ok, pq_error *err);

/* Totals over many row groups (and files) for plan.txt and counters. */
typedef struct pq_plan_totals {
    uint64_t files, files_pruned;  /* files_pruned: by partition values */
    uint64_t files_pruned_log;     /* by a table format's log statistics (pq_scan_opts.file_ranges): never opened */
    bool log_rung;                 /* that rung ran (its count is printed, 0 included) */
    uint64_t dirs_pruned;        /* partition directories pruned at listing: their files never seen */
    uint64_t row_groups, row_groups_pruned[PQ_RUNG_COUNT], row_groups_fully_matched;
    uint64_t row_groups_past_limit; /* a limit without a filter: never read */
    uint64_t pages, pages_pruned;
    uint64_t rows, rows_selected;
    uint64_t bytes_total, bytes_to_read;
} pq_plan_totals;

void pq_plan_totals_add(pq_plan_totals *t, const pq_rg_plan *p);
void pq_plan_totals_merge(pq_plan_totals *t, const pq_plan_totals *more);
int pq_plan_rg_text(const pq_rg_plan *p, pq_buf *out);
int pq_plan_totals_text(const pq_plan_totals *t, pq_buf *out);

/* Statistics of a chunk as a range, applying the trust rules (sort order,
 * deprecated fields, NaN bounds, truncation).  Exposed for tests. */
void pq_range_from_stats(const pq_leaf *leaf, const pq_stats *st, bool has_stats, int64_t rows,
                         pq_col_range *out);

/* A chunk's bloom filter as it is in the file (header and bitset, *raw_len
 * bytes in *raw, the caller's to free) and *out over its bitset, when it is
 * one this reader uses (split block, XXH64, uncompressed, inside the file);
 * *raw NULL otherwise.  With the filter's length known, one read.  Only I/O
 * errors are errors. */
int pq_bloom_filter_load(pq_file *f, const pq_footer *ft, const pq_column_meta *m, uint8_t **raw, size_t *raw_len,
                         pq_bloom *out, pq_error *err);

#endif
