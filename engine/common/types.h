/* Parquet format enums (parquet.thrift) and small shared value types. */
#ifndef PQ_TYPES_H
#define PQ_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum pq_phys {
    PQ_BOOLEAN = 0,
    PQ_INT32 = 1,
    PQ_INT64 = 2,
    PQ_INT96 = 3,
    PQ_FLOAT = 4,
    PQ_DOUBLE = 5,
    PQ_BYTE_ARRAY = 6,
    PQ_FIXED_LEN_BYTE_ARRAY = 7,
} pq_phys;

typedef enum pq_converted {
    PQ_CT_NONE = -1,
    PQ_CT_UTF8 = 0,
    PQ_CT_MAP = 1,
    PQ_CT_MAP_KEY_VALUE = 2,
    PQ_CT_LIST = 3,
    PQ_CT_ENUM = 4,
    PQ_CT_DECIMAL = 5,
    PQ_CT_DATE = 6,
    PQ_CT_TIME_MILLIS = 7,
    PQ_CT_TIME_MICROS = 8,
    PQ_CT_TIMESTAMP_MILLIS = 9,
    PQ_CT_TIMESTAMP_MICROS = 10,
    PQ_CT_UINT_8 = 11,
    PQ_CT_UINT_16 = 12,
    PQ_CT_UINT_32 = 13,
    PQ_CT_UINT_64 = 14,
    PQ_CT_INT_8 = 15,
    PQ_CT_INT_16 = 16,
    PQ_CT_INT_32 = 17,
    PQ_CT_INT_64 = 18,
    PQ_CT_JSON = 19,
    PQ_CT_BSON = 20,
    PQ_CT_INTERVAL = 21,
} pq_converted;

typedef enum pq_repetition {
    PQ_REQUIRED = 0,
    PQ_OPTIONAL = 1,
    PQ_REPEATED = 2,
} pq_repetition;

typedef enum pq_encoding {
    PQ_ENC_PLAIN = 0,
    PQ_ENC_GROUP_VAR_INT = 1, /* deprecated, never written */
    PQ_ENC_PLAIN_DICTIONARY = 2,
    PQ_ENC_RLE = 3,
    PQ_ENC_BIT_PACKED = 4,
    PQ_ENC_DELTA_BINARY_PACKED = 5,
    PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
    PQ_ENC_DELTA_BYTE_ARRAY = 7,
    PQ_ENC_RLE_DICTIONARY = 8,
    PQ_ENC_BYTE_STREAM_SPLIT = 9,
} pq_encoding;

typedef enum pq_codec {
    PQ_CODEC_UNCOMPRESSED = 0,
    PQ_CODEC_SNAPPY = 1,
    PQ_CODEC_GZIP = 2,
    PQ_CODEC_LZO = 3,
    PQ_CODEC_BROTLI = 4,
    PQ_CODEC_LZ4 = 5, /* Hadoop-framed LZ4 (or raw LZ4 from older writers) */
    PQ_CODEC_ZSTD = 6,
    PQ_CODEC_LZ4_RAW = 7,
} pq_codec;

typedef enum pq_page_type {
    PQ_PAGE_DATA = 0,
    PQ_PAGE_INDEX = 1,
    PQ_PAGE_DICTIONARY = 2,
    PQ_PAGE_DATA_V2 = 3,
} pq_page_type;

typedef enum pq_boundary_order {
    PQ_BOUNDARY_UNORDERED = 0,
    PQ_BOUNDARY_ASCENDING = 1,
    PQ_BOUNDARY_DESCENDING = 2,
} pq_boundary_order;

/* LogicalType union members (field ids of the thrift union). */
typedef enum pq_logical_kind {
    PQ_LT_NONE = 0,
    PQ_LT_STRING = 1,
    PQ_LT_MAP = 2,
    PQ_LT_LIST = 3,
    PQ_LT_ENUM = 4,
    PQ_LT_DECIMAL = 5,
    PQ_LT_DATE = 6,
    PQ_LT_TIME = 7,
    PQ_LT_TIMESTAMP = 8,
    PQ_LT_INTEGER = 10,
    PQ_LT_UNKNOWN = 11, /* "always null" type */
    PQ_LT_JSON = 12,
    PQ_LT_BSON = 13,
    PQ_LT_UUID = 14,
    PQ_LT_FLOAT16 = 15,
    PQ_LT_VARIANT = 16,
    PQ_LT_GEOMETRY = 17,
    PQ_LT_GEOGRAPHY = 18,
    PQ_LT_UNRECOGNIZED = 1000, /* a union member this reader does not know */
} pq_logical_kind;

typedef enum pq_time_unit {
    PQ_UNIT_NONE = 0,
    PQ_UNIT_MILLIS = 1,
    PQ_UNIT_MICROS = 2,
    PQ_UNIT_NANOS = 3,
} pq_time_unit;

typedef struct pq_logical {
    pq_logical_kind kind;
    int32_t scale, precision;  /* DECIMAL */
    bool utc;                  /* TIME / TIMESTAMP isAdjustedToUTC */
    pq_time_unit unit;         /* TIME / TIMESTAMP */
    int8_t bit_width;          /* INTEGER: 8, 16, 32, 64 */
    bool is_signed;            /* INTEGER */
} pq_logical;

/* A view of bytes owned elsewhere (a page buffer, a dictionary, an arena). */
typedef struct pq_bytes {
    const uint8_t *ptr;
    uint32_t len;
} pq_bytes;

/* INT96 as stored: 8 bytes of nanoseconds within the day, 4 bytes of Julian day. */
typedef struct pq_int96 {
    uint8_t b[12];
} pq_int96;

const char *pq_phys_name(pq_phys t);
const char *pq_codec_name(pq_codec c);
const char *pq_encoding_name(pq_encoding e);
const char *pq_converted_name(pq_converted c);
/* Size in bytes of one PLAIN value of a fixed-width type, 0 for BYTE_ARRAY and
 * BOOLEAN (bit packed). */
size_t pq_phys_width(pq_phys t, int32_t type_length);

#endif
