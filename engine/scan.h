/* Scan: files → row groups → canonical CSV, in table order, in parallel.
 *
 * The unit of work is one row group.  Workers decode and render units ahead
 * of the consumer (a bounded window), and the consumer hands each unit's text
 * to the sink strictly in order, so output is streamed while later row groups
 * are still being decoded.  A sink that fails (reader went away) stops the
 * scan; a unit that fails stops it at that unit, after everything before it
 * was written. */
#ifndef PQ_SCAN_H
#define PQ_SCAN_H

#include "footer.h"
#include "io.h"

typedef struct pq_scan_file {
    pq_file *file;
    const pq_footer *footer;
} pq_scan_file;

typedef struct pq_scan_opts {
    int threads;                 /* workers; <= 0: number of cores */
    int32_t batch_rows;          /* rows per decoded batch; <= 0: default */
    const char *const *select;   /* top-level column names in output order; NULL: all */
    int n_select;
    int64_t limit;               /* < 0: no limit */
    bool header;                 /* write the header line */
} pq_scan_opts;

void pq_scan_opts_init(pq_scan_opts *o);

typedef struct pq_sink {
    int (*write)(void *ctx, const char *data, size_t len, pq_error *err);
    void *ctx;
} pq_sink;

typedef struct pq_scan_stats {
    uint64_t row_groups_total;
    uint64_t row_groups_read;
    uint64_t rows_out;
    uint64_t bytes_fetched;      /* from storage, for data pages */
    uint64_t pages_read;
    uint64_t pages_skipped;
    uint64_t values_decoded;
} pq_scan_stats;

/* Every file must have the schema of the first one (for the selected
 * columns).  stats may be NULL. */
int pq_scan_csv(const pq_scan_file *files, int n_files, const pq_scan_opts *opts, const pq_sink *sink,
                pq_scan_stats *stats, pq_error *err);

int pq_default_threads(void);

#endif
