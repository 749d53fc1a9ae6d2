/* fuzz_file: a whole Parquet file in memory, read the way pqtool cat and plan
 * read it: footer, then a scan of every column to CSV, then the access plan
 * and a filtered scan for a predicate on a top-level column.
 *
 * The unfiltered scan runs twice, with one worker and the default batch size
 * and with two workers and batches of 1..16 rows: both must succeed or both
 * fail, and when they succeed give the same CSV (compared by a digest).
 * Depending on a hash of the input, the filtered scan projects only the last
 * column, stops at a limit, uses tiny batches, and reads through a file that
 * fails after a few reads or serves them in pieces (error paths must free
 * what they took).  Column, predicate, batch size and limit all come from
 * that hash, so a crash reproduces.
 *
 * Inputs that would only be slow are skipped before scanning: more than
 * MAX_ROWS rows, or page headers (walked through each column chunk) that
 * announce more than MAX_PAGE_BYTES, MAX_PAGE_VALUES or MAX_TOTAL_BYTES in
 * all, or more than MAX_PAGES pages (each page header costs the decoder's
 * comparison tracing several times over).  The engine has its own, much
 * larger, limits. */
#include "fuzz_common.h"
#include "fuzz_parquet.h"

#include "column.h"
#include "footer.h"
#include "io.h"
#include "query.h"
#include "scan.h"

/* Scans with the given threads and batch size; returns the scan's status. */
static int scan_digest(const pq_query *q, const pq_scan_file *sf, int threads, int32_t batch_rows, digest *d)
{
    pq_scan_opts opts;
    pq_scan_opts_init(&opts);
    opts.threads = threads;
    opts.batch_rows = batch_rows;
    d->hash = 14695981039346656037ull;
    d->len = 0;
    pq_sink sink = {digest_write, d};
    pq_scan_stats st;
    pq_error err;
    int rc = pq_scan_csv(q, sf, 1, &opts, &sink, &st, &err);
    if (rc != PQ_OK) FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
    return rc;
}

/* `"name" <test>` with the name quoted, or NULL on allocation failure. */
static char *predicate(const char *name, const char *test)
{
    pq_buf t;
    pq_buf_init(&t);
    int rc = pq_buf_puts(&t, "\"");
    for (const char *p = name; *p && !rc; p++) rc = *p == '"' ? pq_buf_puts(&t, "\"\"") : pq_buf_append(&t, p, 1);
    rc |= pq_buf_puts(&t, "\" ");
    rc |= pq_buf_puts(&t, test);
    rc |= pq_buf_append(&t, "", 1);
    if (rc) {
        pq_buf_free(&t);
        return NULL;
    }
    return t.data;
}

static const char *const tests[] = {
    "IS NOT NULL", "= 1", "> 0", "IN (1, 2, 3)", "= 'a'", "< 'm'", "BETWEEN 0 AND 100", "IS NULL",
    "!= 0.5", "LIKE 'a%'", ">= '2020-01-01'", "= TRUE",
};

