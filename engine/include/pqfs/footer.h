/* A Parquet file's footer: read with one speculative read of the tail,
 * decoded, validated and turned into a schema.  Immutable once built, so one
 * footer can be shared by every scan of the file (the footer cache). */
#ifndef PQ_FOOTER_H
#define PQ_FOOTER_H

#include "io.h"
#include "meta.h"
#include "schema.h"

/* The tail read that usually holds the whole footer. */
#define PQ_FOOTER_SPECULATIVE_READ (64 * 1024)

typedef struct pq_footer {
    pq_file_meta meta;
    pq_schema schema;
    uint64_t file_size;
    uint32_t meta_len;         /* thrift-encoded FileMetaData bytes */
    uint8_t *meta_buf;         /* holds the encoded metadata (statistics point into it) */
    bool legacy_chunk_sizes;   /* parquet-mr < 1.2.9: see pq_chunk_extent_of */
    pq_arena arena;
} pq_footer;

/* Reads and validates the footer of `f`.  Errors are prefixed with nothing:
 * callers add the file name.  Encrypted files (PARE magic, or an encryption
 * algorithm in a plaintext footer) are refused as PQ_E_UNSUPPORTED. */
int pq_footer_read(pq_file *f, pq_footer **out, pq_error *err);
/* The same with the tail read sized `guess` bytes (at least 8): a caller that
 * has seen the footers of sibling files guesses close to their size, reading
 * little more than the footer in one read.  A guess too small costs one more
 * read of only the missing bytes. */
int pq_footer_read_guess(pq_file *f, size_t guess, pq_footer **out, pq_error *err);
/* The guess for a file whose sibling files' footers were at most
 * `max_meta_len` bytes (0: none seen yet, the default speculative read). */
size_t pq_footer_guess(uint32_t max_meta_len);
/* Decodes a footer from the file's full bytes (fuzzers, tests). */
int pq_footer_parse(const uint8_t *tail, size_t tail_len, uint64_t file_size, pq_footer **out,
                    pq_error *err);
void pq_footer_free(pq_footer *ft);

/* Schema evolution: the schema of a table whose files' schemas differ, as
 * DuckDB's read_parquet(union_by_name = true) and Spark's mergeSchema read
 * it.  Its columns are every file's top-level columns by name, in the order
 * they first appear (files added in table order); a column some file lacks
 * or has optional is optional; a primitive column's type is the widest of
 * its files' (schema.h: pq_node_union_type).  Nested columns must have one
 * shape in every file.  An incompatible pair (a string beside an integer, a
 * struct beside an integer): with `strict`, pq_schema_union_add fails naming
 * the column, both files and both types; without, the first type stays the
 * table's and pq_query_bind_file finds the file's column incompatible
 * (the scans that read it fail, naming it).  Footers may be freed once
 * added: the union keeps copies of what it needs. */
typedef struct pq_schema_union pq_schema_union;
int pq_schema_union_new(bool strict, pq_schema_union **out, pq_error *err);
/* Adds one file's schema (after pq_tf_apply_types, for a table format);
 * `file` names it in messages. */
int pq_schema_union_add(pq_schema_union *u, const pq_footer *ft, const char *file, pq_error *err);
/* Sets the table's type of the primitive column `name` (a table format's
 * type for it, as the union's files' names have it): every file's type so
 * far must widen to it (pq_node_widen); PQ_E_USAGE otherwise. */
int pq_schema_union_set_type(pq_schema_union *u, const char *name, const pq_node *type, pq_error *err);
/* The union as a footer that holds only a schema (meta.schema, the
 * elements a Parquet output of the table writes, and schema; no row
 * group): what pq_query_compile and pq_scan_parquet take as the table's.
 * pq_footer_free frees it.  A table format's names and types
 * (pq_tf_apply_types) are applied to it as to any file. */
int pq_schema_union_finish(const pq_schema_union *u, pq_footer **out, pq_error *err);
int pq_schema_union_files(const pq_schema_union *u);
void pq_schema_union_free(pq_schema_union *u);

/* Where a column chunk's pages are in the file. */
typedef struct pq_chunk_extent {
    uint64_t start;            /* first page (dictionary page when there is one) */
    uint64_t len;              /* bytes up to the end of the last data page */
} pq_chunk_extent;

/* Validates the chunk's offsets against the file size and returns its extent.
 * `file_size` is the size of the data file.  `legacy_padding`: the writer is
 * parquet-mr before 1.2.9, which left the dictionary page header out of
 * total_compressed_size (PARQUET-816); the extent is then extended by up to
 * 100 bytes, as other readers do. */
int pq_chunk_extent_of(const pq_column_chunk *cc, uint64_t file_size, bool legacy_padding,
                       pq_chunk_extent *out, pq_error *err);

#endif
