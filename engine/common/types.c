#include "types.h"

const char *pq_phys_name(pq_phys t)
{
    switch (t) {
    case PQ_BOOLEAN: return "BOOLEAN";
    case PQ_INT32: return "INT32";
    case PQ_INT64: return "INT64";
    case PQ_INT96: return "INT96";
    case PQ_FLOAT: return "FLOAT";
    case PQ_DOUBLE: return "DOUBLE";
    case PQ_BYTE_ARRAY: return "BYTE_ARRAY";
    case PQ_FIXED_LEN_BYTE_ARRAY: return "FIXED_LEN_BYTE_ARRAY";
    }
    return "UNKNOWN_TYPE";
}

const char *pq_codec_name(pq_codec c)
{
    switch (c) {
    case PQ_CODEC_UNCOMPRESSED: return "UNCOMPRESSED";
    case PQ_CODEC_SNAPPY: return "SNAPPY";
    case PQ_CODEC_GZIP: return "GZIP";
    case PQ_CODEC_LZO: return "LZO";
    case PQ_CODEC_BROTLI: return "BROTLI";
    case PQ_CODEC_LZ4: return "LZ4";
    case PQ_CODEC_ZSTD: return "ZSTD";
    case PQ_CODEC_LZ4_RAW: return "LZ4_RAW";
    }
    return "UNKNOWN_CODEC";
}

const char *pq_encoding_name(pq_encoding e)
{
    switch (e) {
    case PQ_ENC_PLAIN: return "PLAIN";
    case PQ_ENC_GROUP_VAR_INT: return "GROUP_VAR_INT";
    case PQ_ENC_PLAIN_DICTIONARY: return "PLAIN_DICTIONARY";
    case PQ_ENC_RLE: return "RLE";
    case PQ_ENC_BIT_PACKED: return "BIT_PACKED";
    case PQ_ENC_DELTA_BINARY_PACKED: return "DELTA_BINARY_PACKED";
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return "DELTA_LENGTH_BYTE_ARRAY";
    case PQ_ENC_DELTA_BYTE_ARRAY: return "DELTA_BYTE_ARRAY";
    case PQ_ENC_RLE_DICTIONARY: return "RLE_DICTIONARY";
    case PQ_ENC_BYTE_STREAM_SPLIT: return "BYTE_STREAM_SPLIT";
    }
    return "UNKNOWN_ENCODING";
}

const char *pq_converted_name(pq_converted c)
{
    static const char *names[] = {
        "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE",
        "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS",
        "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8", "INT_16", "INT_32",
        "INT_64", "JSON", "BSON", "INTERVAL",
    };
    if (c < 0 || (size_t)c >= sizeof names / sizeof names[0]) return "NONE";
    return names[c];
}

size_t pq_phys_width(pq_phys t, int32_t type_length)
{
    switch (t) {
    case PQ_INT32: case PQ_FLOAT: return 4;
    case PQ_INT64: case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return type_length > 0 ? (size_t)type_length : 0;
    default: return 0;
    }
}
