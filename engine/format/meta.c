/* Parquet metadata (parquet.thrift) decoders and encoders over the thrift
 * compact protocol.
 *
 * Field ids are those of apache/parquet-format src/main/thrift/parquet.thrift.
 * Each struct decoder loops over field headers, dispatches on the id, skips
 * what it does not know, and checks required fields at the STOP byte.  On
 * failure the message is prefixed with "Struct.field: " at every level, so a
 * bad list deep inside the footer reads
 *   FileMetaData.row_groups[0]: RowGroup.columns[2]: ColumnChunk.meta_data:
 *   ColumnMetaData.path_in_schema: list of ... exceeds the 120 bytes left */
#include "meta.h"

#include <string.h>

#include "thrift.h"

/* ------------------------------------------------------------ helpers --- */

/* Field tables: name, wire type, required (see pq_tc_fdef). */
#define OPT false
#define REQ true
#define T_BOOL PQ_TC_BOOL
#define T_I8 PQ_TC_I8
#define T_I16 PQ_TC_I16
#define T_I32 PQ_TC_I32
#define T_I64 PQ_TC_I64
#define T_BIN PQ_TC_BINARY
#define T_LIST PQ_TC_LIST
#define T_STRUCT PQ_TC_STRUCT

typedef pq_tc_sctx sctx;
typedef pq_tc_fdef fdef;
#define SCTX PQ_TC_SCTX

static int expect(pq_tc_reader *r, const pq_tc_field *f, uint8_t type)
{
    bool ok = f->type == type || (type == PQ_TC_LIST && f->type == PQ_TC_SET);
    if (!ok)
        return PQ_CORRUPT(r->err, "expected %s, found %s", pq_tc_type_name(type),
                          pq_tc_type_name(f->type));
    return PQ_OK;
}

static int get_i32(pq_tc_reader *r, const pq_tc_field *f, int32_t *out)
{
    PQ_TRY(expect(r, f, PQ_TC_I32));
    return pq_tc_read_i32(r, out);
}

static int get_i64(pq_tc_reader *r, const pq_tc_field *f, int64_t *out)
{
    PQ_TRY(expect(r, f, PQ_TC_I64));
    return pq_tc_read_i64(r, out);
}

/* Sizes, counts and file offsets: negative values are corrupt. */
static int get_nonneg_i32(pq_tc_reader *r, const pq_tc_field *f, int32_t *out)
{
    PQ_TRY(get_i32(r, f, out));
    if (*out < 0) return PQ_CORRUPT(r->err, "negative value %d", (int)*out);
    return PQ_OK;
}

static int get_nonneg_i64(pq_tc_reader *r, const pq_tc_field *f, int64_t *out)
{
    PQ_TRY(get_i64(r, f, out));
    if (*out < 0) return PQ_CORRUPT(r->err, "negative value %lld", (long long)*out);
    return PQ_OK;
}

static int get_bool(pq_tc_reader *r, const pq_tc_field *f, bool *out)
{
    PQ_TRY(expect(r, f, PQ_TC_BOOL));
    *out = f->bool_value;
    return PQ_OK;
}

static int get_binary(pq_tc_reader *r, const pq_tc_field *f, pq_bytes *out)
{
    PQ_TRY(expect(r, f, PQ_TC_BINARY));
    return pq_tc_read_binary(r, out);
}

static int get_string(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, const char **out)
{
    PQ_TRY(expect(r, f, PQ_TC_BINARY));
    return pq_tc_read_string(r, a, out);
}

/* Opens a list field whose elements must be `elem` (an empty list may carry
 * any element type); *n has been checked against the bytes left. */
static int get_list(pq_tc_reader *r, const pq_tc_field *f, uint8_t elem, uint32_t *n)
{
    PQ_TRY(expect(r, f, PQ_TC_LIST));
    uint8_t et;
    PQ_TRY(pq_tc_list_begin(r, &et, n));
    if (*n > 0 && et != elem)
        return PQ_CORRUPT(r->err, "list of %s, expected %s", pq_tc_type_name(et),
                          pq_tc_type_name(elem));
    if (*n > INT32_MAX) return PQ_CORRUPT(r->err, "list of %u elements is too long", *n);
    return PQ_OK;
}

/* Arena array of n elements; NULL for n == 0. */
static int alloc_array(pq_tc_reader *r, pq_arena *a, uint32_t n, size_t size, void **out)
{
    *out = NULL;
    if (n == 0) return PQ_OK;
    if (!a) return pq_fail(r->err, PQ_E_USAGE, "metadata list decoded without an arena");
    size_t bytes;
    if (pq_mul_overflows(n, size, &bytes) || !(*out = pq_arena_alloc(a, bytes)))
        return pq_fail(r->err, PQ_E_NOMEM, "out of memory for a list of %u elements", n);
    return PQ_OK;
}

/* Glues "[i]" onto a list element's error: the field prefix comes later. */
static int fail_elem(pq_tc_reader *r, uint32_t i)
{
    pq_error_prefix(r->err, "[%u]: ", i);
    return PQ_ERR;
}

/* Reads a union of empty marker structs (ColumnOrder, bloom filter algorithm,
 * ...): *member is the id of its member, 0 when the union is empty. */
static int read_marker_union(pq_tc_reader *r, const char *name, int16_t *member)
{
    static const fdef no_fields[] = {{0}};
    sctx s = {name, no_fields, 1, 0, 0, 0};
    pq_tc_field f;
    int more;
    *member = 0;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        if (*member == 0) *member = f.id;
        if (pq_tc_skip(r, f.type) != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

/* ------------------------------------------------------------ decoders --- */

static const fdef STATS_FIELDS[] = {
    {0}, {"max", T_BIN, OPT}, {"min", T_BIN, OPT}, {"null_count", T_I64, OPT},
    {"distinct_count", T_I64, OPT}, {"max_value", T_BIN, OPT}, {"min_value", T_BIN, OPT},
    {"is_max_value_exact", T_BOOL, OPT}, {"is_min_value_exact", T_BOOL, OPT},
    {"nan_count", T_I64, OPT},
};

static int read_stats(pq_tc_reader *r, pq_stats *st)
{
    sctx s = SCTX("Statistics", STATS_FIELDS);
    pq_tc_field f;
    int more;
    memset(st, 0, sizeof *st);
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_binary(r, &f, &st->max); st->has_max = true; break;
        case 2: rc = get_binary(r, &f, &st->min); st->has_min = true; break;
        case 3: rc = get_nonneg_i64(r, &f, &st->null_count); st->has_null_count = true; break;
        case 4:
            rc = get_nonneg_i64(r, &f, &st->distinct_count);
            st->has_distinct_count = true;
            break;
        case 5: rc = get_binary(r, &f, &st->max_value); st->has_max_value = true; break;
        case 6: rc = get_binary(r, &f, &st->min_value); st->has_min_value = true; break;
        case 7: rc = get_bool(r, &f, &st->max_exact); st->has_max_exact = true; break;
        case 8: rc = get_bool(r, &f, &st->min_exact); st->has_min_exact = true; break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef KV_FIELDS[] = {
    {0}, {"key", T_BIN, REQ}, {"value", T_BIN, OPT},
};

static int read_kv(pq_tc_reader *r, pq_arena *a, pq_kv *kv)
{
    sctx s = SCTX("KeyValue", KV_FIELDS);
    pq_tc_field f;
    int more;
    kv->key = kv->value = NULL;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_string(r, &f, a, &kv->key); break;
        case 2: rc = get_string(r, &f, a, &kv->value); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static int read_kv_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_kv **out,
                        int32_t *n_out)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof **out, (void **)out));
    for (uint32_t i = 0; i < n; i++)
        if (read_kv(r, a, &(*out)[i]) != PQ_OK) return fail_elem(r, i);
    *n_out = (int32_t)n;
    return PQ_OK;
}

