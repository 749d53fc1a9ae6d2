/* Delta Lake log replay (PROTOCOL.md of delta-io/delta): the state of a
 * table at one version, from its checkpoint and the JSON commits after it.
 *
 * A replay is fed actions in log order: the checkpoint's (its Parquet rows
 * through our own reader, or a v2 checkpoint's JSON lines, then its
 * sidecars), then each commit's lines.  add and remove are reconciled by
 * their key, the path (URL-decoded once) and the deletion vector's unique
 * id: the last action for a key wins.  protocol and metaData: the last one
 * wins.  Every field is checked as it is taken (types, ranges, lengths);
 * a bad one fails the replay with the file, the line (or row) and what was
 * wrong, never an abort.
 *
 * Private to tablefmt/ (the unit tests and the fuzz target include it too);
 * tablefmt.h is the public side. */
#ifndef PQ_DELTA_LOG_H
#define PQ_DELTA_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "expr.h"
#include "io.h"
#include "mem.h"
#include "status.h"

/* A commit or checkpoint file larger than this is refused (a log line is
 * one action; a commit of a million adds is ~500 MiB of JSON). */
#define PQ_DELTA_MAX_JSON_BYTES ((uint64_t)1 << 30)
/* Digits of a version in a log file name. */
#define PQ_DELTA_VERSION_DIGITS 20

typedef struct pq_delta_dv {
    char storage;              /* 'u' (relative path), 'i' (inline), 'p' (absolute path); 0: no deletion vector */
    const char *path_or_inline;
    int64_t offset;            /* -1 when not given */
    int64_t size_in_bytes;
    int64_t cardinality;
} pq_delta_dv;

typedef struct pq_delta_add {
    const char *path;          /* URL-decoded, relative to the table root */
    int64_t size;
    int64_t mod_time_ms;
    const char *stats;         /* add.stats as written (JSON text), NULL when none */
    const char **part_keys;    /* add.partitionValues as written (physical names) */
    const char **part_vals;    /* NULL: null */
    int n_part;
    pq_delta_dv dv;
    const char *key;           /* path, then the deletion vector's unique id */
    bool live;
} pq_delta_add;

/* One top-level column of metaData.schemaString. */
typedef struct pq_delta_field {
    const char *name;          /* logical */
    const char *physical;      /* delta.columnMapping.physicalName, else name */
    const char *type;          /* a primitive's name ("long", "decimal(10,2)"), else "struct", "array", "map" */
    bool nullable;
} pq_delta_field;

struct pq_delta_log;
struct pq_delta_where;
/* Called with every action the replay applies (kind, its json_t), after
 * it is applied: what a checkpoint writer keeps (delta_checkpoint.c).  It
 * may hold the value (json_incref): with a keep function the replay's trees
 * are the heap's, not a batch's arena (json_arena.h). */
typedef int (*pq_delta_keep_fn)(void *ctx, struct pq_delta_log *log, const char *kind, const void *value,
                                const struct pq_delta_where *w, pq_error *err);

typedef struct pq_delta_log {
    pq_arena arena;            /* every string and array below */
    pq_delta_keep_fn keep;     /* NULL: nothing kept beyond the snapshot */
    void *keep_ctx;
    int64_t version;           /* the last commit applied (-1: none yet) */
    int64_t checkpoint_version; /* -1: replayed from commit 0 */
    /* protocol */
    bool has_protocol;
    int64_t min_reader, min_writer;
    const char **reader_features;
    int n_reader_features;
    const char **writer_features;
    int n_writer_features;
    /* metaData */
    bool has_metadata;
    const char *schema_string;
    const char *table_id;      /* metaData.id (NULL: none written) */
    const char **part_cols;    /* partitionColumns (logical names) */
    int n_part_cols;
    const char *mapping_mode;  /* delta.columnMapping.mode, NULL: none */
    void *config_json;         /* json_t of metaData.configuration (NULL: none): what writers must honour */
    /* delta.dataSkippingStringPrefixLength as written (NULL: none; "?"
     * when it was not a string): how far strings in add.stats may be cut. */
    const char *string_prefix;
    /* Physical names are used (pq_delta_finish): mode name, honoured only
     * where the protocol has column mapping (reader version 2, or 3 with
     * the columnMapping feature); elsewhere the display names are. */
    bool mapping_by_name;
    /* Mode id, where honoured: columns are the files' with the field id
     * (delta.columnMapping.id) of the schema's, whatever their names. */
    bool mapping_by_id;
    void *schema_json;         /* json_t of schemaString, parsed by pq_delta_finish */
    pq_delta_field *fields;    /* pq_delta_finish */
    int n_fields;
    /* file actions */
    pq_delta_add *adds;        /* every add seen; the live ones are the snapshot */
    int n_adds, cap_adds;
    int32_t *slots;            /* open addressing: add index, -1 empty, -2 deleted */
    uint32_t n_slots, n_used;
    int n_live;
    /* v2 checkpoints: sidecar files named by the checkpoint (relative to
     * _delta_log/_sidecars/) */
    const char **sidecars;
    int n_sidecars;
} pq_delta_log;

