/* A table: the Parquet files under one directory of a store, with Hive
 * partitions (SPEC section 2).
 *
 *   events/dt=2024-01-01/region=eu/part-0.parquet
 *
 * Discovery walks the directory tree through the store's `list`, parses
 * `key=value` components (percent-decoded; __HIVE_DEFAULT_PARTITION__ is NULL),
 * fixes the partition layout from what it finds (every file must sit under
 * the same keys in the same order; a path that does not fit is ignored and
 * counted, never guessed at), ignores names starting with `_` or `.` and
 * zero-byte files, and returns the files in table order: partition
 * directories in sorted order (by their directory name, bytewise), files in
 * name order.  A prune callback lets the caller skip whole directories from
 * the partition values seen so far (listing-time partition pruning), so
 * unrelated directories are never listed.
 *
 * The rules in detail (where SPEC is silent these are our choices):
 * - In each directory: a directory named `key=value` (key non-empty) is a
 *   partition directory; a regular, non-empty file whose name ends in
 *   `.parquet` (any case) is a data file.  Everything else is ignored without
 *   being counted: names starting with `_` or `.` (`_SUCCESS`, `.crc`,
 *   `_temporary/`, upload temp files), empty files, other files, and plain
 *   directories (no `=`), which are never listed.
 * - Table order is depth first; in each directory the partition directories
 *   (sorted by raw name) come before the directory's own files (sorted by
 *   name).  The layout is the chain of keys above the first data file in that
 *   order.  Subdirectories first, so that a stray file at the root of a
 *   partitioned table does not turn the whole table into that one file.
 * - Once the layout is fixed, a data file at another depth and a partition
 *   directory whose key is not the layout's key at its depth do not fit:
 *   each counts once in n_ignored, and such a directory is not listed (on S3 a
 *   listing is a request), so the files under it are not counted one by one.
 *   A directory repeating a key already in its path does not fit either, nor
 *   does one whose value does not parse as its declared type, nor one deeper
 *   than PQ_TABLE_MAX_DEPTH partition levels.
 * - Keys and values are percent-decoded; an escape that is malformed, or that
 *   decodes to a NUL byte, leaves the component's raw text.  `key=` is the
 *   empty string, not NULL.  Names are compared bytewise (keys are case
 *   sensitive, declared names too).
 * - Types: declared ones win (a declared name not in the layout is an error
 *   naming it, unless the table holds no file at all: then the declared names,
 *   in their order, are the layout).  Otherwise inferred over the values of
 *   the files returned: all `-?[0-9]+` fitting int64 -> INT64, all valid
 *   `YYYY-MM-DD` -> DATE, else STRING; NULLs do not vote; only NULLs ->
 *   STRING.  With a prune callback only the values visited vote, so callers
 *   wanting the same layout and types as the whole table pass them in
 *   (expected_layout, declared) from an unpruned discovery. */
#ifndef PQ_TABLE_H
#define PQ_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "io.h"
#include "status.h"

/* Partition levels below a table root that discovery descends; deeper
 * directories are ignored (and counted). */
#define PQ_TABLE_MAX_DEPTH 64

typedef enum pq_part_type {
    PQ_PART_INFER = 0,         /* not declared: inferred from the values */
    PQ_PART_INT64,
    PQ_PART_DATE,
    PQ_PART_STRING,
    /* Only from a table format's typed schema (a Delta `double` or `float`
     * partition column): never inferred from directory names, never
     * declared in the ini. */
    PQ_PART_DOUBLE,
    /* Likewise, a Delta `boolean` ("true"/"false"), `timestamp` (UTC:
     * "YYYY-MM-DD HH:MM:SS[.ffffff]", or ISO 8601 with a zone) and
     * `timestamp_ntz` (no zone). */
    PQ_PART_BOOL,
    PQ_PART_TIMESTAMP,
    PQ_PART_TIMESTAMP_NTZ,
    /* Likewise, a Delta `decimal(P,S)`: the type carries its precision and
     * scale (pq_part_decimal), values are exact ("1.50", "-3", "2.5" at
     * scale 2). */
    PQ_PART_DECIMAL_FIRST = 64,
    PQ_PART_DECIMAL_LAST = PQ_PART_DECIMAL_FIRST + 38 * 64 + 38,
} pq_part_type;

/* DECIMAL(precision 1..38, scale 0..precision) as a partition type. */
static inline pq_part_type pq_part_decimal(int precision, int scale)
{
    return (pq_part_type)(PQ_PART_DECIMAL_FIRST + precision * 64 + scale);
}
static inline bool pq_part_is_decimal(pq_part_type t)
{
    return t >= PQ_PART_DECIMAL_FIRST + 64 && t <= PQ_PART_DECIMAL_LAST;
}
static inline int pq_part_decimal_precision(pq_part_type t)
{
    return ((int)t - PQ_PART_DECIMAL_FIRST) / 64;
}
static inline int pq_part_decimal_scale(pq_part_type t)
{
    return ((int)t - PQ_PART_DECIMAL_FIRST) % 64;
}

