/* Scan: a query over files → canonical CSV, in table order, in parallel.
 *
 * The unit of work is one row group.  A worker plans it (the pruning ladder,
 * plan.h), fetches only the bytes the plan needs, decodes the filter columns
 * first, evaluates the predicate into a row selection, decodes the projected
 * columns only for the selected rows (skipping pages that hold none), and
 * renders CSV.  Workers run a bounded window ahead of the consumer, which
 * hands each unit's text to the sink strictly in order: output streams while
 * later row groups are still being decoded.  A failing sink (the reader went
 * away) stops the scan; a failing unit stops it at that unit, after
 * everything before it was written. */
#ifndef PQ_SCAN_H
#define PQ_SCAN_H

#include "colwrite.h"
#include "footer.h"
#include "io.h"
#include "plan.h"
#include "query.h"

typedef struct pq_scan_file {
    const char *name;            /* for messages (NULL: the file's own name) */
    pq_file *file;
    const pq_footer *footer;     /* NULL: opened when the scan reaches it (opts.open_file) */
    const char *const *part_values; /* per partition column; NULL entries: the NULL partition */
    /* Rows of the file that are not the table's (a table format's deletion
     * vector: tablefmt.h's pq_tf_deleted_rows), ascending from the file's
     * first row; never output.  NULL: none. */
    const uint64_t *deleted_rows;
    uint64_t n_deleted;
    /* Set by pq_scan_schema_union(_from) for its query q on a file whose
     * footer it read and let go (beyond keep_bytes): every row group is
     * ruled out by the footer's min/max statistics, as the scan of q would
     * plan them (same binding and partition values; no reads), so that scan
     * does not read the footer again.  stats_out_rgs > 0: ruled out, that
     * many row groups (and rows, bytes of the query's columns), counted as
     * pruned by statistics.  Valid only for a scan with q or a query
     * compiled from the same spec against the same schema: a caller that
     * scans with another clears them (pq_scan_files_forget_verdicts). */
    int32_t stats_out_rgs;
    int64_t stats_out_rows;
    uint64_t stats_out_bytes;
} pq_scan_file;

typedef struct pq_scan_opts {
    int threads;                 /* workers; <= 0: number of cores */
    int32_t batch_rows;          /* rows per decoded batch; <= 0: default */
    bool header;                 /* write the header line */
    bool no_stats, no_dictionary, no_page_index, no_bloom; /* disable pruning rungs */
    /* Fills file and footer of files[index] when the scan reaches a file
     * without a footer; what it opens stays the caller's to close. */
    int (*open_file)(void *ctx, int index, pq_scan_file *file, pq_error *err);
    /* Optional: called once the scan is done with a file open_file opened
     * (the caller may close it and let its footer go); never for a file
     * given with its footer. */
    void (*release_file)(void *ctx, int index);
    void *open_ctx;
    /* Requests worth having in flight: the store's parallel_requests, for
     * stores with slow round trips (<= threads: threads).  Files are opened
     * (a footer read each) this many at a time, and row groups are read by
     * more workers than threads, since a worker waiting on a read holds no
     * core: as many as keep this many requests going (each fetch makes up
     * to its file's parallel_reads), and only as many as keep the row
     * groups in flight under PQ_SCAN_IO_BYTES. */
    int open_parallel;
    /* Optional, the rung before a footer (after the partition values):
     * what a table format's log says of file `index`'s columns (Delta
     * add.stats: tablefmt.h's pq_tf_file_ranges), as ranges of the query's
     * columns (ranges[i] for cols[i], zeroed by the scan; values in
     * `arena`).  Returns > 0 when it knows something, 0 when not, < 0 out
     * of memory (the file is kept).  A file the ranges rule out (the
     * predicate, its partition values folded in, proved FALSE) is never
     * opened: no footer read.  Thread-safe for distinct indexes, as
     * open_file.  NULL: no such rung (Hive). */
    int (*file_ranges)(void *ctx, int index, const pq_expr_column *cols, int n_cols, pq_arena *arena,
                       pq_col_range *ranges);
    void *ranges_ctx;
    /* Partition directories the caller's listing pruned (pq_table's
     * n_dirs_pruned): reported with the plan's totals. */
    uint64_t dirs_pruned;
} pq_scan_opts;

/* Files whose footers a scan without a limit opens at once (scan_all). */
#define PQ_SCAN_FILES_AT_ONCE 512