static void scan(const pq_scan_file *sf, const pq_footer *ft, const uint8_t *data, size_t size, uint64_t seed)
{
    pq_error err;
    pq_scan_opts opts;
    pq_scan_opts_init(&opts);
    opts.threads = 1;
    opts.batch_rows = seed % 4 == 0 ? 7 : 0;
    digest out;
    pq_sink sink = {digest_write, &out};

    /* Everything, no filter: one worker and the default batch, then two
     * workers and small batches.  Batch boundaries and scheduling must not
     * change the result. */
    pq_query_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.limit = -1;
    pq_query *q = NULL;
    if (pq_query_compile(&ft->schema, NULL, NULL, 0, &spec, &q, &err) == PQ_OK) {
        digest one, two;
        int32_t small = 1 + (int32_t)((seed >> 4) % 16);
        int rc_one = scan_digest(q, sf, 1, 0, &one);
        int rc_two = scan_digest(q, sf, 2, small, &two);
        FUZZ_CHECK(rc_one == rc_two, "the scan %s with batches of %d rows and 2 threads, %s with the defaults",
                   rc_two == PQ_OK ? "succeeds" : "fails", small, rc_one == PQ_OK ? "succeeds" : "fails");
        if (rc_one == PQ_OK)
            FUZZ_CHECK(one.len == two.len && one.hash == two.hash,
                       "batches of %d rows and 2 threads give other CSV (%llu bytes, %llu by default)", small,
                       (unsigned long long)two.len, (unsigned long long)one.len);
    }
    pq_query_free(q);
    q = NULL;

    /* A predicate on a top-level column: the first primitive one for half
     * of the inputs, any one for the others (nested columns take only
     * IS [NOT] NULL: other tests fall back to that). */
    const pq_node *root = ft->schema.root;
    if (root->n_children == 0) return;
    const pq_node *col = NULL;
    int32_t pick = (int32_t)((seed >> 48) % (uint64_t)(2 * root->n_children));
    if (pick < root->n_children) col = root->children[pick];
    for (int32_t i = 0; !col && i < root->n_children; i++)
        if (root->children[i]->kind == PQ_NODE_PRIMITIVE) col = root->children[i];
    if (!col) col = root->children[0];
    const size_t n_tests = sizeof tests / sizeof tests[0];
    char *where = predicate(col->name, tests[(seed >> 8) % n_tests]);
    if (!where) return;
    const char *wheres[1] = {where};
    spec.wheres = wheres;
    spec.n_wheres = 1;
    const char *select[1] = {ft->schema.root->children[ft->schema.root->n_children - 1]->name};
    if ((seed >> 24) % 3 == 0) {
        spec.select = select;
        spec.n_select = 1;
    }
    if (pq_query_compile(&ft->schema, NULL, NULL, 0, &spec, &q, &err) != PQ_OK) {
        free(where);
        where = predicate(col->name, (seed >> 12) & 1 ? "IS NULL" : "IS NOT NULL");
        if (!where) return;
        wheres[0] = where;
        if (pq_query_compile(&ft->schema, NULL, NULL, 0, &spec, &q, &err) != PQ_OK) q = NULL;
    }
    if (q) {
        pq_buf plan;
        pq_buf_init(&plan);
        if (pq_scan_plan(q, sf, 1, &opts, &plan, NULL, &err) != PQ_OK)
            FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        pq_buf_free(&plan);
        q->limit = (seed >> 16) % 3 == 0 ? (int64_t)((seed >> 20) % 50) : -1;
        pq_scan_file faulty_sf = *sf;
        pq_file *inner = NULL, *faulty = NULL;
        if ((seed >> 28) % 3 == 0 && pq_file_open_mem("faulty.parquet", data, size, &inner, &err) == PQ_OK) {
            pq_fault_plan fp;
            pq_fault_plan_init(&fp);
            fp.fail_read_after = (seed >> 32) % 5 == 4 ? -1 : (int64_t)((seed >> 32) % 5);
            fp.short_reads = (seed >> 40) & 1;
            if (pq_file_wrap_faulty(inner, &fp, &faulty, &err) == PQ_OK) faulty_sf.file = faulty;
        }
        pq_scan_stats st;
        if (pq_scan_csv(q, &faulty_sf, 1, &opts, &sink, &st, &err) != PQ_OK)
            FUZZ_CHECK(err.msg[0] != '\0', "error without a message");
        pq_file_close(faulty);
    }
    pq_query_free(q);
    free(where);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pq_file *f;
    pq_footer *ft = fuzz_open_parquet(data, size, &f);
    if (!ft) return 0;
    if (small_enough(ft, data, size, MAX_ROWS)) {
        pq_scan_file sf = {.name = NULL, .file = f, .footer = ft, .part_values = NULL};
        scan(&sf, ft, data, size, fuzz_hash(data, size));
    }
    pq_footer_free(ft);
    pq_file_close(f);
    return 0;
}