/* ---- LogicalType ---- */

static const fdef TIME_FIELDS[] = {
    {0}, {"isAdjustedToUTC", T_BOOL, REQ}, {"unit", T_STRUCT, REQ},
};
static const fdef DECIMAL_FIELDS[] = {
    {0}, {"scale", T_I32, REQ}, {"precision", T_I32, REQ},
};
static const fdef INT_FIELDS[] = {
    {0}, {"bitWidth", T_I8, REQ}, {"isSigned", T_BOOL, REQ},
};
static const fdef LOGICAL_FIELDS[] = {
    {0}, {"STRING", T_STRUCT, OPT}, {"MAP", T_STRUCT, OPT}, {"LIST", T_STRUCT, OPT},
    {"ENUM", T_STRUCT, OPT}, {"DECIMAL", T_STRUCT, OPT}, {"DATE", T_STRUCT, OPT},
    {"TIME", T_STRUCT, OPT}, {"TIMESTAMP", T_STRUCT, OPT}, {0}, {"INTEGER", T_STRUCT, OPT},
    {"UNKNOWN", T_STRUCT, OPT}, {"JSON", T_STRUCT, OPT}, {"BSON", T_STRUCT, OPT},
    {"UUID", T_STRUCT, OPT}, {"FLOAT16", T_STRUCT, OPT}, {"VARIANT", T_STRUCT, OPT},
    {"GEOMETRY", T_STRUCT, OPT}, {"GEOGRAPHY", T_STRUCT, OPT},
};

