/* Parquet metadata structures (parquet.thrift) and their decoders.
 *
 * Decoding is a pure function of a byte buffer: nothing read from the file is
 * trusted (lengths, counts, nesting are bounded and checked), unknown fields are
 * skipped.  All decoded memory lives in the caller's arena. */
#ifndef PQ_META_H
#define PQ_META_H

#include "mem.h"
#include "status.h"
#include "types.h"

typedef struct pq_kv {
    const char *key;
    const char *value; /* NULL when unset */
} pq_kv;

typedef struct pq_stats {
    /* min_value / max_value (fields 6/5): ordered by the column's sort order. */
    bool has_min_value, has_max_value;
    pq_bytes min_value, max_value;
    /* deprecated min / max (fields 2/1): signed byte order for binary, only
     * trustworthy where that equals the column's sort order. */
    bool has_min, has_max;
    pq_bytes min, max;
    bool has_null_count;
    int64_t null_count;
    bool has_distinct_count;
    int64_t distinct_count;
    /* is_min_value_exact / is_max_value_exact; absent means "unknown". */
    bool has_min_exact, has_max_exact;
    bool min_exact, max_exact;
} pq_stats;

typedef struct pq_page_enc_stats {
    int32_t page_type;
    int32_t encoding;
    int32_t count;
} pq_page_enc_stats;

typedef struct pq_column_meta {
    int32_t type;                 /* pq_phys */
    int32_t *encodings;
    int32_t n_encodings;
    const char **path;            /* path_in_schema */
    int32_t n_path;
    int32_t codec;                /* pq_codec */
    int64_t num_values;
    int64_t total_uncompressed_size;
    int64_t total_compressed_size;
    pq_kv *kv;
    int32_t n_kv;
    int64_t data_page_offset;
    bool has_index_page_offset;
    int64_t index_page_offset;
    bool has_dictionary_page_offset;
    int64_t dictionary_page_offset;
    bool has_stats;
    pq_stats stats;
    pq_page_enc_stats *encoding_stats;
    int32_t n_encoding_stats;     /* -1 when the field is absent */
    bool has_bloom_filter_offset;
    int64_t bloom_filter_offset;
    bool has_bloom_filter_length;
    int32_t bloom_filter_length;
} pq_column_meta;

typedef struct pq_column_chunk {
    const char *file_path;        /* set when the chunk lives in another file */
    int64_t file_offset;
    bool has_meta;
    pq_column_meta meta;
    bool has_offset_index;
    int64_t offset_index_offset;
    int32_t offset_index_length;
    bool has_column_index;
    int64_t column_index_offset;
    int32_t column_index_length;
    bool encrypted;               /* crypto_metadata or encrypted_column_metadata set */
} pq_column_chunk;

typedef struct pq_sorting_column {
    int32_t column_idx;
    bool descending;
    bool nulls_first;
} pq_sorting_column;

typedef struct pq_row_group {
    pq_column_chunk *columns;
    int32_t n_columns;
    int64_t total_byte_size;
    int64_t num_rows;
    pq_sorting_column *sorting;
    int32_t n_sorting;            /* -1 when absent */
    bool has_file_offset;
    int64_t file_offset;
    bool has_total_compressed_size;
    int64_t total_compressed_size;
    bool has_ordinal;
    int16_t ordinal;
} pq_row_group;

typedef struct pq_schema_element {
    bool has_type;
    int32_t type;                 /* pq_phys */
    int32_t type_length;
    bool has_repetition;
    int32_t repetition;           /* pq_repetition */
    const char *name;
    bool has_num_children;
    int32_t num_children;
    int32_t converted_type;       /* pq_converted, PQ_CT_NONE when absent */
    bool has_scale, has_precision;
    int32_t scale, precision;
    bool has_field_id;
    int32_t field_id;
    bool has_logical;
    pq_logical logical;
} pq_schema_element;

/* ColumnOrder per leaf: TYPE_ORDER, or something this reader does not know
 * (statistics then cannot be used). */
typedef enum pq_column_order {
    PQ_ORDER_UNDEFINED = 0,  /* column_orders absent: legacy writer */
    PQ_ORDER_TYPE_DEFINED = 1,
    PQ_ORDER_UNKNOWN = 2,
} pq_column_order;

