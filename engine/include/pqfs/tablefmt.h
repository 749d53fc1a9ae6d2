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

/* Which format the directory at root is: Delta when it holds _delta_log/,
 * else Hive. */
int pq_tf_detect(pq_store *store, const char *root, pq_tf_kind *out, pq_error *err);

/* The table at root as of opts->version (opts may be NULL: the latest).
 * On success *out is a new snapshot (pq_tf_snapshot_free). */
int pq_tf_open(pq_store *store, const char *root, const pq_tf_opts *opts, pq_tf_snapshot **out, pq_error *err);
void pq_tf_snapshot_free(pq_tf_snapshot *s);

/* The row indexes (0-based, ascending) the deletion vector of
 * snap->table->files[file] deletes, *rows malloc'd (NULL and 0 when it has
 * none): inline (z85) or in a deletion_vector_<uuid>.bin of the table
 * (size and CRC-32 checked), decoded with CRoaring; the count must be the
 * descriptor's cardinality.  An absolute-path vector is PQ_E_UNSUPPORTED.
 * The scan applies them given as pq_scan_file.deleted_rows. */
int pq_tf_deleted_rows(const pq_tf_snapshot *s, pq_store *store, int file, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err);

/* Gives a data file's schema the table's names and types where the format
 * decides them and the file does not (Delta: column mapping's physical
 * names become the logical ones, in structs too; `timestamp` is UTC
 * whatever the file says, INT96 included, `timestamp_ntz` is not), through
 * structs, lists and maps.  Called on every file of the table (the query's
 * reference included) before it is bound.  Hive: nothing. */
void pq_tf_apply_types(const pq_tf_snapshot *s, pq_schema *schema);

/* Whether a schema (a data file's or the union of the table's files',
 * after pq_tf_apply_types) holds every data column of the snapshot; an
 * error names the column and the file or table.  Hive: always. */
int pq_tf_check_file_schema(const pq_tf_snapshot *s, const pq_schema *schema, const char *file, pq_error *err);

#endif
