#include "rowgroup.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "threads.h"

static int cmp_range(const void *a, const void *b)
{
    const pq_byte_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

void pq_free_ranges(pq_byte_range *ranges, int32_t n)
{
    if (!ranges) return;
    for (int32_t i = 0; i < n; i++) free((void *)ranges[i].data);
    free(ranges);
}

/* The reads of one fetch; the first failure is kept. */
typedef struct range_reads {
    pq_file *f;
    pq_byte_range *ranges;
    int rc;
    pq_error err;
    pthread_mutex_t mu;
} range_reads;

static void read_one_range(void *ctx, size_t i)
{
    range_reads *rr = ctx;
    pq_byte_range *r = &rr->ranges[i];
    pq_error err;
    pq_error_clear(&err);
    pq_prefault((void *)r->data, (size_t)r->len);
    if (pq_read_at(rr->f, (void *)r->data, (size_t)r->len, r->off, &err) == PQ_OK) return;
    pthread_mutex_lock(&rr->mu);
    if (rr->rc == PQ_OK) {
        rr->rc = PQ_ERR;
        rr->err = err;
    }
    pthread_mutex_unlock(&rr->mu);
}

/* Whether one of `have` overlaps the gap [from, to). */
static bool gap_has_fetched(const pq_byte_range *have, int32_t n_have, uint64_t from, uint64_t to)
{
    for (int32_t i = 0; i < n_have; i++)
        if (have[i].off < to && have[i].off + have[i].len > from) return true;
    return false;
}

int pq_fetch_ranges(pq_file *f, const pq_byte_range *want, int32_t n_want, uint64_t merge_gap,
                    const pq_byte_range *have, int32_t n_have, pq_byte_range **out, int32_t *n_out,
                    uint64_t *bytes, pq_error *err)
{
    *out = NULL;
    *n_out = 0;
    if (n_want == 0) return PQ_OK;
    pq_byte_range *sorted = malloc(sizeof *sorted * (size_t)n_want);
    pq_byte_range *merged = calloc((size_t)n_want, sizeof *merged);
    if (!sorted || !merged) {
        free(sorted);
        free(merged);
        return PQ_NOMEM(err);
    }
    memcpy(sorted, want, sizeof *sorted * (size_t)n_want);
    qsort(sorted, (size_t)n_want, sizeof *sorted, cmp_range);
    int32_t m = 0;
    for (int32_t i = 0; i < n_want; i++) {
        if (sorted[i].len == 0) continue;
        uint64_t end = sorted[i].off + sorted[i].len;
        if (m > 0) {
            pq_byte_range *last = &merged[m - 1];
            uint64_t last_end = last->off + last->len;
            if (sorted[i].off <= last_end ||
                (sorted[i].off <= last_end + merge_gap && !gap_has_fetched(have, n_have, last_end, sorted[i].off))) {
                if (end > last_end) last->len = end - last->off;
                continue;
            }
        }
        merged[m].off = sorted[i].off;
        merged[m].len = sorted[i].len;
        m++;
    }
    free(sorted);
    for (int32_t i = 0; i < m; i++) {
        unsigned long long len = (unsigned long long)merged[i].len;
        if (merged[i].len > (uint64_t)SIZE_MAX / 2) {
            pq_free_ranges(merged, i);
            return pq_fail(err, PQ_E_CORRUPT, "read of %llu bytes is too large", len);
        }
        uint8_t *buf = malloc(merged[i].len ? (size_t)merged[i].len : 1);
        if (!buf) {
            pq_free_ranges(merged, i);
            return pq_fail(err, PQ_E_NOMEM, "out of memory for %llu bytes", len);
        }
        merged[i].data = buf;
    }
    range_reads rr = {.f = f, .ranges = merged, .rc = PQ_OK};
    pq_error_clear(&rr.err);
    pthread_mutex_init(&rr.mu, NULL);
    if (f->parallel_reads > 1 && m > 1) pq_parallel_for((size_t)m, f->parallel_reads, read_one_range, &rr);
    else
        for (int32_t i = 0; i < m && rr.rc == PQ_OK; i++) read_one_range(&rr, (size_t)i);
    pthread_mutex_destroy(&rr.mu);
    if (rr.rc != PQ_OK) {
        *err = rr.err;
        pq_free_ranges(merged, m);
        return PQ_ERR;
    }
    if (bytes)
        for (int32_t i = 0; i < m; i++) *bytes += merged[i].len;
    *out = merged;
    *n_out = m;
    return PQ_OK;
}

int pq_rg_open(pq_file *f, const pq_footer *ft, int32_t rg, const int32_t *leaves, int32_t n_leaves,
               pq_rg_reader **out, pq_error *err)
{
    if (rg < 0 || rg >= ft->meta.n_row_groups)
        return pq_fail(err, PQ_E_USAGE, "row group %d does not exist", rg);
    const pq_row_group *g = &ft->meta.row_groups[rg];
    pq_rg_reader *r = calloc(1, sizeof *r);
    pq_byte_range *want = calloc((size_t)(n_leaves ? n_leaves : 1), sizeof *want);
    pq_chunk_extent *ext = calloc((size_t)(n_leaves ? n_leaves : 1), sizeof *ext);
    if (!r || !want || !ext) {
        free(r);
        free(want);
        free(ext);
        return PQ_NOMEM(err);
    }
    r->row_group = rg;
    r->num_rows = g->num_rows;
    r->n_cols = n_leaves;
    r->leaf_of = calloc((size_t)(n_leaves ? n_leaves : 1), sizeof *r->leaf_of);
    r->cols = calloc((size_t)(n_leaves ? n_leaves : 1), sizeof *r->cols);
    if (!r->leaf_of || !r->cols) {
        PQ_NOMEM(err);
        goto fail;
    }
    for (int32_t i = 0; i < n_leaves; i++) {
        int32_t leaf = leaves[i];
        const pq_column_chunk *cc = &g->columns[leaf];
        r->leaf_of[i] = leaf;
        if (pq_chunk_extent_of(cc, ft->file_size, ft->legacy_chunk_sizes, &ext[i], err) != PQ_OK) {
            pq_error_prefix(err, "column '%s' (row group %d): ", ft->schema.leaves[leaf].path, rg);
            goto fail;
        }
        want[i].off = ext[i].start;
        want[i].len = ext[i].len;
    }
    if (pq_fetch_ranges(f, want, n_leaves, f->merge_gap, NULL, 0, &r->ranges, &r->n_ranges, &r->bytes_fetched,
                        err) != PQ_OK)
        goto fail;
    for (int32_t i = 0; i < n_leaves; i++) {
        int32_t leaf = leaves[i];
        pq_col_source src = {
            .file_name = f->name,
            .chunk = &g->columns[leaf],
            .leaf = &ft->schema.leaves[leaf],
            .row_group = rg,
            .row_group_rows = g->num_rows,
            .ranges = r->ranges,
            .n_ranges = r->n_ranges,
            .first_page_off = ext[i].start,
            .end_off = ext[i].start + ext[i].len,
        };
        if (pq_col_reader_open(&src, &r->cols[i], err) != PQ_OK) goto fail;
    }
    free(want);
    free(ext);
    *out = r;
    return PQ_OK;
fail:
    free(want);
    free(ext);
    pq_rg_close(r);
    return PQ_ERR;
}

void pq_rg_close(pq_rg_reader *r)
{
    if (!r) return;
    if (r->cols)
        for (int32_t i = 0; i < r->n_cols; i++) pq_col_reader_free(r->cols[i]);
    free(r->cols);
    free(r->leaf_of);
    pq_free_ranges(r->ranges, r->n_ranges);
    free(r);
}

pq_col_reader *pq_rg_column(const pq_rg_reader *r, int32_t leaf)
{
    for (int32_t i = 0; i < r->n_cols; i++)
        if (r->leaf_of[i] == leaf) return r->cols[i];
    return NULL;
}
