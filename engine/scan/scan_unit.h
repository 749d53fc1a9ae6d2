/* The scan's shared state, and the work of one unit (scan_unit.c): a row
 * group planned, fetched, filtered and rendered into chunks for the
 * consumer.  scan.c schedules the units: per-file state, the window, the
 * workers, the in-order consumer, the batches of files.  Both sides meet
 * in scan_state under its mutex (the units' states and chunk lists, the
 * window, the shared column task, the counters). */
#ifndef PQ_SCAN_UNIT_H
#define PQ_SCAN_UNIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "scan.h"
#include "scan_parquet.h"

typedef struct chunk {
    struct chunk *next;
    char *data;
    size_t len, cap;
    int32_t rows;
    size_t *row_ends;          /* with a limit: end offset of each row */
    pq_chunk_out *rg;          /* Parquet output: a sealed row group (no text) */
    int32_t n_rg;
} chunk;

enum { UNIT_PENDING, UNIT_RUNNING, UNIT_DONE, UNIT_FAILED };

typedef struct unit {
    int32_t file;
    int32_t rg;                /* -1: the file failed to bind (its error is reported here) */
    int64_t row_cap;           /* rows to produce, -1: all */
    int state;
    chunk *head, *tail;
    size_t buffered;
    bool held;                 /* counted in scan_state.held */
    pq_error err;
} unit;

/* What the query needs per file, computed once before the workers start. */
typedef struct file_state {
    bool pruned;               /* rung 1: the partition values rule the file out */
    bool pruned_log;           /* pruned by the log's statistics (opts.file_ranges) instead */
    bool pruned_missing;       /* ... or a column it lacks (NULL in every row) does */
    bool pruned_stats;         /* ... or its row groups' statistics did, read before (pq_scan_file.stats_out_rgs) */
    bool bind_failed;
    pq_error bind_err;
    const pq_expr *pred;       /* partition values substituted; NULL: no filter */
    int32_t *col_leaf;
    const pq_node **col_node;  /* NULL: a partition column, or a data column the file lacks (NULL) */
    pq_col_fit *fit;           /* per column: how the file holds it (schema evolution) */
    uint8_t *leaf_widen;       /* per leaf of the file: pq_widen to the table's type; NULL: none */
    int32_t *filter_leaves;    /* leaves the predicate reads */
    int32_t *col_filter_leaf;  /* per column: the leaf the filter decodes (a nested column: its first), -1 */
    int32_t n_filter;
    /* The predicate's AND conjuncts and, per conjunct, a mask of the filter
     * leaves (indexes into filter_leaves) it reads: conjuncts are evaluated
     * as soon as their columns are decoded, cheapest column first.  The
     * masks are 64 bits, so a predicate with more conjuncts or filter leaves
     * than that is evaluated whole (n_conj 0): every term, only later. */
    const pq_expr **conj;
    uint64_t *conj_leaves;
    int n_conj;                /* 0: evaluate the whole predicate at once */
    int32_t *read_leaves;      /* projection and filter leaves, distinct */
    int32_t n_read;
    pq_buf *part_cells;        /* CSV text of each partition value */
} file_state;

typedef struct scan_state {
    pthread_mutex_t mu;
    pthread_cond_t work_cv;    /* workers: a unit may be claimed, or space freed */
    pthread_cond_t out_cv;     /* consumer: a chunk arrived or a unit ended */
    unit *units;
    int32_t n_units;
    int32_t next_unit;
    int32_t emit_pos;
    /* Units past emit_pos that run or hold output not written yet: at most
     * `window` of them.  A finished unit with nothing buffered (pruned, or
     * no row matched) is not counted, so workers go on past a slow unit
     * through units that produce nothing instead of waiting for it. */
    int32_t held;
    int32_t window;
    int32_t threads;           /* workers (as many as units at most) */
    int32_t running;           /* units being processed */
    int32_t idle;              /* workers waiting for work */
    struct col_task *task;     /* a window's column reads open to idle workers */
    pthread_cond_t task_cv;    /* the task's owner: its last read finished */
    bool cancel;

    const pq_query *q;
    const pq_scan_file *files;
    int n_files;
    int first_index;           /* files[0]'s index in the caller's list (opts callbacks) */
    /* Per file: the scan opened it, so it passed the rungs before the
     * footer already (NULL: none did). */
    const bool *opened_here;
    file_state *fs;
    pq_arena arena;            /* per-file state */
    const pq_scan_opts *opts;
    int32_t batch_rows;
    bool want_row_ends;
    int64_t limit;             /* rows still wanted, < 0: no limit */
    pq_scan_stats stats;
    /* Chunk buffers written out by the consumer, for workers to reuse: fresh
     * megabyte buffers cost a page fault per 4 KiB. */
    pq_buf spare[8];
    int n_spare;
    /* Parquet output (NULL: CSV).  With a filter and a limit the scan runs
     * on one worker, units in order, and a unit stops at the limit counting
     * the rows of the units before it (rows_before). */
    pq_parquet_out *pq_out;
    bool pq_capped;
    int64_t pq_rows_before;
} scan_state;

/* The column reads of one window, shared with idle workers: each column
 * decodes on its own.  A point lookup's projection is a page decompression
 * per column, and at the tail of a scan the other workers have nothing
 * else to do. */
typedef struct col_task {
    struct unit_ctx *c;
    int32_t n;                 /* rows of the window */
    bool selected;             /* the rows c->keep marks, else all n */
    const int32_t *leaves;
    int32_t n_leaves;
    int32_t next;              /* next leaf to claim (under s->mu) */
    int32_t busy;              /* reads in progress */
    int rc;
    pq_error err;
} col_task;

/* A file's name for messages. */
const char *scan_file_name(const pq_scan_file *f);
/* What the planner needs for file f of the scan. */
void scan_plan_input_of(const scan_state *s, int f, pq_plan_input *in);

/* Runs unit ui: its chunks go to the unit's list for the consumer.  On
 * failure the error carries the file's name (unless cancelled). */
int scan_process_unit(scan_state *s, int32_t ui, pq_error *err);

/* Claims and reads the task's columns until none is left.  Called and
 * returns with s->mu held; never touches the task after that (its owner
 * frees it once no read is in progress and none is left to claim). */
void scan_help_task(scan_state *s, col_task *t, bool helper);

#endif
