/* Rows of a Parquet file held in memory and put in order: the sort_by of a
 * Parquet file written into the lake.  Every leaf is decoded once (one task
 * per leaf, on several threads) into its levels and values; the row order is
 * a stable merge sort on the key columns (NULLs last, NaN after every
 * number); then any run of the sorted rows goes to a column writer.
 *
 * Flat schemas only (no repeated leaf: a row is one entry of each leaf);
 * keys are top-level primitive columns whose type has an order
 * (pq_value_order_of).  Row numbers are 32 bits. */
#ifndef PQ_ROWSORT_H
#define PQ_ROWSORT_H

#include "colwrite.h"
#include "footer.h"
#include "io.h"

/* Sorts the row numbers a[0..n) stably by cmp(ctx, x, y) (< 0: x first);
 * tmp has room for n / 2 + 1 of them. */
typedef int (*pq_row_cmp)(const void *ctx, uint32_t x, uint32_t y);
void pq_stable_sort_rows(uint32_t *a, uint32_t *tmp, int64_t n, pq_row_cmp cmp, const void *ctx);

/* The leaves of the columns `names` (sort_by), into leaves[0..n).  A name
 * that is not a top-level column, a nested or repeated one, a type without
 * an order, or a schema with a repeated leaf: PQ_E_USAGE naming `file` and
 * the column. */
int pq_sort_leaves(const pq_footer *ft, const char *const *names, int n, const char *file, int32_t *leaves,
                   pq_error *err);

typedef struct pq_sorted_rows pq_sorted_rows;

/* Decodes every row group of f (footer ft) and sorts its rows by
 * key_leaves[0..n_keys) (pq_sort_leaves), on up to `threads` threads.  ft
 * must outlive the result.  Errors name `file`. */
int pq_sorted_rows_load(pq_file *f, const pq_footer *ft, const char *file, const int32_t *key_leaves, int n_keys,
                        int threads, pq_sorted_rows **out, pq_error *err);
int64_t pq_sorted_rows_count(const pq_sorted_rows *s);
/* Adds the sorted rows [from, from + n) of leaf `leaf` to w. */
int pq_sorted_rows_add(const pq_sorted_rows *s, int32_t leaf, int64_t from, int64_t n, pq_colwriter *w,
                       pq_error *err);
void pq_sorted_rows_free(pq_sorted_rows *s);

#endif