typedef struct pq_file_meta {
    int32_t version;
    pq_schema_element *schema;
    int32_t n_schema;
    int64_t num_rows;
    pq_row_group *row_groups;
    int32_t n_row_groups;
    pq_kv *kv;
    int32_t n_kv;
    const char *created_by;       /* NULL when absent */
    int32_t *column_orders;       /* pq_column_order per leaf */
    int32_t n_column_orders;      /* -1 when absent */
    bool encryption_algorithm;    /* plaintext-footer encrypted file */
} pq_file_meta;

typedef struct pq_data_page_header {
    int32_t num_values;
    int32_t encoding;
    int32_t def_encoding;
    int32_t rep_encoding;
    bool has_stats;
    pq_stats stats;
} pq_data_page_header;

typedef struct pq_data_page_header_v2 {
    int32_t num_values;
    int32_t num_nulls;
    int32_t num_rows;
    int32_t encoding;
    int32_t def_levels_byte_length;
    int32_t rep_levels_byte_length;
    bool is_compressed;           /* default true */
    bool has_stats;
    pq_stats stats;
} pq_data_page_header_v2;

typedef struct pq_dict_page_header {
    int32_t num_values;
    int32_t encoding;
    bool is_sorted;
} pq_dict_page_header;

typedef struct pq_page_header {
    int32_t type;                 /* pq_page_type */
    int32_t uncompressed_page_size;
    int32_t compressed_page_size;
    bool has_crc;
    int32_t crc;
    bool has_data, has_data_v2, has_dict;
    pq_data_page_header data;
    pq_data_page_header_v2 data_v2;
    pq_dict_page_header dict;
} pq_page_header;

typedef struct pq_column_index {
    int32_t n_pages;
    bool *null_pages;
    pq_bytes *min_values;
    pq_bytes *max_values;
    int32_t boundary_order;       /* pq_boundary_order */
    int64_t *null_counts;         /* NULL when absent */
} pq_column_index;

typedef struct pq_page_location {
    int64_t offset;
    int32_t compressed_page_size;
    int64_t first_row_index;
} pq_page_location;

typedef struct pq_offset_index {
    int32_t n_pages;
    pq_page_location *pages;
} pq_offset_index;

typedef struct pq_bloom_header {
    int32_t num_bytes;
    bool algorithm_block;         /* split block */
    bool hash_xxhash;
    bool compression_none;
} pq_bloom_header;

/* Each decoder reads from buf[0..len), allocates into `arena`, and on success
 * sets *consumed (where given) to the bytes the struct occupied.  Errors are
 * PQ_E_CORRUPT with a message saying which field was bad. */
int pq_decode_file_meta(const uint8_t *buf, size_t len, pq_arena *arena,
                        pq_file_meta *out, pq_error *err);
int pq_decode_page_header(const uint8_t *buf, size_t len, pq_arena *arena,
                          pq_page_header *out, size_t *consumed, pq_error *err);
int pq_decode_column_index(const uint8_t *buf, size_t len, pq_arena *arena,
                           pq_column_index *out, pq_error *err);
int pq_decode_offset_index(const uint8_t *buf, size_t len, pq_arena *arena,
                           pq_offset_index *out, pq_error *err);
int pq_decode_bloom_header(const uint8_t *buf, size_t len, pq_bloom_header *out,
                           size_t *consumed, pq_error *err);

/* Encoders: append the thrift compact encoding of the struct to `out`, writing
 * every field the struct holds (optional ones when their has_* flag is set or
 * their count is >= 0).  Values the structs cannot describe faithfully -- an
 * unrecognised logical type, a column order other than TYPE_DEFINED, the
 * encryption markers, a bloom filter other than split-block/xxhash/uncompressed
 * -- fail with PQ_E_USAGE.  On failure `out` is left as it was. */
int pq_encode_file_meta(const pq_file_meta *m, pq_buf *out, pq_error *err);
int pq_encode_page_header(const pq_page_header *h, pq_buf *out, pq_error *err);
int pq_encode_column_index(const pq_column_index *ci, pq_buf *out, pq_error *err);
int pq_encode_offset_index(const pq_offset_index *oi, pq_buf *out, pq_error *err);
int pq_encode_bloom_header(const pq_bloom_header *h, pq_buf *out, pq_error *err);

#endif
