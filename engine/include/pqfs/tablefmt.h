/* Table formats: what says which files are a table's rows, and what its
 * columns are (docs/table-formats.md).
 *
 *   Hive    the files under the directory, partition values from key=value
 *           directory names, columns from the files' schema (table.h)
 *   Delta   the live files of the transaction log's replay at one version
 *           (_delta_log/), partition values from each add's
 *           partitionValues typed by metaData.schemaString, columns in its
 *           order
 *   Iceberg (later) metadata JSON -> manifest list -> Avro manifests, with
 *           position and equality deletes as per-file extras
 *
 * Every format opens into one snapshot: a pq_table (the files with their
 * typed partition values: what the scan runs on, as for Hive), plus the
 * columns in the format's order and each file's extras (statistics text, a
 * deletion vector).  A feature a format needs that this build does not read
 * is PQ_E_UNSUPPORTED naming it, never read wrong. */
#ifndef PQ_TABLEFMT_H
#define PQ_TABLEFMT_H

#include <stdbool.h>
#include <stdint.h>

#include "expr.h"
#include "io.h"
#include "schema.h"
#include "status.h"
#include "table.h"

typedef enum pq_tf_kind {
    PQ_TF_HIVE = 0,
    PQ_TF_DELTA,
} pq_tf_kind;

/* One column of the table, in the table's order. */
typedef struct pq_tf_column {
    const char *name;          /* as users see it */
    const char *physical;      /* its name in the data files */
    const char *type;          /* the format's type name (Delta: "long", "struct", ...) */
    int part;                  /* index among the table's partition columns; -1: a data column */
    bool nullable;
} pq_tf_column;

/* A deletion vector of a file (Delta; Iceberg's position deletes would
 * come here too). */
typedef struct pq_tf_deletes {
    char storage;              /* Delta storageType: 'u', 'i', 'p'; 0: none */
    const char *path_or_inline;
    int64_t offset;            /* -1: none */
    int64_t size_in_bytes;
    int64_t cardinality;       /* rows deleted */
} pq_tf_deletes;

/* What the format knows of one file of table->files, beyond its path, size
 * and partition values. */
typedef struct pq_tf_file {
    const char *stats;         /* per-file statistics as the format wrote them (Delta add.stats JSON), NULL: none */
    pq_tf_deletes deletes;
} pq_tf_file;

typedef struct pq_tf_snapshot {
    pq_tf_kind kind;
    int64_t version;           /* the format's version (Delta: the commit); -1 for Hive */
    int64_t checkpoint_version; /* Delta: the checkpoint the replay started from, -1: none */
    pq_table *table;           /* the files to scan, with typed partition values */
    pq_tf_column *cols;        /* NULL for Hive (the files' schema is the table's) */
    int n_cols;
    pq_tf_file *files;         /* parallel to table->files; NULL for Hive */
    /* What pq_tf_apply_types makes of a file depends on this alone (a
     * hash of the Delta schemaString and its column mapping): footers seen
     * through one tag may be shared; 0 for Hive. */
    uint64_t schema_tag;
    /* The table's identity (Delta: metaData.id, which a table made anew
     * at the same place does not share); NULL for Hive or when absent. */
    const char *table_id;
    void *priv;                /* the format's own state */
} pq_tf_snapshot;

typedef struct pq_tf_opts {
    int64_t version;           /* < 0: the latest; else that version (time travel; an error for Hive) */
    const pq_table_opts *hive; /* Hive discovery options (may be NULL) */
    /* The caller applies each file's deletes (pq_tf_deleted_rows into
     * pq_scan_file.deleted_rows); otherwise a live file with deletes fails
     * the open (PQ_E_UNSUPPORTED naming the feature), never read whole. */
    bool apply_deletes;
} pq_tf_opts;

const char *pq_tf_kind_name(pq_tf_kind kind);

/* The snapshot in one line, as plans start with it ("table: Delta Lake,
 * version 3 (from the checkpoint of version 3), 3 live files\n"); nothing
 * for Hive.  Nonzero when out of memory. */
int pq_tf_describe(const pq_tf_snapshot *s, pq_buf *out);

/* Which format the directory at root is: Delta when it holds _delta_log/,
 * else Hive. */
int pq_tf_detect(pq_store *store, const char *root, pq_tf_kind *out, pq_error *err);

/* The table at root as of opts->version (opts may be NULL: the latest).
 * On success *out is a new snapshot (pq_tf_snapshot_free). */
int pq_tf_open(pq_store *store, const char *root, const pq_tf_opts *opts, pq_tf_snapshot **out, pq_error *err);
void pq_tf_snapshot_free(pq_tf_snapshot *s);

/* The version of the table at root at time ms (ms since the epoch): the
 * newest commit written at or before it (Delta: by the store's
 * modification times of the commit files, made increasing).  PQ_E_USAGE
 * for a Hive table, PQ_E_NOTFOUND when ms is before the oldest commit. */
int pq_tf_version_at(pq_store *store, const char *root, int64_t ms, int64_t *version, pq_error *err);

/* Whether s's commits may be found by the files' times: PQ_E_UNSUPPORTED
 * for a table that times them with in-commit timestamps (writer feature
 * inCommitTimestamp, or delta.enableInCommitTimestamps), which this build
 * does not read.  A caller checks the latest snapshot and the one found. */
int pq_tf_check_timed(const pq_tf_snapshot *s, pq_error *err);