void pq_delta_log_init(pq_delta_log *log);
void pq_delta_log_free(pq_delta_log *log);

/* Where an action came from: a file and its line (or a checkpoint's row). */
typedef struct pq_delta_where {
    const char *file;
    int64_t line;
    const char *unit;          /* "line" or "row" */
    bool checkpoint;           /* removes are tombstones there: not applied */
} pq_delta_where;

/* One action, `kind` its name ("add", "remove", "protocol", ...) and
 * `value` its json_t.  Unknown kinds are skipped (commitInfo, txn, cdc,
 * domainMetadata, and what later protocols add). */
int pq_delta_apply_action(pq_delta_log *log, const char *kind, const void *value, const pq_delta_where *w,
                          pq_error *err);
/* The lines of a commit or a v2 checkpoint's JSON file (each one object of
 * actions; blank lines are allowed). */
int pq_delta_apply_json(pq_delta_log *log, const char *text, size_t len, const char *file, bool checkpoint,
                        pq_error *err);
/* The same for a part of a file that ends at a line's end: *line counts the
 * lines before it, and is advanced (a file read in pieces, its line numbers
 * in messages as in one piece). */
int pq_delta_apply_json_lines(pq_delta_log *log, const char *text, size_t len, const char *file, bool checkpoint,
                              int64_t *line, pq_error *err);
/* After the last action: protocol and metaData present, the protocol one
 * this build reads (PQ_E_UNSUPPORTED naming the feature), schemaString
 * parsed, partition columns in it. */
int pq_delta_finish(pq_delta_log *log, const char *what, pq_error *err);

/* The table at `root` of the store (its _delta_log/) as of `version`
 * (< 0: the latest): the newest complete checkpoint at or before it, then
 * every commit after it, each one required.  log is initialized here (free
 * it with pq_delta_log_free whatever this returns); on success it has been
 * finished (pq_delta_finish). */
int pq_delta_replay(pq_store *store, const char *root, int64_t version, pq_delta_log *log, pq_error *err);
/* pq_delta_replay, every action also handed to keep (with ctx). */
int pq_delta_replay_keeping(pq_store *store, const char *root, int64_t version, pq_delta_keep_fn keep, void *ctx,
                            pq_delta_log *log, pq_error *err);

/* The key of an add or remove action (its path decoded once, then its
 * deletion vector's id), in the log's arena: what reconciles them. */
int pq_delta_file_key(pq_delta_log *log, const void *action, const char *kind, const struct pq_delta_where *w,
                      const char **key, pq_error *err);

/* The version of the table at `root` at time `ms` (ms since the epoch):
 * the newest commit written at or before it, by the store's modification
 * times of the commit files, made increasing as Delta's readers make them
 * (a commit timed at or before the one before it counts as 1 ms after
 * it).  PQ_E_NOTFOUND when ms is before the oldest commit in the log;
 * PQ_E_UNSUPPORTED when the store gives no modification times. */
int pq_delta_version_at(pq_store *store, const char *root, int64_t ms, int64_t *version, pq_error *err);

/* One column of the statistics asked for: its name in add.stats (the
 * physical name) and its Delta type ("long", "decimal(10,2)"...); physical
 * NULL: a column without statistics (a partition column, a nested one). */
