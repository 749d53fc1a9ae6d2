/* fuzz_rewrite: a whole Parquet file in memory rewritten the way a Parquet
 * file written into the lake is (pq_file_rewrite): its rows cut into row
 * groups of 1..64 rows across its own and, for a third of the inputs,
 * sorted by a top-level column (rowsort), on one or two threads; a quarter
 * keep the input's row groups and copy chunks byte for byte where they can
 * (data.parquet's fully matched row groups: pages walked, not decoded).
 *
 * A corrupt input may fail the rewrite.  When the rewrite succeeds and the
 * input scans, the output must read back: its footer, then a scan to CSV
 * that holds the input's rows: the same text when not sorted; when sorted,
 * the same lines in another order (compared by an order-free digest).
 * Inputs that would only be slow are skipped (fuzz_parquet.h). */
#include "fuzz_common.h"
#include "fuzz_parquet.h"

#include "filewrite.h"
#include "query.h"
#include "scan.h"

static int buf_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    return pq_buf_append(ctx, data, len) ? PQ_NOMEM(err) : PQ_OK;
}

/* The lines of a CSV as a multiset: a sum of their hashes, and a count.
 * (A quoted newline splits a record; both sides split it alike.) */
typedef struct line_set {
    uint64_t sum, n, cur;
} line_set;

static int lines_write(void *ctx, const char *data, size_t len, pq_error *err)
{
    (void)err;
    line_set *s = ctx;
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            uint64_t h = s->cur * 0x9E3779B97F4A7C15ull;
            s->sum += h ^ (h >> 29);
            s->n++;
            s->cur = 14695981039346656037ull;
        } else {
            s->cur = (s->cur ^ (uint8_t)data[i]) * 1099511628211ull;
        }
    }
    return PQ_OK;
}

/* Scans every column of f to CSV into `sink`; PQ_OK or the scan's error. */
static int scan_all(pq_file *f, const pq_footer *ft, const pq_sink *sink)
{
    pq_error err;
    pq_query_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.limit = -1;
    pq_query *q = NULL;
    if (pq_query_compile(&ft->schema, NULL, NULL, 0, &spec, &q, &err) != PQ_OK) return PQ_ERR;
    pq_scan_opts opts;
    pq_scan_opts_init(&opts);
    opts.threads = 1;
    pq_scan_file sf = {.name = NULL, .file = f, .footer = ft, .part_values = NULL};
    pq_scan_stats st;
    int rc = pq_scan_csv(q, &sf, 1, &opts, sink, &st, &err);
    if (rc != PQ_OK) FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    pq_query_free(q);
    return rc;
}

static void rewrite(pq_file *f, const pq_footer *ft, uint64_t seed)
{
    pq_rewrite_opts ro;
    pq_rewrite_opts_init(&ro);
    ro.row_group_rows = 1 + (int64_t)(seed % 64);
    ro.threads = 1 + (int)((seed >> 8) & 1);
    ro.batch_rows = 1 + (int32_t)((seed >> 12) % 32);
    /* A quarter: the input's row groups kept, chunks copied byte for byte
     * where they can be (pages walked, not decoded). */
    bool copy = (seed >> 28) % 4 == 0;
    if (copy) {
        ro.row_group_rows = 0;
        ro.copy_chunks = true;
    }
    const char *key[1] = {NULL};
    const pq_node *root = ft->schema.root;
    if (!copy && (seed >> 20) % 3 == 0 && root->n_children > 0) {
        key[0] = root->children[(seed >> 24) % (uint64_t)root->n_children]->name;
        ro.sort_by = key;
        ro.n_sort_by = 1;
    }
    pq_buf out;
    pq_buf_init(&out);
    pq_sink sink = {buf_write, &out};
    pq_error err;
    if (pq_file_rewrite(f, ft, "fuzz.parquet", &ro, &sink, &err) != PQ_OK) {
        FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        pq_buf_free(&out);
        return;
    }
    if (copy) {
        /* Kept row groups: at most as many rows as the input's. */
        ro.row_group_rows = INT64_MAX;
    }
    /* The input's rows, as the scan reads them (it may find corruption the
     * rewrite did not look at: then there is nothing to compare). */
    line_set want = {0, 0, 14695981039346656037ull};
    digest want_text = {14695981039346656037ull, 0};
    pq_sink want_sink = ro.n_sort_by ? (pq_sink){lines_write, &want} : (pq_sink){digest_write, &want_text};
    bool input_scans = scan_all(f, ft, &want_sink) == PQ_OK;

    pq_file *g = NULL;
    pq_footer *gt = NULL;
    FUZZ_CHECK(pq_file_open_mem("rewritten.parquet", out.data, out.len, &g, &err) == PQ_OK, "%s", err.msg);
    FUZZ_CHECK(pq_footer_read(g, &gt, &err) == PQ_OK, "the rewrite's footer does not read: %s", err.msg);
    int64_t rows = 0;
    for (int32_t i = 0; i < gt->meta.n_row_groups; i++) {
        FUZZ_CHECK(gt->meta.row_groups[i].num_rows <= ro.row_group_rows, "row group %d has %lld rows, not at most %lld",
                   i, (long long)gt->meta.row_groups[i].num_rows, (long long)ro.row_group_rows);
        rows += gt->meta.row_groups[i].num_rows;
    }
    FUZZ_CHECK(rows == gt->meta.num_rows, "the row groups hold %lld rows, the footer says %lld", (long long)rows,
               (long long)gt->meta.num_rows);
    line_set got = {0, 0, 14695981039346656037ull};
    digest got_text = {14695981039346656037ull, 0};
    pq_sink got_sink = ro.n_sort_by ? (pq_sink){lines_write, &got} : (pq_sink){digest_write, &got_text};
    int rc = scan_all(g, gt, &got_sink);
    if (input_scans) {
        FUZZ_CHECK(rc == PQ_OK, "the input scans but its rewrite does not");
        if (ro.n_sort_by)
            FUZZ_CHECK(got.n == want.n && got.sum == want.sum, "sorted by %s: other lines (%llu, %llu in the input)",
                       key[0], (unsigned long long)got.n, (unsigned long long)want.n);
        else
            FUZZ_CHECK(got_text.len == want_text.len && got_text.hash == want_text.hash,
                       "row groups of %lld: other CSV (%llu bytes, %llu in the input)", (long long)ro.row_group_rows,
                       (unsigned long long)got_text.len, (unsigned long long)want_text.len);
    }
    pq_footer_free(gt);
    pq_file_close(g);
    pq_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_file *f;
    pq_footer *ft = fuzz_open_parquet(data, size, &f);
    if (!ft) return 0;
    /* Row groups of a few rows: a task each, each skipping into its input
     * row group; a few thousand rows at most keep it fast. */
    if (small_enough(ft, data, size, 4096)) rewrite(f, ft, fuzz_hash(data, size));
    pq_footer_free(ft);
    pq_file_close(f);
    return 0;
}