static int read_decimal_type(pq_tc_reader *r, pq_logical *lt)
{
    sctx s = SCTX("DecimalType", DECIMAL_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_i32(r, &f, &lt->scale); break;
        case 2: rc = get_i32(r, &f, &lt->precision); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

/* TimeType and TimestampType share their layout.  An unknown unit makes the
 * whole annotation unrecognised rather than corrupt. */
static int read_time_type(pq_tc_reader *r, const char *name, pq_logical *lt)
{
    sctx s = SCTX(name, TIME_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        int16_t unit;
        switch (f.id) {
        case 1: rc = get_bool(r, &f, &lt->utc); break;
        case 2:
            rc = read_marker_union(r, "TimeUnit", &unit);
            if (rc == PQ_OK) {
                if (unit >= 1 && unit <= 3)
                    lt->unit = (pq_time_unit)unit;
                else
                    lt->kind = PQ_LT_UNRECOGNIZED;
            }
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static int read_int_type(pq_tc_reader *r, pq_logical *lt)
{
    sctx s = SCTX("IntType", INT_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1:
            rc = pq_tc_read_i8(r, &lt->bit_width);
            if (rc == PQ_OK && lt->bit_width != 8 && lt->bit_width != 16 && lt->bit_width != 32 &&
                lt->bit_width != 64)
                rc = PQ_CORRUPT(r->err, "%d is not 8, 16, 32 or 64", lt->bit_width);
            break;
        case 2: rc = get_bool(r, &f, &lt->is_signed); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static int read_logical_member(pq_tc_reader *r, const pq_tc_field *f, pq_logical *lt)
{
    switch (f->id) {
    case PQ_LT_DECIMAL:
        lt->kind = PQ_LT_DECIMAL;
        return read_decimal_type(r, lt);
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        lt->kind = (pq_logical_kind)f->id;
        return read_time_type(r, f->id == PQ_LT_TIME ? "TimeType" : "TimestampType", lt);
    case PQ_LT_INTEGER:
        lt->kind = PQ_LT_INTEGER;
        return read_int_type(r, lt);
    case PQ_LT_STRING: case PQ_LT_MAP: case PQ_LT_LIST: case PQ_LT_ENUM: case PQ_LT_DATE:
    case PQ_LT_UNKNOWN: case PQ_LT_JSON: case PQ_LT_BSON: case PQ_LT_UUID: case PQ_LT_FLOAT16:
    case PQ_LT_VARIANT: case PQ_LT_GEOMETRY: case PQ_LT_GEOGRAPHY:
        /* Marker structs (VARIANT/GEOMETRY/GEOGRAPHY have optional fields this
         * reader does not need). */
        lt->kind = (pq_logical_kind)f->id;
        return pq_tc_skip(r, PQ_TC_STRUCT);
    default:
        lt->kind = PQ_LT_UNRECOGNIZED;
        return pq_tc_skip(r, f->type);
    }
}

static int read_logical(pq_tc_reader *r, pq_logical *lt)
{
    sctx s = SCTX("LogicalType", LOGICAL_FIELDS);
    pq_tc_field f;
    int more;
    bool have_member = false;
    memset(lt, 0, sizeof *lt);
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        if (have_member)
            rc = PQ_CORRUPT(r->err, "a second union member");
        else
            rc = read_logical_member(r, &f, lt);
        have_member = true;
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

/* ---- SchemaElement ---- */

static const fdef SCHEMA_FIELDS[] = {
    {0}, {"type", T_I32, OPT}, {"type_length", T_I32, OPT}, {"repetition_type", T_I32, OPT},
    {"name", T_BIN, REQ}, {"num_children", T_I32, OPT}, {"converted_type", T_I32, OPT},
    {"scale", T_I32, OPT}, {"precision", T_I32, OPT}, {"field_id", T_I32, OPT},
    {"logicalType", T_STRUCT, OPT}, {"vector_length", T_I32, OPT},
};

static int read_schema_element(pq_tc_reader *r, pq_arena *a, pq_schema_element *e)
{
    sctx s = SCTX("SchemaElement", SCHEMA_FIELDS);
    pq_tc_field f;
    int more;
    memset(e, 0, sizeof *e);
    e->converted_type = PQ_CT_NONE;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_i32(r, &f, &e->type); e->has_type = true; break;
        case 2: rc = get_i32(r, &f, &e->type_length); break;
        case 3: rc = get_i32(r, &f, &e->repetition); e->has_repetition = true; break;
        case 4: rc = get_string(r, &f, a, &e->name); break;
        case 5: rc = get_nonneg_i32(r, &f, &e->num_children); e->has_num_children = true; break;
        case 6: rc = get_i32(r, &f, &e->converted_type); break;
        case 7: rc = get_i32(r, &f, &e->scale); e->has_scale = true; break;
        case 8: rc = get_i32(r, &f, &e->precision); e->has_precision = true; break;
        case 9: rc = get_i32(r, &f, &e->field_id); e->has_field_id = true; break;
        case 10:
            rc = read_logical(r, &e->logical);
            /* An empty union carries no annotation. */
            e->has_logical = e->logical.kind != PQ_LT_NONE;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

/* ---- ColumnMetaData / ColumnChunk ---- */

static const fdef PES_FIELDS[] = {
    {0}, {"page_type", T_I32, REQ}, {"encoding", T_I32, REQ}, {"count", T_I32, REQ},
};

static int read_page_enc_stats(pq_tc_reader *r, pq_page_enc_stats *p)
{
    sctx s = SCTX("PageEncodingStats", PES_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_i32(r, &f, &p->page_type); break;
        case 2: rc = get_i32(r, &f, &p->encoding); break;
        case 3: rc = get_nonneg_i32(r, &f, &p->count); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef COLUMN_META_FIELDS[] = {
    {0}, {"type", T_I32, REQ}, {"encodings", T_LIST, REQ}, {"path_in_schema", T_LIST, REQ},
    {"codec", T_I32, REQ}, {"num_values", T_I64, REQ}, {"total_uncompressed_size", T_I64, REQ},
    {"total_compressed_size", T_I64, REQ}, {"key_value_metadata", T_LIST, OPT},
    {"data_page_offset", T_I64, REQ}, {"index_page_offset", T_I64, OPT},
    {"dictionary_page_offset", T_I64, OPT}, {"statistics", T_STRUCT, OPT},
    {"encoding_stats", T_LIST, OPT}, {"bloom_filter_offset", T_I64, OPT},
    {"bloom_filter_length", T_I32, OPT}, {"size_statistics", T_STRUCT, OPT},
    {"geospatial_statistics", T_STRUCT, OPT},
};

static int read_encodings(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_column_meta *m)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_I32, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *m->encodings, (void **)&m->encodings));
    for (uint32_t i = 0; i < n; i++) PQ_TRY(pq_tc_read_i32(r, &m->encodings[i]));
    m->n_encodings = (int32_t)n;
    return PQ_OK;
}

static int read_path(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_column_meta *m)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_BINARY, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *m->path, (void **)&m->path));
    for (uint32_t i = 0; i < n; i++) PQ_TRY(pq_tc_read_string(r, a, &m->path[i]));
    m->n_path = (int32_t)n;
    return PQ_OK;
}

static int read_enc_stats_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a,
                               pq_column_meta *m)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *m->encoding_stats, (void **)&m->encoding_stats));
    for (uint32_t i = 0; i < n; i++)
        if (read_page_enc_stats(r, &m->encoding_stats[i]) != PQ_OK) return fail_elem(r, i);
    m->n_encoding_stats = (int32_t)n;
    return PQ_OK;
}

static int read_column_meta(pq_tc_reader *r, pq_arena *a, pq_column_meta *m)
{
    sctx s = SCTX("ColumnMetaData", COLUMN_META_FIELDS);
    pq_tc_field f;
    int more;
    memset(m, 0, sizeof *m);
    m->n_encoding_stats = -1;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_i32(r, &f, &m->type); break;
        case 2: rc = read_encodings(r, &f, a, m); break;
        case 3: rc = read_path(r, &f, a, m); break;
        case 4: rc = get_i32(r, &f, &m->codec); break;
        case 5: rc = get_nonneg_i64(r, &f, &m->num_values); break;
        case 6: rc = get_nonneg_i64(r, &f, &m->total_uncompressed_size); break;
        case 7: rc = get_nonneg_i64(r, &f, &m->total_compressed_size); break;
        case 8: rc = read_kv_list(r, &f, a, &m->kv, &m->n_kv); break;
        case 9: rc = get_nonneg_i64(r, &f, &m->data_page_offset); break;
        case 10:
            rc = get_i64(r, &f, &m->index_page_offset);
            m->has_index_page_offset = true;
            break;
        case 11:
            rc = get_nonneg_i64(r, &f, &m->dictionary_page_offset);
            m->has_dictionary_page_offset = true;
            break;
        case 12:
            rc = read_stats(r, &m->stats);
            m->has_stats = true;
            break;
        case 13: rc = read_enc_stats_list(r, &f, a, m); break;
        case 14:
            rc = get_nonneg_i64(r, &f, &m->bloom_filter_offset);
            m->has_bloom_filter_offset = true;
            break;
        case 15:
            rc = get_nonneg_i32(r, &f, &m->bloom_filter_length);
            m->has_bloom_filter_length = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef COLUMN_CHUNK_FIELDS[] = {
    {0}, {"file_path", T_BIN, OPT}, {"file_offset", T_I64, REQ}, {"meta_data", T_STRUCT, OPT},
    {"offset_index_offset", T_I64, OPT}, {"offset_index_length", T_I32, OPT},
    {"column_index_offset", T_I64, OPT}, {"column_index_length", T_I32, OPT},
    {"crypto_metadata", T_STRUCT, OPT}, {"encrypted_column_metadata", T_BIN, OPT},
};

static int read_column_chunk(pq_tc_reader *r, pq_arena *a, pq_column_chunk *c)
{
    sctx s = SCTX("ColumnChunk", COLUMN_CHUNK_FIELDS);
    pq_tc_field f;
    int more;
    memset(c, 0, sizeof *c);
    c->meta.n_encoding_stats = -1;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_string(r, &f, a, &c->file_path); break;
        case 2: rc = get_i64(r, &f, &c->file_offset); break;
        case 3:
            rc = read_column_meta(r, a, &c->meta);
            c->has_meta = true;
            break;
        case 4: rc = get_nonneg_i64(r, &f, &c->offset_index_offset); break;
        case 5: rc = get_nonneg_i32(r, &f, &c->offset_index_length); break;
        case 6: rc = get_nonneg_i64(r, &f, &c->column_index_offset); break;
        case 7: rc = get_nonneg_i32(r, &f, &c->column_index_length); break;
        case 8:
        case 9:
            /* Encryption is not supported; remember it so readers can say so. */
            rc = pq_tc_skip(r, f.type);
            c->encrypted = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    if (more != 0) return PQ_ERR;
    /* An index is usable only with both its offset and its length. */
    c->has_offset_index = pq_tc_sctx_seen(&s, 4) && pq_tc_sctx_seen(&s, 5);
    c->has_column_index = pq_tc_sctx_seen(&s, 6) && pq_tc_sctx_seen(&s, 7);
    return PQ_OK;
}

/* ---- RowGroup ---- */

static const fdef SORTING_FIELDS[] = {
    {0}, {"column_idx", T_I32, REQ}, {"descending", T_BOOL, REQ}, {"nulls_first", T_BOOL, REQ},
};

static int read_sorting_column(pq_tc_reader *r, pq_sorting_column *sc)
{
    sctx s = SCTX("SortingColumn", SORTING_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_nonneg_i32(r, &f, &sc->column_idx); break;
        case 2: rc = get_bool(r, &f, &sc->descending); break;
        case 3: rc = get_bool(r, &f, &sc->nulls_first); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef ROW_GROUP_FIELDS[] = {
    {0}, {"columns", T_LIST, REQ}, {"total_byte_size", T_I64, REQ}, {"num_rows", T_I64, REQ},
    {"sorting_columns", T_LIST, OPT}, {"file_offset", T_I64, OPT},
    {"total_compressed_size", T_I64, OPT}, {"ordinal", T_I16, OPT},
};

static int read_row_group_columns(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a,
                                  pq_row_group *g)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *g->columns, (void **)&g->columns));
    for (uint32_t i = 0; i < n; i++)
        if (read_column_chunk(r, a, &g->columns[i]) != PQ_OK) return fail_elem(r, i);
    g->n_columns = (int32_t)n;
    return PQ_OK;
}

static int read_sorting_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_row_group *g)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *g->sorting, (void **)&g->sorting));
    for (uint32_t i = 0; i < n; i++)
        if (read_sorting_column(r, &g->sorting[i]) != PQ_OK) return fail_elem(r, i);
    g->n_sorting = (int32_t)n;
    return PQ_OK;
}