typedef struct pq_delta_stats_col {
    const char *physical;
    const char *type;
} pq_delta_stats_col;

/* An add's stats JSON (numRecords, minValues, maxValues, nullCount,
 * tightBounds) as ranges of cols (out[i] for cols[i]), string values in
 * `a`; strings of prefix_len bytes or more may have been cut by the
 * writer (delta_stats.c says how each type is made safe).  Returns the
 * number of columns something is known of (0: stats absent, not JSON, or
 * without numRecords), -1 out of memory (then nothing is known).  Never
 * fails on bad input: what it does not understand proves nothing. */
int pq_delta_stats_ranges(const char *stats, size_t len, const pq_delta_stats_col *cols, int n_cols,
                          int32_t prefix_len, pq_arena *a, pq_col_range *out);

/* A log file opened with its size checked against PQ_DELTA_MAX_JSON_BYTES
 * (a larger one is PQ_E_UNSUPPORTED, nothing left open); and its bytes,
 * whole, NUL-terminated (*out malloc'd). */
int pq_delta_open_log_file(pq_store *store, const char *path, pq_file **out, uint64_t *size, pq_error *err);
int pq_delta_read_log_file(pq_store *store, const char *path, char **out, size_t *len, pq_error *err);

/* Reader features this build reads (protocol readerFeatures). */
bool pq_delta_reader_feature_supported(const char *name);

/* A file name of _delta_log/. */
typedef enum pq_delta_name_kind {
    PQ_DELTA_NAME_OTHER = 0,   /* .crc, _last_checkpoint, compacted logs, temp files: not read */
    PQ_DELTA_NAME_COMMIT,      /* N.json */
    PQ_DELTA_NAME_CHECKPOINT,  /* N.checkpoint.parquet */
    PQ_DELTA_NAME_MULTIPART,   /* N.checkpoint.P.K.parquet: part P of K */
    PQ_DELTA_NAME_V2,          /* N.checkpoint.UUID.json or .parquet */
} pq_delta_name_kind;

typedef struct pq_delta_name {
    pq_delta_name_kind kind;
    int64_t version;
    int32_t part, n_parts;     /* MULTIPART */
    bool json;                 /* V2 in JSON */
} pq_delta_name;

pq_delta_name pq_delta_parse_name(const char *name);

/* The checkpoint a replay of version `target` starts from: the newest
 * complete one at or before it (a multi-part one needs every part), among
 * `names` (a _delta_log/ listing).  Returns its version, -1 when none; the
 * names of its files (indexes into names) go to *files, their count to
 * *n_files (room for the listing's count).  Several complete ones at one
 * version: a classic one, then multi-part, then v2 (the first by name). */
int64_t pq_delta_choose_checkpoint(const char *const *names, int n, int64_t target, int *files, int *n_files);

/* Z85 (ZeroMQ's base 85, which Delta's deletion vectors use): n a multiple
 * of 5, out has room for n / 5 * 4 bytes.  -1 on a character outside the
 * alphabet, a group past 2^32, or n not a multiple of 5. */
int pq_z85_decode(const char *s, size_t n, uint8_t *out);
/* A deletion vector's bytes (the magic number, then the portable 64-bit
 * roaring format) into its row indexes, ascending; the count must be
 * `cardinality`. */
int pq_delta_dv_decode(const uint8_t *p, size_t len, uint64_t cardinality, uint64_t **rows, uint64_t *n_rows,
                       pq_error *err);

/* A Delta interval setting (delta.deletedFileRetentionDuration, ...) in
 * ms, as Spark's interval strings spell it: an optional "interval", then
 * one or more "N UNIT" (UNIT week, day, hour, minute, second, millisecond
 * or microsecond, singular or plural, any case; N an integer with an
 * optional sign, a fraction for seconds only), summed.  -1 when the text
 * is not one, names months or years (no fixed length: Delta refuses them
 * for a retention), or sums below 0. */
int64_t pq_delta_interval_ms(const char *text);

/* Percent-decoding of a log path (a URI's path: %XX escapes only, decoded
 * once).  *out in the arena.  A malformed escape or a decoded NUL is an
 * error (-1); out of memory -2. */
int pq_delta_decode_path(pq_arena *a, const char *s, const char **out);

#endif