/* A partition value of column `part` of s as the format writes it
 * (*canon: into buf, cap >= PQ_FMT_MAX + 8 bytes, or text itself): Delta's
 * spelling of its type (an integer within its type's range without a sign
 * or leading zeros to spare, a finite double as the renderer writes it,
 * true/false, a date, a timestamp as ISO 8601 in UTC with a Z, a
 * timestamp_ntz without a zone, a string as it is), so that one value has
 * one text.  PQ_E_USAGE when the text is not a value of the type.  NULL
 * text: *canon NULL. */
int pq_tf_part_canonical(const pq_tf_snapshot *s, int part, const char *text, char *buf, size_t cap, const char **canon,
                         pq_error *err);

/* The row indexes (0-based, ascending) the deletion vector of
 * snap->table->files[file] deletes, *rows malloc'd (NULL and 0 when it has
 * none): inline (z85) or in a deletion_vector_<uuid>.bin of the table
 * (size and CRC-32 checked), decoded with CRoaring; the count must be the
 * descriptor's cardinality.  An absolute-path vector is read when its URI is
 * inside the store (PQ_E_UNSUPPORTED otherwise).
 * The scan applies them given as pq_scan_file.deleted_rows. */
int pq_tf_deleted_rows(const pq_tf_snapshot *s, pq_store *store, int file, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err);

/* What the format's log says of the columns of snap->table->files[file]
 * before its footer is read (Delta: add.stats), as ranges of the query's
 * columns cols (out[i] for cols[i]; top-level primitive data columns,
 * matched by logical name; string values in `a`), for the scan's rung
 * before the footer (pq_scan_opts.file_ranges).  Returns the number of
 * columns something is known of, 0 when nothing is (Hive; no stats; stats
 * that do not parse), -1 out of memory.  Only bounds that provably hold
 * are given (docs/table-formats.md, "Pruning from log statistics").
 * Thread-safe for concurrent calls on one snapshot. */
int pq_tf_file_ranges(const pq_tf_snapshot *s, int file, const pq_expr_column *cols, int n_cols, pq_arena *a,
                      pq_col_range *out);

/* Gives a data file's schema the table's names and types where the format
 * decides them and the file does not (Delta: column mapping's physical
 * names become the logical ones, in structs too; `timestamp` is UTC
 * whatever the file says, INT96 included, `timestamp_ntz` is not), through
 * structs, lists and maps.  Called on every file of the table (the query's
 * reference included) before it is bound.  Hive: nothing. */
void pq_tf_apply_types(const pq_tf_snapshot *s, pq_schema *schema);

/* The table's schema where the format's types are not the file's, from
 * a data file's footer `ft` (after pq_tf_apply_types): *out a footer that
 * holds only that schema (pq_schema_union_finish's, its types applied),
 * or NULL when the file's schema is the table's.  Delta: a top-level
 * `timestamp` (`timestamp_ntz`) column stored as INT96 is INT64
 * TIMESTAMP(MICROS), UTC (not), the protocol's type, which a Parquet
 * output can say (INT96 has no annotation for UTC); the scan widens each
 * file's INT96 to it (PQ_WIDEN_INT96_MICROS: the microseconds every
 * reader here shows of it).  One nested in a struct, list or map stays
 * INT96.  Hive: NULL. */
struct pq_footer;
int pq_tf_table_schema(const pq_tf_snapshot *s, const struct pq_footer *ft, struct pq_footer **out, pq_error *err);

/* Whether a schema (a data file's or the union of the table's files',
 * after pq_tf_apply_types) holds every data column of the snapshot; an
 * error names the column and the file or table.  Hive: always. */
int pq_tf_check_file_schema(const pq_tf_snapshot *s, const pq_schema *schema, const char *file, pq_error *err);

/* ------------------------------------------------------------------ appends */

/* Whether the table takes appends from this build: a Delta table whose
 * protocol and schema ask nothing of a writer that it cannot honour
 * (writer features beyond those listed in delta_write.c; invariants, CHECK
 * constraints, generated, identity or default columns in use; column
 * mapping).  PQ_E_UNSUPPORTED names what; Hive: always. */
int pq_tf_check_append(const pq_tf_snapshot *s, pq_error *err);

/* A file written into the table for an append. */
typedef struct pq_tf_new_file {
    const char *path;          /* relative to the table's root */
    uint64_t size;
    int64_t modified_ms;
    const char *const *part_values; /* per partition column of s->table, as text; NULL: null */
    const struct pq_footer *footer; /* its footer: the add's statistics (NULL: numRecords only) */
    int64_t rows;
} pq_tf_new_file;

/* Commits f to the table's log as the version after s's (Delta: commitInfo
 * with this append's txnId, and an add with partitionValues and stats,
 * put-if-absent).  A version another writer took first is followed by the
 * next, unless that commit changed the schema or protocol (PQ_E_IO); one
 * whose write failed or whose reply was lost is read back, ours when it
 * carries our txnId.  *version: the version committed.  On failure *maybe
 * says the commit may have landed all the same (its fate could not be
 * read): the caller must then keep the file it names. */
int pq_tf_append(pq_store *store, const pq_tf_snapshot *s, const pq_tf_new_file *f, int64_t *version, bool *maybe,
                 pq_error *err);

/* A checkpoint is written after every this many versions (Delta's
 * checkpointInterval default): version 10, 20, ... */
#define PQ_TF_CHECKPOINT_INTERVAL 10

/* Writes the table's classic checkpoint at `version` (Delta:
 * N.checkpoint.parquet from a replay of that version, then
 * _last_checkpoint); one another writer made first is kept.  A table this
 * writer does not checkpoint (v2Checkpoint), or an action the checkpoint
 * schema cannot hold: PQ_E_UNSUPPORTED, nothing written. */
int pq_tf_checkpoint(pq_store *store, const pq_tf_snapshot *s, int64_t version, pq_error *err);

#endif