typedef struct pq_part_decl {
    const char *name;
    pq_part_type type;
} pq_part_decl;

typedef struct pq_table_file {
    char *path;                /* relative to the store root */
    pq_stat st;                /* size and mtime: the file's identity */
    char **values;             /* one decoded value per partition column; NULL = NULL partition */
} pq_table_file;

typedef struct pq_table {
    char *root;                /* directory of the table, relative to the store root ("" = root) */
    int n_parts;
    char **part_names;
    pq_part_type *part_types;  /* declared, else inferred: all integers -> INT64, all YYYY-MM-DD -> DATE, else STRING */
    pq_table_file *files;
    int n_files;
    int n_ignored;             /* paths that did not fit the layout */
    int n_dirs_pruned;         /* partition directories the prune callback skipped (never listed) */
    char ignored_first[300];   /* the first of them and why, for the log ("" none) */
} pq_table;

/* Called before descending into a partition directory with the values of
 * the partition columns so far (depth = how many are known, names/values
 * parallel arrays, a value NULL for the NULL partition).  Return false to
 * skip the directory.  The type of each column is not known yet at that
 * point (inference needs every value): callers that compare typed values
 * should treat values leniently (a value that does not parse: keep). */
typedef bool (*pq_part_prune_fn)(void *ctx, int depth, const char *const *names,
                                 const char *const *values);

typedef struct pq_table_opts {
    const pq_part_decl *declared;  /* declared partition columns (ini), may be NULL */
    int n_declared;
    pq_part_prune_fn prune;        /* may be NULL */
    void *prune_ctx;
    /* The layout known from an earlier discovery (may be NULL): fixes the
     * layout from the start instead of taking it from the first file, so a
     * pruned discovery cannot settle on another one. */
    const char *const *expected_layout;
    int n_expected_layout;
} pq_table_opts;

/* opts may be NULL.  On success *out is a new table (free with
 * pq_table_free); on failure *out is NULL. */
int pq_table_discover(pq_store *store, const char *root, const pq_table_opts *opts, pq_table **out,
                      pq_error *err);
void pq_table_free(pq_table *t);

/* Whether a directory (one listing level) holds Parquet files or key=value
 * directories directly: the SPEC section 2 test for "the root is one table". */
int pq_dir_is_table_root(pq_store *store, const char *dir, bool *out, pq_error *err);

/* Percent-decoding of one path component (%2F -> '/'), each `%XX` (two hex
 * digits) on its own: a `%` that starts no escape stays, so `LIKE 'ab%'`
 * reads as typed.  Returns the length (each escape decoded makes it 2
 * shorter), -1 only past INT_MAX bytes.  out has room for n + 1 bytes and
 * is NUL-terminated (%00 decodes to a NUL byte inside the returned length). */
int pq_percent_decode(const char *s, size_t n, char *out);
/* The decoding of a where= expression or select= list (SPEC section 3):
 * only what a path cannot hold, `%2F` (or `%2f`) for '/', and `%25` for a
 * '%' that must not be read so; every other '%' is literal, so `LIKE
 * '%Ada%'` and `LIKE '%41da%'` read as typed, as pqtool --where reads them.
 * Returns the length; out has room for n + 1 bytes, NUL-terminated. */
size_t pq_path_text_decode(const char *s, size_t n, char *out);
/* Percent-encoding for writing partition directory names: '/', '%', '=',
 * control bytes and the characters Hive escapes (uppercase hex).  Returns
 * the encoded length, or -1 when out (cap bytes, NUL-terminated) is too
 * small; 3 * n + 1 bytes always suffice. */
int pq_percent_encode(const char *s, size_t n, char *out, size_t cap);

/* The strict forms inference accepts: `-?[0-9]+` within int64, and a valid
 * proleptic Gregorian `YYYY-MM-DD`. */
bool pq_part_value_is_int64(const char *s);
/* A boolean partition value: 1 true, 0 false, -1 neither ("true" or
 * "false", any case). */
int pq_part_value_bool(const char *s);
/* A timestamp partition value in microseconds since the epoch: with a
 * zone it is converted to UTC; without one it is taken as UTC (utc) or as
 * it is (timestamp_ntz, where a zone is an error).  -1 when it is not one
 * or is finer than microseconds. */
int pq_part_value_micros(const char *s, bool utc, int64_t *micros);
bool pq_part_value_is_date(const char *s);
/* A decimal partition value as the unscaled integer at the type's scale:
 * -1 when it is no decimal, has more digits than the precision holds, or
 * more fractional digits than the scale that are not zeros (never
 * rounded). */
int pq_part_value_decimal(const char *s, pq_part_type type, __int128 *unscaled);
/* Whether a partition value (NULL: the NULL partition) is of that type, and
 * the type as words for messages ("an integer", "a date (YYYY-MM-DD)"). */
bool pq_part_value_fits(const char *value, pq_part_type type);
const char *pq_part_type_kind(pq_part_type type);

#endif