static int read_row_group(pq_tc_reader *r, pq_arena *a, pq_row_group *g)
{
    sctx s = SCTX("RowGroup", ROW_GROUP_FIELDS);
    pq_tc_field f;
    int more;
    memset(g, 0, sizeof *g);
    g->n_sorting = -1;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = read_row_group_columns(r, &f, a, g); break;
        case 2: rc = get_nonneg_i64(r, &f, &g->total_byte_size); break;
        case 3: rc = get_nonneg_i64(r, &f, &g->num_rows); break;
        case 4: rc = read_sorting_list(r, &f, a, g); break;
        case 5: rc = get_i64(r, &f, &g->file_offset); g->has_file_offset = true; break;
        case 6:
            rc = get_nonneg_i64(r, &f, &g->total_compressed_size);
            g->has_total_compressed_size = true;
            break;
        case 7:
            rc = pq_tc_read_i16(r, &g->ordinal);
            g->has_ordinal = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

/* ---- FileMetaData ---- */

static const fdef FILE_META_FIELDS[] = {
    {0}, {"version", T_I32, REQ}, {"schema", T_LIST, REQ}, {"num_rows", T_I64, REQ},
    {"row_groups", T_LIST, REQ}, {"key_value_metadata", T_LIST, OPT}, {"created_by", T_BIN, OPT},
    {"column_orders", T_LIST, OPT}, {"encryption_algorithm", T_STRUCT, OPT},
    {"footer_signing_key_metadata", T_BIN, OPT},
};

static int read_schema_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_file_meta *m)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *m->schema, (void **)&m->schema));
    for (uint32_t i = 0; i < n; i++)
        if (read_schema_element(r, a, &m->schema[i]) != PQ_OK) return fail_elem(r, i);
    m->n_schema = (int32_t)n;
    return PQ_OK;
}

static int read_row_groups(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_file_meta *m)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *m->row_groups, (void **)&m->row_groups));
    for (uint32_t i = 0; i < n; i++)
        if (read_row_group(r, a, &m->row_groups[i]) != PQ_OK) return fail_elem(r, i);
    m->n_row_groups = (int32_t)n;
    return PQ_OK;
}

static int read_column_orders(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_file_meta *m)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *m->column_orders, (void **)&m->column_orders));
    for (uint32_t i = 0; i < n; i++) {
        int16_t member;
        if (read_marker_union(r, "ColumnOrder", &member) != PQ_OK) return fail_elem(r, i);
        m->column_orders[i] = member == 1 ? PQ_ORDER_TYPE_DEFINED : PQ_ORDER_UNKNOWN;
    }
    m->n_column_orders = (int32_t)n;
    return PQ_OK;
}