/* What the extra workers' row groups may hold at once, by compressed size. */
#define PQ_SCAN_IO_BYTES ((int64_t)256 << 20)

void pq_scan_opts_init(pq_scan_opts *o);

typedef struct pq_scan_stats {
    pq_plan_totals plan;         /* what the ladder pruned */
    uint64_t row_groups_read;
    uint64_t rows_out;
    uint64_t rows_filtered;      /* rows run through the row filter */
    uint64_t bytes_fetched;      /* data pages fetched from storage */
    uint64_t pages_read;
    uint64_t pages_skipped;
    uint64_t values_decoded;
    uint64_t reads_shared;       /* window column reads done by an idle worker for another's unit */
    uint64_t row_groups_copied;  /* Parquet output: copied byte for byte */
} pq_scan_stats;

int pq_scan_csv(const pq_query *q, const pq_scan_file *files, int n_files, const pq_scan_opts *opts,
                const pq_sink *sink, pq_scan_stats *stats, pq_error *err);

/* The same rows as a Parquet file on `sink` (scan_parquet.h): `ref` is the
 * footer q->schema belongs to.  Row groups that match entirely are copied
 * byte for byte; the rest of the kept rows are re-encoded with `wopts`.
 * With a filter and a limit the scan runs on one worker (a unit must know
 * how many rows came before it to stop at the limit). */
int pq_scan_parquet(const pq_query *q, const pq_footer *ref, const pq_scan_file *files, int n_files,
                    const pq_scan_opts *opts, const pq_write_opts *wopts, const pq_sink *sink,
                    pq_scan_stats *stats, pq_error *err);

/* Schema evolution: the table's schema over files whose schemas may differ
 * (footer.h: pq_schema_union, not strict: an incompatible column fails only
 * the scans that read it).  Every file's footer is read: those without one
 * through opts->open_file, PQ_SCAN_FILES_AT_ONCE at a time, `open_parallel`
 * (or `threads`) reads at once, the first alone (its size sizes the
 * others' tail reads).  Those it opened stay in files[] for the scan (no
 * footer read twice) while the memory they hold (encoded and decoded) adds
 * up to at most `keep_bytes`; the rest are released (opts->release_file;
 * the scan reads them again as it reaches them), so a table of any size
 * holds at most that much and a batch.  With q (may be NULL), a file whose
 * partition values (or log statistics) q's predicate rules out before its
 * footer is neither opened nor part of the union: the schema is that of the
 * files the scan may read (the first file's when q rules out every one).
 * *out: pq_schema_union_finish's footer, for pq_query_compile (its schema)
 * and pq_scan_parquet (ref). */
int pq_scan_schema_union(pq_scan_file *files, int n_files, const pq_query *q, const pq_scan_opts *opts,
                         size_t keep_bytes, pq_footer **out, pq_error *err);
/* Whether each file may hold a row q's predicate keeps (may[f]), by the
 * rungs that need no data page: partition values and a table format's log
 * statistics before the footer, then its row groups' min/max (the footer
 * read through opts->open_file, PQ_SCAN_FILES_AT_ONCE at a time, and let go
 * through opts->release_file).  For a listing below a filter (readdir lists
 * the partitions that can hold matching rows).  A file whose footer cannot
 * be read, or that its binding fails, may: an error is the scan's to say.
 * footers false: the rungs before a footer only (no file opened). */
int pq_scan_files_may_match(const pq_query *q, pq_scan_file *files, int n_files, const pq_scan_opts *opts,
                            bool footers, bool *may, pq_error *err);
/* Drops the union pass's statistics verdicts (pq_scan_file.stats_out_*):
 * for a scan whose query is not the one the union was given. */
void pq_scan_files_forget_verdicts(pq_scan_file *files, int n_files);
/* The same, the union starting from `seed`'s schema (named seed_name in
 * messages): its columns first and always, whichever files hold them. */
int pq_scan_schema_union_from(const pq_footer *seed, const char *seed_name, pq_scan_file *files, int n_files,
                              const pq_query *q, const pq_scan_opts *opts, size_t keep_bytes, pq_footer **out,
                              pq_error *err);

/* The access plan of the query over the files as text (pqtool plan,
 * plan.txt), without reading data pages. */
int pq_scan_plan(const pq_query *q, const pq_scan_file *files, int n_files, const pq_scan_opts *opts,
                 pq_buf *out, pq_plan_totals *totals, pq_error *err);

#endif
