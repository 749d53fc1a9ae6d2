/* Column chunk writer: the values of one leaf column in one row group, given
 * as column batches (levels and typed values, as the reader produces them),
 * become a sealed column chunk: its bytes (a dictionary page, then data pages
 * v1), its ColumnMetaData, and its page index (column index and page
 * locations).  Chunks are independent of each other, so a row group's columns
 * can be encoded as parallel tasks; the file writer (filewrite.h) places them.
 *
 * Encoding choices, made as the values arrive:
 *   - dictionary (RLE_DICTIONARY data pages, a PLAIN dictionary page) until
 *     the dictionary passes dict_limit bytes; the pages after that are PLAIN.
 *     Booleans are always PLAIN.
 *   - levels: RLE / bit-packed hybrid with the v1 length prefix.
 *   - a page ends at a row boundary once its encoded bytes reach page_size.
 *   - statistics per page and per chunk (min/max in the type's sort order,
 *     null count) where the type has an order this writer knows: signed and
 *     unsigned integers, floats (NaN left out), booleans, and byte arrays
 *     compared as unsigned bytes (decimals, INT96, FLOAT16 and intervals get
 *     a null count only).  Byte-array bounds longer than 64 bytes are
 *     truncated: the min to a prefix, the max to a prefix incremented, marked
 *     inexact; the column index is left out when a page has no bounds.
 *   - a bloom filter (bloom_filter): XXH64 of every value's PLAIN bytes,
 *     sized for the distinct hashes at bloom_fpp (not for booleans). */
#ifndef PQ_COLWRITE_H
#define PQ_COLWRITE_H

#include "column.h"
#include "meta.h"
#include "schema.h"

/* Rows per row group when a writer is not told (SPEC section 6). */
#define PQ_DEFAULT_ROW_GROUP_ROWS 1048576

typedef struct pq_write_opts {
    pq_codec codec;
    int level;                 /* codec level; 0: the codec's default */
    size_t page_size;          /* encoded bytes per data page; 0: 1 MiB */
    size_t dict_limit;         /* dictionary bytes before PLAIN takes over; 0: 1 MiB */
    bool no_dictionary;
    bool no_statistics;        /* neither page nor chunk statistics, no column index */
    bool bloom_filter;         /* a split block bloom filter of the chunk's values */
    double bloom_fpp;          /* its false-positive rate; 0: 0.01 */
    /* Columns, by top-level name or leaf path, that get a bloom filter as
     * if bloom_filter were set (one set of options serves a whole file). */
    const char *const *bloom_columns;
    int n_bloom_columns;
} pq_write_opts;

void pq_write_opts_init(pq_write_opts *o);

/* A sealed chunk.  Offsets (meta.data_page_offset, dictionary_page_offset,
 * page_locations[].offset) are relative to the chunk's first byte: the file
 * writer adds where the chunk lands. */
typedef struct pq_chunk_out {
    pq_buf bytes;
    pq_column_meta meta;
    int64_t num_rows;
    pq_buf column_index;       /* thrift ColumnIndex; len 0: none */
    pq_buf bloom;              /* BloomFilterHeader and bitset; len 0: none */
    pq_page_location *pages;   /* the offset index */
    int32_t n_pages;
    pq_arena arena;            /* meta's arrays and bounds, pages */
} pq_chunk_out;

void pq_chunk_out_free(pq_chunk_out *c);
/* Frees an array of n sealed chunks (a row group never appended). */
void pq_chunks_free(pq_chunk_out *chunks, int32_t n);

/* A sealed chunk that holds an existing chunk unchanged: its bytes
 * (`bytes`, the chunk's extent of `len` bytes, which began at file offset
 * `start`), its metadata with the offsets rebased, its page locations (from
 * `oi`, when given) and its column index (`column_index`, raw, when given).
 * The metadata is copied into the chunk's arena.  Only what a reader may
 * trust in the new file is kept: min_value/max_value and the column index
 * when `type_ordered` (the source declared TYPE_DEFINED order), never the
 * deprecated min/max, no bloom filter (pq_chunk_copy_from adds the source's).  A page location outside
 * the extent is PQ_E_CORRUPT. */
int pq_chunk_copy(const pq_column_meta *src, int64_t num_rows, bool type_ordered, const uint8_t *bytes,
                  uint64_t start, uint64_t len, const pq_offset_index *oi, const uint8_t *column_index,
                  size_t column_index_len, pq_chunk_out *out, pq_error *err);

/* The order of a column's values, as statistics and sorting compare them. */
typedef enum pq_value_order {
    PQ_ORD_NONE,      /* no order this writer knows: null counts only */
    PQ_ORD_BOOL, PQ_ORD_I32, PQ_ORD_U32, PQ_ORD_I64, PQ_ORD_U64, PQ_ORD_F32, PQ_ORD_F64,
    PQ_ORD_BYTES,     /* unsigned lexicographic */
    PQ_ORD_DEC_BE,    /* DECIMAL bytes: big-endian two's complement, signed */
} pq_value_order;

pq_value_order pq_value_order_of(const pq_node *n);
/* Compares two PLAIN values (fixed types) or byte strings (BYTES, DEC_BE).
 * Floats: NaN compares equal to everything (callers leave NaN out). */
int pq_value_order_cmp(pq_value_order k, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

typedef struct pq_colwriter pq_colwriter;

/* A writer for `leaf` (its node must stay valid until finish). */
int pq_colwriter_new(const pq_leaf *leaf, const pq_write_opts *opts, pq_colwriter **out, pq_error *err);
/* Appends a batch of whole rows; its values are copied or encoded before
 * this returns. */
int pq_colwriter_add(pq_colwriter *w, const pq_col_batch *b, pq_error *err);
/* Seals the chunk into *out (initialised here) and frees nothing: the writer
 * is freed with pq_colwriter_free. */
int pq_colwriter_finish(pq_colwriter *w, pq_chunk_out *out, pq_error *err);
void pq_colwriter_free(pq_colwriter *w);

#endif