static int read_file_meta(pq_tc_reader *r, pq_arena *a, pq_file_meta *m)
{
    sctx s = SCTX("FileMetaData", FILE_META_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_i32(r, &f, &m->version); break;
        case 2: rc = read_schema_list(r, &f, a, m); break;
        case 3: rc = get_nonneg_i64(r, &f, &m->num_rows); break;
        case 4: rc = read_row_groups(r, &f, a, m); break;
        case 5: rc = read_kv_list(r, &f, a, &m->kv, &m->n_kv); break;
        case 6: rc = get_string(r, &f, a, &m->created_by); break;
        case 7: rc = read_column_orders(r, &f, a, m); break;
        case 8:
            rc = pq_tc_skip(r, f.type);
            m->encryption_algorithm = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

int pq_decode_file_meta(const uint8_t *buf, size_t len, pq_arena *arena, pq_file_meta *out,
                        pq_error *err)
{
    pq_tc_reader r;
    pq_tc_reader_init(&r, buf, len, err);
    memset(out, 0, sizeof *out);
    out->n_column_orders = -1;
    if (!arena) return pq_fail(err, PQ_E_USAGE, "pq_decode_file_meta needs an arena");
    return read_file_meta(&r, arena, out);
}

/* ---- PageHeader ---- */

static const fdef DATA_PAGE_FIELDS[] = {
    {0}, {"num_values", T_I32, REQ}, {"encoding", T_I32, REQ},
    {"definition_level_encoding", T_I32, REQ}, {"repetition_level_encoding", T_I32, REQ},
    {"statistics", T_STRUCT, OPT},
};

static int read_data_page_header(pq_tc_reader *r, pq_data_page_header *d)
{
    sctx s = SCTX("DataPageHeader", DATA_PAGE_FIELDS);
    pq_tc_field f;
    int more;
    memset(d, 0, sizeof *d);
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_nonneg_i32(r, &f, &d->num_values); break;
        case 2: rc = get_i32(r, &f, &d->encoding); break;
        case 3: rc = get_i32(r, &f, &d->def_encoding); break;
        case 4: rc = get_i32(r, &f, &d->rep_encoding); break;
        case 5:
            rc = read_stats(r, &d->stats);
            d->has_stats = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef DATA_PAGE_V2_FIELDS[] = {
    {0}, {"num_values", T_I32, REQ}, {"num_nulls", T_I32, REQ}, {"num_rows", T_I32, REQ},
    {"encoding", T_I32, REQ}, {"definition_levels_byte_length", T_I32, REQ},
    {"repetition_levels_byte_length", T_I32, REQ}, {"is_compressed", T_BOOL, OPT},
    {"statistics", T_STRUCT, OPT},
};

static int read_data_page_header_v2(pq_tc_reader *r, pq_data_page_header_v2 *d)
{
    sctx s = SCTX("DataPageHeaderV2", DATA_PAGE_V2_FIELDS);
    pq_tc_field f;
    int more;
    memset(d, 0, sizeof *d);
    d->is_compressed = true;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_nonneg_i32(r, &f, &d->num_values); break;
        case 2: rc = get_nonneg_i32(r, &f, &d->num_nulls); break;
        case 3: rc = get_nonneg_i32(r, &f, &d->num_rows); break;
        case 4: rc = get_i32(r, &f, &d->encoding); break;
        case 5: rc = get_nonneg_i32(r, &f, &d->def_levels_byte_length); break;
        case 6: rc = get_nonneg_i32(r, &f, &d->rep_levels_byte_length); break;
        case 7: rc = get_bool(r, &f, &d->is_compressed); break;
        case 8:
            rc = read_stats(r, &d->stats);
            d->has_stats = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef DICT_PAGE_FIELDS[] = {
    {0}, {"num_values", T_I32, REQ}, {"encoding", T_I32, REQ}, {"is_sorted", T_BOOL, OPT},
};

static int read_dict_page_header(pq_tc_reader *r, pq_dict_page_header *d)
{
    sctx s = SCTX("DictionaryPageHeader", DICT_PAGE_FIELDS);
    pq_tc_field f;
    int more;
    memset(d, 0, sizeof *d);
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_nonneg_i32(r, &f, &d->num_values); break;
        case 2: rc = get_i32(r, &f, &d->encoding); break;
        case 3: rc = get_bool(r, &f, &d->is_sorted); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef PAGE_HEADER_FIELDS[] = {
    {0}, {"type", T_I32, REQ}, {"uncompressed_page_size", T_I32, REQ},
    {"compressed_page_size", T_I32, REQ}, {"crc", T_I32, OPT},
    {"data_page_header", T_STRUCT, OPT}, {"index_page_header", T_STRUCT, OPT},
    {"dictionary_page_header", T_STRUCT, OPT}, {"data_page_header_v2", T_STRUCT, OPT},
};

static int read_page_header(pq_tc_reader *r, pq_page_header *h)
{
    sctx s = SCTX("PageHeader", PAGE_HEADER_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_i32(r, &f, &h->type); break;
        case 2: rc = get_nonneg_i32(r, &f, &h->uncompressed_page_size); break;
        case 3: rc = get_nonneg_i32(r, &f, &h->compressed_page_size); break;
        case 4: rc = get_i32(r, &f, &h->crc); h->has_crc = true; break;
        case 5:
            rc = read_data_page_header(r, &h->data);
            h->has_data = true;
            break;
        case 7:
            rc = read_dict_page_header(r, &h->dict);
            h->has_dict = true;
            break;
        case 8:
            rc = read_data_page_header_v2(r, &h->data_v2);
            h->has_data_v2 = true;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    if (more != 0) return PQ_ERR;
    /* The type says which sub-header must be there; readers rely on it. */
    int16_t want = h->type == PQ_PAGE_DATA         ? 5
                   : h->type == PQ_PAGE_DICTIONARY ? 7
                   : h->type == PQ_PAGE_DATA_V2    ? 8
                                                   : 0;
    if (want && !pq_tc_sctx_seen(&s, want))
        return PQ_CORRUPT(r->err, "PageHeader.%s: missing for a page of type %d",
                          PAGE_HEADER_FIELDS[want].name, (int)h->type);
    return PQ_OK;
}

int pq_decode_page_header(const uint8_t *buf, size_t len, pq_arena *arena, pq_page_header *out,
                          size_t *consumed, pq_error *err)
{
    (void)arena; /* page headers hold no lists or strings: no allocation */
    pq_tc_reader r;
    pq_tc_reader_init(&r, buf, len, err);
    memset(out, 0, sizeof *out);
    PQ_TRY(read_page_header(&r, out));
    if (consumed) *consumed = pq_tc_offset(&r);
    return PQ_OK;
}

/* ---- ColumnIndex ---- */

static const fdef COLUMN_INDEX_FIELDS[] = {
    {0}, {"null_pages", T_LIST, REQ}, {"min_values", T_LIST, REQ}, {"max_values", T_LIST, REQ},
    {"boundary_order", T_I32, REQ}, {"null_counts", T_LIST, OPT},
    {"repetition_level_histograms", T_LIST, OPT}, {"definition_level_histograms", T_LIST, OPT},
    {"nan_counts", T_LIST, OPT},
};

static int read_bool_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, bool **out,
                          uint32_t *n)
{
    PQ_TRY(get_list(r, f, PQ_TC_BOOL, n));
    PQ_TRY(alloc_array(r, a, *n, sizeof **out, (void **)out));
    for (uint32_t i = 0; i < *n; i++) PQ_TRY(pq_tc_read_bool_elem(r, &(*out)[i]));
    return PQ_OK;
}

static int read_binary_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, pq_bytes **out,
                            uint32_t *n)
{
    PQ_TRY(get_list(r, f, PQ_TC_BINARY, n));
    PQ_TRY(alloc_array(r, a, *n, sizeof **out, (void **)out));
    for (uint32_t i = 0; i < *n; i++) PQ_TRY(pq_tc_read_binary(r, &(*out)[i]));
    return PQ_OK;
}

static int read_i64_list(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a, int64_t **out,
                         uint32_t *n)
{
    PQ_TRY(get_list(r, f, PQ_TC_I64, n));
    PQ_TRY(alloc_array(r, a, *n, sizeof **out, (void **)out));
    for (uint32_t i = 0; i < *n; i++) PQ_TRY(pq_tc_read_i64(r, &(*out)[i]));
    return PQ_OK;
}

int pq_decode_column_index(const uint8_t *buf, size_t len, pq_arena *arena, pq_column_index *out,
                           pq_error *err)
{
    pq_tc_reader rd, *r = &rd;
    pq_tc_reader_init(r, buf, len, err);
    memset(out, 0, sizeof *out);
    if (!arena) return pq_fail(err, PQ_E_USAGE, "pq_decode_column_index needs an arena");
    sctx s = SCTX("ColumnIndex", COLUMN_INDEX_FIELDS);
    pq_tc_field f;
    int more;
    uint32_t n_null_pages = 0, n_min = 0, n_max = 0, n_null_counts = 0;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = read_bool_list(r, &f, arena, &out->null_pages, &n_null_pages); break;
        case 2: rc = read_binary_list(r, &f, arena, &out->min_values, &n_min); break;
        case 3: rc = read_binary_list(r, &f, arena, &out->max_values, &n_max); break;
        case 4: rc = get_i32(r, &f, &out->boundary_order); break;
        case 5: rc = read_i64_list(r, &f, arena, &out->null_counts, &n_null_counts); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    if (more != 0) return PQ_ERR;
    if (n_min != n_null_pages || n_max != n_null_pages)
        return PQ_CORRUPT(err, "ColumnIndex: %u null_pages but %u min_values and %u max_values",
                          n_null_pages, n_min, n_max);
    if (pq_tc_sctx_seen(&s, 5) && n_null_counts != n_null_pages)
        return PQ_CORRUPT(err, "ColumnIndex: %u null_pages but %u null_counts", n_null_pages,
                          n_null_counts);
    out->n_pages = (int32_t)n_null_pages;
    return PQ_OK;
}

/* ---- OffsetIndex ---- */

static const fdef PAGE_LOCATION_FIELDS[] = {
    {0}, {"offset", T_I64, REQ}, {"compressed_page_size", T_I32, REQ},
    {"first_row_index", T_I64, REQ},
};

static int read_page_location(pq_tc_reader *r, pq_page_location *p)
{
    sctx s = SCTX("PageLocation", PAGE_LOCATION_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = get_nonneg_i64(r, &f, &p->offset); break;
        case 2: rc = get_nonneg_i32(r, &f, &p->compressed_page_size); break;
        case 3: rc = get_nonneg_i64(r, &f, &p->first_row_index); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

static const fdef OFFSET_INDEX_FIELDS[] = {
    {0}, {"page_locations", T_LIST, REQ}, {"unencoded_byte_array_data_bytes", T_LIST, OPT},
};

static int read_page_locations(pq_tc_reader *r, const pq_tc_field *f, pq_arena *a,
                               pq_offset_index *o)
{
    uint32_t n;
    PQ_TRY(get_list(r, f, PQ_TC_STRUCT, &n));
    PQ_TRY(alloc_array(r, a, n, sizeof *o->pages, (void **)&o->pages));
    for (uint32_t i = 0; i < n; i++)
        if (read_page_location(r, &o->pages[i]) != PQ_OK) return fail_elem(r, i);
    o->n_pages = (int32_t)n;
    return PQ_OK;
}

int pq_decode_offset_index(const uint8_t *buf, size_t len, pq_arena *arena, pq_offset_index *out,
                           pq_error *err)
{
    pq_tc_reader rd, *r = &rd;
    pq_tc_reader_init(r, buf, len, err);
    memset(out, 0, sizeof *out);
    if (!arena) return pq_fail(err, PQ_E_USAGE, "pq_decode_offset_index needs an arena");
    sctx s = SCTX("OffsetIndex", OFFSET_INDEX_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        switch (f.id) {
        case 1: rc = read_page_locations(r, &f, arena, out); break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    return more;
}

/* ---- BloomFilterHeader ---- */

static const fdef BLOOM_FIELDS[] = {
    {0}, {"numBytes", T_I32, REQ}, {"algorithm", T_STRUCT, REQ}, {"hash", T_STRUCT, REQ},
    {"compression", T_STRUCT, REQ},
};

int pq_decode_bloom_header(const uint8_t *buf, size_t len, pq_bloom_header *out, size_t *consumed,
                           pq_error *err)
{
    pq_tc_reader rd, *r = &rd;
    pq_tc_reader_init(r, buf, len, err);
    memset(out, 0, sizeof *out);
    sctx s = SCTX("BloomFilterHeader", BLOOM_FIELDS);
    pq_tc_field f;
    int more;
    PQ_TRY(pq_tc_sctx_begin(r, &s));
    while ((more = pq_tc_sctx_next(r, &s, &f)) == 1) {
        int rc;
        int16_t member = 0;
        switch (f.id) {
        case 1: rc = get_nonneg_i32(r, &f, &out->num_bytes); break;
        case 2:
        case 3:
        case 4:
            rc = read_marker_union(r, BLOOM_FIELDS[f.id].name, &member);
            /* Each union has one known member, id 1. */
            if (f.id == 2) out->algorithm_block = member == 1;
            if (f.id == 3) out->hash_xxhash = member == 1;
            if (f.id == 4) out->compression_none = member == 1;
            break;
        default: rc = pq_tc_skip(r, f.type); break;
        }
        if (rc != PQ_OK) return pq_tc_sctx_fail(r, &s, f.id);
    }
    if (more != 0) return PQ_ERR;
    if (consumed) *consumed = pq_tc_offset(r);
    return PQ_OK;
}

/* ------------------------------------------------------------ encoders --- */

/* Encoders write fields in id order, optional ones only when set.  Values
 * the structs cannot describe faithfully (an unrecognised logical type, an
 * unknown column order, encryption) are refused with PQ_E_USAGE rather than
 * written as something else. */

static void write_stats(pq_tc_writer *w, int16_t id, const pq_stats *st)
{
    pq_tc_write_field(w, id, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    if (st->has_max) pq_tc_write_field_binary(w, 1, st->max.ptr, st->max.len);
    if (st->has_min) pq_tc_write_field_binary(w, 2, st->min.ptr, st->min.len);
    if (st->has_null_count) pq_tc_write_field_i64(w, 3, st->null_count);
    if (st->has_distinct_count) pq_tc_write_field_i64(w, 4, st->distinct_count);
    if (st->has_max_value) pq_tc_write_field_binary(w, 5, st->max_value.ptr, st->max_value.len);
    if (st->has_min_value) pq_tc_write_field_binary(w, 6, st->min_value.ptr, st->min_value.len);
    if (st->has_max_exact) pq_tc_write_field_bool(w, 7, st->max_exact);
    if (st->has_min_exact) pq_tc_write_field_bool(w, 8, st->min_exact);
    pq_tc_write_struct_end(w);
}

static void write_kv_list(pq_tc_writer *w, int16_t id, const pq_kv *kv, int32_t n)
{
    pq_tc_write_field(w, id, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)n);
    for (int32_t i = 0; i < n; i++) {
        pq_tc_write_struct_begin(w);
        pq_tc_write_field_string(w, 1, kv[i].key ? kv[i].key : "");
        if (kv[i].value) pq_tc_write_field_string(w, 2, kv[i].value);
        pq_tc_write_struct_end(w);
    }
}

static int write_time_unit(pq_tc_writer *w, pq_time_unit unit, pq_error *err)
{
    if (unit < PQ_UNIT_MILLIS || unit > PQ_UNIT_NANOS)
        return pq_fail(err, PQ_E_USAGE, "time unit %d cannot be encoded", (int)unit);
    pq_tc_write_field(w, 2, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_empty_struct(w, (int16_t)unit);
    pq_tc_write_struct_end(w);
    return PQ_OK;
}

static int write_logical(pq_tc_writer *w, const pq_logical *lt, pq_error *err)
{
    pq_tc_write_field(w, 10, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    switch (lt->kind) {
    case PQ_LT_DECIMAL:
        pq_tc_write_field(w, PQ_LT_DECIMAL, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(w);
        pq_tc_write_field_i32(w, 1, lt->scale);
        pq_tc_write_field_i32(w, 2, lt->precision);
        pq_tc_write_struct_end(w);
        break;
    case PQ_LT_TIME:
    case PQ_LT_TIMESTAMP:
        pq_tc_write_field(w, (int16_t)lt->kind, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(w);
        pq_tc_write_field_bool(w, 1, lt->utc);
        PQ_TRY(write_time_unit(w, lt->unit, err));
        pq_tc_write_struct_end(w);
        break;
    case PQ_LT_INTEGER:
        pq_tc_write_field(w, PQ_LT_INTEGER, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(w);
        pq_tc_write_field_i8(w, 1, lt->bit_width);
        pq_tc_write_field_bool(w, 2, lt->is_signed);
        pq_tc_write_struct_end(w);
        break;
    case PQ_LT_STRING: case PQ_LT_MAP: case PQ_LT_LIST: case PQ_LT_ENUM: case PQ_LT_DATE:
    case PQ_LT_UNKNOWN: case PQ_LT_JSON: case PQ_LT_BSON: case PQ_LT_UUID: case PQ_LT_FLOAT16:
    case PQ_LT_VARIANT: case PQ_LT_GEOMETRY: case PQ_LT_GEOGRAPHY:
        pq_tc_write_field_empty_struct(w, (int16_t)lt->kind);
        break;
    default:
        return pq_fail(err, PQ_E_USAGE, "logical type %d cannot be encoded", (int)lt->kind);
    }
    pq_tc_write_struct_end(w);
    return PQ_OK;
}

static int write_schema_element(pq_tc_writer *w, const pq_schema_element *e, pq_error *err)
{
    pq_tc_write_struct_begin(w);
    if (e->has_type) pq_tc_write_field_i32(w, 1, e->type);
    /* type_length has no has_ flag: written for FIXED_LEN_BYTE_ARRAY or when set */
    if ((e->has_type && e->type == PQ_FIXED_LEN_BYTE_ARRAY) || e->type_length)
        pq_tc_write_field_i32(w, 2, e->type_length);
    if (e->has_repetition) pq_tc_write_field_i32(w, 3, e->repetition);
    pq_tc_write_field_string(w, 4, e->name ? e->name : "");
    if (e->has_num_children) pq_tc_write_field_i32(w, 5, e->num_children);
    if (e->converted_type != PQ_CT_NONE) pq_tc_write_field_i32(w, 6, e->converted_type);
    if (e->has_scale) pq_tc_write_field_i32(w, 7, e->scale);
    if (e->has_precision) pq_tc_write_field_i32(w, 8, e->precision);
    if (e->has_field_id) pq_tc_write_field_i32(w, 9, e->field_id);
    if (e->has_logical) PQ_TRY(write_logical(w, &e->logical, err));
    pq_tc_write_struct_end(w);
    return PQ_OK;
}

static void write_column_meta(pq_tc_writer *w, const pq_column_meta *m)
{
    pq_tc_write_field(w, 3, PQ_TC_STRUCT);
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_i32(w, 1, m->type);
    pq_tc_write_field(w, 2, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_I32, (uint32_t)m->n_encodings);
    for (int32_t i = 0; i < m->n_encodings; i++) pq_tc_write_i32(w, m->encodings[i]);
    pq_tc_write_field(w, 3, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_BINARY, (uint32_t)m->n_path);
    for (int32_t i = 0; i < m->n_path; i++) pq_tc_write_string(w, m->path[i]);
    pq_tc_write_field_i32(w, 4, m->codec);
    pq_tc_write_field_i64(w, 5, m->num_values);
    pq_tc_write_field_i64(w, 6, m->total_uncompressed_size);
    pq_tc_write_field_i64(w, 7, m->total_compressed_size);
    if (m->n_kv > 0) write_kv_list(w, 8, m->kv, m->n_kv);
    pq_tc_write_field_i64(w, 9, m->data_page_offset);
    if (m->has_index_page_offset) pq_tc_write_field_i64(w, 10, m->index_page_offset);
    if (m->has_dictionary_page_offset) pq_tc_write_field_i64(w, 11, m->dictionary_page_offset);
    if (m->has_stats) write_stats(w, 12, &m->stats);
    if (m->n_encoding_stats >= 0) {
        pq_tc_write_field(w, 13, PQ_TC_LIST);
        pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)m->n_encoding_stats);
        for (int32_t i = 0; i < m->n_encoding_stats; i++) {
            pq_tc_write_struct_begin(w);
            pq_tc_write_field_i32(w, 1, m->encoding_stats[i].page_type);
            pq_tc_write_field_i32(w, 2, m->encoding_stats[i].encoding);
            pq_tc_write_field_i32(w, 3, m->encoding_stats[i].count);
            pq_tc_write_struct_end(w);
        }
    }
    if (m->has_bloom_filter_offset) pq_tc_write_field_i64(w, 14, m->bloom_filter_offset);
    if (m->has_bloom_filter_length) pq_tc_write_field_i32(w, 15, m->bloom_filter_length);
    pq_tc_write_struct_end(w);
}

static int write_column_chunk(pq_tc_writer *w, const pq_column_chunk *c, pq_error *err)
{
    if (c->encrypted) return pq_fail(err, PQ_E_USAGE, "encrypted column chunks cannot be encoded");
    pq_tc_write_struct_begin(w);
    if (c->file_path) pq_tc_write_field_string(w, 1, c->file_path);
    pq_tc_write_field_i64(w, 2, c->file_offset);
    if (c->has_meta) write_column_meta(w, &c->meta);
    if (c->has_offset_index) {
        pq_tc_write_field_i64(w, 4, c->offset_index_offset);
        pq_tc_write_field_i32(w, 5, c->offset_index_length);
    }
    if (c->has_column_index) {
        pq_tc_write_field_i64(w, 6, c->column_index_offset);
        pq_tc_write_field_i32(w, 7, c->column_index_length);
    }
    pq_tc_write_struct_end(w);
    return PQ_OK;
}

static int write_row_group(pq_tc_writer *w, const pq_row_group *g, pq_error *err)
{
    pq_tc_write_struct_begin(w);
    pq_tc_write_field(w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)g->n_columns);
    for (int32_t i = 0; i < g->n_columns; i++) PQ_TRY(write_column_chunk(w, &g->columns[i], err));
    pq_tc_write_field_i64(w, 2, g->total_byte_size);
    pq_tc_write_field_i64(w, 3, g->num_rows);
    if (g->n_sorting >= 0) {
        pq_tc_write_field(w, 4, PQ_TC_LIST);
        pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)g->n_sorting);
        for (int32_t i = 0; i < g->n_sorting; i++) {
            pq_tc_write_struct_begin(w);
            pq_tc_write_field_i32(w, 1, g->sorting[i].column_idx);
            pq_tc_write_field_bool(w, 2, g->sorting[i].descending);
            pq_tc_write_field_bool(w, 3, g->sorting[i].nulls_first);
            pq_tc_write_struct_end(w);
        }
    }
    if (g->has_file_offset) pq_tc_write_field_i64(w, 5, g->file_offset);
    if (g->has_total_compressed_size) pq_tc_write_field_i64(w, 6, g->total_compressed_size);
    if (g->has_ordinal) pq_tc_write_field_i16(w, 7, g->ordinal);
    pq_tc_write_struct_end(w);
    return PQ_OK;
}

/* Runs an encoder body; on failure the buffer is put back as it was. */
static int finish_encode(pq_tc_writer *w, pq_buf *out, size_t start, int rc, pq_error *err)
{
    if (rc == PQ_OK) rc = pq_tc_writer_finish(w, err);
    if (rc != PQ_OK) out->len = start;
    return rc;
}

static int encode_file_meta_body(pq_tc_writer *w, const pq_file_meta *m, pq_error *err)
{
    if (m->encryption_algorithm)
        return pq_fail(err, PQ_E_USAGE, "encrypted file metadata cannot be encoded");
    if (m->n_schema < 0 || m->n_row_groups < 0 || m->n_kv < 0)
        return pq_fail(err, PQ_E_USAGE, "negative list length in file metadata");
    pq_tc_write_struct_begin(w);
    pq_tc_write_field_i32(w, 1, m->version);
    pq_tc_write_field(w, 2, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)m->n_schema);
    for (int32_t i = 0; i < m->n_schema; i++) PQ_TRY(write_schema_element(w, &m->schema[i], err));
    pq_tc_write_field_i64(w, 3, m->num_rows);
    pq_tc_write_field(w, 4, PQ_TC_LIST);
    pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)m->n_row_groups);
    for (int32_t i = 0; i < m->n_row_groups; i++)
        PQ_TRY(write_row_group(w, &m->row_groups[i], err));
    if (m->n_kv > 0) write_kv_list(w, 5, m->kv, m->n_kv);
    if (m->created_by) pq_tc_write_field_string(w, 6, m->created_by);
    if (m->n_column_orders >= 0) {
        pq_tc_write_field(w, 7, PQ_TC_LIST);
        pq_tc_write_list_begin(w, PQ_TC_STRUCT, (uint32_t)m->n_column_orders);
        for (int32_t i = 0; i < m->n_column_orders; i++) {
            if (m->column_orders[i] != PQ_ORDER_TYPE_DEFINED)
                return pq_fail(err, PQ_E_USAGE, "column order %d of leaf %d cannot be encoded",
                               (int)m->column_orders[i], (int)i);
            pq_tc_write_struct_begin(w);
            pq_tc_write_field_empty_struct(w, 1); /* TYPE_ORDER */
            pq_tc_write_struct_end(w);
        }
    }
    pq_tc_write_struct_end(w);
    return PQ_OK;
}

int pq_encode_file_meta(const pq_file_meta *m, pq_buf *out, pq_error *err)
{
    pq_tc_writer w;
    size_t start = out->len;
    pq_tc_writer_init(&w, out);
    return finish_encode(&w, out, start, encode_file_meta_body(&w, m, err), err);
}

int pq_encode_page_header(const pq_page_header *h, pq_buf *out, pq_error *err)
{
    pq_tc_writer w;
    size_t start = out->len;
    pq_tc_writer_init(&w, out);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, h->type);
    pq_tc_write_field_i32(&w, 2, h->uncompressed_page_size);
    pq_tc_write_field_i32(&w, 3, h->compressed_page_size);
    if (h->has_crc) pq_tc_write_field_i32(&w, 4, h->crc);
    if (h->has_data) {
        const pq_data_page_header *d = &h->data;
        pq_tc_write_field(&w, 5, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(&w);
        pq_tc_write_field_i32(&w, 1, d->num_values);
        pq_tc_write_field_i32(&w, 2, d->encoding);
        pq_tc_write_field_i32(&w, 3, d->def_encoding);
        pq_tc_write_field_i32(&w, 4, d->rep_encoding);
        if (d->has_stats) write_stats(&w, 5, &d->stats);
        pq_tc_write_struct_end(&w);
    }
    if (h->has_dict) {
        pq_tc_write_field(&w, 7, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(&w);
        pq_tc_write_field_i32(&w, 1, h->dict.num_values);
        pq_tc_write_field_i32(&w, 2, h->dict.encoding);
        pq_tc_write_field_bool(&w, 3, h->dict.is_sorted);
        pq_tc_write_struct_end(&w);
    }
    if (h->has_data_v2) {
        const pq_data_page_header_v2 *d = &h->data_v2;
        pq_tc_write_field(&w, 8, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(&w);
        pq_tc_write_field_i32(&w, 1, d->num_values);
        pq_tc_write_field_i32(&w, 2, d->num_nulls);
        pq_tc_write_field_i32(&w, 3, d->num_rows);
        pq_tc_write_field_i32(&w, 4, d->encoding);
        pq_tc_write_field_i32(&w, 5, d->def_levels_byte_length);
        pq_tc_write_field_i32(&w, 6, d->rep_levels_byte_length);
        pq_tc_write_field_bool(&w, 7, d->is_compressed);
        if (d->has_stats) write_stats(&w, 8, &d->stats);
        pq_tc_write_struct_end(&w);
    }
    pq_tc_write_struct_end(&w);
    return finish_encode(&w, out, start, PQ_OK, err);
}

int pq_encode_column_index(const pq_column_index *ci, pq_buf *out, pq_error *err)
{
    pq_tc_writer w;
    size_t start = out->len;
    if (ci->n_pages < 0) return pq_fail(err, PQ_E_USAGE, "negative page count in column index");
    uint32_t n = (uint32_t)ci->n_pages;
    pq_tc_writer_init(&w, out);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field(&w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_BOOL, n);
    for (uint32_t i = 0; i < n; i++) pq_tc_write_bool_elem(&w, ci->null_pages[i]);
    pq_tc_write_field(&w, 2, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_BINARY, n);
    for (uint32_t i = 0; i < n; i++)
        pq_tc_write_binary(&w, ci->min_values[i].ptr, ci->min_values[i].len);
    pq_tc_write_field(&w, 3, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_BINARY, n);
    for (uint32_t i = 0; i < n; i++)
        pq_tc_write_binary(&w, ci->max_values[i].ptr, ci->max_values[i].len);
    pq_tc_write_field_i32(&w, 4, ci->boundary_order);
    if (ci->null_counts) {
        pq_tc_write_field(&w, 5, PQ_TC_LIST);
        pq_tc_write_list_begin(&w, PQ_TC_I64, n);
        for (uint32_t i = 0; i < n; i++) pq_tc_write_i64(&w, ci->null_counts[i]);
    }
    pq_tc_write_struct_end(&w);
    return finish_encode(&w, out, start, PQ_OK, err);
}

int pq_encode_offset_index(const pq_offset_index *oi, pq_buf *out, pq_error *err)
{
    pq_tc_writer w;
    size_t start = out->len;
    if (oi->n_pages < 0) return pq_fail(err, PQ_E_USAGE, "negative page count in offset index");
    pq_tc_writer_init(&w, out);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field(&w, 1, PQ_TC_LIST);
    pq_tc_write_list_begin(&w, PQ_TC_STRUCT, (uint32_t)oi->n_pages);
    for (int32_t i = 0; i < oi->n_pages; i++) {
        pq_tc_write_struct_begin(&w);
        pq_tc_write_field_i64(&w, 1, oi->pages[i].offset);
        pq_tc_write_field_i32(&w, 2, oi->pages[i].compressed_page_size);
        pq_tc_write_field_i64(&w, 3, oi->pages[i].first_row_index);
        pq_tc_write_struct_end(&w);
    }
    pq_tc_write_struct_end(&w);
    return finish_encode(&w, out, start, PQ_OK, err);
}

int pq_encode_bloom_header(const pq_bloom_header *h, pq_buf *out, pq_error *err)
{
    if (!h->algorithm_block || !h->hash_xxhash || !h->compression_none)
        return pq_fail(err, PQ_E_USAGE,
                       "only split-block, xxhash, uncompressed bloom filters can be encoded");
    pq_tc_writer w;
    size_t start = out->len;
    pq_tc_writer_init(&w, out);
    pq_tc_write_struct_begin(&w);
    pq_tc_write_field_i32(&w, 1, h->num_bytes);
    for (int16_t id = 2; id <= 4; id++) {
        /* algorithm BLOCK, hash XXHASH, compression UNCOMPRESSED: member 1 each */
        pq_tc_write_field(&w, id, PQ_TC_STRUCT);
        pq_tc_write_struct_begin(&w);
        pq_tc_write_field_empty_struct(&w, 1);
        pq_tc_write_struct_end(&w);
    }
    pq_tc_write_struct_end(&w);
    return finish_encode(&w, out, start, PQ_OK, err);
}
